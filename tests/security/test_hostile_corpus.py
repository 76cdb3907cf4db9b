"""The hostile-input corpus: every config in tests/cases/hostile/ gives a clear, located error.

Each case folder holds ``src/`` (or an ``inflate.json`` that writes a file too large to
keep in git), an optional ``flags`` file, and ``expected.txt``: the text reporter's exact
lines. A case the compiler still gets wrong carries ``gap.txt`` and is a strict xfail.
The runner, the checks and the one update flag (``CAPC_UPDATE_GOLDEN=1``) are
tests/support/golden.py's, shared with the good and bad trees (tests/cli/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.golden import case_dirs, case_params, check_hostile, compile_case


def test_the_corpus_has_at_least_forty_cases() -> None:
    assert len(case_dirs("hostile")) >= 40


@pytest.mark.parametrize("case", case_params("hostile"))
def test_hostile_input_gives_a_clear_located_error(case: Path, tmp_path: Path) -> None:
    check_hostile(case, compile_case(case, tmp_path))
