"""The one place the runtime's HTTP client is made: a pooled egress client per manifest.

Every api tool of a loaded manifest shares this client (the reference opened a client
per call). All policy lives in ``compiler.runtime.egress.client``: destination checks against
the resolved address, redirects re-checked hop by hop, secret headers dropped across
origins, a cap on decoded response bytes. This module only names the seam.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any, Protocol

from compiler.runtime.manifest.model import DEFAULT_TIMEOUT


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
    """The request interface api tools use (``egress.EgressClient`` implements it)."""

    async def request(
        self,
        method: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        content: bytes | str | None = None,
        data: Mapping[str, Any] | None = None,
        files: Any = None,
        secret_headers: Collection[str] = (),
        secret_body: bool = False,
        timeout: float = DEFAULT_TIMEOUT,
        max_response_bytes: int = ...,
        max_redirects: int = ...,
        truncate_response: bool = False,
        connection_retries: int | None = None,
        on_redirect: Callable[[], None] | None = None,
        on_sent: Callable[[], None] | None = None,
    ) -> HttpResponse:
        """Send one request and return the response with its body read (within the cap)."""
        ...

    async def aclose(self) -> None:
        """Close the pool."""
        ...


def create_http_client(allow_private_networks: bool) -> HttpClient:
    """The pooled, policy-enforcing client of one loaded manifest."""
    # Imported here so that `import compiler.runtime` does not pull in httpx and httpcore.
    from compiler.runtime.egress.addresses import EgressPolicy
    from compiler.runtime.egress.client import build_egress_client

    return build_egress_client(EgressPolicy(allow_private_networks=allow_private_networks))


def http_failure_types() -> tuple[type[BaseException], ...]:
    """The exceptions a request fails with whose message is safe to show a model."""
    from compiler.runtime.egress.client import EgressError

    return (EgressError,)


def describe_failure(error: BaseException) -> str:
    """The model-facing text of a failure of :func:`http_failure_types`, with what to do."""
    from compiler.runtime.egress.client import EgressRefused, EgressTimeout, ResponseTooLarge

    if isinstance(error, ResponseTooLarge):
        return f"{error}; ask for less (a smaller limit, a narrower query or fewer fields)"
    if isinstance(error, EgressTimeout):
        return f"{error}; try again later or ask for less"
    if isinstance(error, EgressRefused):
        return f"{error}; this endpoint cannot be reached from here"
    return str(error)


def check_origin(built_url: str, declared_url: str) -> None:
    """Refuse a built URL whose scheme, host or port differ from the declared ones."""
    from compiler.runtime.egress.client import check_same_origin

    check_same_origin(built_url, declared_url)
