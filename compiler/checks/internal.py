"""Internal capabilities against the plugin catalogue (``capc compile --plugins``).

Without a catalogue the compiler cannot know what plugins register, and these checks do
nothing. With one: a registry code no plugin registers is an error at the code's node
(the reference only noticed at run time, as a tool silently missing from an agent); a
plugin that failed to load is a warning naming its entry point; and overrides of plugin
tools are checked against the tools' recorded descriptors like overrides of api tools.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Location, Severity
from compiler.overrides import apply_tree_overrides, override_of
from compiler.plugins import plugin_tool_names, registered_codes
from compiler.runtime.manifest.fields import freeze
from compiler.runtime.manifest.model import ApiToolEntry
from compiler.runtime.manifest.model import internal_codes as model_internal_codes
from compiler.source.documents import SourceDocument

PLUGIN_LOAD_FAILED = Code("plugin-load-failed", "a tool plugin failed to load", Severity.WARNING)
UNKNOWN_INTERNAL_CODE = Code(
    "unknown-internal-code", "no installed plugin registers an internal code")
CODES = (PLUGIN_LOAD_FAILED, UNKNOWN_INTERNAL_CODE)


def has_catalogue(snapshot: Mapping[str, Any]) -> bool:
    """Whether the compile was given a plugin catalogue (``--plugins``), even an empty one."""
    return "distributions" in snapshot


def internal_codes(document: SourceDocument) -> list[str]:
    """The registry codes an internal capability activates (default: its own code)."""
    options = document.data.get("options") or {}
    return list(model_internal_codes(document.data["code"], options.get("codes")))


def check_internal_codes(document: SourceDocument, catalogue: Mapping[str, Any]
                         ) -> list[Diagnostic]:
    """An error, with a "did you mean", for each code of ``document`` no plugin registers."""
    if not has_catalogue(catalogue) or document.data.get("type") != "internal":
        return []
    known = registered_codes(catalogue)
    explicit = "codes" in (document.data.get("options") or {})
    found = []
    for index, code in enumerate(internal_codes(document)):
        if code in known:
            continue
        import difflib  # only an error's "did you mean" needs it
        close = difflib.get_close_matches(code, sorted(known), n=1, cutoff=0.6)
        hint = f"; did you mean {close[0]!r}?" if close else ""
        failed = _failed_entry_points(catalogue)
        note = f"; failed to load, may register it: {failed}" if failed else ""
        at = document.location(("options", "codes", index) if explicit else ("code",))
        found.append(Diagnostic.error(
            at, UNKNOWN_INTERNAL_CODE,
            f"no installed plugin registers code {code!r}{hint} "
            f"(registered codes: {_listing(known)}{note})"))
    return found


def check_plugin_failures(capabilities: list[SourceDocument], catalogue: Mapping[str, Any]
                          ) -> list[Diagnostic]:
    """One warning per plugin that failed to load, located where it matters most.

    A failed plugin registers nothing, so which codes it would have given is unknown: the
    warning goes to the first internal capability left without its tools, else to the
    ``[tool.capc]`` setting that asked for plugins, else to the first internal capability.
    """
    if not has_catalogue(catalogue) or not catalogue.get("failures"):
        return []
    at = _failure_location(capabilities, catalogue)
    if at is None:
        return []
    return [Diagnostic.warning(
        at, PLUGIN_LOAD_FAILED,
        f"tool plugin {failure['entry_point']!r} ({failure['target']}, "
        f"{failure['distribution']} {failure['version']}) failed to load: {failure['error']}")
        for failure in catalogue["failures"]]


def _failure_location(capabilities: list[SourceDocument], catalogue: Mapping[str, Any]
                      ) -> Location | None:
    internal = [d for d in capabilities if d.data.get("type") == "internal"]
    known = registered_codes(catalogue)
    for document in internal:
        if any(code not in known for code in internal_codes(document)):
            return document.location(("code",))
    origin = catalogue.get("origin")
    if isinstance(origin, Mapping):
        return Location(str(origin["path"]), int(origin["line"]))
    if internal:
        return internal[0].location(("code",))
    return capabilities[0].location() if capabilities else None


def _listing(codes: Collection[str], limit: int = 12) -> str:
    shown = sorted(codes)
    if not shown:
        return "none, is the plugin installed?"
    more = f", … ({len(shown) - limit} more, see `capc plugins`)" if len(shown) > limit else ""
    return ", ".join(shown[:limit]) + more


def _failed_entry_points(catalogue: Mapping[str, Any]) -> str:
    return ", ".join(sorted({str(f["entry_point"]) for f in catalogue.get("failures") or []}))


def check_plugin_tool_overrides(
    overrides: list[SourceDocument], catalogue: Mapping[str, Any], api_tools: Collection[str]
) -> list[Diagnostic]:
    """Validate overrides of plugin tools on copies of their catalogued descriptors.

    The same checks as for api tools (valid schema, argument model, safe patterns); the
    executor's arguments are the plugin tool's own parameters. Nothing is applied: these
    overrides still run at boot, on whatever the installed plugin registers then.
    """
    if not has_catalogue(catalogue):
        return []
    plugin_tools = plugin_tool_names(catalogue) - set(api_tools)
    relevant = [document for document in overrides
                if document.data.get("tool") in plugin_tools and override_of(document)]
    if not relevant:
        return []
    targets = {name: _tool_target(tool) for name, tool in catalogue_tools(catalogue).items()
               if name in plugin_tools}
    return apply_tree_overrides(relevant, targets).diagnostics


def catalogue_tools(catalogue: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    """Every catalogued tool by name (the first distribution by name wins a clash)."""
    tools: dict[str, Mapping[str, Any]] = {}
    for name in sorted(catalogue.get("distributions") or {}):
        for tool_name, tool in catalogue["distributions"][name]["tools"].items():
            tools.setdefault(tool_name, tool)
    return tools


def _tool_target(tool: Mapping[str, Any]) -> tuple[ApiToolEntry, Collection[str]]:
    """A throwaway tool entry and the executor's argument names, for validation."""
    schema = tool.get("input_schema") or {}
    entry = ApiToolEntry(name=tool["name"], original_name=tool["name"],
                         description=tool.get("description") or "",
                         input_schema=freeze(schema))
    return entry, tuple(schema.get("properties") or {})
