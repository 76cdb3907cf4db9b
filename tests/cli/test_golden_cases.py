"""Golden example trees: tests/cases/good/* compile to the recorded manifest bytes;
tests/cases/bad/* give exactly the recorded diagnostics (file, line, column, code, message).

The layout, the runner and the one update flag (``CAPC_UPDATE_GOLDEN=1``) are
tests/support/golden.py's, shared with the hostile corpus (tests/security/).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.golden import case_params, check_bad, check_good, compile_case


@pytest.mark.parametrize("case", case_params("good"))
def test_good_case_compiles_to_recorded_bytes(case: Path, tmp_path: Path) -> None:
    check_good(case, compile_case(case, tmp_path))


@pytest.mark.parametrize("case", case_params("bad"))
def test_bad_case_gives_recorded_diagnostics(case: Path, tmp_path: Path) -> None:
    check_bad(case, compile_case(case, tmp_path))
