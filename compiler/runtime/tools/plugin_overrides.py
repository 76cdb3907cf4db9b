"""Boot-time ToolOverrides of internal (plugin) tools: clone, patch, expose; never mutate.

Overrides apply after every plugin registered, in order (the manifest's pending
overrides, then the Python API's), each seeing the previous result. A patched tool is a
new tool whose executor is the registry's original: it receives only the arguments the
original accepts, so a parameter an override adds reaches the model but not the code; one
declared ``consumer_only`` never reaches the code, even where the original would accept it.
An override naming a tool that is not registered is logged at WARN and skipped.
"""

from __future__ import annotations

import logging
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from langchain_core.runnables import RunnableConfig
from langchain_core.tools import BaseTool
from langchain_core.utils.function_calling import convert_to_openai_tool

from compiler.runtime.api.output import OutputContract, structured_result
from compiler.runtime.descriptors import ToolDescriptor, ToolOverride, apply_override
from compiler.runtime.tools.argument_models import build_argument_model, unsupported_schema_features
from compiler.runtime.tools.declared import DeclaredSchemaTool, validation_error_handler

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class PatchedTool:
    """A registry tool, its descriptor after overrides, and the tool the model gets."""

    original: Any
    descriptor: ToolDescriptor
    tool: Any

    @property
    def patched(self) -> bool:
        """Whether any override changed what the model sees."""
        return self.tool is not self.original


def describe_tool(tool: BaseTool) -> ToolDescriptor:
    """The descriptor the model sees of ``tool`` (schema as LangChain renders it)."""
    function = convert_to_openai_tool(tool)["function"]
    return ToolDescriptor(
        name=tool.name,
        description=tool.description or "",
        input_schema=dict(function.get("parameters") or {"type": "object", "properties": {}}),
        output_schema=None,
        original_name=tool.name,
    )


def apply_tool_overrides(
    originals: Mapping[str, Any],
    overrides: Sequence[ToolOverride],
    *,
    base: Mapping[str, PatchedTool] | None = None,
    handled_elsewhere: Collection[str] = (),
    origin: str = "manifest",
) -> dict[str, PatchedTool]:
    """Patch the tools of ``originals`` (by original name) with ``overrides`` in order.

    ``base`` holds earlier results to compose on; only overridden tools are returned.
    Names in ``handled_elsewhere`` (api tools) are not reported as unknown.
    """
    descriptors: dict[str, ToolDescriptor] = {}
    for override in overrides:
        name = override.tool
        if name not in originals:
            if name not in handled_elsewhere:
                logger.warning(
                    "tool override of %r (%s%s) skipped: no such tool is registered",
                    name, origin, f", {override.source}" if override.source else "",
                )
            continue
        if name not in descriptors:
            earlier = (base or {}).get(name)
            descriptors[name] = earlier.descriptor if earlier else describe_tool(originals[name])
        descriptors[name] = apply_override(descriptors[name], override)
    return {
        name: PatchedTool(originals[name], descriptor, patched_tool(originals[name], descriptor))
        for name, descriptor in descriptors.items()
    }


def patched_tool(original: BaseTool, descriptor: ToolDescriptor) -> BaseTool:
    """A new tool showing ``descriptor`` whose executor is ``original``."""
    accepted = accepted_arguments(original)
    schema_changed = descriptor.input_schema != describe_tool(original).input_schema
    argument_names: Mapping[str, str] = {}
    if not schema_changed and original.args_schema is not None:
        args_schema: Any = original.args_schema
    elif not unsupported_schema_features(descriptor.input_schema):
        model = build_argument_model(descriptor.name, descriptor.input_schema)
        args_schema, argument_names = model.model, model.argument_names
    else:
        # Still shown to the model; the original's own schema validates at call time.
        logger.warning(
            "patched schema of tool %r cannot be enforced before its executor runs: %s",
            descriptor.name, "; ".join(unsupported_schema_features(descriptor.input_schema)),
        )
        args_schema = descriptor.input_schema

    # SPEC §16: an override's output schema makes the result (text, structured value).
    output = OutputContract.for_tool(descriptor.name, descriptor.output_schema)

    async def run_original(config: RunnableConfig, **fields: Any) -> Any:
        arguments = {argument_names.get(key, key): value for key, value in fields.items()}
        # Consumer-only parameters are read from the tool call by its consumers: even an
        # executor that would accept the name never receives them.
        kept = {
            key: value for key, value in arguments.items()
            if key in accepted and key not in descriptor.consumer_only
            and not (value is None and key in argument_names.values())
        }
        result = await original.ainvoke(kept, config=config)
        return result if output is None else structured_result(output, result)

    return DeclaredSchemaTool(
        name=descriptor.name,
        description=descriptor.description,
        args_schema=args_schema,
        declared_schema=descriptor.input_schema,
        coroutine=run_original,
        handle_tool_error=original.handle_tool_error or True,
        handle_validation_error=validation_error_handler(descriptor.name),
        return_direct=original.return_direct,
        response_format="content" if output is None else "content_and_artifact",
        tags=original.tags,
        metadata={**(original.metadata or {}), "original_name": original.name,
                  **({} if output is None else {"output_schema": output.exposed_schema()})},
    )


def accepted_arguments(tool: BaseTool) -> frozenset[str]:
    """The argument names ``tool`` accepts (schema properties, field names and aliases)."""
    names = set(tool.args)
    schema = tool.args_schema
    if isinstance(schema, type) and hasattr(schema, "model_fields"):
        for field_name, field in schema.model_fields.items():
            names.add(field_name)
            if field.alias:
                names.add(field.alias)
    return frozenset(names)
