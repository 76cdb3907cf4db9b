"""What can go wrong when egress sends a request. Every message is safe to show a model.

Messages name the origin (scheme, host, port) and the kind of failure, never a path or
query (they may carry secrets, ``?key=...``), a header value or a body, and never the text
of the underlying library exception (h11, for one, quotes an illegal header value).
"""

from __future__ import annotations

from compiler.runtime.egress.addresses import Refusal
from compiler.runtime.errors import RuntimeLoaderError


class EgressError(RuntimeLoaderError):
    """Base of every egress failure; ``str(error)`` is safe to show a model."""


class EgressRefused(EgressError):
    """The policy refused the destination (a literal, a resolved address, a redirect hop)."""

    def __init__(self, message: str, refusal: Refusal, origin: str = "") -> None:
        self.refusal = refusal
        # The origin whose connection was refused (a redirect hop's, after a redirect).
        self.origin = origin
        super().__init__(message)


class InvalidRequest(EgressError):
    """The request cannot be sent as given: a bad URL, header or body."""


class OriginMismatch(EgressError):
    """The built URL's scheme, host or port differ from the ones the capability declares."""


class RedirectRefused(EgressError):
    """A redirect that may not be followed (bad Location, scheme, or secrets to resend)."""


class TooManyRedirects(EgressError):
    """More redirects than allowed."""


class EgressTimeout(EgressError):
    """No complete response within the time budget (DNS and connect included)."""


class EgressConnectionError(EgressError):
    """The connection failed, was reset, or the response was cut short or malformed."""


class ResponseTooLarge(EgressError):
    """The decoded response body exceeds the cap."""


class ResponseDecodeError(EgressError):
    """The response body's content-encoding is unsupported or its data is corrupt."""
