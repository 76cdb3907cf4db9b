"""A faster reading of a manifest file, used only when it provably equals the strict one.

The strict reading (``manifest_file.read_verified_document``) parses with the json module,
refusing duplicate keys, and re-serialises the whole document to check its digest: about
four times the cost of the parse alone. orjson parses and serialises several times faster,
and :func:`fast_verified_document` accepts its result only when all of these hold:

1. orjson's indented, key-sorted dump of what it parsed is the file, byte for byte. The
   file is then orjson output, which the json module reads back as the same values
   (integers within 64 bits, floats written shortest-round-trip, strings escaped alike),
   and a key written twice in the file would be missing from the dump, so there are none.
2. No float of the document is written differently by orjson and by the json module.
   They disagree only on non-zero floats below 1e-4 in magnitude (orjson ``0.00001`` and
   ``1e-7``, json ``1e-05`` and ``1e-07``); orjson writes each of those with ``e-`` or as
   ``0.0000...``, so a number token containing either sends the file to the strict path.
   tests/runtime/manifest/test_manifest_fast_path.py checks this over millions of floats.
3. The manifest version is supported and the recorded digest is the SHA-256 of orjson's
   compact, key-sorted dump, which by 1 and 2 is the strict path's canonical bytes.
4. No value is nested deeper than :data:`MAX_LAZY_DEPTH` (by 1, a line indented by more
   than twice that would show it): an entry built lazily, on first read, is then sure not
   to hit the recursion limit, so whatever the load accepted can be built.

Anything else returns None and the strict path decides, with its own error messages.
"""

from __future__ import annotations

import hashlib
from typing import Any

from compiler.runtime.manifest.format import (
    DIGEST_PREFIX,
    SUPPORTED_MANIFEST_VERSIONS,
    has_small_float,
)

__all__ = ["entry_bytes", "entry_value", "fast_verified_document", "has_small_float"]

MAX_LAZY_DEPTH = 128
_TOO_DEEP = b"\n" + b" " * (2 * MAX_LAZY_DEPTH)


def fast_verified_document(raw: bytes) -> dict[str, Any] | None:
    """The manifest's JSON if every check passes on the fast path, else None.

    Proven equal by
    tests/runtime/manifest/test_manifest_fast_path.py::test_generated_manifests_read_the_same_both_ways.
    """
    try:
        import orjson
    except ImportError:
        return None
    try:
        document = orjson.loads(raw)
    except orjson.JSONDecodeError:
        return None
    if type(document) is not dict or _TOO_DEEP in raw:
        return None
    version = document.get("manifest_version")
    if type(version) is not int or version not in SUPPORTED_MANIFEST_VERSIONS:
        return None
    recorded = document.get("digest")
    if type(recorded) is not str:
        return None
    body = {key: value for key, value in document.items() if key != "digest"}
    try:
        indented = orjson.dumps(
            document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS | orjson.OPT_APPEND_NEWLINE
        )
        if indented != raw:
            return None
        compact = orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:  # e.g. nesting deeper than orjson writes
        return None
    if has_small_float(compact):
        return None
    if DIGEST_PREFIX + hashlib.sha256(compact).hexdigest() != recorded:
        return None
    return document


def entry_bytes(value: Any) -> bytes:
    """A verified JSON value as compact bytes, kept until it is needed (orjson is present:
    only fast-path documents have their entries kept this way)."""
    import orjson

    return orjson.dumps(value)


def entry_value(blob: bytes) -> Any:
    """The value :func:`entry_bytes` kept: orjson reads its own output back exactly."""
    import orjson

    return orjson.loads(blob)
