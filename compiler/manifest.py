"""Manifest files: atomic writes and read-back (the bytes are defined in the runtime)."""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from compiler.errors import InputOutputError, ManifestError
from compiler.runtime.manifest_format import dump_manifest, verify_manifest


def write_manifest_atomically(path: Path, content: bytes) -> None:
    """Write ``content`` so readers see the old file or the new one, never a partial one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Load and verify a manifest file (digest and version), or raise ManifestError."""
    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        raise InputOutputError(f"{path}: cannot read manifest: {error.strerror}") from None
    try:
        manifest = json.loads(raw)
    except (ValueError, UnicodeDecodeError) as error:
        raise ManifestError(f"{path}: not a JSON manifest: {error}") from None
    problem = verify_manifest(manifest)
    if problem:
        raise ManifestError(f"{path}: {problem}")
    assert isinstance(manifest, dict)  # verify_manifest refuses anything else
    return manifest


__all__ = ["dump_manifest", "read_manifest", "write_manifest_atomically"]
