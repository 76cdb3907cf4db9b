"""Golden example trees: tests/cases/good/* compile to the recorded manifest bytes;
tests/cases/bad/* give exactly the recorded diagnostics (file, line, column, code, message).

Each case folder holds its YAML sources, an optional ``flags`` file (extra CLI flags, one
per line) and the expectation: ``expected-manifest.json`` (good) or ``expected.txt``
(bad: the text reporter's lines, summary included). ``CAPC_UPDATE_GOLDEN=1`` rewrites them.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.paths import CASES

CASES = CASES
UPDATE = os.environ.get("CAPC_UPDATE_GOLDEN") == "1"


def _cases(kind: str) -> list[Path]:
    return sorted(p for p in (CASES / kind).iterdir() if p.is_dir())


def _flags(case: Path) -> list[str]:
    flags = case / "flags"
    return flags.read_text().split() if flags.exists() else []


def _capc(case: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "compiler", *args], cwd=case,
                          capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("case", _cases("good"), ids=lambda p: p.name)
def test_good_case_compiles_to_recorded_bytes(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "manifest.json"
    result = _capc(case, "compile", "src", "-o", str(out), *_flags(case))
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    expected = case / "expected-manifest.json"
    if UPDATE:
        expected.write_bytes(out.read_bytes())
    assert out.read_bytes() == expected.read_bytes()


@pytest.mark.parametrize("case", _cases("bad"), ids=lambda p: p.name)
def test_bad_case_gives_recorded_diagnostics(case: Path, tmp_path: Path) -> None:
    out = tmp_path / "manifest.json"
    result = _capc(case, "compile", "src", "-o", str(out), *_flags(case))
    assert "Traceback" not in result.stderr
    expected = case / "expected.txt"
    if UPDATE:
        expected.write_text(result.stderr)
    assert result.stderr == expected.read_text()
    has_error = "error[" in result.stderr
    assert result.returncode == (1 if has_error else 0)
    assert out.exists() is (not has_error), "a failed compile must not write a manifest"
