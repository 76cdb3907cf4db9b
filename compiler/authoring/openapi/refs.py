"""``$ref`` resolution: inside the document and into files under its folder, nothing else.

A reference is followed only when the importer reads through it (an unselected operation
never costs anything). What may be followed:

- ``#/...`` within the same file;
- ``FILE`` or ``FILE#/...`` with FILE a relative path that, resolved (symlinks included),
  stays inside the root document's folder.

Remote references (``https://``, any ``scheme:``), absolute paths and paths leaving the
folder are refused with the location of the ``$ref``. A chain of references (a ``$ref`` to
a ``$ref``) longer than :data:`MAX_REF_CHAIN` is refused as a loop. Cycles between
schemas are the schema walker's to cut (:mod:`compiler.authoring.openapi.schemas`); the
identity it needs is :attr:`Target.key`.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import unquote

from compiler.authoring.openapi.document import DocumentFile, read_document_file
from compiler.authoring.openapi.problems import ImportRefused, parts_of, pointer_of
from compiler.authoring.openapi.response_memo import ConvertedParts
from compiler.diagnostics import Code

OPENAPI_REF_ABSOLUTE = Code("openapi-ref-absolute", "a $ref uses an absolute path")
OPENAPI_REF_FILE = Code("openapi-ref-file", "a $ref'd file cannot be read")
OPENAPI_REF_FILES = Code("openapi-ref-files", "the document refers to too many files")
OPENAPI_REF_LOOP = Code("openapi-ref-loop", "a chain of $refs is too long (a loop?)")
OPENAPI_REF_MISSING = Code("openapi-ref-missing", "a $ref points at nothing")
OPENAPI_REF_OUTSIDE = Code("openapi-ref-outside", "a $ref leaves the document's folder")
OPENAPI_REF_REMOTE = Code("openapi-ref-remote", "a $ref is remote")
CODES = (
    OPENAPI_REF_ABSOLUTE, OPENAPI_REF_FILE, OPENAPI_REF_FILES, OPENAPI_REF_LOOP,
    OPENAPI_REF_MISSING, OPENAPI_REF_OUTSIDE, OPENAPI_REF_REMOTE,
)

MAX_REF_CHAIN = 32
MAX_FILES = 64
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")

JsonPath = tuple[str | int, ...]


@dataclass(frozen=True, slots=True)
class Target:
    """A value in one file of the document, and where it is."""

    file: DocumentFile
    path: JsonPath
    value: Any

    @property
    def key(self) -> tuple[str, JsonPath]:
        """The identity of the location, for cycle detection."""
        return (self.file.shown, self.path)

    @property
    def pointer(self) -> str:
        """``#/...`` for the root file, ``FILE#/...`` for another."""
        return pointer_of(self.path)


class References:
    """The root file and the files its references have pulled in (each read once)."""

    def __init__(self, root: DocumentFile) -> None:
        self.root = root
        self.folder = root.real.parent
        self.files: dict[Path, DocumentFile] = {root.real: root}
        # Per import: what responses.derived_output_schema worked out for each tuple of
        # reply schemas (keyed by where their $refs end), so operations sharing replies
        # share the work; at most one entry per operation.
        self.derived_outputs: dict[tuple[Any, ...], Any] = {}
        # Per import: where each (file, $ref) pair points (_resolve).
        self.resolved: dict[tuple[Path, str], Target] = {}
        # Per import: reply sub-schemas converted so far (responses reuses them).
        self.converted_parts = ConvertedParts()
        # Per import: their sizes (responses' fits), by identity; each holds its part.
        self.measured_parts: dict[int, tuple[Any, Any]] = {}

    def follow(self, target: Target) -> Target:
        """``target`` itself, or what its ``$ref`` chain ends at (refused if not allowed)."""
        seen = 0
        while isinstance(target.value, Mapping) and isinstance(target.value.get("$ref"), str):
            seen += 1
            if seen > MAX_REF_CHAIN:
                raise self._refuse(target, OPENAPI_REF_LOOP,
                                   f"a chain of more than {MAX_REF_CHAIN} $refs (a loop?)")
            target = self._resolve(target, target.value["$ref"])
        return target

    def _resolve(self, origin: Target, reference: str) -> Target:
        """What ``reference`` written in ``origin``'s file points at: found once per
        import (the files never change while it runs; a refusal is not kept)."""
        key = (origin.file.real, reference)
        found = self.resolved.get(key)
        if found is None:
            found = self.resolved[key] = self._resolve_anew(origin, reference)
        return found

    def _resolve_anew(self, origin: Target, reference: str) -> Target:
        where, _, fragment = reference.partition("#")
        file = origin.file
        if where:
            file = self._file(origin, where)
        path: JsonPath = ()
        value: Any = file.data
        # A fragment is a URI's: `%7Bid%7D` is `{id}` (RFC 6901 §6), decoded before `~1`.
        for part in parts_of(unquote(fragment) if "%" in fragment else fragment):
            step: str | int = part
            if isinstance(value, list) and part.isdigit() and int(part) < len(value):
                step = int(part)
                value = value[step]
            elif isinstance(value, Mapping) and part in value:
                value = value[part]
            else:
                raise self._refuse(origin, OPENAPI_REF_MISSING,
                                   f"$ref {reference!r} points at nothing in "
                                   f"{file.shown}")
            path = (*path, step)
        return Target(file, path, value)

    def _file(self, origin: Target, where: str) -> DocumentFile:
        if _SCHEME.match(where) or where.startswith("//"):
            raise self._refuse(origin, OPENAPI_REF_REMOTE,
                               f"remote reference {where!r} refused: capc import reads local "
                               "files only; download it next to the document and refer to "
                               "it by a relative path")
        if os.path.isabs(where) or where.startswith(("/", "\\")):
            raise self._refuse(origin, OPENAPI_REF_ABSOLUTE,
                               f"absolute reference {where!r} refused: refer to files by "
                               "paths relative to the document")
        real = Path(os.path.realpath(origin.file.real.parent / where))
        if not real.is_relative_to(os.path.realpath(self.folder)):
            raise self._refuse(origin, OPENAPI_REF_OUTSIDE,
                               f"reference {where!r} leaves the document's folder: only "
                               "files under it are read")
        if real in self.files:
            return self.files[real]
        if len(self.files) >= MAX_FILES:
            raise self._refuse(origin, OPENAPI_REF_FILES,
                               f"the document refers to more than {MAX_FILES} files")
        shown = Path(os.path.relpath(real)).as_posix() if _relative_ok(real) else where
        try:
            loaded = read_document_file(real, shown)
        except ImportRefused as refused:
            located = self._refuse(origin, OPENAPI_REF_FILE,
                                   f"$ref {where!r}: {refused.diagnostics[0].message}")
            raise ImportRefused((*located.diagnostics, *refused.diagnostics)) from None
        self.files[real] = loaded
        return loaded

    def _refuse(self, target: Target, code: Code, message: str) -> ImportRefused:
        return ImportRefused((target.file.error((*target.path, "$ref"), code, message),))


def _relative_ok(real: Path) -> bool:
    try:
        os.path.relpath(real)
    except ValueError:  # another drive on Windows
        return False
    return True
