"""The manifest's bytes: canonical form, digest and version (one definition for both sides).

The compiler writes with :func:`dump_manifest`; both sides read with
``compiler.runtime.manifest_file.read_verified_document``. See docs/manifest.md.
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
    sealed = {**manifest, "digest": compute_digest(manifest)}
    text = json.dumps(sealed, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")

