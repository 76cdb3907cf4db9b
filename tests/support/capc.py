"""The one way tests run capc: the real console entry point in a child process.

A child process is what a user and CI run: the exit code comes from ``compiler.cli.main``
(not click's test runner), the streams are the real ones, and the working directory and
environment are the test's own without touching the test process.
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Mapping
from pathlib import Path

from tests.support.paths import REPO_ROOT

UPDATE_GOLDEN = os.environ.get("CAPC_UPDATE_GOLDEN") == "1"


def run_capc(*args: str, cwd: Path = REPO_ROOT, env: Mapping[str, str] | None = None,
             extra_env: Mapping[str, str] | None = None, timeout: float = 120,
             ) -> subprocess.CompletedProcess[str]:
    """``capc ARGS...`` in ``cwd``; ``env`` replaces the environment, ``extra_env`` adds to it."""
    environment = dict(os.environ if env is None else env)
    environment.update(extra_env or {})
    return subprocess.run([sys.executable, "-m", "compiler", *args], cwd=cwd, env=environment,
                          capture_output=True, text=True, timeout=timeout)


def matches_golden(actual: str | bytes, expected: Path) -> bool:
    """Whether ``actual`` equals the golden file (``CAPC_UPDATE_GOLDEN=1`` rewrites it first)."""
    if UPDATE_GOLDEN:
        expected.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(actual, bytes):
            expected.write_bytes(actual)
        else:
            expected.write_text(actual, encoding="utf-8")
    if isinstance(actual, bytes):
        return expected.read_bytes() == actual
    return expected.read_text(encoding="utf-8") == actual
