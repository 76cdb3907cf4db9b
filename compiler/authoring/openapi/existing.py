"""The files an earlier ``capc import openapi`` wrote into a folder (``origin.openapi``).

``--check`` regenerates with the selection recorded in them, and both a re-import and
``--check`` know which files are theirs to replace.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path

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
