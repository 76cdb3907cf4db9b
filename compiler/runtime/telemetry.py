"""OpenTelemetry for api tool calls, when ``opentelemetry-api`` is installed (SPEC §13).

With a recording span active when an api tool is called (a LangGraph or agent framework
span, or the application's own), the call adds its provenance to that span and records
each HTTP attempt as a child CLIENT span with the HTTP semantic-convention attributes:
``http.request.method``, ``server.address``, ``server.port``, ``url.scheme``,
``http.response.status_code``, ``http.request.resend_count`` and ``error.type``; a wait
before a retry is an event on the tool's span. Never recorded: the URL's path or query
(slot values and settings live there), header values, bodies, exception messages.

Without the package nothing is imported (``find_spec`` only looks), and without a
recording span a call costs one ``get_current_span()``.
"""

from __future__ import annotations

import functools
import importlib.util
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from compiler.runtime.provenance import Provenance
from compiler.runtime.usage import ManifestUsage

if TYPE_CHECKING:
    from compiler.runtime.egress.call import CallLimits, OutgoingRequest

TRACER_NAME = "compiler.runtime"
# GenAI semantic conventions: an api tool is an "extension" (it calls an external API).
TOOL_NAME = "gen_ai.tool.name"
TOOL_TYPE = "gen_ai.tool.type"
OPERATION_NAME = "gen_ai.operation.name"
ATTEMPTS = "capc.http.attempts"
RETRY_WAIT_EVENT = "capc.retry.wait"
RETRY_WAIT_SECONDS = "capc.retry.wait_seconds"
KNOWN_METHODS = frozenset({"GET", "HEAD", "POST", "PUT", "DELETE", "CONNECT", "OPTIONS",
                           "TRACE", "PATCH"})


@dataclass(slots=True)
class _CallTrace:
    """The span of one tool call and what its attempts have done so far (one task's)."""

    span: Any
    attempts: int = 0
    last_attempt_ended: float | None = field(default=None)
    # Masks the context's resolved settings: a host may come from one (``${TENANT}``).
    mask: Callable[[str], str] | None = None


_CURRENT_CALL: ContextVar[_CallTrace | None] = ContextVar("capc_tool_call", default=None)


@functools.cache
def otel_installed() -> bool:
    """Whether ``opentelemetry-api`` is installed; looks without importing it."""
    try:
        return importlib.util.find_spec("opentelemetry.trace") is not None
    except (ImportError, ValueError):
        return False


@functools.cache
def _trace_api() -> Any:
    """``opentelemetry.trace``, imported on the first traced call, or None."""
    if not otel_installed():
        return None
    try:
        from opentelemetry import trace
    except ImportError:
        return None
    return trace


@contextmanager
def tool_call_scope(
    tool_name: str, provenance: Provenance | None, usage: ManifestUsage | None,
    mask: Callable[[str], str] | None = None,
) -> Iterator[None]:
    """One api tool call: hold the manifest, and annotate the active span when there is one;
    ``mask`` hides the context's setting values in what the span exports."""
    if usage is not None:
        usage.acquire()
    token = None
    try:
        trace = _trace_api() if provenance is not None else None
        if trace is not None:
            span = trace.get_current_span()
            if span.is_recording():
                assert provenance is not None
                span.set_attributes({
                    **provenance.fields(),
                    TOOL_NAME: tool_name,
                    TOOL_TYPE: "extension",
                    OPERATION_NAME: "execute_tool",
                })
                token = _CURRENT_CALL.set(_CallTrace(span, mask=mask))
        yield
    finally:
        if token is not None:
            _CURRENT_CALL.reset(token)
        if usage is not None:
            usage.release()


class TracedClient:
    """An HttpClient recording each request of a traced tool call as a CLIENT span."""

    def __init__(self, client: Any) -> None:
        self._client = client

    @property
    def portal(self) -> Any:
        """The wrapped client's sync portal."""
        return self._client.portal

    async def send(
        self,
        request: OutgoingRequest,
        limits: CallLimits,
        *,
        on_redirect: Callable[[], None] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> Any:
        """Send through the wrapped client; inside a traced call, as a client span."""
        hooks = {"on_redirect": on_redirect, "on_sent": on_sent}
        call = _CURRENT_CALL.get()
        if call is None:
            return await self._client.send(request, limits, **hooks)
        trace = _trace_api()
        call.attempts += 1
        started = time.monotonic()
        if call.last_attempt_ended is not None:
            call.span.add_event(RETRY_WAIT_EVENT, {
                RETRY_WAIT_SECONDS: round(started - call.last_attempt_ended, 6),
                "http.request.resend_count": call.attempts - 1,
            })
        call.span.set_attribute(ATTEMPTS, call.attempts)
        tracer = trace.get_tracer(TRACER_NAME)
        upper = request.method.upper()
        with tracer.start_as_current_span(
            upper if upper in KNOWN_METHODS else "HTTP",
            kind=trace.SpanKind.CLIENT,
            attributes=_request_attributes(upper, request.url, call.attempts, call.mask),
            record_exception=False,  # an exception's text is not ours to export
            set_status_on_exception=False,
        ) as span:
            try:
                response = await self._client.send(request, limits, **hooks)
            except BaseException as error:
                span.set_attribute("error.type", type(error).__name__)
                span.set_status(trace.Status(trace.StatusCode.ERROR))
                raise
            finally:
                call.last_attempt_ended = time.monotonic()
            status = int(response.status_code)
            span.set_attribute("http.response.status_code", status)
            if status >= 400:
                span.set_attribute("error.type", str(status))
                span.set_status(trace.Status(trace.StatusCode.ERROR))
            return response

    async def aclose(self) -> None:
        """Close the wrapped client."""
        await self._client.aclose()


def traced(client: Any) -> Any:
    """``client`` wrapped for tracing when OpenTelemetry is installed, else ``client``."""
    return TracedClient(client) if otel_installed() else client


def _request_attributes(method: str, url: str, attempt: int,
                        mask: Callable[[str], str] | None = None) -> dict[str, Any]:
    """Method, scheme, host and port of ``url``: never its path, query or user part, and
    the host masked (by ``mask``) when a setting wrote it."""
    attributes: dict[str, Any] = {
        "http.request.method": method if method in KNOWN_METHODS else "_OTHER",
    }
    try:
        parts = urlsplit(url)
        if parts.hostname:
            attributes["server.address"] = (mask(parts.hostname) if mask is not None
                                            else parts.hostname)
        attributes["server.port"] = parts.port or (443 if parts.scheme == "https" else 80)
        attributes["url.scheme"] = parts.scheme
    except ValueError:
        pass  # egress refuses such a URL; the span still records the attempt
    if attempt > 1:
        attributes["http.request.resend_count"] = attempt - 1
    return attributes
