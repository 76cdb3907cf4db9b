"""Legacy rows: the in-memory upgrade (golden pairs per step) and the version chain."""

from __future__ import annotations

import itertools
from pathlib import Path

import pytest
import yaml

from compiler.schema.legacy import (
    CURRENT_API_VERSION,
    LEGACY,
    MIGRATIONS,
    LegacyRowError,
    is_legacy_row,
    migrate_document,
    newer_version_message,
    upgrade_legacy_row,
)

GOLDEN = Path(__file__).parent / "golden" / "legacy_to_v1"
CASES = sorted(path.name.removesuffix(".row.yaml") for path in GOLDEN.glob("*.row.yaml"))


def _load(path: Path) -> dict:
    return yaml.safe_load(path.read_text(encoding="utf-8"))


@pytest.mark.parametrize("case", CASES)
def test_legacy_to_v1_golden(case: str) -> None:
    row = _load(GOLDEN / f"{case}.row.yaml")
    expected = _load(GOLDEN / f"{case}.v1.yaml")
    upgraded = upgrade_legacy_row(row)
    assert upgraded == expected
    # Key order is part of the contract: apiVersion and kind first, then the row's order.
    assert list(upgraded) == list(expected)


def test_every_golden_case_has_its_expected_half() -> None:
    assert len(CASES) >= 4
    for case in CASES:
        assert (GOLDEN / f"{case}.v1.yaml").is_file()


def test_the_chain_runs_from_legacy_to_the_current_version() -> None:
    assert MIGRATIONS[0].source == LEGACY
    for earlier, later in itertools.pairwise(MIGRATIONS):
        assert earlier.target == later.source
    assert MIGRATIONS[-1].target == CURRENT_API_VERSION
    upgraded, steps = migrate_document({"name": "RAG", "code": "rag", "type": "internal"})
    assert steps == (LEGACY,)
    assert upgraded["apiVersion"] == CURRENT_API_VERSION


def test_current_documents_pass_through_the_chain_untouched() -> None:
    document = {"apiVersion": "capc/v1", "kind": "Capability", "code": "x", "name": "X",
                "type": "internal"}
    upgraded, steps = migrate_document(document)
    assert steps == ()
    assert upgraded == document


def test_legacy_shape_detection() -> None:
    assert is_legacy_row({"name": "a", "code": "a", "type": "api"})
    assert not is_legacy_row({"name": "a", "code": "a"})
    assert not is_legacy_row({"apiVersion": "capc/v1", "name": "a", "code": "a", "type": "api"})
    assert not is_legacy_row({"kind": "Capability", "name": "a", "code": "a", "type": "api"})
    assert not is_legacy_row(["name", "code", "type"])  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("row", "key", "fragment"),
    [
        ({"name": "x", "code": "x", "type": "api", "options": "{not json"}, "options",
         "not valid JSON"),
        ({"name": "x", "code": "x", "type": "api", "options": "[1, 2]"}, "options",
         "must be an object"),
        ({"name": "x", "code": "a,b", "type": "api"}, "code", "only type 'internal'"),
        ({"name": "x", "code": "Base,RAG", "type": "internal"}, "code", "invalid registry codes"),
        ({"name": "x", "code": ",".join(["abcdefghij"] * 7), "type": "internal"}, "code",
         "longer than 64"),
        ({"name": "x", "code": "a,b", "type": "internal", "options": {"codes": ["c"]}}, "code",
         "disagrees"),
    ],
)
def test_rows_that_cannot_be_upgraded_say_why_and_where(row: dict, key: str,
                                                         fragment: str) -> None:
    with pytest.raises(LegacyRowError) as raised:
        upgrade_legacy_row(row)
    assert raised.value.key == key
    assert fragment in raised.value.message


def test_a_newer_api_version_is_refused_naming_the_version_it_needs() -> None:
    message = newer_version_message("capc/v2")
    assert message is not None
    assert "capc/v2" in message and CURRENT_API_VERSION in message and "upgrade capc" in message
    assert newer_version_message("capc/v1") is None
    assert newer_version_message("example.com/v9") is None
    assert newer_version_message(None) is None


def test_a_newer_file_is_refused_by_the_compiler(tmp_path: Path, in_dir) -> None:
    from compiler.build import build

    (tmp_path / "caps").mkdir()
    (tmp_path / "caps" / "future.yaml").write_text(
        "apiVersion: capc/v3\nkind: Capability\ncode: x\nname: X\ntype: internal\n")
    in_dir(tmp_path)
    result = build(["caps"])
    assert result.manifest is None
    [diagnostic] = [d for d in result.diagnostics if d.is_error]
    assert diagnostic.path == "caps/future.yaml" and diagnostic.line == 1
    assert "capc/v3" in diagnostic.message and "upgrade capc" in diagnostic.message
