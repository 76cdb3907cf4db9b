"""One egress call as values: the request to send, the limits it runs under, and the
client protocol that takes both. This is the seam between the api tools and egress.

An api tool builds its :class:`CallLimits` once (they follow from the manifest) and an
:class:`OutgoingRequest` per call, and hands both to :meth:`HttpClient.send`. Light on
purpose: importing it does not pull in httpx, so resolving a manifest stays cheap.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from typing import Protocol

from compiler.runtime.manifest.model import DEFAULT_MAX_RESPONSE_BYTES, DEFAULT_TIMEOUT

# Redirects one call may follow, every attempt of a retried call together.
MAX_REDIRECTS = 5
# Tries after a failed connection (GET, HEAD and OPTIONS only; see egress.client).
CONNECTION_RETRIES = 1


@dataclass(frozen=True, slots=True)
class UploadedFile:
    """One file part: the field name, the file name, its bytes and its media type."""

    field: str
    filename: str
    content: bytes
    media_type: str = "application/octet-stream"

    def __repr__(self) -> str:
        # A chat document's bytes are the user's: their size only.
        return (f"UploadedFile(field={self.field!r}, filename={self.filename!r}, "
                f"content_bytes={len(self.content)}, media_type={self.media_type!r})")


@dataclass(frozen=True, slots=True)
class OutgoingRequest:
    """Everything the transport needs for one call."""

    method: str
    url: str
    headers: tuple[tuple[str, str], ...]
    content: bytes | None = None
    form_fields: tuple[tuple[str, str], ...] = ()
    files: tuple[UploadedFile, ...] = ()

    def __repr__(self) -> str:
        # The URL, header values and body carry settings and arguments: names and sizes only.
        return (
            f"OutgoingRequest(method={self.method!r}, headers={[n for n, _ in self.headers]!r}, "
            f"content_bytes={len(self.content or b'')}, "
            f"form_fields={[n for n, _ in self.form_fields]!r}, files={len(self.files)})"
        )

    def with_header(self, name: str, value: str) -> OutgoingRequest:
        """This request with header ``name`` added (sent, it wins over an earlier one)."""
        return replace(self, headers=(*self.headers, (name, value)))


@dataclass(frozen=True, slots=True)
class CallLimits:
    """What bounds one call, and which of its parts are secrets that may not change origin.

    ``timeout`` covers the whole call (DNS, connect, every redirect, the body);
    ``max_response_bytes`` the decoded body, which is cut there when ``truncate_response``
    (else the call fails with ResponseTooLarge). ``connection_retries``: how often a GET,
    HEAD or OPTIONS is tried again when its connection fails (a caller that retries
    itself passes 0). ``secret_headers`` name the headers whose value came from a setting:
    dropped on a redirect to another origin and masked in logs; ``secret_body``: the body
    carries settings, so a redirect that would resend it to another origin is refused.
    """

    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    truncate_response: bool = False
    max_redirects: int = MAX_REDIRECTS
    connection_retries: int = CONNECTION_RETRIES
    secret_headers: frozenset[str] = frozenset()
    secret_body: bool = False

    def within(self, time_left: float, redirects_left: int) -> CallLimits:
        """These limits for one attempt of a call with this much time and redirects left."""
        return replace(self, timeout=time_left, max_redirects=redirects_left)


class HttpResponse(Protocol):
    """What an api tool reads from a response."""

    @property
    def status_code(self) -> int:
        """The HTTP status."""
        ...

    @property
    def headers(self) -> Mapping[str, str]:
        """The response headers (case-insensitive lookups)."""
        ...

    @property
    def content(self) -> bytes:
        """The decoded body."""
        ...

    @property
    def truncated(self) -> bool:
        """True when the body was cut at ``max_response_bytes``."""
        ...

    def text(self) -> str:
        """The body as text, in the charset the Content-Type names if it is an allowed text
        encoding (UTF-8 otherwise), as valid Unicode."""
        ...


class HttpClient(Protocol):
    """The client api tools send through (``egress.client.EgressClient`` implements it)."""

    async def send(
        self,
        request: OutgoingRequest,
        limits: CallLimits,
        *,
        on_redirect: Callable[[], None] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpResponse:
        """Send ``request`` within ``limits``; the response comes with its body read.

        ``on_redirect`` is called for each hop followed, ``on_sent`` when the request
        starts to leave (so a caller can tell a request that never left).
        """
        ...

    async def aclose(self) -> None:
        """Close the pool."""
        ...
