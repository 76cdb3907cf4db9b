"""Manifest files: atomic writes and read-back (the bytes and the model are defined in the
runtime, ``compiler.runtime.manifest``)."""

from __future__ import annotations

import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.atomic import create_temporary, joined_runs
from compiler.errors import InputOutputError, ManifestError
from compiler.runtime.errors import ManifestError as RuntimeManifestError
from compiler.runtime.manifest.format import dump_manifest

if TYPE_CHECKING:
    # Imported where a manifest is read: compiling writes one and never reads it back, and
    # the model's import is a fifth of a no-change re-compile.
    from compiler.runtime.manifest.model import ManifestModel

_WRITTEN_RUN = 4 * 1024 * 1024  # pieces of a manifest are written this much at a time


def write_atomically(path: Path, content: bytes | Sequence[bytes | memoryview], *,
                     mode: int | None = None) -> None:
    """Write ``content`` so readers see the old file or the new one, never a partial one.

    ``content``: the bytes, or pieces written one after the other (a few MiB at a time:
    a large manifest is never joined whole). ``mode`` keeps a rewritten file's
    permissions (``capc migrate``); new files get the default.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    handle, temporary = create_temporary(path.parent, f".{path.name}.", ".tmp")
    try:
        with os.fdopen(handle, "wb") as stream:
            for run in [content] if isinstance(content, bytes) \
                    else joined_runs(content, _WRITTEN_RUN):
                stream.write(run)
            stream.flush()
            os.fsync(stream.fileno())
        os.chmod(temporary, mode if mode is not None else new_file_mode())
        os.replace(temporary, path)
    except BaseException as error:
        Path(temporary).unlink(missing_ok=True)
        if isinstance(error, OSError) and error.filename == temporary:
            # Name the file the user asked for (``-o DIR`` is "DIR: Is a directory"), not
            # the temporary one, which is gone and means nothing to them.
            raise type(error)(error.errno, error.strerror, str(path)) from None
        raise


def new_file_mode() -> int:
    """The mode a new file gets under the process's umask. Reading the umask sets it for
    a moment: a command writing from several threads reads it once, before they start."""
    current = os.umask(0)
    os.umask(current)
    return 0o666 & ~current


def read_manifest_model(path: str | Path) -> ManifestModel:
    """The one reader of a manifest file for every command (``verify``, ``docs``,
    ``explain``, ``diff``): the runtime loader's checks, with its refusals.

    The read is bounded and takes regular files only (a FIFO or device is refused, never
    waited on). A file that cannot be read is an InputOutputError (exit 2); a manifest
    refused by a check (JSON, ``manifest_version``, digest, structure, duplicate code) is a
    ManifestError (exit 1), naming the check.
    """
    return _model(read_verified_document_of(path), path)


def read_manifest(path: str | Path) -> dict[str, Any]:
    """:func:`read_manifest_model`'s checks, returning the verified JSON document."""
    document = read_verified_document_of(path)
    _model(document, path)
    return document


def read_verified_document_of(path: str | Path) -> dict[str, Any]:
    """The manifest's JSON after the read, JSON, version and digest checks."""
    # Imported here: compiling writes a manifest and never reads one back.
    from compiler.runtime.manifest.read import read_verified_document

    try:
        return read_verified_document(path)
    except RuntimeManifestError as error:
        # A manifest that cannot be read is an I/O error (exit 2); one refused by a check
        # is a problem found (exit 1), in every command.
        refused = InputOutputError if error.check == "read" else ManifestError
        raise refused(str(error)) from None
    except RecursionError:
        raise ManifestError(f"{path}: manifest refused (json): the JSON is nested too deeply "
                            "to be a manifest") from None


def manifest_model(manifest: ManifestModel | Mapping[str, Any]) -> ManifestModel:
    """The entries of a manifest document (a model is returned as it is); a document
    whose entries have the wrong shape is a ManifestError naming the entry."""
    from compiler.runtime.manifest.model import ManifestModel

    if isinstance(manifest, ManifestModel):
        return manifest
    return _model(manifest, None)


def _model(document: Mapping[str, Any], path: str | Path | None) -> ManifestModel:
    from compiler.runtime.manifest.fields import EntryShapeError
    from compiler.runtime.manifest.model import parse_manifest_document

    try:
        return parse_manifest_document(document)
    except (EntryShapeError, RecursionError) as error:
        problem = "nested too deeply" if isinstance(error, RecursionError) else str(error)
        where = f"{path}: " if path is not None else ""
        raise ManifestError(f"{where}manifest refused (structure): {problem}") from None


__all__ = ["dump_manifest", "manifest_model", "read_manifest", "read_manifest_model",
           "write_atomically"]
