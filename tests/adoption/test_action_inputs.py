"""action.yml in an adopter's repository: every step the inputs turn on runs as written
(GitHub's expressions filled in), capc installed from a wheel into a fresh runner; signing
installs capc[sign,budget]: it compiles, and a profile's token budget needs the encoding."""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import yaml

from tests.adoption.runners import fresh_runner
from tests.support.capc import run_capc_process
from tests.support.paths import REPO_ROOT

ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())
CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
description: The {code} API.
type: api
options:
  url: https://{code}.acme.example/api
  description: Reads {code}.
"""


def _condition_holds(condition: str, inputs: dict[str, str]) -> bool:
    """The ``if:`` forms action.yml uses: ``inputs.X == 'v'`` / ``!=``, joined by ``&&``."""
    for clause in condition.split("&&"):
        match = re.fullmatch(r"\s*inputs\.([\w-]+) (==|!=) '([^']*)'\s*", clause)
        assert match is not None, f"an if: form this test cannot read: {clause!r}"
        name, operator, value = match.groups()
        if (inputs[name] == value) != (operator == "=="):
            return False
    return True


def run_action(repo: Path, venv: Path, wheel: Path, **given: str) -> tuple[list[str], str]:
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs.update(given)
    summary = repo.parent / "summary.md"
    ran, output = [], ""
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or not _condition_holds(step.get("if", "inputs.check != 'x'"),
                                                         inputs):
            continue
        env = {key: value for key, value in os.environ.items()
               if key not in ("VIRTUAL_ENV", "PYTHONPATH", "CAPC_SIGNING_KEY")}
        env["PATH"] = f"{venv / 'bin'}{os.pathsep}{env['PATH']}"
        env.update(PIP_NO_INDEX="1", GITHUB_STEP_SUMMARY=str(summary))
        for key, value in (step.get("env") or {}).items():
            env[key] = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}",
                              lambda m: inputs[m.group(1)], str(value))
        if "CAPC_SOURCE" in env:  # github.action_path: the action's checkout; here, the wheel
            env["CAPC_SOURCE"] = str(wheel)
        where = re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)],
                       step.get("working-directory", "."))
        done = subprocess.run(["bash", "-euo", "pipefail", "-c", step["run"]], cwd=repo / where,
                              env=env, capture_output=True, text=True, timeout=600)
        assert done.returncode == 0, (step["name"], done.stdout, done.stderr)
        ran.append(step["name"])
        output += done.stdout + done.stderr
    return ran, summary.read_text() if summary.exists() else ""


def _git(repo: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=a", "-c", "user.email=a@example.com",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
                   cwd=repo, check=True, capture_output=True)


def adopter(root: Path) -> Path:
    (root / "capabilities").mkdir(parents=True)
    (root / "capabilities" / "billing.yaml").write_text(CAPABILITY.format(code="billing"))
    (root / "pyproject.toml").write_text("[project]\nname = 'acme'\n\n[tool.capc]\n"
                                         "strict = true\n")
    _git(root, "init", "-q")
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "base")
    (root / "capabilities" / "ledger.yaml").write_text(CAPABILITY.format(code="ledger"))
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "ledger")
    return root


def test_validate_compile_check_and_diff(tmp_path: Path, wheel: Path, runner: Path) -> None:
    repo = adopter(tmp_path / "acme")
    venv = fresh_runner(tmp_path / "runner", runner)
    ran, summary = run_action(repo, venv, wheel, compile="true", **{"diff-base": "HEAD~1"})
    assert ran == ["Install capc", "capc validate", "capc compile", "capc diff"]
    assert (repo / "build" / "manifest.json").is_file()
    assert "ledger.acme.example" in summary and "new-host" in summary
    assert not (repo / "build" / "manifest.json.sig").exists()


def test_signing_installs_capc_sign_and_verifies(tmp_path: Path, wheel: Path,
                                                 runner: Path) -> None:
    repo = adopter(tmp_path / "acme")
    venv = fresh_runner(tmp_path / "runner", runner)
    key = tmp_path / "key.pem"
    made = run_capc_process("keygen", "-o", str(key))
    assert made.returncode == 0, made.stderr
    public_key = made.stdout.strip()
    ran, _ = run_action(repo, venv, wheel, sign="true", **{"signing-key": key.read_text(),
                                                           "public-key": public_key})
    assert ran == ["Install capc", "capc validate", "capc compile and sign"]
    signature = json.loads((repo / "build" / "manifest.json.sig").read_text())
    assert signature["public_key"] == public_key
    install = next(step for step in ACTION["runs"]["steps"] if step.get("name") == "Install capc")
    assert 'extras="[sign,budget]"' in install["run"]
