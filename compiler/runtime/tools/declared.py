"""A StructuredTool that validates with a generated model but shows its declared schema.

LangChain derives what a model is shown (``tool_call_schema``) from ``args_schema`` by
rebuilding a subset pydantic model, which drops aliases (an argument named ``schema``
would be shown as the field name standing for it) and renders constraints in pydantic's
own words. The declared JSON schema is the contract, so that is what this tool shows.
"""

from __future__ import annotations

import copy
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import StructuredTool
from pydantic import ValidationError

from compiler.runtime.tools.argument_models import validation_summary

ERROR_PREFIX = "Error"
TOOL_CALL_KEYS = frozenset({"type", "name", "args", "id"})


class DeclaredSchemaTool(StructuredTool):
    """StructuredTool whose tool-call schema is ``declared_schema`` verbatim."""

    declared_schema: dict[str, Any]

    def invoke(self, input: Any, config: RunnableConfig | None = None, **kwargs: Any) -> Any:
        """As StructuredTool's, with arguments named ``type`` never mistaken for a ToolCall."""
        return super().invoke(self._arguments_or_call(input), config, **kwargs)

    async def ainvoke(
        self, input: Any, config: RunnableConfig | None = None, **kwargs: Any
    ) -> Any:
        """As StructuredTool's, with arguments named ``type`` never mistaken for a ToolCall."""
        return await super().ainvoke(self._arguments_or_call(input), config, **kwargs)

    def _arguments_or_call(self, value: Any) -> Any:
        # LangChain reads any dict whose "type" is "tool_call" as a ToolCall. A real one
        # names this tool, has an "id" and a dict of "args", and nothing else; anything
        # else is this tool's own arguments (SPEC §9), one of them `type` and, now that
        # arguments may be objects (SPEC §10), perhaps an object named `args`.
        if (
            isinstance(value, dict)
            and value.get("type") == "tool_call"
            and not (
                isinstance(value.get("args"), dict)
                and value.get("name") == self.name
                and "id" in value
                and set(value) <= TOOL_CALL_KEYS
            )
        ):
            return {"type": "tool_call", "name": self.name, "args": value, "id": None}
        return value

    @property
    def tool_call_schema(self) -> dict[str, Any]:
        """The declared JSON schema (a fresh copy: callers may mutate what they get)."""
        schema = copy.deepcopy(self.declared_schema)
        schema.setdefault("type", "object")
        schema.setdefault("properties", {})
        return schema


def validation_error_handler(tool_name: str) -> Any:
    """A ``handle_validation_error`` callable giving an actionable ``Error: ...`` text."""

    def handle(error: ValidationError | Exception) -> str:
        detail = validation_summary(error) if isinstance(error, ValidationError) else str(error)
        return (
            f"{ERROR_PREFIX}: invalid arguments for {tool_name}: {detail}. "
            "Fix the arguments and call the tool again."
        )

    return handle
