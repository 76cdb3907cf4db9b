"""The shipped tree demonstrates a clean `--strict` run, lint-clean YAML and editor modelines."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT

SHIPPED = REPO_ROOT / "capabilities"
SHIPPED_FILES = sorted(SHIPPED.rglob("*.yaml"))
MODELINE = re.compile(r"^# yaml-language-server: \$schema=(\S+)$")


def _capc(*args: str) -> subprocess.CompletedProcess[str]:
    return run_capc(*args, cwd=REPO_ROOT)


def test_validate_strict_on_the_shipped_tree_exits_0_without_a_warning() -> None:
    result = _capc("validate", "--strict", "capabilities")
    assert result.returncode == 0, result.stderr
    assert result.stderr == "no problems found\n"


def test_ci_runs_the_strict_validation() -> None:
    lines = [line.split("#")[0].strip() for line in
             (REPO_ROOT / ".ci" / "run").read_text().splitlines()]
    assert ".venv/bin/capc validate --strict capabilities" in lines


def test_the_deliberate_warning_lives_in_a_golden_case() -> None:
    case = REPO_ROOT / "tests" / "cases" / "bad" / "override-plugin-unbound-parameter"
    assert "warning[override-unbound-parameter]" in (case / "expected.txt").read_text()


@pytest.mark.parametrize("path", SHIPPED_FILES, ids=lambda p: p.relative_to(SHIPPED).as_posix())
def test_every_document_starts_with_a_modeline_that_resolves(path: Path) -> None:
    documents = re.split(r"^---\n", path.read_text(), flags=re.MULTILINE)
    for document in documents:
        match = MODELINE.match(document.splitlines()[0])
        assert match, f"{path.name}: a document without the yaml-language-server line"
        assert (path.parent / match.group(1)).resolve().is_file()


def test_the_shipped_yaml_passes_yamllint_with_the_shipped_config() -> None:
    pytest.importorskip("yamllint")
    config = (REPO_ROOT / ".yamllint").read_text()
    assert "extends: default" in config
    result = subprocess.run([sys.executable, "-m", "yamllint", "--strict", "-f", "parsable",
                             "capabilities"], cwd=REPO_ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stdout


def test_yamllint_relaxes_only_what_the_config_explains() -> None:
    pytest.importorskip("yamllint")
    from yamllint.config import YamlLintConfig

    default = YamlLintConfig("extends: default")
    shipped = YamlLintConfig(file=str(REPO_ROOT / ".yamllint"))
    changed = {rule for rule in default.rules if default.rules[rule] != shipped.rules[rule]}
    assert changed == {"document-start", "line-length"}
    text = (REPO_ROOT / ".yamllint").read_text()
    for rule in changed:  # each relaxed rule comes right after the comment saying why
        assert re.search(rf"\n  # [^\n]+\n(?:  # [^\n]*\n)*  {rule}:", text), rule
