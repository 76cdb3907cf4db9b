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

from compiler.review.explain import plugin_tool_views
from compiler.runtime.mcp.gating import anthropic_gate

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


def _parameters(capability: Mapping[str, Any]) -> list[dict[str, Any]]:
    tool = capability.get("tool") or {}
    schema = tool.get("input_schema") or {}
    properties = schema.get("properties") or {}
    required = set(schema.get("required") or [])
    arguments = (capability.get("api") or {}).get("arguments") or {}
    rows = []
    for name, spec in properties.items():
        spec = spec if isinstance(spec, Mapping) else {}
        argument = arguments.get(name) or {}
        kind = spec.get("type") or argument.get("type") or "string"
        if argument.get("multiple"):
            kind = f"list of {argument.get('type', kind)}"
        if "file" in (argument.get("bindings") or []):
            kind = f"{kind} (document id)"
        rows.append({
            "name": name,
            "type": kind,
            "required": name in required,
            "has_default": "default" in spec,
            "default": spec.get("default"),
            "enum": spec.get("enum"),
            "bindings": argument.get("bindings") or ["unused by the request"],
            "description": spec.get("description"),
        })
    return rows


def _plugin_tools(manifest: Mapping[str, Any], codes: list[str]) -> list[dict[str, Any]]:
    """The plugin tools these registry codes bring, from the manifest's plugin snapshot
    (``capc compile --plugins``), as the agent sees them: pending overrides applied."""
    plugins = manifest.get("plugins") or {}
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


def _providers(server: Mapping[str, Any]) -> list[tuple[str, str]]:
    reason = anthropic_gate(server)
    return [
        ("openai", "yes (Responses API MCP tool)"),
        ("anthropic", "yes (MCP connector)" if reason is None else f"no: {reason}"),
        ("langchain", "yes (client-side, langchain-mcp-adapters)"),
    ]


def capability_view(capability: Mapping[str, Any], manifest: Mapping[str, Any]
                    ) -> dict[str, Any]:
    """What the catalogue shows of one capability (``manifest`` for its plugin snapshot)."""
    kind = capability.get("type")
    section = capability.get(str(kind)) or {}
    source = capability.get("source") or {}
    view: dict[str, Any] = {
        "code": capability.get("code"),
        "anchor": f"capability-{capability.get('code')}",
        "name": capability.get("name") or capability.get("code"),
        "type": kind,
        "description": capability.get("description"),
        "metadata": sorted((capability.get("metadata") or {}).items()),
        "when": capability.get("when"),
        "source": f"{source.get('path')}:{source.get('line')}",
        "settings": list(section.get("placeholders") or []),
        "hosts": [],
        "tool": None,
        "tool_names": [],
    }
    if kind == "internal":
        view["codes"] = list(section.get("codes") or [capability.get("code")])
        view["plugin_tools"] = _plugin_tools(manifest, view["codes"])
        view["tool_names"] = [tool["name"] for tool in view["plugin_tools"]]
    elif kind == "mcp":
        view.update(
            server_label=section.get("server_label"),
            server_url=section.get("server_url"),
            allowed_tools=section.get("allowed_tools"),
            require_approval=section.get("require_approval"),
            providers=_providers(section),
        )
        view["hosts"] = [host for host in [_host(section.get("server_url"))] if host]
    elif kind == "api":
        tool = capability.get("tool") or {}
        view["hosts"] = [host for host in [_host(section.get("url"))] if host]
        view["tool"] = {
            "name": tool.get("name"),
            "description": tool.get("description"),
            "method": section.get("method", "GET"),
            "url": section.get("url"),
            "parameters": _parameters(capability),
            "overrides": [
                f"{o.get('path')}:{o.get('line')}" for o in tool.get("overrides") or []
            ],
        }
        view["tool_names"] = [tool.get("name")] if tool.get("name") else []
    return view


def catalogue_view(manifest: Mapping[str, Any]) -> dict[str, Any]:
    """The template's whole view model: capabilities sorted by code, pending overrides."""
    capabilities = sorted(manifest.get("capabilities") or [], key=lambda c: str(c.get("code")))
    views = [capability_view(capability, manifest) for capability in capabilities]
    counts = []
    for kind in ("internal", "mcp", "api"):
        total = sum(1 for view in views if view["type"] == kind)
        if total:
            counts.append(f"{total} {kind}")
    overrides = [
        {
            "tool": pending.get("tool"),
            "fields": sorted((pending.get("patch") or {}).keys()),
            "source": f"{(pending.get('source') or {}).get('path')}:"
            f"{(pending.get('source') or {}).get('line')}",
        }
        for pending in manifest.get("overrides") or []
    ]
    return {
        "capabilities": views,
        "counts": counts,
        "overrides": overrides,
        "digest": manifest.get("digest"),
    }


def _load_packaged(name: str) -> str:
    return resources.files("compiler.review").joinpath(name).read_text(encoding="utf-8")


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
    )
    environment.filters.update(code=code, cell=cell, heading=heading)
    return environment


def render_catalogue(manifest: Mapping[str, Any]) -> str:
    """The Markdown catalogue of ``manifest``; deterministic for a given manifest."""
    template = make_docs_environment().get_template(CATALOGUE_TEMPLATE)
    text = template.render(catalogue_view(manifest))
    # Collapse the blank runs the template's conditionals leave behind.
    lines: list[str] = []
    for line in text.splitlines():
        if line.strip() or (lines and lines[-1].strip()):
            lines.append(line.rstrip())
    return "\n".join(lines).strip() + "\n"
