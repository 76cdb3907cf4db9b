"""The ``capc-validate`` pre-commit hook, run by ``pre-commit try-repo`` on a sample repo.

The hook repository is a fresh git repository holding this checkout's package files, so
the test exercises what another repository gets: pre-commit clones it, builds a virtualenv,
pip-installs capc into it and runs the hook's entry. To stay offline (tests talk to
127.0.0.1 only), pip gets no index and finds capc's dependencies on PYTHONPATH, pointing at
this virtualenv's site-packages; capc itself is still built and installed from the clone.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

from tests.support.paths import REPO_ROOT

pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("pre_commit") is None, reason="pre-commit is not installed"
)

GOOD = """\
apiVersion: capc/v1
kind: Capability
code: deepwiki
name: DeepWiki
type: mcp
options:
  server_label: deepwiki
  server_url: https://mcp.deepwiki.com/mcp
  require_approval: never
"""


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=capc-test", "-c", "user.email=capc@example.com",
         "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
        cwd=cwd, check=True, capture_output=True,
    )


@pytest.fixture(scope="module")
def hook_repository(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed git repository with what a release of capc holds."""
    root = tmp_path_factory.mktemp("capc-hooks")
    for name in ("pyproject.toml", "README.md", ".pre-commit-hooks.yaml"):
        shutil.copy(REPO_ROOT / name, root / name)
    shutil.copytree(REPO_ROOT / "compiler", root / "compiler",
                    ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "capc")
    return root


def _try_repo(sample: Path, hooks: Path) -> subprocess.CompletedProcess[str]:
    environment = {
        **os.environ,
        "PRE_COMMIT_HOME": str(sample.parent / "pre-commit-home"),
        "PYTHONPATH": sysconfig.get_paths()["purelib"],
        "PIP_NO_INDEX": "1",
        "PIP_NO_BUILD_ISOLATION": "0",  # pip's spelling of --no-build-isolation
        "PIP_DISABLE_PIP_VERSION_CHECK": "1",
        "VIRTUALENV_NO_PERIODIC_UPDATE": "1",
    }
    return subprocess.run(
        [sys.executable, "-m", "pre_commit", "try-repo", str(hooks), "capc-validate",
         "--all-files", "--color", "never"],
        cwd=sample, env=environment, capture_output=True, text=True, timeout=300,
    )


def _sample(root: Path, files: dict[str, str]) -> Path:
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    return root


def test_the_hook_passes_a_valid_tree(tmp_path: Path, hook_repository: Path) -> None:
    sample = _sample(tmp_path / "sample",
                     {"capabilities/deepwiki.yaml": GOOD, "README.md": "# agents\n"})
    result = _try_repo(sample, hook_repository)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "capc validate" in result.stdout and "Passed" in result.stdout


def test_the_hook_fails_a_broken_tree_with_located_errors(
    tmp_path: Path, hook_repository: Path
) -> None:
    sample = _sample(tmp_path / "sample", {
        "capabilities/deepwiki.yaml": GOOD,
        "capabilities/again.yaml": GOOD.replace("name: DeepWiki", "name: Again"),
        "capabilities/bad.yaml": GOOD.replace("code: deepwiki", "code: Bad Code"),
    })
    result = _try_repo(sample, hook_repository)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "Failed" in result.stdout
    assert "capabilities/bad.yaml:3:7: error[" in result.stdout
    assert "capabilities/again.yaml" in result.stdout  # the duplicate code, a tree property


def _documented_config() -> str:
    import re

    text = (REPO_ROOT / "docs" / "ci.md").read_text()
    section = text[text.index("## pre-commit"):]
    return re.search(r"```yaml\n(.*?)```", section, re.DOTALL).group(1)


def test_the_documented_rev_is_the_tag_the_release_process_creates() -> None:
    import tomllib

    import yaml

    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    config = yaml.safe_load(_documented_config())
    assert config["repos"][0]["rev"] == f"v{version}"
    assert '"v$version"' in (REPO_ROOT / "docs" / "ci.md").read_text()  # how it is tagged


def test_the_documented_config_runs_against_a_tagged_release(
    tmp_path: Path, hook_repository: Path
) -> None:
    import tomllib

    version = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    release = tmp_path / "capc-release"
    shutil.copytree(hook_repository, release)
    _git(release, "tag", "-a", f"v{version}", "-m", f"capc {version}")  # as docs/ci.md does
    config = _documented_config().replace("https://github.com/OWNER/capc", str(release))
    sample = _sample(tmp_path / "sample", {"capabilities/deepwiki.yaml": GOOD,
                                           ".pre-commit-config.yaml": config})
    environment = {**os.environ, "PRE_COMMIT_HOME": str(tmp_path / "pre-commit-home"),
                   "PYTHONPATH": sysconfig.get_paths()["purelib"], "PIP_NO_INDEX": "1",
                   "PIP_NO_BUILD_ISOLATION": "0",  # as in _try_repo: offline build
                   "PIP_DISABLE_PIP_VERSION_CHECK": "1", "VIRTUALENV_NO_PERIODIC_UPDATE": "1"}
    result = subprocess.run([sys.executable, "-m", "pre_commit", "run", "--all-files",
                             "--color", "never"], cwd=sample, env=environment,
                            capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "capc validate" in result.stdout and "Passed" in result.stdout
