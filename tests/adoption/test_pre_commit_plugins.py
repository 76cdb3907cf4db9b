"""pre-commit in a repository with ``plugins = true``: ``capc-validate`` checks internal
codes against what the hook's environment has installed (so a code nobody there registers
fails, naming it), and ``capc-validate-without-plugins`` runs every other check and says
what it left to CI. Run with ``pre-commit try-repo`` against a fresh repository."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.cli.test_pre_commit_hook import _sample, hook_repository  # noqa: F401

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed")

INTERNAL = """\
apiVersion: capc/v1
kind: Capability
code: acme_billing
name: Billing
description: The billing tools of the application.
type: internal
"""
BROKEN = INTERNAL.replace("code: acme_billing", "code: Acme Billing")


def try_hook(sample: Path, hooks: Path, hook: str) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PRE_COMMIT_HOME": str(sample.parent / "pre-commit-home"),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "VIRTUALENV_NO_PERIODIC_UPDATE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), hook, "--all-files",
         "--verbose", "--color", "never"],
        cwd=sample, env=environment, capture_output=True, text=True, timeout=300)


def test_plugins_true_with_and_without_the_plugins(
        tmp_path: Path, hook_repository: Path) -> None:  # noqa: F811
    sample = _sample(tmp_path / "sample", {
        "pyproject.toml": "[tool.capc]\nplugins = true\n",
        "capabilities/billing.yaml": INTERNAL})
    strict = try_hook(sample, hook_repository, "capc-validate")
    assert strict.returncode == 1, strict.stdout + strict.stderr
    assert "acme_billing" in strict.stdout
    skipping = try_hook(sample, hook_repository, "capc-validate-without-plugins")
    assert skipping.returncode == 0, skipping.stdout + skipping.stderr
    assert "--no-plugins: internal codes and plugin-tool overrides were not checked" \
        in skipping.stdout
    # Every other check still runs.
    (sample / "capabilities" / "billing.yaml").write_text(BROKEN)
    broken = try_hook(sample, hook_repository, "capc-validate-without-plugins")
    assert broken.returncode == 1 and "capabilities/billing.yaml:3:7: error[" in broken.stdout
