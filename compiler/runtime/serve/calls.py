"""One ``tools/call``: arguments checked against the reviewed schema, the tool run within
its bounds, and the outcome as an MCP ``CallToolResult`` that holds no secret.

A failure of any kind is a result with ``isError`` (what the model reads), never a
JSON-RPC error, except for a name the endpoint does not list (the caller's mistake).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections import OrderedDict
from collections.abc import Mapping
from typing import Any

from compiler.runtime.serve.listing import WRAPPED_RESULT_KEY, ServedTool

logger = logging.getLogger(__name__)

MAX_ERROR_CHARACTERS = 4000
MAX_CACHED_MODELS = 256
_TOOL_CALL_ID = "capc-serve"


class CallGate:
    """At most ``limit`` calls run at once; at most ``waiting`` more wait for a slot."""

    def __init__(self, limit: int, waiting: int) -> None:
        self._slots = asyncio.Semaphore(limit)
        self._waiting_limit = waiting
        self._waiting = 0
        self.running = 0

    def full(self) -> bool:
        """Whether a new call would be refused now rather than wait."""
        return self._waiting >= self._waiting_limit and self._slots.locked()

    async def __aenter__(self) -> CallGate:
        self._waiting += 1
        try:
            await self._slots.acquire()
        finally:
            self._waiting -= 1
        self.running += 1
        return self

    async def __aexit__(self, *exc_info: object) -> None:
        self.running -= 1
        self._slots.release()


def error_result(text: str) -> dict[str, Any]:
    """A ``CallToolResult`` the model reads as a failure."""
    return {"content": [{"type": "text", "text": text[:MAX_ERROR_CHARACTERS]}], "isError": True}


class ArgumentCheck:
    """Arguments of proxied MCP tools against their pinned schema, before any call.

    api and plugin tools check their own arguments (a model generated from the reviewed
    schema) before their code runs; a proxied tool's would only be checked upstream.
    """

    def __init__(self) -> None:
        self._models: OrderedDict[str, Any] = OrderedDict()

    def problem(self, served: ServedTool, arguments: Mapping[str, Any]) -> str | None:
        """What is wrong with ``arguments`` for ``served``, or None."""
        if served.kind != "mcp":
            return None
        schema = served.definition["inputSchema"]
        key = json.dumps(schema, sort_keys=True)
        model = self._models.get(key)
        if model is None:
            model = self._model(served.name, schema)
            self._models[key] = model
            while len(self._models) > MAX_CACHED_MODELS:
                self._models.popitem(last=False)
        if model is False:
            return _structural_problem(schema, arguments)
        from pydantic import ValidationError

        from compiler.runtime.tools.argument_models import validation_summary

        try:
            model.model_validate(dict(arguments))
        except ValidationError as error:
            return validation_summary(error)
        return None

    @staticmethod
    def _model(name: str, schema: Mapping[str, Any]) -> Any:
        from compiler.runtime.tools.argument_models import build_argument_model

        try:
            return build_argument_model(name, schema).model
        except (ValueError, TypeError):
            return False  # a schema no model expresses: the structural checks still apply


def _structural_problem(schema: Mapping[str, Any], arguments: Mapping[str, Any]) -> str | None:
    properties = schema.get("properties") or {}
    missing = [name for name in schema.get("required") or () if name not in arguments]
    if missing:
        return f"missing required arguments: {', '.join(map(str, missing[:5]))}"
    if schema.get("additionalProperties") is False:
        unknown = [name for name in arguments if name not in properties]
        if unknown:
            return f"unknown arguments: {', '.join(unknown[:5])}"
    return None


async def run_tool(served: ServedTool, arguments: dict[str, Any], mask: Any) -> dict[str, Any]:
    """``served`` called with ``arguments``: its ``CallToolResult``, masked by ``mask``."""
    from langchain_core.tools import ToolException

    call = {"type": "tool_call", "name": served.name, "args": arguments, "id": _TOOL_CALL_ID}
    try:
        message = await served.tool.ainvoke(call)
    except ToolException as error:  # a proxied server's own error text, masked and cut
        return error_result(mask(f"Error: {served.name} failed: {error}"))
    except (asyncio.CancelledError, KeyboardInterrupt):
        raise
    except Exception as error:
        logger.error("served tool %s failed unexpectedly: %s", served.name,
                     mask(f"{type(error).__name__}: {error}"))
        return error_result(f"Error: {served.name} failed unexpectedly "
                            f"({type(error).__name__}); try again later")
    return tool_result(served, message, mask)


def tool_result(served: ServedTool, message: Any, mask: Any) -> dict[str, Any]:
    """The ``CallToolResult`` of a ToolMessage: text content, and ``structuredContent``
    where the tool declares an output schema (§16)."""
    failed = getattr(message, "status", "success") == "error"
    content = getattr(message, "content", message)
    text = mask(content_text(content))
    if failed:
        return error_result(text)
    if "outputSchema" not in served.definition:
        return {"content": content_blocks(content, mask), "isError": False}
    artifact = getattr(message, "artifact", None)
    structured = {WRAPPED_RESULT_KEY: artifact} if served.wraps_result else artifact
    if artifact is None or not isinstance(structured, dict):
        # The reply did not match its schema (§16 returns it as text with a note): a
        # result without structured content would break the declared contract.
        return error_result(text)
    structured = masked_value(structured, mask)
    serialized = json.dumps(structured, ensure_ascii=False)
    return {"content": [{"type": "text", "text": serialized}],
            "structuredContent": structured, "isError": False}


def content_blocks(content: Any, mask: Any) -> list[dict[str, Any]]:
    """A tool's content as MCP content: text masked, images and audio as MCP spells them
    (from LangChain's standard blocks or MCP's own), anything else as JSON text."""
    if not isinstance(content, list):
        return [{"type": "text", "text": mask(content_text(content))}]
    blocks: list[dict[str, Any]] = []
    for block in content:
        kind = block.get("type") if isinstance(block, Mapping) else None
        data = (block.get("data") or block.get("base64")) if isinstance(block, Mapping) else None
        mime = (block.get("mimeType") or block.get("mime_type")) if isinstance(
            block, Mapping) else None
        if kind in ("image", "audio") and isinstance(data, str) and isinstance(mime, str):
            blocks.append({"type": kind, "data": data, "mimeType": mime})
        else:
            blocks.append({"type": "text", "text": mask(content_text([block]))})
    return blocks or [{"type": "text", "text": ""}]


def content_text(content: Any) -> str:
    """A tool's content as one text: strings joined, other blocks as JSON."""
    if isinstance(content, str):
        return content
    if isinstance(content, list):
        parts = []
        for block in content:
            if isinstance(block, str):
                parts.append(block)
            elif isinstance(block, Mapping) and block.get("type") == "text":
                parts.append(str(block.get("text", "")))
            else:
                parts.append(json.dumps(block, ensure_ascii=False, default=str))
        return "\n".join(parts)
    return json.dumps(content, ensure_ascii=False, default=str)


def masked_value(value: Any, mask: Any, depth: int = 0) -> Any:
    """``value`` with every string masked (bounded depth: deeper values become text)."""
    if depth > 64:
        return mask(json.dumps(value, ensure_ascii=False, default=str))
    if isinstance(value, str):
        return mask(value)
    if isinstance(value, Mapping):
        return {mask(str(key)): masked_value(item, mask, depth + 1) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [masked_value(item, mask, depth + 1) for item in value]
    return value
