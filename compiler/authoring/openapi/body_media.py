"""Which of an operation's request media types capc sends, and how (SPEC §10/§11).

A request body lists its media types as the document writes them: ``application/json;
charset=utf-8``, ``Application/JSON``, vendor and suffix types (``application/vnd.github+json``,
``application/merge-patch+json``), ``*/*``, ``text/plain``, ``application/octet-stream``.
They are compared by their essence (lowercase ``type/subtype``, parameters dropped) and
ranked: plain JSON, form, multipart, then any other JSON type (JSON Patch last: its body is
a list of operations, whatever the schema beside it says), ``*/*`` read as JSON, and the
raw types. A chosen type other than plain JSON is sent as written, as the Content-Type
header: only a well-formed media type (an HTTP token pair with token or quoted parameters,
no ``${``) can be, so a document cannot put anything else into a header.
"""

from __future__ import annotations

import enum
import re
from collections.abc import Iterable
from dataclasses import dataclass

from compiler.runtime.api.media_types import media_type_essence
from compiler.runtime.egress.headers import TOKEN_PATTERN, breaks_header

JSON = "application/json"
FORM = "application/x-www-form-urlencoded"
MULTIPART = "multipart/form-data"
# RFC 9110 §8.3.1 media-type, bounded; ``$`` may appear in a token, never before ``{``;
# CR, LF and NUL (in a quoted parameter) are refused by the one header rule.
_MEDIA_TYPE = re.compile(
    rf"^{TOKEN_PATTERN}/{TOKEN_PATTERN}"
    rf"(?:[ \t]*;[ \t]*{TOKEN_PATTERN}=(?:{TOKEN_PATTERN}|\"[^\"\\]*\"))*$")
_MAX_MEDIA_TYPE = 200


class BodyKind(enum.Enum):
    """How a body of the chosen media type is written."""

    JSON = "json"            # named fields or one whole value, as JSON
    FORM = "form"            # named fields, form-urlencoded
    MULTIPART = "multipart"  # named fields and files
    ANY = "any"              # */*: JSON when the schema is an object or an array
    RAW = "raw"              # text/plain, octet-stream: one string argument, sent as is


@dataclass(frozen=True, slots=True)
class BodyMedia:
    """The chosen media type: as the document writes it, and how its body is written."""

    written: str
    kind: BodyKind

    @property
    def content_type(self) -> str | None:
        """The Content-Type header to configure (None: capc's own default applies)."""
        if self.kind is BodyKind.MULTIPART:
            return None  # httpx writes it, with its boundary
        if self.kind is BodyKind.ANY:
            return JSON
        return None if self.written == JSON else self.written


def is_json_type(essence: str) -> bool:
    """A JSON media type (``application/json``, ``+json`` suffixes, ``text/json``); not
    the line-delimited ones (``ndjson``, ``json-seq``, ``jsonl``: several values)."""
    return essence in (JSON, "text/json", "application/x-json") or essence.endswith("+json")


def _rank(essence: str) -> tuple[int, BodyKind] | None:
    if essence == JSON:
        return 0, BodyKind.JSON
    if essence == FORM:
        return 1, BodyKind.FORM
    if essence == MULTIPART:
        return 2, BodyKind.MULTIPART
    if is_json_type(essence):
        return (4 if essence == "application/json-patch+json" else 3), BodyKind.JSON
    if essence in ("*/*", "application/*"):
        return 5, BodyKind.ANY
    if essence in ("text/plain", "application/octet-stream"):
        return 6, BodyKind.RAW
    return None


def sendable(written: str) -> bool:
    """Whether ``written`` can go into a Content-Type header as it is."""
    return (len(written) <= _MAX_MEDIA_TYPE and not breaks_header(written)
            and _MEDIA_TYPE.match(written) is not None and "${" not in written)


def pick_media(types: Iterable[str]) -> BodyMedia | None:
    """The media type capc sends among ``types`` (document order breaks ties), or None."""
    best: tuple[int, int, BodyMedia] | None = None
    for order, written in enumerate(types):
        essence = media_type_essence(written)
        ranked = _rank(essence) if essence is not None else None
        if ranked is None or not sendable(written):
            continue
        candidate = (ranked[0], order, BodyMedia(written, ranked[1]))
        if best is None or candidate[:2] < best[:2]:
            best = candidate
    return None if best is None else best[2]
