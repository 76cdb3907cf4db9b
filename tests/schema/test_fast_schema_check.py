"""jsonschema-rs as a fast "valid" verdict (docs/performance.md, proposal D) is only safe if
it never accepts a document that jsonschema refuses. This checks that on every golden
document, a generated corpus and randomly damaged copies of its documents."""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bench.corpus import write_corpus
from compiler.schema.validation import schema_text, validator_for
from compiler.source.discovery import discover
from compiler.source.documents import load_files
from tests.support.paths import CASES

pytestmark = pytest.mark.fastpath

jsonschema_rs = pytest.importorskip("jsonschema_rs")

CASES = CASES
KINDS = ("Capability", "ToolOverride")


def compiled(kind: str) -> Any:
    return jsonschema_rs.validator_for(json.loads(schema_text(kind)))


def documents_of(root: Path) -> list[Any]:
    loaded, _ = load_files(discover([str(root)], root))
    return [document.data for document in loaded]


def never_laxer(data: Any) -> None:
    """For each kind: compiled says valid => jsonschema says valid (the other way is fine:
    a stricter compiled check only sends the document down the slow path)."""
    for kind in KINDS:
        try:
            fast = compiled(kind).is_valid(data)
        except (ValueError, OverflowError, TypeError):
            continue  # the proposal falls back to jsonschema on these
        if fast:
            assert validator_for(kind).is_valid(data), (kind, data)


@pytest.fixture(scope="module")
def corpus_documents(tmp_path_factory: pytest.TempPathFactory) -> list[Any]:
    root = tmp_path_factory.mktemp("corpus") / "capabilities"
    write_corpus(root, 120, seed=11)
    return documents_of(root)


def test_golden_and_corpus_documents_agree(corpus_documents: list[Any]) -> None:
    golden = [data for source in sorted(CASES.glob("*/*/src"))
              for data in documents_of(source)]
    assert len(golden) > 50 and len(corpus_documents) > 100
    for data in [*golden, *corpus_documents]:
        never_laxer(data)
    valid = [data for data in corpus_documents if compiled(str(data["kind"])).is_valid(data)]
    assert len(valid) == len(corpus_documents), "the corpus is valid for both validators"


_REPLACEMENTS = st.one_of(
    st.none(), st.booleans(), st.integers(min_value=-(2**70), max_value=2**70),
    st.floats(allow_nan=True), st.text(max_size=8),
    st.sampled_from(["abc\n", "GET\n", "x" * 70, "", "api", "mcp", "never\n", "0777"]),
    st.just([]), st.just({}), st.just({"type": "string"}), st.just([1, 1]),
)


def _paths(value: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix]
    if isinstance(value, dict):
        for key, item in value.items():
            found += _paths(item, (*prefix, key))
    elif isinstance(value, list):
        for index, item in enumerate(value):
            found += _paths(item, (*prefix, index))
    return found


@settings(max_examples=400, deadline=None)
@given(st.data())
def test_damaged_documents_agree(corpus_documents: list[Any], data: st.DataObject) -> None:
    document = copy.deepcopy(data.draw(st.sampled_from(corpus_documents)))
    for _ in range(data.draw(st.integers(min_value=1, max_value=3))):
        path = data.draw(st.sampled_from(_paths(document)))
        if not path:
            continue
        parent = document
        for step in path[:-1]:
            parent = parent[step]
        action = data.draw(st.sampled_from(["replace", "delete", "add"]))
        if action == "replace":
            parent[path[-1]] = copy.deepcopy(data.draw(_REPLACEMENTS))
        elif action == "delete" and isinstance(parent, dict):
            del parent[path[-1]]
        elif isinstance(parent, dict):
            parent[data.draw(st.sampled_from(["extra", "type", "options", "url", "name"]))] = (
                copy.deepcopy(data.draw(_REPLACEMENTS)))
    never_laxer(document)
