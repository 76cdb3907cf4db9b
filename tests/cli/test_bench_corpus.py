"""The bench tools. The corpus compiles as docs/performance.md says: no errors, and only
the warnings it means to print (MCP servers gated for Anthropic), so a timed compile is not
also timing hundreds of accidental warnings."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

import pytest

from bench.compare_trees import WRITE_NO_BYTECODE, cpu_and_output, cpu_seconds
from bench.corpus import write_corpus
from compiler.build import build

pytestmark = pytest.mark.fastpath


def test_the_corpus_compiles_with_only_its_intended_warnings(tmp_path: Path) -> None:
    corpus = write_corpus(tmp_path / "capabilities", 300, seed=5)
    result = build([str(corpus.root)], cwd=tmp_path, use_cache=False)
    assert result.manifest is not None
    codes = Counter(d.code for d in result.diagnostics)
    assert set(codes) <= {"anthropic-gate"}, codes
    # Conditions are still exercised (with an attribute RuntimeContext declares).
    assert any("when:" in path.read_text(encoding="utf-8") for path in corpus.files)


def test_the_tree_comparison_can_keep_a_variable_from_its_child(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The untimed warm-up must write bytecode even under PYTHONDONTWRITEBYTECODE=1.
    monkeypatch.setenv(WRITE_NO_BYTECODE, "1")
    probe = [sys.executable, "-c",
             f"import os, sys; sys.exit(1 if {WRITE_NO_BYTECODE!r} in os.environ else 0)"]
    assert cpu_seconds(probe, cwd=tmp_path, environment={}, unset=[WRITE_NO_BYTECODE]) >= 0
    with pytest.raises(RuntimeError):
        cpu_seconds(probe, cwd=tmp_path, environment={})


def test_the_floor_reports_its_parse_alone_for_the_strict_ratio(tmp_path: Path) -> None:
    # compare_trees divides by the floor process and by its parse alone (no interpreter
    # start, no `import yaml`): the child must print both the count and that CPU time.
    corpus = write_corpus(tmp_path / "capabilities", 20, seed=3)
    floor = [sys.executable, "-m", "bench.floor_parse", str(corpus.root), "--cpu"]
    spent, printed = cpu_and_output(floor, cwd=Path(__file__).parents[2], environment={})
    count, parse = printed.split()
    documents = sum(text.count("\n---\n") + 1 for text in
                    (path.read_text(encoding="utf-8") for path in corpus.files))
    assert int(count) == documents
    assert 0 < float(parse) <= spent
