"""Manifest files: atomic writes and read-back (the bytes and the model are defined in the
runtime, ``compiler.runtime.manifest``)."""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from compiler.errors import InputOutputError, ManifestError
from compiler.runtime.errors import ManifestError as RuntimeManifestError
from compiler.runtime.manifest.fields import EntryShapeError
from compiler.runtime.manifest.format import dump_manifest
from compiler.runtime.manifest.model import ManifestModel, parse_manifest_document
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
    """Load a manifest file verified exactly as the runtime loader verifies it.

    Manifests handed to ``diff``, ``docs`` and ``explain`` may come from anywhere: a FIFO
    or device is refused before it is opened, and JSON nested too deeply to parse is a
    ManifestError, not a RecursionError.
    """
    try:
        info = os.stat(path)
    except OSError:
        info = None  # the reader reports it
    if info is not None and not stat.S_ISREG(info.st_mode):
        raise InputOutputError(f"{path}: not a regular file; a manifest is a JSON file")
    try:
        return read_verified_document(path)
    except RuntimeManifestError as error:
        # A manifest that cannot be read is an I/O error (exit 2); one refused by a check
        # is a problem found (exit 1), in every command.
        refused = InputOutputError if error.check == "read" else ManifestError
        raise refused(str(error)) from None
    except RecursionError:
        raise ManifestError(f"{path}: JSON nested too deeply to be a manifest") from None



def manifest_model(manifest: ManifestModel | Mapping[str, Any]) -> ManifestModel:
    """The entries of a manifest document (a model is returned as it is); a document
    whose entries have the wrong shape is a ManifestError naming the entry."""
    if isinstance(manifest, ManifestModel):
        return manifest
    try:
        return parse_manifest_document(manifest)
    except (EntryShapeError, RecursionError) as error:
        problem = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        raise ManifestError(f"manifest refused (structure): {problem}") from None


def read_manifest_model(path: str | Path) -> ManifestModel:
    """:func:`read_manifest`, as entries."""
    return manifest_model(read_manifest(path))


__all__ = ["dump_manifest", "manifest_model", "read_manifest", "read_manifest_model",
           "write_atomically"]
