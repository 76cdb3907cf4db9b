"""scripts/release.sh, the release process docs/ci.md and the README describe, run on a
fresh clone: it bumps the version, builds the wheel and the sdist, installs the wheel into
a fresh virtualenv and compiles with it, commits and tags; it refuses a dirty tree."""

from __future__ import annotations

import os
import subprocess
import sys
import tomllib
from pathlib import Path

from tests.support.fresh_checkout import tracked_files
from tests.support.paths import REPO_ROOT


def clone(target: Path) -> Path:
    for name in tracked_files():
        source = REPO_ROOT / name
        if source.is_symlink() or not source.is_file():
            continue
        destination = target / name
        destination.parent.mkdir(parents=True, exist_ok=True)
        destination.write_bytes(source.read_bytes())
        destination.chmod(source.stat().st_mode)
    git(target, "init", "-q")
    git(target, "add", "-A")
    git(target, "commit", "-q", "-m", "capc")
    return target


def git(cwd: Path, *arguments: str) -> str:
    return subprocess.run(["git", "-c", "user.name=rel", "-c", "user.email=rel@example.com",
                           "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false",
                           *arguments], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def release(repo: Path, *arguments: str) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items() if key != "PYTHONPATH"}
    env.update(PYTHON=sys.executable, CAPC_RELEASE_OFFLINE="1", GIT_AUTHOR_NAME="rel",
               GIT_AUTHOR_EMAIL="rel@example.com", GIT_COMMITTER_NAME="rel",
               GIT_COMMITTER_EMAIL="rel@example.com")
    return subprocess.run(["bash", "scripts/release.sh", *arguments], cwd=repo, env=env,
                          capture_output=True, text=True, timeout=900)


def test_a_release_is_built_tested_committed_and_tagged(tmp_path: Path) -> None:
    repo = clone(tmp_path / "capc")
    done = release(repo, "0.9.1")
    assert done.returncode == 0, done.stdout + done.stderr
    assert tomllib.loads((repo / "pyproject.toml").read_text())["project"]["version"] == "0.9.1"
    assert '__version__ = "0.9.1"' in (repo / "compiler" / "__init__.py").read_text()
    assert sorted(p.name for p in (repo / "dist").iterdir()) == [
        "capc-0.9.1-py3-none-any.whl", "capc-0.9.1.tar.gz"]
    assert git(repo, "tag", "--list") == "v0.9.1\n"
    assert git(repo, "log", "-1", "--format=%s", "v0.9.1") == "Release 0.9.1\n"
    assert git(repo, "status", "--porcelain", "--untracked-files=no") == ""
    assert 'git push origin HEAD "v0.9.1"' in done.stdout
    again = release(repo, "0.9.1")
    assert again.returncode == 1 and "exists already" in again.stderr


def test_a_dirty_tree_or_a_bad_version_is_refused(tmp_path: Path) -> None:
    repo = clone(tmp_path / "capc")
    assert release(repo, "one").returncode == 2
    (repo / "README.md").write_text("edited\n")
    dirty = release(repo, "0.9.2")
    assert dirty.returncode == 1 and "uncommitted" in dirty.stderr
    assert git(repo, "tag", "--list") == ""
