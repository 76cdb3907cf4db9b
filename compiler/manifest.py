"""Manifest files: atomic writes and read-back (the bytes are defined in the runtime)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path
from typing import Any

from compiler.errors import ManifestError
from compiler.runtime.errors import ManifestError as RuntimeManifestError
from compiler.runtime.manifest.format import dump_manifest
from compiler.runtime.manifest.read import read_verified_document


def write_atomically(path: Path, content: bytes, *, mode: int | None = None) -> None:
    """Write ``content`` so readers see the old file or the new one, never a partial one.

    ``mode`` keeps a rewritten file's permissions (``capc migrate``); new files get the
    default.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    try:
        with os.fdopen(handle, "wb") as stream:
            stream.write(content)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode if mode is not None else 0o666 & ~_umask())
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def _umask() -> int:
    current = os.umask(0)
    os.umask(current)
    return current


def read_manifest(path: str | Path) -> dict[str, Any]:
    """Load a manifest file verified exactly as the runtime loader verifies it."""
    try:
        return read_verified_document(path)
    except RuntimeManifestError as error:
        raise ManifestError(str(error)) from None


__all__ = ["dump_manifest", "read_manifest", "write_atomically"]
