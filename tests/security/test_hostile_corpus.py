"""The hostile-input corpus: every config in tests/cases/hostile/ gives a clear, located error.

Each case folder holds ``src/`` (or an ``inflate.json`` that writes a file too large to
keep in git), an optional ``flags`` file, and ``expected.txt``: the text reporter's exact
lines. A case the compiler still gets wrong carries ``gap.txt`` (what should happen) and
is a strict xfail, so fixing the compiler turns it into a failure that asks for the gap
file to be replaced by a recorded ``expected.txt`` (``CAPC_UPDATE_GOLDEN=1`` records it).

All cases run once per module through the console entry point (``compiler.cli.main``, what
``capc`` runs), in-process for speed, each in a scratch copy of the case; an exception that
escapes it is recorded as the traceback a user would have seen.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import shutil
import sys
import traceback
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from compiler.cli import main
from tests.support.paths import CASES

CORPUS = CASES / "hostile"
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


def _run(case: Path, scratch: Path) -> Outcome:
    work = scratch / case.name
    _materialize(case, work)
    flags = (work / "flags").read_text().split() if (work / "flags").exists() else []
    output = work / "build" / "manifest.json"
    stdout, stderr = io.StringIO(), io.StringIO()
    argv = ["capc", "compile", "src", "-o", str(output), *flags]
    returncode = 0
    with contextlib.redirect_stdout(stdout), contextlib.redirect_stderr(stderr):
        try:
            os.chdir(work)
            sys.argv = argv
            main()
        except SystemExit as done:
            returncode = done.code if isinstance(done.code, int) else 1
        except BaseException:
            stderr.write(traceback.format_exc())
            returncode = 1
    return Outcome(returncode, stdout.getvalue(), stderr.getvalue(), output.exists())


@pytest.fixture(scope="module")
def outcomes(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Outcome]]:
    scratch = tmp_path_factory.mktemp("hostile")
    saved = os.getcwd(), sys.argv, os.environ.get("CAPC_NO_CACHE")
    os.environ["CAPC_NO_CACHE"] = "1"
    try:
        yield {case.name: _run(case, scratch) for case in _cases()}
    finally:
        os.chdir(saved[0])
        sys.argv = saved[1]
        if saved[2] is None:
            os.environ.pop("CAPC_NO_CACHE", None)
        else:
            os.environ["CAPC_NO_CACHE"] = saved[2]


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
