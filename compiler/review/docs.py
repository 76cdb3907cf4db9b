"""``capc docs``: a Markdown catalogue of a manifest's capabilities and tools.

The page is rendered from ``compiler/review/catalogue.md.j2`` (shipped in the package)
over a plain view model built here, so the layout can change without touching Python.
Which providers get an MCP server is decided by the runtime's own gate
(:func:`compiler.runtime.mcp.gating.anthropic_gate`), so the catalogue says exactly what an
agent will do at boot.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from importlib import resources
from typing import Any
from urllib.parse import urlsplit

import jinja2

from compiler.manifest import manifest_model
from compiler.report.escape import escape_control
from compiler.review.call_options import describe_call_options
from compiler.review.explain import describe_origin, plugin_tool_views
from compiler.review.output_fields import output_fields, type_text
from compiler.runtime.manifest.fields import thaw
from compiler.runtime.manifest.model import CapabilityEntry, ManifestModel
from compiler.runtime.manifest.pinned import PinnedToolEntry
from compiler.runtime.mcp.gating import anthropic_dropped_headers, anthropic_gate

CATALOGUE_TEMPLATE = "catalogue.md.j2"


def code(value: Any) -> str:
    """A value as a Markdown code span that is safe inside a table cell."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    text = " ".join(text.split("\n")).replace("|", "\\|")
    fence = "``" if "`" in text else "`"
    padding = " " if fence == "``" else ""
    return f"{fence}{padding}{text}{padding}{fence}"


def cell(value: Any) -> str:
    """Free text for a table cell or a list item: pipes escaped, raw HTML neutralised."""
    if value is None:
        return ""
    text = str(value).strip().replace("&", "&amp;").replace("<", "&lt;").replace("|", "\\|")
    return "<br>".join(text.splitlines())


def heading(value: Any) -> str:
    """Text for a Markdown heading: one line."""
    return " ".join(cell(value).replace("<br>", " ").split())


def _host(url: Any) -> str | None:
    if not isinstance(url, str):
        return None
    host = urlsplit(url).netloc.rpartition("@")[2]
    return host or None


def _parameters(capability: CapabilityEntry) -> list[dict[str, Any]]:
    if capability.tool is None or capability.api is None:
        return []
    schema = thaw(capability.tool.input_schema)
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    arguments = capability.api.arguments
    rows = []
    for name, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        argument = arguments.get(name)
        kind = _type_text(spec) or (argument.type if argument else None) or "string"
        if argument is not None and argument.multiple:
            kind = f"list of {argument.type}"
        if argument is not None and "file" in argument.bindings:
            kind = f"{kind} (document id)"
        if argument is not None and argument.style is not None:
            kind = f"{kind}, {argument.style.replace('_', ' ')} in the query"
        bindings = list(argument.bindings) if argument else ["unused by the request"]
        rows.append(_row(name, spec, kind, name in required, bindings))
        rows += _nested_rows(name, spec, bindings)
    return rows


def _row(name: str, spec: Mapping[str, Any], kind: str, required: bool,
         bindings: list[str]) -> dict[str, Any]:
    return {
        "name": name,
        "type": kind,
        "required": required,
        "has_default": "default" in spec,
        "default": spec.get("default"),
        "enum": spec.get("enum"),
        "bindings": bindings,
        "description": spec.get("description"),
    }


def _nested_rows(name: str, spec: Mapping[str, Any], bindings: list[str]
                 ) -> list[dict[str, Any]]:
    """One row per nested field (``items[].price``, ``metadata.*``), parents first."""
    rows = []
    pending: list[tuple[str, Mapping[str, Any]]] = [(name, spec)]
    while pending:
        path, node = pending.pop(0)
        items = node.get("items")
        if isinstance(items, Mapping) and isinstance(items.get("properties"), Mapping):
            pending.append((f"{path}[]", items))
        extra = node.get("additionalProperties")
        if isinstance(extra, Mapping):
            rows.append(_row(f"{path}.*", extra, f"any key: {_type_text(extra)}", False,
                             bindings))
        nested = node.get("properties")
        if not isinstance(nested, Mapping):
            continue
        required = set(node.get("required") or [])
        for field, child in nested.items():
            child = child if isinstance(child, Mapping) else {}
            rows.append(_row(f"{path}.{field}", child, _type_text(child) or "string",
                             field in required, bindings))
            pending.append((f"{path}.{field}", child))
    return rows


def _type_text(spec: Mapping[str, Any]) -> str:
    """``string``, ``array of object``, ``string or null``: a schema's type, readable."""
    kind = spec.get("type")
    names = [str(item) for item in kind] if isinstance(kind, list) else [str(kind or "")]
    shown = " or ".join(name for name in names if name)
    items = spec.get("items")
    if "array" in names and isinstance(items, Mapping):
        shown = shown.replace("array", f"array of {_type_text(items) or 'string'}", 1)
    return shown


def _plugin_tools(manifest: ManifestModel, codes: list[str]) -> list[dict[str, Any]]:
    """The plugin tools these registry codes bring, from the manifest's plugin snapshot
    (``capc compile --plugins``), as the agent sees them: pending overrides applied."""
    plugins = thaw(manifest.plugins)
    views = plugin_tool_views(manifest)
    tools: dict[str, dict[str, Any]] = {}
    for entry in plugins.values():
        registered = entry.get("codes") if isinstance(entry, Mapping) else None
        if not isinstance(registered, Mapping):
            continue
        for registry_code in codes:
            for name in (registered.get(registry_code) or {}).get("tools") or []:
                view = views.get(str(name))
                if view is not None:
                    tools.setdefault(view.descriptor.name, {
                        "name": view.descriptor.name,
                        "description": view.descriptor.description,
                        "plugin": f"{view.distribution} {view.version}",
                    })
    if not tools:  # an older snapshot: {CODE: {"tools": [{name, description}]}}
        for registry_code in codes:
            entry = plugins.get(registry_code)
            listed = entry.get("tools") if isinstance(entry, Mapping) else None
            for tool in listed if isinstance(listed, list) else []:
                if isinstance(tool, Mapping) and "name" in tool:
                    tools.setdefault(str(tool["name"]), dict(tool))
    return [tools[name] for name in sorted(tools)]


def _pinned_tools(pins: tuple[PinnedToolEntry, ...] | None) -> list[dict[str, Any]] | None:
    """The pinned tools (``capc.lock``) as the model is shown them, or None when unpinned."""
    if pins is None:
        return None
    return [{"name": tool.name, "description": tool.shown_description} for tool in pins]


def _providers(server: Mapping[str, Any]) -> list[tuple[str, str]]:
    reason = anthropic_gate(server)
    dropped = anthropic_dropped_headers(server)
    anthropic = "yes (MCP connector)" if reason is None else f"no: {reason}"
    if reason is None and dropped is not None:
        anthropic = f"yes (MCP connector), without some headers: {dropped}"
    return [
        ("openai", "yes (Responses API MCP tool)"),
        ("anthropic", anthropic),
        ("langchain", "yes (client-side, langchain-mcp-adapters)"),
    ]


def capability_view(capability: CapabilityEntry, manifest: ManifestModel) -> dict[str, Any]:
    """What the catalogue shows of one capability (``manifest`` for its plugin snapshot)."""
    section = capability.mcp or capability.api
    view: dict[str, Any] = {
        "code": capability.code,
        "anchor": f"capability-{capability.code}",
        "name": capability.name or capability.code,
        "type": capability.type,
        "description": capability.description,
        "metadata": sorted(thaw(capability.metadata).items()),
        "when": thaw(capability.when),
        "source": str(capability.source),
        "origin": describe_origin(capability.origin),
        "settings": list(section.placeholders) if section is not None else [],
        "hosts": [],
        "tool": None,
        "tool_names": [],
    }
    if capability.type == "internal":
        view["codes"] = list(capability.internal_codes)
        view["plugin_tools"] = _plugin_tools(manifest, view["codes"])
        view["tool_names"] = [tool["name"] for tool in view["plugin_tools"]]
    elif capability.mcp is not None:
        server = capability.mcp.to_json()
        view.update(
            server_label=server["server_label"],
            server_url=server["server_url"],
            allowed_tools=server["allowed_tools"],
            require_approval=server["require_approval"],
            providers=_providers(server),
            pinned_tools=_pinned_tools(capability.mcp.pins),
        )
        view["hosts"] = [host for host in [_host(server["server_url"])] if host]
    elif capability.api is not None and capability.tool is not None:
        tool = capability.tool
        view["hosts"] = [host for host in [_host(capability.api.url)] if host]
        view["tool"] = {
            "name": tool.name,
            "description": tool.description,
            "method": capability.api.method,
            "url": capability.api.url,
            "parameters": _parameters(capability),
            "call_options": describe_call_options(capability.api.to_json()),
            "overrides": [f"{o.path}:{o.line}" for o in tool.overrides],
            "output": _output_rows(tool.output_schema),
        }
        view["tool_names"] = [tool.name]
    return view


def _output_rows(schema: Any) -> list[dict[str, str]] | None:
    """The fields of a tool's (shaped) output schema, None when it returns text only."""
    if schema is None:
        return None
    return [{"field": path, "type": type_text(types)}
            for path, types in output_fields(thaw(schema)).items()]


def catalogue_view(manifest: ManifestModel | Mapping[str, Any]) -> dict[str, Any]:
    """The template's whole view model: capabilities sorted by code, pending overrides."""
    manifest = manifest_model(manifest)
    capabilities = sorted(manifest.capabilities, key=lambda c: c.code)
    views = [capability_view(capability, manifest) for capability in capabilities]
    counts = []
    for kind in ("internal", "mcp", "api"):
        total = sum(1 for view in views if view["type"] == kind)
        if total:
            counts.append(f"{total} {kind}")
    overrides = [
        {"tool": pending.tool, "fields": sorted(pending.patch), "source": str(pending.source)}
        for pending in manifest.overrides
    ]
    return {
        "capabilities": views,
        "counts": counts,
        "overrides": overrides,
        "digest": manifest.digest,
    }


def _load_packaged(name: str) -> str:
    return resources.files("compiler.review").joinpath(name).read_text(encoding="utf-8")


def _one_line(value: Any) -> Any:
    return escape_control(value) if isinstance(value, str) else value


def make_docs_environment() -> jinja2.Environment:
    """Jinja2 for the shipped catalogue templates: Markdown, so no HTML autoescape, and
    StrictUndefined so a template typo fails loudly instead of printing nothing."""
    environment = jinja2.Environment(
        loader=jinja2.FunctionLoader(_load_packaged),
        undefined=jinja2.StrictUndefined,
        autoescape=False,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        # Every printed value, filtered or not, on one line with its controls visible: a
        # manifest string cannot start a line of its own (a workflow command) in the page.
        finalize=_one_line,
    )
    environment.filters.update(code=code, cell=cell, heading=heading)
    return environment


def render_catalogue(manifest: ManifestModel | Mapping[str, Any]) -> str:
    """The Markdown catalogue of ``manifest``; deterministic for a given manifest."""
    template = make_docs_environment().get_template(CATALOGUE_TEMPLATE)
    text = template.render(catalogue_view(manifest))
    # Collapse the blank runs the template's conditionals leave behind.
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() or (lines and lines[-1].strip()):
            lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"
