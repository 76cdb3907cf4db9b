"""Golden example trees: tests/cases/good/* compile to the recorded manifest bytes;
tests/cases/bad/* give exactly the recorded diagnostics (file, line, column, code, message).

Each case folder holds its YAML sources, an optional ``flags`` file (extra CLI flags, one
per line) and the expectation: ``expected-manifest.json`` (good) or ``expected.txt``
(bad: the text reporter's lines, summary included). ``CAPC_UPDATE_GOLDEN=1`` rewrites them.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.capc import matches_golden, run_capc
from tests.support.paths import CASES


def _cases(kind: str) -> list[Path]:
    return sorted(p for p in (CASES / kind).iterdir() if p.is_dir())


def _flags(case: Path) -> list[str]:
    flags = case / "flags"
    return flags.read_text().split() if flags.exists() else []


@pytest.mark.parametrize("case", _cases("good"), ids=lambda p: p.name)
def test_good_case_compiles_to_recorded_bytes(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "manifest.json"
    result = run_capc("compile", "src", "-o", str(out), *_flags(case), cwd=case)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    assert matches_golden(out.read_bytes(), case / "expected-manifest.json")


@pytest.mark.parametrize("case", _cases("bad"), ids=lambda p: p.name)
def test_bad_case_gives_recorded_diagnostics(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "manifest.json"
    result = run_capc("compile", "src", "-o", str(out), *_flags(case), cwd=case)
    assert "Traceback" not in result.stderr
    assert matches_golden(result.stderr, case / "expected.txt"), result.stderr
    has_error = "error[" in result.stderr
    assert result.returncode == (1 if has_error else 0)
    assert out.exists() is (not has_error), "a failed compile must not write a manifest"
