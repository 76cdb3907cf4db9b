"""The manifest's bytes: canonical form, digest and version (one definition for both sides).

The compiler writes with :func:`dump_manifest`; both sides read with
``compiler.runtime.manifest.read.read_verified_document``. See docs/manifest.md.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

MANIFEST_VERSION = 1
SUPPORTED_MANIFEST_VERSIONS = frozenset({1})
DIGEST_PREFIX = "sha256:"


def canonical_bytes(manifest: dict[str, Any]) -> bytes:
    """Compact, key-sorted UTF-8 JSON of the manifest without its ``digest``."""
    body = {key: value for key, value in manifest.items() if key != "digest"}
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def compute_digest(manifest: dict[str, Any]) -> str:
    """``sha256:HEX`` over :func:`canonical_bytes`."""
    return DIGEST_PREFIX + hashlib.sha256(canonical_bytes(manifest)).hexdigest()


def dump_manifest(manifest: dict[str, Any]) -> bytes:
    """The file bytes: the manifest with its digest, indented for readable PR diffs."""
    canonical = canonical_bytes(manifest)
    sealed = {**manifest, "digest": DIGEST_PREFIX + hashlib.sha256(canonical).hexdigest()}
    fast = _orjson_indented(sealed, canonical)
    if fast is not None:
        return fast
    text = json.dumps(sealed, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def _orjson_indented(sealed: dict[str, Any], canonical: bytes) -> bytes | None:
    """The same bytes as the json module's indent=2 output, 10x faster, or None.

    orjson's indent=2 layout is the json module's; only scalars could be written
    differently (float spelling, huge integers). So orjson is used only when its compact
    form of the body equals :func:`canonical_bytes` token for token.
    """
    try:
        import orjson
    except ImportError:
        return None
    body = {key: value for key, value in sealed.items() if key != "digest"}
    try:
        if orjson.dumps(body, option=orjson.OPT_SORT_KEYS) != canonical:
            return None
        return orjson.dumps(sealed, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
                            | orjson.OPT_APPEND_NEWLINE)
    except (TypeError, orjson.JSONEncodeError):
        return None

