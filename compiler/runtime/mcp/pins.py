"""Pinned MCP tools: the reviewed descriptor of each tool, its digest, and drift against it.

A pin records what ``tools/list`` returned when ``capc lock`` ran: ``name``, ``description``,
``input_schema`` and ``annotations`` (when listed). Its ``digest`` is the SHA-256 of exactly
those fields in canonical JSON, so the lock writer, the compiler and the runtime compute it
the same way, and a live listing can be compared to the pin without trusting anything else.
This module needs no ``mcp`` import: it reads listed tools by attribute.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from typing import Any

PINNED_FIELDS = ("name", "description", "input_schema", "annotations")


def canonical_json(value: Any) -> bytes:
    """The canonical bytes of a JSON value: sorted keys, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def pinned_fields(tool: Mapping[str, Any]) -> dict[str, Any]:
    """The fields a pin covers, ``annotations`` only when the server listed them."""
    fields = {"name": tool["name"], "description": tool.get("description"),
              "input_schema": tool.get("input_schema") or {}}
    if tool.get("annotations") is not None:
        fields["annotations"] = tool["annotations"]
    return fields


def tool_digest(tool: Mapping[str, Any]) -> str:
    """``sha256:HEX`` over the canonical JSON of the pinned fields of ``tool``."""
    return "sha256:" + hashlib.sha256(canonical_json(pinned_fields(tool))).hexdigest()


def listed_tool(tool: Any) -> dict[str, Any]:
    """An MCP SDK ``Tool`` (anything with ``name``, ``description``, ``inputSchema``,
    ``annotations``) as pinned fields plus its digest."""
    annotations = getattr(tool, "annotations", None)
    if annotations is not None and hasattr(annotations, "model_dump"):
        annotations = annotations.model_dump(mode="json", exclude_none=True)
    fields = pinned_fields({
        "name": str(tool.name),
        "description": getattr(tool, "description", None),
        "input_schema": json.loads(json.dumps(getattr(tool, "inputSchema", None) or {})),
        "annotations": annotations or None,
    })
    return {**fields, "digest": tool_digest(fields)}


def changed_fields(pinned: Mapping[str, Any], live: Mapping[str, Any]) -> list[str]:
    """The pinned fields that differ between two descriptors of one tool."""
    before, after = pinned_fields(pinned), pinned_fields(live)
    return [name for name in PINNED_FIELDS[1:] if before.get(name) != after.get(name)]
