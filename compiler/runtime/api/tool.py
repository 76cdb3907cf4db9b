"""An ``api`` capability as a LangChain tool: validate, build the request, send, report.

A blueprint (descriptor + generated argument model) is made once per manifest and tool;
a tool is made per context, after that context's settings are resolved. The tool never
raises into the agent: every refusal or failure becomes a ToolException whose text starts
with ``Error`` and says what the model can do, so a tool call yields a ToolMessage with
status "error". Resolved setting values are redacted from every output.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from compiler.runtime.api.concurrency import CallLimiter
from compiler.runtime.api.output import OutputContract
from compiler.runtime.api.request import (
    resolve_endpoint,
)
from compiler.runtime.api.retry import (
    RetryPolicy,
)
from compiler.runtime.api.shaping import (
    ResponseShaping,
)
from compiler.runtime.api.tool_call import ApiCall, synchronous_entry
from compiler.runtime.context import RuntimeContext
from compiler.runtime.descriptors import ToolDescriptor, ToolOverride, apply_override
from compiler.runtime.egress.call import (
    CONNECTION_RETRIES,
    CallLimits,
    HttpClient,
)
from compiler.runtime.egress.portal import SyncPortal
from compiler.runtime.errors import CapabilityUnavailable
from compiler.runtime.manifest.model import DEFAULT_MAX_UPLOAD_BYTES
from compiler.runtime.manifest.read import ApiEndpoint, CapabilityEntry
from compiler.runtime.placeholders import placeholders_in, setting_names
from compiler.runtime.provenance import Provenance
from compiler.runtime.tools.argument_models import ArgumentModel, build_argument_model
from compiler.runtime.tools.strict import strict_form
from compiler.runtime.usage import ManifestUsage


@dataclass(frozen=True, slots=True)
class ApiToolBlueprint:
    """What one api tool needs besides a context: its final descriptor and argument model."""

    capability: CapabilityEntry
    endpoint: ApiEndpoint
    descriptor: ToolDescriptor
    arguments: ArgumentModel
    settings: tuple[str, ...]
    # What bounds each request of a call: made once, each attempt narrows time and redirects.
    limits: CallLimits
    shaping: ResponseShaping | None = None
    retry: RetryPolicy | None = None
    # Shared by every tool built from this blueprint: the limit is per loaded manifest.
    limiter: CallLimiter | None = None
    # SPEC §16: the shaped output schema (after overrides); None: the tool returns text.
    output: OutputContract | None = None


def make_blueprint(
    capability: CapabilityEntry,
    overrides: Sequence[ToolOverride] = (),
    limiter: CallLimiter | None = None,
) -> ApiToolBlueprint:
    """The blueprint of an api capability, with ``overrides`` (Python API) applied in order.

    ``limiter``: the concurrency limiter to share (one per tool and loaded manifest); a new
    one is made when the tool has ``max_concurrency`` and none is given. Raises
    CapabilityUnavailable when an override leaves a schema no model can enforce.
    """
    assert capability.api is not None and capability.tool is not None
    endpoint = capability.api
    descriptor = capability.tool.descriptor()
    for override in overrides:
        if override.tool == descriptor.original_name:
            descriptor = apply_override(descriptor, override)
    strict = capability.tool.strict
    try:
        arguments = build_argument_model(descriptor.name, descriptor.input_schema, strict)
    except ValueError as error:
        raise CapabilityUnavailable(str(error)) from None
    header_settings = {name: setting_names(value) for name, value in endpoint.headers.items()}
    body_settings = placeholders_in(endpoint.body_template)
    names = {*setting_names(endpoint.url), *body_settings, *endpoint.placeholders}
    for found in header_settings.values():
        names.update(found)
    if limiter is None and endpoint.max_concurrency is not None:
        limiter = CallLimiter(endpoint.max_concurrency)
    try:
        shaping = ResponseShaping.from_manifest(endpoint.response)
        retry = RetryPolicy.from_manifest(endpoint.retry)
    except (ValueError, TypeError, KeyError) as error:
        raise CapabilityUnavailable(
            f"its response or retry options are invalid ({error})"
        ) from None
    limits = CallLimits(
        timeout=endpoint.timeout,
        max_response_bytes=endpoint.max_response_bytes,
        truncate_response=True,
        # A tool with a retry policy retries failed connections itself, within its timeout.
        connection_retries=CONNECTION_RETRIES if retry is None else 0,
        secret_headers=frozenset(name for name, found in header_settings.items() if found),
        secret_body=bool(body_settings),
    )
    return ApiToolBlueprint(
        capability=capability,
        endpoint=endpoint,
        descriptor=descriptor,
        arguments=arguments,
        settings=tuple(sorted(names)),
        limits=limits,
        shaping=shaping,
        retry=retry,
        limiter=limiter,
        output=OutputContract.for_tool(descriptor.name, descriptor.output_schema),
    )


async def build_api_tool(
    blueprint: ApiToolBlueprint,
    ctx: RuntimeContext,
    client: HttpClient,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    portal: SyncPortal | None = None,
    *,
    provenance: Provenance | None = None,
    usage: ManifestUsage | None = None,
) -> Any:
    """The tool of ``blueprint`` for ``ctx``; ``portal`` runs its sync calls (``invoke``).

    ``provenance`` goes into the tool's metadata (and span attributes); ``usage`` is held
    while a call runs, so a replaced manifest is not closed under it.

    Raises CapabilityUnavailable (no chat or document service for a file-bearing tool),
    UnresolvedPlaceholderError or UnsafeSettingError; never returns a half-built tool.
    """
    from compiler.runtime.tools.declared import DeclaredSchemaTool, validation_error_handler

    endpoint = blueprint.endpoint
    strict = blueprint.capability.tool is not None and blueprint.capability.tool.strict
    if endpoint.bound("file"):
        if ctx.chat_id is None:
            raise CapabilityUnavailable("it uploads chat documents, and the context has no chat")
        if ctx.documents is None:
            raise CapabilityUnavailable("it uploads documents, and the context has no documents")
    settings = await ctx.resolve_settings(blueprint.settings)
    resolved = resolve_endpoint(endpoint, settings)
    call = ApiCall(blueprint, resolved, ctx, client, max_upload_bytes, provenance, usage)
    descriptor = blueprint.descriptor
    metadata: dict[str, Any] = {"original_name": descriptor.original_name,
                                **({"strict": True} if strict else {})}
    output = blueprint.output
    if output is not None:
        # What consumers read (capc serve's outputSchema): the schema replies are checked
        # against; each result's artifact is the structured value, or None (text only).
        metadata["output_schema"] = output.exposed_schema()
    return DeclaredSchemaTool(
        name=descriptor.name,
        description=descriptor.description,
        args_schema=blueprint.arguments.model,
        declared_schema=(strict_form(descriptor.input_schema) if strict
                         else descriptor.input_schema),
        coroutine=call,
        func=synchronous_entry(call, portal),
        handle_tool_error=True,
        handle_validation_error=validation_error_handler(descriptor.name),
        response_format="content" if output is None else "content_and_artifact",
        metadata=(provenance.metadata(metadata) if provenance is not None
                  else {"capability": blueprint.capability.code, **metadata}),
    )
