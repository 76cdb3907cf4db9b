"""action.yml: a composite action a user's workflow can call; its capc steps run as written."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import yaml

from tests.support.fresh_checkout import environment, fresh_checkout
from tests.support.paths import REPO_ROOT

ACTION = yaml.safe_load((REPO_ROOT / "action.yml").read_text())


def test_the_action_is_composite_and_installs_capc_itself() -> None:
    assert ACTION["runs"]["using"] == "composite"
    steps = ACTION["runs"]["steps"]
    assert steps[0]["uses"].startswith("actions/setup-python@")
    install = next(step for step in steps if "pip install" in step.get("run", ""))
    assert "github.action_path" in install["env"]["CAPC_SOURCE"]
    for step in steps:  # inputs reach the shell through env, never pasted into the script
        assert "${{" not in step.get("run", ""), step.get("name")
    assert {"sources", "check", "python-version", "extra-packages"} <= set(ACTION["inputs"])


def _expand(value: str, inputs: dict[str, str]) -> str:
    return re.sub(r"\$\{\{\s*inputs\.([\w-]+)\s*\}\}", lambda m: inputs[m.group(1)], value)


def test_the_capc_steps_pass_on_this_repository(tmp_path: Path) -> None:
    checkout = fresh_checkout(tmp_path / "capc")
    inputs = {name: spec.get("default", "") for name, spec in ACTION["inputs"].items()}
    inputs["check"] = "true"
    assert subprocess.run(["make", "compile"], cwd=checkout, env=environment(),
                          capture_output=True).returncode == 0
    ran = []
    for step in ACTION["runs"]["steps"]:
        if "run" not in step or "pip install" in step["run"]:  # setup-python, pip: GitHub's
            continue
        condition = step.get("if")
        if condition and _expand(condition.replace("inputs.check", "'${{ inputs.check }}'"),
                                 inputs) != "'true' == 'true'":
            continue
        env = environment(**{key: _expand(value, inputs) for key, value in
                             step.get("env", {}).items()})
        env["PATH"] = f"{checkout / '.venv' / 'bin'}:{env['PATH']}"
        result = subprocess.run(["bash", "-euo", "pipefail", "-c", step["run"]],
                                cwd=checkout / _expand(step["working-directory"], inputs),
                                env=env, capture_output=True, text=True, timeout=300)
        assert result.returncode == 0, (step["name"], result.stdout, result.stderr)
        ran.append(step["name"])
    assert ran == ["capc validate", "capc compile --check"]
