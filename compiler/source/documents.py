"""Read source files into located documents: decode, render templates, strict-load."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Location, Severity
from compiler.runtime.records import record
from compiler.source.discovery import SourceFile
from compiler.source.safe_read import MAX_SOURCE_BYTES, UnsafeFile, read_regular_file
from compiler.source.yaml_loader import (
    Locator,
    Path,
    PositionMap,
    decode_source,
    load_documents,
)

FILE_NAME = Code("file-name", "a file name is not valid UTF-8")
IO = Code("io", "a file cannot be read or written")
CODES = (FILE_NAME, IO)


def _identity(line: int) -> int:
    return line


@record(frozen=True, slots=True)
class SourceDocument:
    """One YAML document of one file, with everything needed to locate its nodes."""

    path: str
    index: int
    data: Any
    positions: Locator
    line: int
    source_line: Callable[[int], int] = _identity

    def location(self, path: Path = (), *, key: bool = False) -> Location:
        """The 1-based file position of a node (or of its key), mapped through templates."""
        line, col = self.positions.locate(path, key=key)
        return Location(self.path, self.source_line(line), col)

    @property
    def first_line(self) -> int:
        """The document's first line in the source file."""
        return self.source_line(self.line)

    def with_data(self, data: Any) -> SourceDocument:
        """The same document carrying upgraded data (legacy rows)."""
        return SourceDocument(
            self.path, self.index, data, self.positions, self.line, self.source_line
        )


def read_source(
    source: SourceFile, variables: Mapping[str, Any], tags: dict[str, str] | None = None
) -> tuple[list[SourceDocument], list[Diagnostic]]:
    """Load every document of one file; problems come back as diagnostics, never raised."""
    try:
        raw = read_source_bytes(source)
    except UnsafeFile as refused:
        return [], [Diagnostic.error(Location(source.display_path), refused.code,
                                     f"{source.display_path} {refused.message}")]
    except OSError as error:
        reason = error.strerror or type(error).__name__
        return [], [Diagnostic.error(Location(source.display_path), IO, f"cannot read: {reason}")]
    return parse_source(source.display_path, raw, variables, template=source.is_template,
                        tags=tags)


def read_source_bytes(source: SourceFile) -> bytes:
    """The bytes of a source file, read bounded (one byte past the size cap at most).

    Raises :class:`UnsafeFile` for a FIFO, device or other non-regular file and for a
    symlink leading out of the tree the file was found in; ``OSError`` when unreadable.
    """
    return read_regular_file(source.disk_path, MAX_SOURCE_BYTES, inside=source.tree)


def _as_loaded(positions: PositionMap) -> Locator:
    return positions


def parse_source(
    path: str, raw: bytes, variables: Mapping[str, Any], *, template: bool = False,
    locator: Callable[[PositionMap], Locator] = _as_loaded, tags: dict[str, str] | None = None,
) -> tuple[list[SourceDocument], list[Diagnostic]]:
    """Decode, render (templates only) and strict-load the bytes of one file.

    ``locator`` turns each document's position table into what the document keeps (the
    compile cache wraps it to record the questions a compile asks: cache/position_answers.py).
    ``tags``: the plain-text tags the compile resolved already (one dict per compile).
    """
    if not path.isascii() and not _encodable(path):
        # A name read from disk with surrogateescape (bytes that are not UTF-8): the
        # manifest records where each tool comes from, and no JSON can hold that name.
        return [], [Diagnostic(path, 1, 1, Severity.ERROR, FILE_NAME.id,
                               "the file name is not valid UTF-8: rename the file")]
    text, problem = decode_source(raw)
    if problem is not None or text is None:
        assert problem is not None
        return [], [Diagnostic(path, problem.line, problem.col, Severity.ERROR, problem.code.id,
                               problem.message)]
    source_line: Callable[[int], int] = _identity
    if template:
        from compiler.source.templates import render_template

        rendered = render_template(path, text, variables)
        if rendered.text is None:
            return [], list(rendered.diagnostics)
        text, source_line = rendered.text, rendered.source_line
    loaded, problems = load_documents(text, tags)
    diagnostics = [
        Diagnostic(path, source_line(p.line), p.col, Severity.ERROR, p.code.id, p.message)
        for p in problems
    ]
    if diagnostics:  # checking what a broken file seems to say would only add noise
        return [], diagnostics
    documents = [
        SourceDocument(path, doc.index, doc.data, locator(doc.positions), doc.line, source_line)
        for doc in loaded
        if doc.data is not None
    ]
    return documents, diagnostics


def _encodable(path: str) -> bool:
    try:
        path.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def load_files(
    files: list[SourceFile], variables: Mapping[str, Any] | None = None
) -> tuple[list[SourceDocument], list[Diagnostic]]:
    """Every document of ``files`` in order (sorted path, then document order)."""
    documents: list[SourceDocument] = []
    diagnostics: list[Diagnostic] = []
    tags: dict[str, str] = {}  # this load's remembered plain-text tags (StrictParser)
    for source in files:
        loaded, problems = read_source(source, variables or {}, tags)
        documents += loaded
        diagnostics += problems
    return documents, diagnostics
