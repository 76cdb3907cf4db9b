"""What ``tools/list`` says of each tool: the reviewed descriptor, never a regenerated one.

The input schema is the one the manifest holds (api tools), the override's (patched
plugin tools), the pin's (proxied MCP tools) or, for a plugin tool no override touched,
the schema LangChain renders, which is what ``capc compile --plugins`` recorded. The
annotations come from the reviewed method and options, never from an upstream server.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from compiler.runtime.manifest.read import thaw
from compiler.runtime.provenance import CAPABILITY_KEY, KIND_KEY, PROFILE_KEY

logger = logging.getLogger(__name__)

TOOL_NAME = re.compile(r"[A-Za-z0-9_.\-]{1,128}")
META_CAPABILITY = "capc/capability"
META_KIND = "capc/kind"
META_DIGEST = "capc/manifest_digest"
META_PROFILE = "capc/profile"
WRAPPED_RESULT_KEY = "result"
SAFE_METHODS = frozenset({"GET", "HEAD", "OPTIONS"})
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})


@dataclass(frozen=True, slots=True)
class ServedTool:
    """One listed tool: the definition sent, the LangChain tool that runs it, its policy."""

    name: str
    definition: Mapping[str, Any]
    tool: Any = field(repr=False)
    capability: str
    kind: str
    needs_approval: bool = False
    wraps_result: bool = False


def served_tools(tools: Iterable[Any], manifest: Any, digest: str,
                 gated: frozenset[str] = frozenset()) -> tuple[ServedTool, ...]:
    """The definitions of ``tools`` (a resolved toolset's), sorted by name.

    ``gated``: names of proxied tools whose calls need the client's approval. A tool
    whose name breaks MCP's rules is left out and logged, never renamed.
    """
    served: dict[str, ServedTool] = {}
    for tool in tools:
        name = str(tool.name)
        if not TOOL_NAME.fullmatch(name):
            logger.warning("tool %r not served: MCP tool names are 1-128 of A-Za-z0-9_.-",
                           name[:140])
            continue
        served.setdefault(name, _served(tool, manifest, digest, name in gated))
    return tuple(served[name] for name in sorted(served))


def _served(tool: Any, manifest: Any, digest: str, gated: bool) -> ServedTool:
    metadata = dict(getattr(tool, "metadata", None) or {})
    code = str(metadata.get(CAPABILITY_KEY, ""))
    kind = str(metadata.get(KIND_KEY, "internal"))
    capability = manifest.capability(code) if code else None
    definition: dict[str, Any] = {"name": tool.name,
                                  "description": str(tool.description or ""),
                                  "inputSchema": input_schema(tool, capability, kind)}
    output, wraps = output_schema(metadata.get("output_schema"))
    if output is not None:
        definition["outputSchema"] = output
    annotations = tool_annotations(capability, kind)
    if annotations:
        definition["annotations"] = annotations
    meta = {META_CAPABILITY: code, META_KIND: kind, META_DIGEST: digest}
    if metadata.get(PROFILE_KEY) is not None:
        meta[META_PROFILE] = str(metadata[PROFILE_KEY])
    definition["_meta"] = meta
    return ServedTool(str(tool.name), definition, tool, code, kind, gated, wraps)


def input_schema(tool: Any, capability: Any, kind: str) -> dict[str, Any]:
    """The reviewed input schema of ``tool``, as the manifest or the pin spells it."""
    if kind == "api" and capability is not None and capability.tool is not None:
        return dict(thaw(capability.tool.descriptor().input_schema))
    declared = getattr(tool, "declared_schema", None)
    if isinstance(declared, Mapping):
        return dict(thaw(declared))
    schema = getattr(tool, "args_schema", None)
    if isinstance(schema, Mapping):  # proxied MCP tools: the pinned (or shown) schema
        return dict(thaw(schema))
    from langchain_core.utils.function_calling import convert_to_openai_tool

    parameters = convert_to_openai_tool(tool)["function"].get("parameters")
    return dict(parameters or {"type": "object", "properties": {}})


def output_schema(schema: Any) -> tuple[dict[str, Any] | None, bool]:
    """``(outputSchema, wraps)``: an object schema as is, any other wrapped in one object
    under ``result`` (SPEC §16), with ``wraps`` saying the value must be wrapped too."""
    if not isinstance(schema, Mapping):
        return None, False
    schema = dict(thaw(schema))
    if schema.get("type") == "object":
        return schema, False
    return {"type": "object", "properties": {WRAPPED_RESULT_KEY: schema},
            "required": [WRAPPED_RESULT_KEY]}, True


def tool_annotations(capability: Any, kind: str) -> dict[str, bool]:
    """The hints the reviewed capability supports: an api tool's from its method and retry
    options; a proxied tool reaches a world outside; a plugin tool's are unknown (none)."""
    if kind == "mcp":
        return {"openWorldHint": True}
    if kind != "api" or capability is None or capability.api is None:
        return {}
    method = capability.api.method.upper()
    retry = capability.api.retry or {}
    idempotent = method in IDEMPOTENT_METHODS or bool(retry.get("idempotency_key"))
    read_only = method in SAFE_METHODS
    # Any unsafe method may destroy: MCP's default, kept rather than guessed from REST habits.
    return {"readOnlyHint": read_only, "destructiveHint": not read_only,
            "idempotentHint": idempotent, "openWorldHint": True}
