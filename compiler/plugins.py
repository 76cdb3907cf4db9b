"""The plugin catalogue: what the installed ``primethink.tools`` plugins register.

Discovery imports third-party code, so the compiler never does it in its own process:
``discover_catalogue`` runs ``python -m compiler.plugin_discovery`` with the same interpreter and
reads JSON lines from its stdout. A plugin that fails to import or to register, prints,
hangs or kills its interpreter costs a failure record naming its entry point, never the
compile. Each entry point is loaded and registered exactly as the runtime's
``discover_plugins`` does it (sorted by name, staged, ``call_register`` with no context).

The catalogue's shape (also ``capc plugins --format json``; see docs/manifest.md)::

    {"group": "primethink.tools",
     "distributions": {DIST: {"version", "entry_points": {NAME: TARGET},
                              "codes": {CODE: {"name", "description", "entry_points",
                                               "tools": [TOOL, ...]}},
                              "tools": {TOOL: {"name", "description", "input_schema",
                                               "codes": [CODE, ...]}}}},
     "failures": [{"entry_point", "target", "distribution", "version", "error"}]}
"""

from __future__ import annotations

import json
import os
import sys
from collections.abc import Callable, Collection, Mapping
from pathlib import Path
from typing import Any

from compiler.diagnostics import Location
from compiler.errors import InputOutputError
from compiler.project import DEFAULT_PLUGINS_TIMEOUT, read_project_settings
from compiler.runtime.records import record as dataclass_record

# compiler.runtime.tools.registry.ENTRY_POINT_GROUP (tests/perf checks they agree). Not imported
# from there: that module loads importlib.metadata, a tenth of a cached compile's time,
# and a compile without --plugins never discovers anything (subprocess and tomllib are
# imported where they are used for the same reason).
ENTRY_POINT_GROUP = "primethink.tools"
DEFAULT_TIMEOUT = DEFAULT_PLUGINS_TIMEOUT
UNKNOWN_DISTRIBUTION = "(unknown distribution)"


@dataclass_record(frozen=True, slots=True)
class Registrations:
    """``[tool.capc] registrations`` and the project root they are imported from."""

    specs: tuple[str, ...] = ()
    root: str = "."


def discover_catalogue(
    timeout: float = DEFAULT_TIMEOUT, *, group: str = ENTRY_POINT_GROUP,
    env: Mapping[str, str] | None = None, registrations: Registrations = Registrations(),
    entry_points: bool = True, reads: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    """The catalogue of the installed plugins (unless not ``entry_points``) and of the
    project's ``registrations``, discovered in a child interpreter.

    The child reports each entry point as it goes. When it dies or exceeds ``timeout``
    (seconds) in the middle of one, that entry point is recorded as failed and a new
    child carries on with the rest: one bad plugin costs one timeout, never the others.
    ``reads``, when given, receives what each child read from the file system
    (compiler/cache/plugin_catalogue.py keys a stored catalogue by it).
    """
    catalogue = empty_catalogue(group)
    settled: list[str] = []
    while True:
        records, problem = _run_child(group, settled, timeout, env, registrations,
                                      entry_points, reads is not None)
        current: Mapping[str, Any] | None = None
        for record in records:
            if record.get("event") == "reads" and reads is not None:
                reads.append(record)
            elif record.get("event") == "start":
                current = record
            elif record.get("event") == "loaded":
                _merge_catalogue(catalogue, record["catalogue"])
            elif record.get("event") == "failed":
                catalogue["failures"].append(record["failure"])
            elif record.get("event") == "end":
                return catalogue
            if record.get("event") in ("loaded", "failed"):
                settled.append(record["identity"])
                current = None
        if current is None:
            raise InputOutputError(f"plugin discovery failed: {problem}")
        catalogue["failures"].append({**current["failure"], "error": problem})
        settled.append(current["identity"])


def empty_catalogue(group: str = ENTRY_POINT_GROUP) -> dict[str, Any]:
    """A catalogue with no plugin in it."""
    return {"group": group, "distributions": {}, "failures": []}


def _run_child(group: str, settled: list[str], timeout: float,
               env: Mapping[str, str] | None, registrations: Registrations = Registrations(),
               entry_points: bool = True, report_reads: bool = False
               ) -> tuple[list[dict[str, Any]], str]:
    """The records the child wrote, and why it stopped early (empty when it did not)."""
    import subprocess  # here: a compile without plugins never starts a child

    command = [sys.executable, "-m", "compiler.plugin_discovery", "--group", group]
    for identity in settled:
        command += ["--skip", identity]
    for spec in registrations.specs:
        command += ["--registration", spec]
    if registrations.specs:
        command += ["--root", os.path.abspath(registrations.root)]
    if not entry_points:
        command.append("--no-entry-points")
    if report_reads:
        command.append("--report-reads")
    try:
        # stderr is discarded: plugins may log or print there as they please.
        done = subprocess.run(command, capture_output=True, timeout=timeout, check=False,
                              env=dict(env) if env is not None else None)
        output, problem = done.stdout, ""
        if done.returncode != 0:
            problem = f"its interpreter exited with status {done.returncode}"
    except subprocess.TimeoutExpired as expired:
        output = expired.stdout or b""
        problem = f"plugin discovery did not finish within {timeout:g} s"
    except OSError as error:
        return [], f"cannot start {sys.executable}: {error.strerror}"
    records: list[dict[str, Any]] = []
    for line in output.decode("utf-8", "replace").splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            return records, "the discovery interpreter wrote something that is not JSON"
        if isinstance(record, dict):
            records.append(record)
    return records, problem or "the discovery interpreter stopped without finishing"


def _merge_catalogue(into: dict[str, Any], other: Mapping[str, Any]) -> None:
    for name, entry in other["distributions"].items():
        current = into["distributions"].setdefault(
            name, {"version": entry["version"], "entry_points": {}, "codes": {}, "tools": {}})
        current["entry_points"].update(entry["entry_points"])
        for code, registered in entry["codes"].items():
            _merge_code(current["codes"], code, registered)
        for tool_name, tool in entry["tools"].items():
            known = current["tools"].setdefault(tool_name, {**tool, "codes": []})
            known["codes"] = sorted({*known["codes"], *tool["codes"]})
    into["failures"].extend(other["failures"])


def _merge_code(codes: dict[str, Any], code: str, registered: Mapping[str, Any]) -> None:
    # The registry's rule: tools append (first of a name wins), last non-empty metadata wins.
    current = codes.setdefault(code, {"name": "", "description": "", "entry_points": [],
                                      "tools": []})
    current["name"] = registered["name"] or current["name"]
    current["description"] = registered["description"] or current["description"]
    current["entry_points"] = sorted({*current["entry_points"], *registered["entry_points"]})
    current["tools"] += [t for t in registered["tools"] if t not in current["tools"]]


@dataclass_record(frozen=True, slots=True)
class PluginSettings:
    """Whether to build a catalogue, and where that was decided (for located warnings);
    whether it scans the entry-point plugins, and the project's registrations."""

    enabled: bool
    timeout: float = DEFAULT_TIMEOUT
    origin: Location | None = None
    registrations: Registrations = Registrations()
    entry_points: bool = True


def read_plugin_settings(flag: bool | None, cwd: Path | None = None) -> PluginSettings:
    """``--plugins``/``--no-plugins`` when given, else ``[tool.capc] plugins`` of the
    working directory's pyproject.toml (``plugins_timeout`` bounds discovery, seconds)."""
    project = read_project_settings(cwd)
    registrations = Registrations(project.registrations, str(project.root.resolve()))
    if flag is not None:
        return PluginSettings(flag, project.plugins_timeout, None, registrations,
                              entry_points=flag)
    # Registrations alone build a catalogue of the project's own tools; plugins = true
    # (or --plugins) adds the installed entry points; --no-plugins turns both off.
    return PluginSettings(project.plugins or bool(project.registrations),
                          project.plugins_timeout,
                          project.plugins_origin or project.registrations_origin,
                          registrations, entry_points=project.plugins)


def skipped_plugin_note(flag: bool | None, cwd: Path | None = None) -> str | None:
    """What ``--no-plugins`` left unchecked when [tool.capc] asks for plugins or
    registrations (a pre-commit hook without them installed), or None."""
    if flag is not False:
        return None
    configured = read_plugin_settings(None, cwd)
    if not configured.enabled:
        return None
    return ("capc: note: --no-plugins: internal codes and plugin-tool overrides were not "
            "checked against the plugins and registrations [tool.capc] names; CI checks them")



def load_catalogue(settings: PluginSettings,
                   discover: Callable[[PluginSettings], dict[str, Any]] | None = None
                   ) -> dict[str, Any]:
    """The catalogue to compile with (empty, meaning "not looked at", when disabled);
    found by ``discover`` when given (the compile cache's reuse), else discovered now."""
    if not settings.enabled:
        return {}
    if discover is not None:
        catalogue = discover(settings)
    else:
        catalogue = discover_catalogue(settings.timeout, registrations=settings.registrations,
                                       entry_points=settings.entry_points)
    if settings.origin is not None:
        catalogue["origin"] = {"path": settings.origin.path, "line": settings.origin.line}
    return catalogue


# -- reading a catalogue ------------------------------------------------------------------


def registered_codes(catalogue: Mapping[str, Any]) -> dict[str, str]:
    """Every registered code and the distribution that registers it (first by name)."""
    found: dict[str, str] = {}
    for distribution in sorted(catalogue.get("distributions") or {}):
        for code in catalogue["distributions"][distribution]["codes"]:
            found.setdefault(code, distribution)
    return found


def plugin_tool_names(catalogue: Mapping[str, Any]) -> frozenset[str]:
    """Every tool name any catalogued plugin registers."""
    return frozenset(name for entry in (catalogue.get("distributions") or {}).values()
                     for name in entry["tools"])


def recorded_snapshot(
    catalogue: Mapping[str, Any], codes: Collection[str], tools: Collection[str]
) -> dict[str, Any]:
    """The manifest's ``plugins`` section: the catalogue cut down to what the tree uses.

    Kept: the registry ``codes`` internal capabilities name, their tools, and the
    ``tools`` overrides target. Plugins the tree does not use are left out, so installing
    an unrelated plugin on the build machine does not change the manifest.
    """
    snapshot: dict[str, Any] = {}
    for name, entry in sorted((catalogue.get("distributions") or {}).items()):
        kept_codes = {code: registered for code, registered in entry["codes"].items()
                      if code in codes}
        wanted = {tool for registered in kept_codes.values() for tool in registered["tools"]}
        wanted |= {tool for tool in entry["tools"] if tool in tools}
        if not wanted and not kept_codes:
            continue
        snapshot[name] = {
            "version": entry["version"],
            "entry_points": entry["entry_points"],
            "codes": kept_codes,
            "tools": {tool: entry["tools"][tool] for tool in sorted(wanted)
                      if tool in entry["tools"]},
        }
    return snapshot


def render_catalogue_text(catalogue: Mapping[str, Any]) -> str:
    """``capc plugins``: each distribution, its entry points, codes and tools; failures."""
    lines: list[str] = []
    for name, entry in sorted((catalogue.get("distributions") or {}).items()):
        points = ", ".join(f"{point} ({target})"
                           for point, target in sorted(entry["entry_points"].items()))
        lines += [f"{name} {entry['version']}", f"  entry points: {points}"]
        for code, registered in sorted(entry["codes"].items()):
            title = registered["name"] or "(no name)"
            about = f": {registered['description']}" if registered["description"] else ""
            lines.append(f"  code {code} — {title}{about}")
            for tool_name in registered["tools"]:
                tool = entry["tools"][tool_name]
                summary = (tool["description"] or "").strip().splitlines()[:1]
                lines.append(f"    {tool_name}({_signature(tool['input_schema'])})"
                             + (f" — {summary[0]}" if summary else ""))
    for failure in catalogue.get("failures") or []:
        lines.append(f"FAILED {failure['entry_point']} ({failure['target']}, "
                     f"{failure['distribution']} {failure['version']}): {failure['error']}")
    if not lines:
        lines.append(f"no plugins installed in the {catalogue.get('group')!r} entry-point group")
    return "\n".join(lines) + "\n"


def _signature(schema: Mapping[str, Any]) -> str:
    required = set(schema.get("required") or [])
    return ", ".join(
        f"{name}{'' if name in required else '?'}: {spec.get('type', 'any')}"
        if isinstance(spec, Mapping) else name
        for name, spec in (schema.get("properties") or {}).items())
