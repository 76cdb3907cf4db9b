"""How a slot value is encoded inside a string ``body_template``, by the body's Content-Type.

One predicate, two callers: the runtime fills slots with it (``api.request``), and the
compiler refuses, with a located error, a string template with slots whose Content-Type
capc has no safe encoding for. Media types are compared by their essence (RFC 9110
§8.3.1): type and subtype, lowercase, parameters such as ``; charset=utf-8`` dropped.

- JSON: every type whose essence names JSON (``application/json``, ``text/json``,
  ``application/x-json``, ``application/json-seq``, ``application/jsonl``,
  ``application/x-ndjson``, ``application/vnd.api+json``, any ``+json`` suffix,
  ``application/x-amz-json-1.1`` ...): a string goes in JSON-escaped, so it can never end
  its string, add a member or start a new record.
- form: ``application/x-www-form-urlencoded``, percent-encoded.
- markup: XML and HTML types (``+xml``, ``/xml``, ``text/html``), entity-escaped.
- text: ``text/plain`` (and no Content-Type at all), sent as given.
- anything else is unknown: no encoding capc knows keeps a value inside its slot there.
"""

from __future__ import annotations

import enum


class SlotEncoding(enum.Enum):
    """How a slot value is written into a string body template."""

    JSON = "json"
    FORM = "form"
    MARKUP = "markup"
    TEXT = "text"
    UNKNOWN = "unknown"


FORM_MEDIA_TYPE = "application/x-www-form-urlencoded"
TEXT_MEDIA_TYPES = frozenset({"text/plain", "text/markdown"})
MARKUP_MEDIA_TYPES = frozenset({"text/html", "application/xhtml+xml"})


def media_type_essence(content_type: str | None) -> str | None:
    """The essence of a Content-Type value (``type/subtype``, lowercase), None when empty."""
    if content_type is None:
        return None
    essence = content_type.split(";", 1)[0].strip().strip("\"'").strip().lower()
    return essence or None


def slot_encoding(content_type: str | None) -> SlotEncoding:
    """The encoding of slot values in a string body template sent as ``content_type``."""
    essence = media_type_essence(content_type)
    if essence is None or essence in TEXT_MEDIA_TYPES:
        return SlotEncoding.TEXT
    # Any mention of JSON: the family keeps growing (json-seq, jsonl, ndjson, vendor
    # types), and JSON escaping is valid in all of them; failing open here is the bug.
    if "json" in essence:
        return SlotEncoding.JSON
    if essence == FORM_MEDIA_TYPE:
        return SlotEncoding.FORM
    if essence in MARKUP_MEDIA_TYPES or "xml" in essence:
        return SlotEncoding.MARKUP
    return SlotEncoding.UNKNOWN


def unknown_media_type_problem(content_type: str | None) -> str | None:
    """Why slots cannot be filled safely in a string template sent as ``content_type``."""
    if slot_encoding(content_type) is not SlotEncoding.UNKNOWN:
        return None
    return (
        f"capc has no safe encoding for slot values in a {media_type_essence(content_type)!r} "
        "body: use a JSON, form (application/x-www-form-urlencoded), XML or text/plain "
        "Content-Type, or a mapping body_template"
    )
