"""HTTP rules of egress: origins, header values, redirect hops and the capped response body.

Pure functions and values used by ``compiler.runtime.egress.client``; none of them opens a
connection. The runtime's api tools also use :func:`check_same_origin` (a slot must never
change scheme, host or port) and :func:`field_value_problem` (a resolved setting must be a
valid header value before it is ever used).
"""

from __future__ import annotations

import json
import re
import zlib
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Any

import httpx

from compiler.runtime.egress.call import UploadedFile
from compiler.runtime.egress.charsets import decode_body
from compiler.runtime.egress.egress_errors import (
    InvalidRequest,
    OriginMismatch,
    RedirectRefused,
    ResponseDecodeError,
    ResponseTooLarge,
)

DEFAULT_PORTS = {"http": 80, "https": 443}
# Headers that carry credentials whatever their name says; dropped on a cross-origin hop
# together with the caller's secret headers.
CREDENTIAL_HEADERS = frozenset({"authorization", "proxy-authorization", "cookie"})
# Headers that describe a body; dropped when a redirect turns the request into a GET.
BODY_HEADERS = frozenset(
    {"content-type", "content-length", "transfer-encoding", "content-encoding",
     "content-language", "content-location"}
)
# RFC 9110 §5.5: a field value is visible ASCII, obs-text (0x80-0xFF), SP and HTAB.
_FORBIDDEN_IN_VALUE = re.compile(r"[\x00-\x08\x0a-\x1f\x7f]")
_CONTROL_IN_LOCATION = re.compile(r"[\x00-\x1f\x7f]")


@dataclass(frozen=True, slots=True)
class Origin:
    """Scheme, host and port: what a slot may never change and a secret may never leave."""

    scheme: str
    host: str
    port: int

    def __str__(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host
        return f"{self.scheme}://{host}:{self.port}"


def origin_of(url: str | httpx.URL) -> Origin:
    """The origin of an absolute http(s) URL; raises InvalidRequest for anything else."""
    try:
        parsed = url if isinstance(url, httpx.URL) else httpx.URL(url)
        host = parsed.raw_host.decode("ascii").lower()
    except (httpx.InvalidURL, UnicodeError, TypeError):
        raise InvalidRequest("the URL is not a valid absolute URL") from None
    if parsed.scheme not in DEFAULT_PORTS:
        raise InvalidRequest("the URL's scheme is not http or https")
    if not host or "{" in host or "}" in host:
        raise InvalidRequest("the URL has no literal host")
    return Origin(parsed.scheme, host, parsed.port or DEFAULT_PORTS[parsed.scheme])


def same_origin(url_a: str | httpx.URL, url_b: str | httpx.URL) -> bool:
    """True when both URLs have the same scheme, host and port (default ports made explicit)."""
    return origin_of(url_a) == origin_of(url_b)


def check_same_origin(built_url: str, declared_url: str) -> None:
    """Raise OriginMismatch unless the built URL keeps the declared scheme, host and port.

    ``declared_url`` is the capability's URL with settings resolved; its ``{slot}``s may
    stay unfilled, as long as none sits in the scheme, host or port.
    """
    built, declared = origin_of(built_url), origin_of(declared_url)
    if built != declared:
        raise OriginMismatch(
            f"the request URL's origin {built} differs from the declared origin {declared}"
        )


def field_value_problem(value: str) -> str | None:
    """Why ``value`` cannot be an HTTP header value (CR, LF, NUL, other controls), or None."""
    if "\r" in value or "\n" in value:
        return "it contains a line break (CR or LF)"
    if "\x00" in value:
        return "it contains a NUL character"
    if _FORBIDDEN_IN_VALUE.search(value):
        return "it contains a control character"
    if any(ord(character) > 0xFF for character in value):
        return "it contains characters outside Latin-1"
    return None


def redirect_request(
    request: httpx.Request,
    status_code: int,
    location: str,
    body: bytes,
    secret_headers: Collection[str],
    secret_body: bool,
) -> httpx.Request:
    """The next hop of a redirect, with the method rewritten and secrets stripped as needed."""
    source = origin_of(request.url)
    # A backslash or control character is where URL parsers part ways ("/\\host" is
    # another host to a browser, a path to httpx); user information hides the real host.
    if "\\" in location or _CONTROL_IN_LOCATION.search(location):
        raise RedirectRefused(f"{source} redirected to a URL that parsers read differently")
    try:
        target = request.url.join(location)
        target_origin = origin_of(target)
    except (httpx.InvalidURL, InvalidRequest, UnicodeError):
        raise RedirectRefused(f"{source} redirected to an invalid or non-http(s) URL") from None
    if target.userinfo:
        raise RedirectRefused(f"{source} redirected to a URL with user information")
    method = request.method
    # What browsers do (Fetch §4.4): 301/302 turn POST into GET, 303 anything but HEAD.
    if (status_code in (301, 302) and method == "POST") or (
        status_code == 303 and method not in ("GET", "HEAD")
    ):
        method = "GET"
    keep_body = method == request.method
    cross_origin = target_origin != source
    if cross_origin and keep_body and body and secret_body:
        raise RedirectRefused(
            f"{source} redirected to {target_origin}, which would receive a body with secrets"
        )
    dropped = {"host"}
    if not keep_body:
        dropped |= BODY_HEADERS
    if cross_origin:
        dropped |= CREDENTIAL_HEADERS | {name.lower() for name in secret_headers}
    # The raw pairs keep the caller's spelling of each name.
    headers = [(name, value) for name, value in request.headers.raw
               if name.decode("latin-1").lower() not in dropped]
    return httpx.Request(
        method,
        target,
        headers=headers,
        content=body if keep_body and body else None,
        extensions=request.extensions,
    )


# Upload media types sent as declared; anything else goes as application/octet-stream, so
# an upload can never be labelled as something a receiving service would render or run
# (text/html, image/svg+xml, application/javascript).
UPLOAD_MEDIA_TYPES = frozenset({
    "application/json", "application/msword", "application/octet-stream", "application/pdf",
    "application/vnd.ms-excel", "application/vnd.ms-powerpoint",
    "application/vnd.oasis.opendocument.presentation",
    "application/vnd.oasis.opendocument.spreadsheet",
    "application/vnd.oasis.opendocument.text",
    "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
    "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    "application/zip", "audio/mp4", "audio/mpeg", "audio/ogg", "audio/wav", "audio/webm",
    "audio/x-wav", "image/gif", "image/jpeg", "image/png", "image/webp", "text/csv",
    "text/markdown", "text/plain", "video/mp4", "video/webm",
})
MAX_FILENAME_CHARACTERS = 255
_UNSAFE_IN_FILENAME = re.compile(r'[\x00-\x1f\x7f"\\]')


def safe_upload_filename(filename: str) -> str:
    """The base name only, without control characters, quotes or backslashes, at most 255."""
    name = filename.replace("\\", "/").rsplit("/", 1)[-1]
    name = _UNSAFE_IN_FILENAME.sub("", name).strip().lstrip(".")
    if len(name) > MAX_FILENAME_CHARACTERS:
        stem, dot, extension = name.rpartition(".")
        suffix = dot + extension if stem and len(extension) <= 16 else ""
        name = name[: MAX_FILENAME_CHARACTERS - len(suffix)] + suffix
    return name or "upload"


def safe_upload_media_type(media_type: str | None) -> str:
    """``media_type`` when it is on the upload allowlist, else application/octet-stream."""
    essence = (media_type or "").split(";", 1)[0].strip().lower()
    return essence if essence in UPLOAD_MEDIA_TYPES else "application/octet-stream"


def sanitize_files(files: Sequence[UploadedFile]) -> list[tuple[str, tuple[str, bytes, str]]]:
    """httpx ``files`` of ``files``, every part's file name and media type made safe."""
    return [
        (upload.field, (safe_upload_filename(upload.filename), upload.content,
                        safe_upload_media_type(upload.media_type)))
        for upload in files
    ]


@dataclass(frozen=True, slots=True)
class EgressResponse:
    """A complete response. ``url`` is the final URL: it may carry secrets, never show it."""

    status_code: int
    headers: httpx.Headers
    content: bytes
    url: str
    redirects: int = 0
    truncated: bool = False

    def __repr__(self) -> str:
        # The URL may carry secrets (?key=...), headers and body may echo them.
        return (
            f"EgressResponse(status_code={self.status_code}, content_bytes={len(self.content)}, "
            f"redirects={self.redirects}, truncated={self.truncated})"
        )

    def text(self) -> str:
        """The body as text: the Content-Type's charset when it is an allowed text encoding,
        UTF-8 otherwise (see :mod:`~compiler.runtime.egress.charsets`); valid Unicode."""
        return decode_body(self.content, self.headers.get("content-type", ""))

    def json(self) -> Any:
        """The body parsed as JSON (raises ValueError when it is not JSON)."""
        return json.loads(self.content)


class _Identity:
    def decode(self, data: bytes, room: int) -> bytes:
        # One byte past the room is enough to tell the body is over the cap.
        return data[: max(room, 0) + 1]

    def finish(self, room: int) -> bytes:
        return b""


class _BoundedInflater:
    """zlib inflation that never produces more than ``room`` bytes per call."""

    def __init__(self, encoding: str) -> None:
        self._encoding = encoding
        self._inflater: Any = None

    def decode(self, data: bytes, room: int) -> bytes:
        if self._inflater is None:
            self._inflater = zlib.decompressobj(self._wbits(data))
        output = bytearray()
        pending = data
        while pending and not self._inflater.eof:
            try:
                # max_length bounds the output; input it could not use waits in
                # unconsumed_tail, so memory never exceeds the cap plus one chunk.
                piece = self._inflater.decompress(pending, room - len(output) + 1)
            except zlib.error:
                raise ResponseDecodeError("the compressed response body is corrupt") from None
            output += piece
            if len(output) > room:
                break
            if not piece and self._inflater.unconsumed_tail == pending:
                break
            pending = self._inflater.unconsumed_tail
        return bytes(output)

    def finish(self, room: int) -> bytes:
        if self._inflater is None:
            return b""
        if not self._inflater.eof:
            raise ResponseDecodeError("the compressed response body ended early")
        return self.decode(b"", room)

    def _wbits(self, first: bytes) -> int:
        if self._encoding in ("gzip", "x-gzip"):
            return 16 + zlib.MAX_WBITS
        # "deflate" should be zlib-wrapped (RFC 9110) but some servers send raw deflate.
        wrapped = len(first) >= 2 and first[0] & 0x0F == 8 and (first[0] << 8 | first[1]) % 31 == 0
        return zlib.MAX_WBITS if wrapped else -zlib.MAX_WBITS


def _decoder_for(content_encoding: str) -> _Identity | _BoundedInflater:
    codings = [part.strip().lower() for part in content_encoding.split(",")]
    codings = [coding for coding in codings if coding and coding != "identity"]
    if not codings:
        return _Identity()
    if len(codings) > 1:
        raise ResponseDecodeError("the response uses stacked content encodings")
    if codings[0] not in ("gzip", "x-gzip", "deflate"):
        raise ResponseDecodeError("the response uses an unsupported content encoding")
    return _BoundedInflater(codings[0])


async def read_capped_body(
    response: httpx.Response, max_bytes: int, *, truncate: bool = False
) -> tuple[bytes, bool]:
    """Read and decode at most ``max_bytes`` of the body; returns (body, truncated).

    Past the cap the read stops (a gzip bomb never inflates further): with ``truncate``
    the first ``max_bytes`` come back flagged as truncated, else ResponseTooLarge.
    """
    too_large = f"the response body is larger than {max_bytes} bytes"
    decoder = _decoder_for(response.headers.get("content-encoding", ""))
    declared = response.headers.get("content-length", "")
    over_declared = declared.isdigit() and int(declared) > max_bytes
    if isinstance(decoder, _Identity) and over_declared and not truncate:
        raise ResponseTooLarge(too_large)
    body = bytearray()
    async for chunk in response.aiter_raw():
        body += decoder.decode(chunk, max_bytes - len(body))
        if len(body) > max_bytes:
            if not truncate:
                raise ResponseTooLarge(too_large)
            return bytes(body[:max_bytes]), True
    body += decoder.finish(max_bytes - len(body))
    if len(body) > max_bytes:
        if not truncate:
            raise ResponseTooLarge(too_large)
        return bytes(body[:max_bytes]), True
    return bytes(body), False
