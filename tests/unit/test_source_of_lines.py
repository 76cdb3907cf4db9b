"""``normalize.source_of`` reads a node's line straight from the position table: the same
line as ``SourceDocument.location`` for every node of every case tree (templates too)."""

from __future__ import annotations

from compiler.normalize import source_of
from compiler.source.discovery import discover
from compiler.source.documents import SourceDocument, load_files
from tests.support.paths import CASES
from tests.support.runtime import json_paths


def _documents() -> list[SourceDocument]:
    documents: list[SourceDocument] = []
    for source in sorted(CASES.glob("*/*/src")):
        loaded, _ = load_files(discover([str(source)], source.parent))
        documents += loaded
    return documents


def test_source_of_is_the_located_line_for_every_node() -> None:
    documents = _documents()
    assert len(documents) > 50
    checked = 0
    for document in documents:
        for path in [*json_paths(document.data), ("options", "missing"), ("nowhere",)]:
            location = source_of(document, path)
            assert (location.path, location.line) == (document.path,
                                                      document.location(path).line), path
            checked += 1
        whole = source_of(document)
        assert (whole.path, whole.line) == (document.path, document.first_line)
    assert checked > 1000
