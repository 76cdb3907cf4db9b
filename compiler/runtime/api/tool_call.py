"""One api tool's calls in one context: validate, build the request, send, shape, report.

``build_api_tool`` (``compiler.runtime.api.tool``) wraps an :class:`ApiCall` in the
LangChain tool; the call never raises into the agent: every refusal or failure becomes a
ToolException whose text starts with ``Error`` and says what the model can do. Resolved
setting values are redacted from every output.
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Mapping
from concurrent.futures import ThreadPoolExecutor
from typing import TYPE_CHECKING, Any

from compiler.runtime.api.failures import describe_failure, origin_text, status_error
from compiler.runtime.api.request import (
    ResolvedEndpoint,
    build_request,
    file_content_type,
)
from compiler.runtime.api.retry import (
    RetryOutcome,
    new_idempotency_key,
    send_with_retries,
)
from compiler.runtime.api.selection import SelectionTooLarge
from compiler.runtime.api.shaping import (
    response_text,
    shape_response,
    shape_structured,
)
from compiler.runtime.context import RuntimeContext
from compiler.runtime.egress.call import (
    MAX_REDIRECTS,
    HttpClient,
    HttpResponse,
    OutgoingRequest,
    UploadedFile,
)
from compiler.runtime.egress.charsets import valid_unicode
from compiler.runtime.egress.egress_errors import EgressError, EgressTimeout
from compiler.runtime.egress.portal import CallCancelled, SyncPortal
from compiler.runtime.errors import ToolCallRefused
from compiler.runtime.manifest.parameters import within_accepted
from compiler.runtime.placeholders import Redactor, render
from compiler.runtime.provenance import Provenance
from compiler.runtime.telemetry import tool_call_scope
from compiler.runtime.usage import ManifestUsage

if TYPE_CHECKING:
    from compiler.runtime.api.tool import ApiToolBlueprint

logger = logging.getLogger(__name__)

# A reply larger than this is masked, parsed and shaped on a worker thread, so the event
# loop keeps serving while it is (smaller ones cost less than handing them over).
SHAPE_ON_THREAD_BYTES = 64 * 1024
# The workers of that shaping, shared by every tool of the process. Their own pool, not the
# loop's default executor: a call holding a max_concurrency slot must not wait for threads
# that sync callers (waiting for that slot) can all be holding. Threads start on first use.
_SHAPING_THREADS = ThreadPoolExecutor(max_workers=2, thread_name_prefix="capc-shaping")
DEADLINE_GRACE_SECONDS = 1.0


class _SendProgress:
    """Whether any attempt of one call began to send its request (set by the egress trace)."""

    __slots__ = ("sent",)

    def __init__(self) -> None:
        self.sent = False

    def mark_sent(self) -> None:
        """The request's first bytes are leaving: from now on the server may have seen it."""
        self.sent = True


class ApiCall:
    """The executor of one api tool in one context."""

    def __init__(
        self,
        blueprint: ApiToolBlueprint,
        resolved: ResolvedEndpoint,
        ctx: RuntimeContext,
        client: HttpClient,
        max_upload_bytes: int,
        provenance: Provenance | None = None,
        usage: ManifestUsage | None = None,
    ) -> None:
        self._blueprint = blueprint
        self._resolved = resolved
        self._ctx = ctx
        self._client = client
        self._max_upload_bytes = max_upload_bytes
        self._provenance = provenance
        self._usage = usage

    def __repr__(self) -> str:
        # The tool's pydantic repr shows its coroutine: never the resolved endpoint inside.
        return f"<api call of {self._blueprint.descriptor.name!r}>"

    @property
    def tool_name(self) -> str:
        """The name the model calls this tool by."""
        return self._blueprint.descriptor.name

    async def __call__(self, **fields: Any) -> str | tuple[str, Any]:
        from langchain_core.tools import ToolException

        redactor: Redactor = self._ctx.redactor
        name = self._blueprint.descriptor.name
        try:
            # Already masked: every text of a success is a masked_cut of the body (once
            # read, once more after shaping), so a large reply is not scanned a third time.
            with tool_call_scope(name, self._provenance, self._usage, redactor.redact):
                return await self._within_timeout(fields)
        except ToolCallRefused as refusal:
            message = f"Error: {name} was not called: {refusal}"
        except SelectionTooLarge as refusal:
            message = (f"Error: {name} failed: {refusal}; the tool's select multiplies "
                       "this response, so ask for less")
        except EgressError as failure:
            message = f"Error: {name} failed: {describe_failure(failure)}"
        except ToolException:
            raise
        except Exception as error:
            # The last line of "never raises into the agent": log for the operator, and
            # give the model a message without internals.
            logger.error(
                "api tool %s failed unexpectedly: %s",
                name, redactor.redact(f"{type(error).__name__}: {error}"),
            )
            message = f"Error: {name} failed unexpectedly ({type(error).__name__}); try again later"
        raise ToolException(valid_unicode(redactor.redact(message)))

    async def _within_timeout(self, fields: Mapping[str, Any]) -> str | tuple[str, Any]:
        """The whole call, waiting for a slot and every retry included, within ``timeout``."""
        timeout = self._blueprint.endpoint.timeout
        limiter = self._blueprint.limiter
        deadline = asyncio.get_running_loop().time() + timeout
        waiting = limiter is not None
        progress = _SendProgress()
        try:
            async with asyncio.timeout_at(deadline):
                if limiter is None:
                    return await self._run(fields, deadline, progress)
                async with limiter.slot():
                    waiting = False
                    return await self._run(fields, deadline, progress)
        except TimeoutError:
            origin = origin_text(render(self._resolved.url, lambda slot: slot))
            if waiting:
                raise ToolCallRefused(
                    f"{limiter.limit if limiter else 0} calls of this tool were in flight for "
                    f"its whole timeout of {timeout:g} s; try again later"
                ) from None
            if not progress.sent:
                # A slot freed in the last instant, a slow lookup or connect: nothing left,
                # so the model may safely call again (no side effect can have happened).
                raise ToolCallRefused(
                    f"its timeout of {timeout:g} s ran out before the request to {origin} "
                    "was sent; try again later"
                ) from None
            message = f"no complete response from {origin} within {timeout:g} s"
            raise EgressTimeout(message) from None

    async def _run(
        self, fields: Mapping[str, Any], deadline: float, progress: _SendProgress
    ) -> str | tuple[str, Any]:
        endpoint = self._blueprint.endpoint
        # An override may add parameters no binding consumes, or declare some read by
        # consumers of the tool call only: the executor never sees either.
        consumer_only = self._blueprint.descriptor.consumer_only
        arguments = {
            name: within_accepted(value, endpoint.arguments[name].accepts)
            for name, value in self._blueprint.arguments.arguments(fields).items()
            if name in endpoint.arguments and name not in consumer_only
        }
        uploads = await self._uploads(arguments)
        request = build_request(self._resolved, arguments, uploads)
        # Imported here: resolving a manifest does not import httpx, a first call does.
        from compiler.runtime.egress.http import check_same_origin

        # Slots are encoded so they cannot move the request elsewhere; this makes it certain.
        check_same_origin(
            request.url, render(self._resolved.url, lambda slot: "{" + slot + "}")
        )
        outcome = await self._send(request, deadline, progress)
        if len(outcome.response.content) > SHAPE_ON_THREAD_BYTES:
            loop = asyncio.get_running_loop()
            return await loop.run_in_executor(
                _SHAPING_THREADS, self._model_text, request, outcome
            )
        return self._model_text(request, outcome)

    def _model_text(
        self, request: OutgoingRequest, outcome: RetryOutcome[HttpResponse]
    ) -> str | tuple[str, Any]:
        """What the model reads of ``outcome``: masked, shaped, cut (or a ToolException);
        with an output schema, ``(text, structured value or None)``.

        Linear in the reply and bounded (select included): safe on a worker thread, whose
        result the call's timeout stops waiting for.
        """
        from langchain_core.tools import ToolException

        response = outcome.response
        redactor = self._ctx.redactor
        body = response_text(redactor, response)
        if response.status_code >= 400:
            message = status_error(redactor, request, outcome, body)
            raise ToolException(valid_unicode(redactor.redact(message)))
        output = self._blueprint.output
        if output is None:
            text = shape_response(redactor, body, self._blueprint.shaping)
        else:
            reply = shape_structured(redactor, body, self._blueprint.shaping, output)
            text = reply.text
        if response.truncated:
            limit = self._blueprint.endpoint.max_response_bytes
            text += (f"\n\n[truncated: the response is longer than {limit} bytes and was cut "
                     "here; ask for less (a narrower query or a smaller limit) to see the rest]")
        return text if output is None else (text, reply.value if reply.structured else None)

    async def _send(
        self, request: OutgoingRequest, deadline: float, progress: _SendProgress
    ) -> RetryOutcome[HttpResponse]:
        policy = self._blueprint.retry
        limits = self._blueprint.limits
        if policy is not None and policy.idempotency_key is not None:
            request = request.with_header(policy.idempotency_key, new_idempotency_key())

        async def attempt(
            time_left: float, redirects_left: int, on_redirect: Callable[[], None] | None
        ) -> HttpResponse:
            # Every attempt is a full egress request: the address is checked again. The
            # call's own deadline fires first; egress' timeout is a backstop.
            return await self._client.send(
                request,
                limits.within(max(time_left, 0.0) + DEADLINE_GRACE_SECONDS, redirects_left),
                on_redirect=on_redirect,
                on_sent=progress.mark_sent,
            )

        loop = asyncio.get_running_loop()
        if policy is None:
            return RetryOutcome(await attempt(deadline - loop.time(), MAX_REDIRECTS, None), 1)
        return await send_with_retries(attempt, policy, request.method, deadline)

    async def _uploads(self, arguments: Mapping[str, Any]) -> list[UploadedFile]:
        endpoint = self._blueprint.endpoint
        documents = self._ctx.documents
        wanted: list[tuple[str, Any]] = []
        for field in endpoint.bound("file"):
            value = arguments.get(field)
            if value is None:
                continue
            for document_id in value if isinstance(value, list) else [value]:
                wanted.append((field, document_id))
        if not wanted:
            return []
        if documents is None:
            raise ToolCallRefused("this agent has no document service, so no file can be sent")
        # Every document is authorized before any bytes are fetched or any request is made.
        found = []
        for field, document_id in wanted:
            document = await documents.get_document_by_id(document_id)
            if document is None:
                raise ToolCallRefused(f"document {document_id} does not exist")
            if str(getattr(document, "chat_id", None)) != str(self._ctx.chat_id):
                raise ToolCallRefused(
                    f"document {document_id} is not in this chat; only documents of the "
                    "current chat can be uploaded"
                )
            found.append((field, document_id, document))
        uploads = []
        for field, document_id, document in found:
            filename, content = await documents.fetch_document_bytes(document)
            if len(content) > self._max_upload_bytes:
                raise ToolCallRefused(
                    f"document {document_id} is {len(content)} bytes, over the upload limit "
                    f"of {self._max_upload_bytes} bytes"
                )
            uploads.append(UploadedFile(field=field, filename=str(filename), content=content,
                                        media_type=file_content_type(str(filename))))
        return uploads


def synchronous_entry(call: ApiCall, portal: SyncPortal | None) -> Any:
    """The sync entry point: the same coroutine as ``ainvoke``, run on the portal's loop.

    A plain function (not a callable object), so LangChain and LangGraph read its
    signature; ``**fields`` are argument-model field names, never a declared name.
    """

    def run_synchronously(**fields: Any) -> str | tuple[str, Any]:
        from langchain_core.tools import ToolException

        name = call.tool_name
        if portal is None:
            raise ToolException(f"Error: {name} runs asynchronously only; call it with ainvoke")
        try:
            return portal.run(call(**fields))
        except ToolException:
            raise
        except CallCancelled as cancelled:  # closed while it ran: it may have been sent
            raise ToolException(f"Error: {name} was cancelled: {cancelled}") from None
        except EgressError as failure:  # the manifest was closed before
            raise ToolException(f"Error: {name} was not called: {failure}") from None

    return run_synchronously
