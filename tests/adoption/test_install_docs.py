"""Installs the docs show (issue 30, item 10): the README's lines run as written against a
fresh clone; every install a compile runs from brings the `budget` extra.

The "hosted" capc is a git repository made of what this checkout tracks, with a `main`
branch and no tag, as a fresh clone of a fork has; `https://github.com/OWNER/capc` is
replaced by its file URL. pip gets no index: capc's dependencies come read-only from this
test run (the runner's ``.pth``), capc itself is cloned and built by pip from git.
"""

from __future__ import annotations

import os
import re
import shlex
import subprocess
import tomllib
from pathlib import Path

import pytest
import yaml

from tests.adoption.runners import fresh_runner
from tests.support.fresh_checkout import copy_tracked
from tests.support.paths import REPO_ROOT

README = (REPO_ROOT / "README.md").read_text(encoding="utf-8")
HOSTED = "https://github.com/OWNER/capc"


def block(name: str) -> str:
    """The fenced block after ``<!-- docs-test: NAME -->``."""
    match = re.search(rf"<!-- docs-test: {name} -->\n```sh\n(.*?)```", README, re.DOTALL)
    assert match is not None, name
    return match.group(1)


def git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@example.com",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture(scope="module")
def hosted(tmp_path_factory: pytest.TempPathFactory) -> Path:
    repository = copy_tracked(tmp_path_factory.mktemp("host") / "capc")
    git(repository, "init", "-q")
    git(repository, "add", "-A")
    git(repository, "commit", "-q", "-m", "capc")
    return repository


def run(script: str, cwd: Path, venv: Path, hosted: Path) -> subprocess.CompletedProcess[str]:
    env = {key: value for key, value in os.environ.items()
           if key not in ("VIRTUAL_ENV", "PYTHONPATH")}
    env.update(PATH=f"{venv / 'bin'}{os.pathsep}{env['PATH']}", PIP_NO_INDEX="1",
               PIP_NO_BUILD_ISOLATION="0", PIP_DISABLE_PIP_VERSION_CHECK="1")
    return subprocess.run(["bash", "-euo", "pipefail", "-c",
                           # pip's file URL wants a host; git clone takes the path.
                           script.replace(f"git+{HOSTED}", f"git+file://localhost{hosted}")
                           .replace(HOSTED, str(hosted))],
                          cwd=cwd, env=env, capture_output=True, text=True, timeout=600)


def installed(venv: Path) -> subprocess.CompletedProcess[str]:
    check = ("import compiler.signing, compiler.profiles.tokens as tokens; "
             "tokens.o200k(); print('ok')")
    return subprocess.run([str(venv / "bin" / "python"), "-c", check], capture_output=True,
                          text=True, timeout=120, cwd=venv)


def test_no_document_promises_capc_from_a_package_index() -> None:
    pages = [REPO_ROOT / "README.md", REPO_ROOT / "action.yml",
             REPO_ROOT / ".pre-commit-hooks.yaml", *sorted((REPO_ROOT / "docs").glob("*.md"))]
    # `pip install capc` / `pip install 'capc[mcp]'`: a bare name, which an index resolves;
    # `"capc[mcp] @ git+..."` and a wheel's path are what a clone can give.
    found = []
    for page in pages:
        for line in page.read_text(encoding="utf-8").splitlines():
            _, marker, rest = line.partition("pip install ")
            if not marker:
                continue
            rest = rest.split("`")[0]
            try:
                arguments = shlex.split(rest)
            except ValueError:
                arguments = rest.split()
            found += [f"{page.name}: {line.strip()}" for argument in arguments
                      if re.fullmatch(r"capc(\[[^\]]*\])?", argument)]
    assert found == []


def test_the_install_line_names_a_branch_a_fresh_clone_has(
        tmp_path: Path, runner: Path, hosted: Path) -> None:
    script = block("install-from-git")
    assert HOSTED in script and "@v" not in script  # no tag exists in a fresh clone
    venv = fresh_runner(tmp_path / "git", runner)
    result = run(script, tmp_path, venv, hosted)
    assert result.returncode == 0, result.stderr
    assert installed(venv).stdout.strip() == "ok"


def test_the_wheel_lines_work_in_a_fresh_clone(
        tmp_path: Path, runner: Path, hosted: Path) -> None:
    venv = fresh_runner(tmp_path / "wheel", runner)
    result = run(block("install-from-wheel"), tmp_path, venv, hosted)
    assert result.returncode == 0, result.stderr
    assert list((tmp_path / "capc" / "dist").glob("capc-*.whl"))
    assert installed(venv).stdout.strip() == "ok"


def test_every_install_a_compile_runs_from_brings_the_budget_extra() -> None:
    # A profile's token budget is checked by validate and compile: without the encoding,
    # a budget the byte bound cannot prove met fails (profile-no-tokenizer).
    project = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    encoding = project["project"]["optional-dependencies"]["budget"]
    ci = (REPO_ROOT / "docs" / "ci.md").read_text(encoding="utf-8")
    job = re.search(r"<!-- docs-test: sign-job -->\n```yaml\n(.*?)```", ci, re.DOTALL)
    assert job is not None
    installs = [step["run"] for step in yaml.safe_load(job.group(1))["sign"]["steps"]
                if "pip install" in step.get("run", "")]
    assert installs and all(re.search(r"capc\[[^\]]*budget", run) for run in installs)
    workflow = re.search(r'CAPC: "(capc\[[^\]]*\])', ci)
    assert workflow is not None and "budget" in workflow.group(1)
    action = yaml.safe_load((REPO_ROOT / "action.yml").read_text(encoding="utf-8"))
    install = next(step["run"] for step in action["runs"]["steps"]
                   if "pip install" in step.get("run", ""))
    assigned = re.findall(r'extras="([^"]*)"', install)
    assert assigned and all("budget" in extras for extras in assigned)
    hooks = yaml.safe_load((REPO_ROOT / ".pre-commit-hooks.yaml").read_text(encoding="utf-8"))
    for hook in hooks:  # the extra's pin, written once in pyproject.toml and checked here
        assert hook.get("additional_dependencies") == encoding, hook["id"]
