"""The files an earlier ``capc import openapi`` wrote into a folder (``origin.openapi``).

``--check`` regenerates with the selection recorded in them, and both a re-import and
``--check`` know which files are theirs to replace: each file's header names the document
it was generated from (:func:`document_record`), and a re-import from another document
is refused rather than silently replacing them.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

from compiler.authoring.openapi.document_text import clean_text
from compiler.authoring.openapi.render import GENERATED_BY, OPERATION_AFTER
from compiler.source.documents import parse_source
from compiler.source.safe_read import MAX_SOURCE_BYTES


@dataclass(frozen=True, slots=True)
class GeneratedFiles:
    """Generated files of one folder: their texts by POSIX path, and the selection used."""

    texts: Mapping[str, str]
    selection: tuple[str, ...]

    @property
    def paths(self) -> frozenset[str]:
        """The POSIX paths of the generated files."""
        return frozenset(self.texts)


def read_generated(out_dir: str) -> GeneratedFiles:
    """Every ``*.yaml`` directly in ``out_dir`` with an ``origin.openapi`` block."""
    folder = Path(out_dir)
    texts: dict[str, str] = {}
    selection: list[str] = []
    if not folder.is_dir():
        return GeneratedFiles({}, ())
    for path in sorted(folder.glob("*.yaml")):
        try:
            if path.stat().st_size > MAX_SOURCE_BYTES or not path.is_file():
                continue
            raw = path.read_bytes()
        except OSError:
            continue
        documents, _ = parse_source(path.as_posix(), raw, {})
        origin = _origin(documents[0].data) if len(documents) == 1 else None
        if origin is None:
            continue
        texts[path.as_posix()] = raw.decode("utf-8")
        recorded = origin.get("selection")
        if isinstance(recorded, list):
            selection += [item for item in recorded if isinstance(item, str)]
    return GeneratedFiles(texts, tuple(dict.fromkeys(sorted(selection))))


def _origin(data: object) -> Mapping[str, object] | None:
    if not isinstance(data, Mapping):
        return None
    origin = data.get("origin")
    found = origin.get("openapi") if isinstance(origin, Mapping) else None
    return found if isinstance(found, Mapping) else None


MAX_RECORD = 300


def document_record(spec: str, out_dir: str, project_root: Path) -> str:
    """How a generated file names the document it came from: its POSIX path relative to
    the project root (relative to ``out_dir`` when it lies outside the project), never an
    absolute machine path; always with a ``/`` (``./api.yaml``), which tells it from the
    bare file name older imports recorded."""
    real = os.path.realpath(spec)
    root = os.path.realpath(project_root)
    try:
        base = root if os.path.commonpath([real, root]) == root else os.path.realpath(out_dir)
        relative = Path(os.path.relpath(real, base)).as_posix()
    except ValueError:  # another drive (Windows): the name is all that travels
        relative = Path(real).name
    if "/" not in relative:
        relative = f"./{relative}"
    return " ".join(clean_text(relative, MAX_RECORD).split())


@dataclass(frozen=True, slots=True)
class RecordedDocument:
    """What a generated file's header says of its document: the record (None when the
    header names none) and the header line saying it (1-based)."""

    record: str | None
    line: int


def recorded_document(text: str) -> RecordedDocument:
    """The document a generated file's header names (its comment lines, folded or not)."""
    lines = text.splitlines()
    for index, line in enumerate(lines):
        if not line.startswith("#"):
            break  # the header is over
        if not line.startswith(GENERATED_BY):
            continue
        said = [line]
        for more in lines[index + 1:]:
            if not more.startswith("# ") or more.startswith("# Re-importing"):
                break
            said.append(more[2:])
        joined = " ".join(said)[len(GENERATED_BY):]
        end = joined.rfind(OPERATION_AFTER)
        return RecordedDocument(joined[:end] if end > 0 else None, index + 1)
    return RecordedDocument(None, 1)


def same_document(recorded: str | None, record: str) -> bool:
    """Whether a file recording ``recorded`` came from the document recorded ``record``:
    equal records, or an older file's bare name equal to the document's name. A file
    with no record at all is taken as the document's (see docs/openapi.md)."""
    if recorded is None or recorded == record:
        return True
    return "/" not in recorded and recorded == record.rsplit("/", 1)[-1]
