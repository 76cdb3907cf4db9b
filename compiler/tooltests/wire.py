"""What of a request and a reply a case keeps, and how it is made comparable.

- Settings: a resolved value is written as its ``${NAME}`` in every spelling the logs
  mask (raw, percent-encoded, JSON- and HTML-escaped, base64 alone or inside Basic auth);
  replay resolves each setting to a stand-in value and masks it the same way, so a case
  still shows which slot a setting went to and needs no real setting.
- Headers: a request keeps the headers on an allow-list (the ones the capability declares,
  ``Content-Type``, ``Accept``, ``Authorization``, the idempotency-key header); a reply
  keeps the ones that change what the tool does or says (content type, retry, redirect,
  pagination). Credential headers are only ever written masked.
- Per-call values: an idempotency key and a multipart boundary differ on every call by
  design; both are written as fixed words, in the header and in the body.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass

from compiler.runtime.egress.replay import CannedResponse, ObservedRequest
from compiler.runtime.redaction import replace_spellings
from compiler.tooltests.cases import Headers, RecordedRequest, RecordedResponse

# Request headers every case keeps when the call sends them (besides declared ones).
REQUEST_HEADERS = frozenset({"content-type", "accept", "authorization"})
# Reply headers a case keeps: what the tool reads (content type, retry, redirect) and what
# tells a reviewer how the service pages and caches.
RESPONSE_HEADERS = frozenset({
    "content-type", "retry-after", "date", "location", "link", "x-total-count",
    "x-next-cursor", "x-next-page", "etag", "last-modified",
})
# Request headers that carry credentials whatever the capability calls them; with no
# setting in them, their value is still never written.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie",
                                "x-api-key", "api-key"})
IDEMPOTENCY_KEY = "<idempotency-key>"
BOUNDARY = "BOUNDARY"
MASKED_CREDENTIAL = "<credential>"
_BOUNDARY = re.compile(r"boundary=\"?([^\";,\s]{1,200})\"?", re.IGNORECASE)


def stand_in(name: str) -> str:
    """The value replay resolves setting ``name`` to: unique, alphanumeric, never real."""
    return "capcsetting" + hashlib.sha256(name.encode("utf-8")).hexdigest()[:16]


@dataclass(frozen=True, slots=True)
class SettingMask:
    """Resolved settings, and how to write them as ``${NAME}`` (and back, for replay)."""

    values: tuple[tuple[str, str], ...]

    @classmethod
    def of(cls, values: Mapping[str, str]) -> SettingMask:
        """The mask of ``values`` (name -> resolved value); longest value first."""
        ordered = sorted(values.items(), key=lambda item: (-len(item[1]), item[0]))
        return cls(tuple(ordered))

    @classmethod
    def stand_ins(cls, names: Iterable[str]) -> SettingMask:
        """The mask of replay's stand-in values for ``names``."""
        return cls.of({name: stand_in(name) for name in names})

    def __repr__(self) -> str:
        return f"SettingMask(names={[name for name, _ in self.values]!r})"

    def mask(self, text: str) -> str:
        """``text`` with every spelling of every value written as its ``${NAME}``."""
        for name, value in self.values:
            text = replace_spellings(text, value, "${" + name + "}")
        return text

    def mask_bytes(self, body: bytes) -> bytes:
        """:meth:`mask` over bytes (bytes that are not UTF-8 pass through unchanged)."""
        if not self.values or not body:
            return body
        text = body.decode("utf-8", "surrogateescape")
        return self.mask(text).encode("utf-8", "surrogateescape")

    def unmask(self, text: str) -> str:
        """``text`` with each ``${NAME}`` of these settings written as the value."""
        for name, value in self.values:
            text = text.replace("${" + name + "}", value)
        return text

    def unmask_bytes(self, body: bytes) -> bytes:
        """:meth:`unmask` over bytes."""
        if not self.values or b"${" not in body:
            return body
        return self.unmask(body.decode("utf-8", "surrogateescape")).encode(
            "utf-8", "surrogateescape")


def kept_request_headers(declared: Iterable[str], idempotency_header: str | None) -> frozenset[str]:
    """The request header names (lowercase) a case keeps for a tool."""
    names = {name.lower() for name in declared} | REQUEST_HEADERS
    if idempotency_header:
        names.add(idempotency_header.lower())
    return frozenset(names)


def _boundary(headers: Headers) -> str | None:
    for name, value in headers:
        if name.lower() == "content-type" and value.lower().startswith("multipart/"):
            found = _BOUNDARY.search(value)
            return found.group(1) if found else None
    return None


def written_request(
    observed: ObservedRequest, mask: SettingMask, kept: frozenset[str],
    idempotency_header: str | None,
) -> RecordedRequest:
    """``observed`` as a case writes it: settings masked, per-call values fixed."""
    boundary = _boundary(observed.headers)
    body = mask.mask_bytes(observed.body)
    if boundary is not None:
        body = body.replace(boundary.encode("latin-1"), BOUNDARY.encode("ascii"))
    key_name = (idempotency_header or "").lower()
    headers = []
    for name, value in observed.headers:
        lowered = name.lower()
        if lowered not in kept:
            continue
        if lowered == key_name:
            value = IDEMPOTENCY_KEY
        elif boundary is not None and lowered == "content-type":
            value = value.replace(boundary, BOUNDARY)
        masked = mask.mask(value)
        if lowered in CREDENTIAL_HEADERS and "${" not in masked:
            masked = MASKED_CREDENTIAL  # a credential from anywhere but a setting
        headers.append((name, masked))
    return RecordedRequest(observed.method, mask.mask(observed.url), tuple(headers), body)


def written_response(reply: CannedResponse, mask: SettingMask) -> RecordedResponse:
    """``reply`` as a case writes it: the allow-listed headers and the body, masked."""
    headers = tuple((name, mask.mask(value)) for name, value in reply.headers
                    if name.lower() in RESPONSE_HEADERS)
    return RecordedResponse(reply.status, headers, mask.mask_bytes(reply.body))


def replayed_reply(response: RecordedResponse, mask: SettingMask) -> CannedResponse:
    """The reply replay hands the tool: a setting echoed as ``${NAME}`` is its stand-in
    again, so the tool masks it as it masked the real value."""
    headers = tuple((name, mask.unmask(value)) for name, value in response.headers)
    return CannedResponse(response.status, headers, mask.unmask_bytes(response.body))
