"""Positions in a JSON document are found without composing it as YAML (Microsoft Graph's
20 MB took a minute and a gigabyte that way), and are the same line and column the
composed node gives, for every value, and for the nearest ancestor of a missing one."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi.document import DocumentFile, _compose, read_document_file
from compiler.diagnostics import Location
from tests.authoring.openapi.directory_corpus import directory_document

TRICKY = (
    '{"openapi": "3.0.3",\r\n "info": {"title": "caf\\u00e9 \u00e9t\u00e9 \U0001f600",'
    ' "version": "1", "x-s": "a \\"quoted\\" {[brace]}\\\\", "x-ls": "a\u2028b"},\n'
    '  "paths" :{ "/a" : { "get" :{"responses":{"200":{"description":"ok"}},'
    ' "tags": [ "one",\n\t"two" , [1, 2.5e3, true, null, {"deep": []}]]}}},\n'
    ' "dup": 1, "dup": 2, "x-e": {}, "x-l": []}\n')


def _all_paths(value: Any, prefix: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, child in value.items():
            found += _all_paths(child, (*prefix, key))
    elif isinstance(value, list):
        for index, child in enumerate(value):
            found += _all_paths(child, (*prefix, index))
    return found


def _composed(document: DocumentFile, path: tuple[str | int, ...]) -> Location:
    """The position as the composed YAML tree gives it (the slow way)."""
    copy = DocumentFile(document.shown, document.real, document.text, document.data,
                        document.sha256, _tree=_compose(document.text))
    return copy.locate(path)


def _check(document: DocumentFile, paths: list[tuple[str | int, ...]]) -> None:
    tree = DocumentFile(document.shown, document.real, document.text, document.data,
                        document.sha256, _tree=_compose(document.text))
    for path in paths:
        assert document.locate(path) == tree.locate(path), path
    assert document._json is not None  # found by the JSON index, not by composing
    assert document._tree is None


def test_every_value_of_a_tricky_json_text_is_where_yaml_says(tmp_path: Path) -> None:
    path = tmp_path / "doc.json"
    path.write_bytes(TRICKY.encode("utf-8"))
    document = read_document_file(path, "doc.json")
    paths = _all_paths(json.loads(TRICKY))
    missing = [("paths", "/b"), ("paths", "/a", "get", "tags", 7), ("info", "title", "x"),
               ("paths", "/a", "get", "tags", "0"), ("x-l", 0)]
    _check(document, paths + missing)
    assert document.locate(("dup",)) == Location("doc.json", 6, 9)  # the first, as before
    assert document.locate(("info", "x-ls")).line == 2


@pytest.mark.parametrize("name", ["slack", "circleci"])
def test_a_real_documents_operations_are_where_yaml_says(name: str) -> None:
    path = directory_document(name)
    document = read_document_file(path, path.name)
    paths = [p for p in _all_paths(document.data) if len(p) <= 5 and p[:1] == ("paths",)]
    _check(document, paths[:3000])


def test_a_yaml_text_is_still_composed(tmp_path: Path) -> None:
    """A YAML text the one-pass reader leaves (an anchor here) is composed to locate."""
    path = tmp_path / "doc.yaml"
    path.write_text("openapi: 3.0.3\ninfo:\n  title: &t t\n  version: '1'\npaths: {}\n")
    document = read_document_file(path, "doc.yaml")
    assert document.locate(("info", "version")) == Location("doc.yaml", 4, 12)
    assert document._json is None and document._block is None
    assert document._tree is not None
