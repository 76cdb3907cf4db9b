"""The hostile-input corpus: every config in tests/cases/hostile/ gives a clear, located error.

Each case folder holds ``src/`` (or an ``inflate.json`` that writes a file too large to
keep in git), an optional ``flags`` file, and ``expected.txt``: the text reporter's exact
lines. A case the compiler still gets wrong carries ``gap.txt`` (what should happen) and
is a strict xfail, so fixing the compiler turns it into a failure that asks for the gap
file to be replaced by a recorded ``expected.txt`` (``CAPC_UPDATE_GOLDEN=1`` records it).

All cases run once per session, concurrently, through the real entry point
(``python -m compiler compile``) in a scratch copy of the case.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CORPUS = REPO / "tests" / "cases" / "hostile"
UPDATE = os.environ.get("CAPC_UPDATE_GOLDEN") == "1"
DIAGNOSTIC = re.compile(
    r"(?P<path>src/[^:]+):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): "
    r"(?P<severity>error|warning)\[(?P<code>[a-z0-9-]+)\]: (?P<message>\S.*)"
)
SUMMARY = re.compile(r"\d+ errors?, \d+ warnings?")


@dataclass(frozen=True)
class Outcome:
    returncode: int
    stdout: str
    stderr: str
    manifest_written: bool


def _cases() -> list[Path]:
    return sorted(path for path in CORPUS.iterdir() if path.is_dir())


def _materialize(case: Path, work: Path) -> None:
    shutil.copytree(case, work)
    spec_path = work / "inflate.json"
    if spec_path.exists():
        spec = json.loads(spec_path.read_text())
        target = work / spec["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(spec["prefix"] + spec["repeat"] * spec["count"] + spec["suffix"])


def _run(case: Path) -> Outcome:
    with tempfile.TemporaryDirectory() as scratch:
        work = Path(scratch) / case.name
        _materialize(case, work)
        flags = (work / "flags").read_text().split() if (work / "flags").exists() else []
        output = work / "build" / "manifest.json"
        environment = {**os.environ, "PYTHONPATH": str(REPO), "CAPC_NO_CACHE": "1"}
        result = subprocess.run(
            [sys.executable, "-m", "compiler", "compile", "src", "-o", str(output), *flags],
            cwd=work, capture_output=True, text=True, timeout=120, env=environment,
        )
        return Outcome(result.returncode, result.stdout, result.stderr, output.exists())


@pytest.fixture(scope="module")
def outcomes() -> dict[str, Outcome]:
    cases = _cases()
    with ThreadPoolExecutor(max_workers=max(2, os.cpu_count() or 2)) as pool:
        return dict(zip((case.name for case in cases), pool.map(_run, cases), strict=True))


def _param(case: Path) -> object:
    gap = case / "gap.txt"
    if gap.exists():
        return pytest.param(
            case, id=case.name, marks=pytest.mark.xfail(strict=True, reason=gap.read_text())
        )
    return pytest.param(case, id=case.name)


def test_the_corpus_has_at_least_forty_cases() -> None:
    assert len(_cases()) >= 40


@pytest.mark.parametrize("case", [_param(case) for case in _cases()])
def test_hostile_input_gives_a_clear_located_error(
    case: Path, outcomes: dict[str, Outcome]
) -> None:
    outcome = outcomes[case.name]
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert outcome.returncode == 1, outcome.stderr
    assert not outcome.manifest_written, "a failed compile must not write a manifest"
    *diagnostics, summary = outcome.stderr.splitlines()
    assert SUMMARY.fullmatch(summary), summary
    parsed = [DIAGNOSTIC.fullmatch(line) for line in diagnostics]
    assert all(parsed), [line for line, match in zip(diagnostics, parsed, strict=True) if not match]
    assert any(match["severity"] == "error" for match in parsed if match)
    expected = case / "expected.txt"
    if UPDATE:
        expected.write_text(outcome.stderr)
        (case / "gap.txt").unlink(missing_ok=True)
    assert outcome.stderr == expected.read_text()
