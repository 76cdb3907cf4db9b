"""The scaffold-placeholder check decides most documents in a first pass without paths:
that pass may only skip documents that have no finding, whatever the YAML spelling."""

from __future__ import annotations

import tempfile
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.corpus import DEFAULT_SEED, write_corpus
from compiler.checks.scaffold_placeholders import (
    PLACEHOLDER_HOST,
    _may_hold_placeholder,
    check_scaffold_placeholders,
)
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath


def _documents(text: str) -> list[SourceDocument]:
    documents, problems = parse_source("a.yaml", text.encode(), {})
    assert not problems, problems
    return documents


def _expected(data: Any, path: tuple[str | int, ...] = ()) -> list[tuple[str | int, ...]]:
    """The findings' paths, from the check's definition (written here independently)."""
    found: list[tuple[str | int, ...]] = []
    items = data.items() if isinstance(data, dict) else enumerate(data) \
        if isinstance(data, list) else ()
    for key, value in items:
        where = (*path, key)
        if isinstance(value, str) and isinstance(key, str):
            if key in ("description", "name"):
                if value.lstrip().startswith("TODO"):
                    found.append(where)
            elif where[0] == "options" and key in ("url", "server_url"):
                try:
                    host = (urlsplit(value).hostname or "").lower()
                except ValueError:
                    host = ""
                if host == PLACEHOLDER_HOST:
                    found.append(where)
        else:
            found += _expected(value, where)
    return found


def _found(document: SourceDocument) -> list[tuple[int, int]]:
    return [(d.line, d.col) for d in check_scaffold_placeholders(document)]


def _located(document: SourceDocument) -> list[tuple[int, int]]:
    return [(loc.line, loc.col) for loc in map(document.location, _expected(document.data))]


# Each spelling reaches the needle only after the loader decodes it: escapes, folding, a
# tab or a line break that urlsplit drops, upper case in the host.
SPELLED = '''\
code: x
name: "\\x54ODO: a name"
description: "  \\u0054ODO describe"
options:
  description: >-
    TODO
    folded
  url: "https://\\x74odo.EXAMPLE.com/v1"
  server_url: "https://todo.exa\\tmple.com/mcp"
  headers:
    url: "https://todo.example.\\ncom/x"
  nested:
    - {name: "\\tTODO in a list"}
other:
  url: https://todo.example.com/not-under-options
'''


def test_spellings_through_yaml_escapes_are_all_found() -> None:
    [document] = _documents(SPELLED)
    assert _may_hold_placeholder(document.data)
    found = _found(document)
    assert found == _located(document)
    assert len(found) == 7  # every spelling above except the URL outside options


ALONE = [
    'name: "\\x54ODO: a name"',
    'description: "  \\u0054ODO describe"',
    "options:\n  description: >-\n    TODO\n    folded",
    'options: {url: "https://\\x74odo.EXAMPLE.com/v1"}',
    'options: {server_url: "https://todo.exa\\tmple.com/mcp"}',
    'options: {headers: {url: "https://todo.example.\\ncom/x"}}',
    'options: {url: "https://user@todo.example.com:8443/x"}',
    'options: {nested: [{name: "\\tTODO in a list"}]}',
]


def test_each_spelling_alone_is_found() -> None:
    """Each needle on its own: the first pass must not rely on another one being there."""
    for text in ALONE:
        [document] = _documents(f"code: x\n{text}\n")
        assert _found(document) == _located(document), text
        assert len(_found(document)) == 1, text


def test_no_needle_no_second_pass() -> None:
    [document] = _documents("code: x\nname: A todo list\ndescription: Not TODO first\n"
                            "options: {url: 'https://todo.example.org/x', name: To do}\n")
    assert _found(document) == []
    # "TODO" in a description that does not start with it is passed to the located pass,
    # which finds nothing; a document without any needle is decided by the first pass.
    [plain] = _documents("code: x\nname: Lists\noptions: {url: 'https://api.example.com/'}\n")
    assert not _may_hold_placeholder(plain.data)


def test_the_bench_corpus_is_decided_by_the_first_pass() -> None:
    """The generated corpus has no scaffold text: every document skips the located pass
    (what makes the check cheap), and the answer is still checked against the definition."""
    with tempfile.TemporaryDirectory() as folder:
        corpus = write_corpus(Path(folder) / "capabilities", 60, DEFAULT_SEED)
        texts = [path.read_text() for path in sorted(corpus.root.rglob("*.yaml"))]
    assert texts
    for text in texts:
        for document in _documents(text):
            assert not _may_hold_placeholder(document.data)
            assert _expected(document.data) == []


_FRAGMENTS = st.sampled_from([
    "TODO", "ToDo", " TODO", "\tTODO", "todo", "TO", "DO", "https://", "todo.example.com",
    "TODO.EXAMPLE.COM", "todo.exa", "mple.com", "\t", "\n", "\r", "@", ":8080", "/x", "[",
    "]", "%", "x", "\\", "example.com", "\u212a", "\u0130",
])
_TEXT = st.lists(_FRAGMENTS, max_size=6).map("".join)
_KEYS = st.sampled_from(["description", "name", "url", "server_url", "options", "other"])
_VALUES = st.recursive(
    st.one_of(_TEXT, st.integers(), st.none(), st.booleans()),
    lambda inner: st.one_of(st.lists(inner, max_size=3),
                            st.dictionaries(_KEYS, inner, max_size=4)),
    max_leaves=12,
)


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_first_pass_never_skips_a_finding(data: dict[str, Any]) -> None:
    """Any document: when the definition finds something, the first pass says "maybe"."""
    if _expected(data):
        assert _may_hold_placeholder(data)


@settings(max_examples=200, deadline=None)
@given(st.dictionaries(_KEYS, _VALUES, max_size=5))
def test_findings_are_those_of_the_definition(data: dict[str, Any]) -> None:
    document = SourceDocument("a.yaml", 0, data, _NoPositions(), 1)  # type: ignore[arg-type]
    assert [tuple(d.message.split(" is still")[0].split(".")) for d in
            check_scaffold_placeholders(document)] == [
        tuple(str(part) for part in path) for path in _expected(data)]


class _NoPositions:
    """Positions for data made in a test: every node at 1:1 (the paths are compared)."""

    def locate(self, path: tuple[str | int, ...], *, key: bool = False) -> tuple[int, int]:
        return 1, 1

