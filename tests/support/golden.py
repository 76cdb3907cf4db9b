"""The one golden-case harness: every tree under tests/cases/ compiles to what it recorded.

Three kinds of case share one layout and one runner:

- ``good/*``: ``src/`` compiles cleanly to the bytes of ``expected-manifest.json``;
- ``bad/*``: ``src/`` gives exactly the text reporter's lines in ``expected.txt``
  (summary included), and no manifest when any of them is an error;
- ``hostile/*``: like ``bad``, but every line must be a located diagnostic, at least one
  an error, and the exit code 1. A hostile case may keep its input as ``inflate.json``
  (a file too large for git, written before the run).

Any case may hold a ``flags`` file (extra ``capc compile`` flags, one per line). A case the
compiler still gets wrong carries ``gap.txt`` (what should happen) and is a strict xfail,
so fixing the compiler turns it into a failure that asks for the gap to be recorded.

``CAPC_UPDATE_GOLDEN=1`` is the one update flag: it rewrites every expectation from what
capc does now (and drops the ``gap.txt`` it replaces). No assertion here reads a clock:
a case that hangs is stopped by the suite's own timeout, not judged by its duration.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import traceback
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.paths import CASES

UPDATE_GOLDEN = os.environ.get("CAPC_UPDATE_GOLDEN") == "1"
DIAGNOSTIC = re.compile(
    r"(?P<path>src/[^:]+):(?P<line>[1-9]\d*):(?P<col>[1-9]\d*): "
    r"(?P<severity>error|warning)\[(?P<code>[a-z0-9-]+)\]: (?P<message>\S.*)"
)
SUMMARY = re.compile(r"\d+ errors?, \d+ warnings?")


@dataclass(frozen=True)
class Outcome:
    """What one ``capc compile`` of a case did: its exit code, its text, its manifest."""

    returncode: int
    stdout: str
    stderr: str
    manifest: bytes | None


def case_dirs(kind: str) -> list[Path]:
    """Every case folder of ``kind`` (``good``, ``bad`` or ``hostile``), sorted by name."""
    return sorted(path for path in (CASES / kind).iterdir() if path.is_dir())


def case_params(kind: str) -> list[object]:
    """The cases of ``kind`` as pytest parameters; a case with ``gap.txt`` is a strict xfail."""
    params: list[object] = []
    for case in case_dirs(kind):
        gap = case / "gap.txt"
        marks = [pytest.mark.xfail(strict=True, reason=gap.read_text())] if gap.exists() else []
        params.append(pytest.param(case, id=case.name, marks=marks))
    return params


def compile_case(case: Path, scratch: Path) -> Outcome:
    """``capc compile src -o build/manifest.json FLAGS`` in a scratch copy of ``case``.

    Runs through the console entry point in-process, cold (no compile cache, so the
    outcome never depends on an earlier run); an exception that escapes it is recorded as
    the traceback a user would have seen.
    """
    work = scratch / case.name
    _materialize(case, work)
    flags = work / "flags"
    output = work / "build" / "manifest.json"
    arguments = ["compile", "src", "-o", str(output),
                 *(flags.read_text().split() if flags.exists() else [])]
    try:
        result = run_capc(*arguments, cwd=work, extra_env={"CAPC_NO_CACHE": "1"})
    except Exception:
        return Outcome(1, "", traceback.format_exc(), _read(output))
    return Outcome(result.returncode, result.stdout, result.stderr, _read(output))


def check_good(case: Path, outcome: Outcome) -> None:
    """A good case compiles cleanly to its recorded manifest bytes."""
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert outcome.returncode == 0, outcome.stderr
    assert outcome.manifest is not None, "a clean compile must write its manifest"
    assert matches_golden(outcome.manifest, case / "expected-manifest.json")


def check_bad(case: Path, outcome: Outcome) -> None:
    """A bad case gives its recorded diagnostics; an error means exit 1 and no manifest."""
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert matches_golden(outcome.stderr, case / "expected.txt"), outcome.stderr
    has_error = "error[" in outcome.stderr
    assert outcome.returncode == (1 if has_error else 0)
    assert (outcome.manifest is not None) is (not has_error), \
        "a failed compile must not write a manifest"


def check_hostile(case: Path, outcome: Outcome) -> None:
    """A hostile case is refused with located errors only: exit 1, no manifest, no traceback."""
    assert "Traceback" not in outcome.stderr + outcome.stdout
    assert outcome.returncode == 1, outcome.stderr
    assert outcome.manifest is None, "a failed compile must not write a manifest"
    *diagnostics, summary = outcome.stderr.splitlines()
    assert SUMMARY.fullmatch(summary), summary
    parsed = [DIAGNOSTIC.fullmatch(line) for line in diagnostics]
    assert all(parsed), [line for line, match in zip(diagnostics, parsed, strict=True) if not match]
    assert any(match["severity"] == "error" for match in parsed if match)
    assert matches_golden(outcome.stderr, case / "expected.txt"), outcome.stderr


CHECKS = {"good": check_good, "bad": check_bad, "hostile": check_hostile}


def matches_golden(actual: str | bytes, expected: Path) -> bool:
    """Whether ``actual`` equals the golden file (``CAPC_UPDATE_GOLDEN=1`` rewrites it first,
    and removes the case's ``gap.txt``: the recorded outcome replaces the promise)."""
    if UPDATE_GOLDEN:
        expected.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(actual, bytes):
            expected.write_bytes(actual)
        else:
            expected.write_text(actual, encoding="utf-8")
        (expected.parent / "gap.txt").unlink(missing_ok=True)
    if isinstance(actual, bytes):
        return expected.read_bytes() == actual
    return expected.read_text(encoding="utf-8") == actual


def _materialize(case: Path, work: Path) -> None:
    """Copy the case, then write its inflated input (kept as a recipe, not in git)."""
    shutil.copytree(case, work)
    recipe = work / "inflate.json"
    if recipe.exists():
        spec = json.loads(recipe.read_text())
        target = work / spec["path"]
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(spec["prefix"] + spec["repeat"] * spec["count"] + spec["suffix"])


def _read(output: Path) -> bytes | None:
    return output.read_bytes() if output.exists() else None
