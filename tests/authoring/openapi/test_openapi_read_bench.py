"""bench/openapi_read.py: reading and locating both ways, on a small generated document."""

from __future__ import annotations

from pathlib import Path

import pytest

from bench.fast_paths import write_openapi_document
from bench.openapi_read import main, spread_paths


def test_the_read_figures_compare_both_ways(tmp_path: Path,
                                            capsys: pytest.CaptureFixture[str]) -> None:
    document = write_openapi_document(tmp_path / "things.yaml", 20)
    assert main([str(document), "--runs", "2", "--paths", "50"]) == 0
    rows = [line for line in capsys.readouterr().out.splitlines()
            if line.startswith("| things.yaml")]
    assert len(rows) == 1
    cells = [cell.strip() for cell in rows[0].strip("|").split("|")]
    assert cells[-2:] == ["yes", "yes"], rows  # the one pass taken, the same data


def test_the_paths_are_spread_and_some_are_missing() -> None:
    data = {"a": [{"b": index} for index in range(100)]}
    chosen = spread_paths(data, 20)
    assert len(chosen) == 20
    assert chosen[0] == ()
    assert sum(path[-1:] == ("no such key",) for path in chosen) == 2
