"""The CI recipe of docs/ci.md and the README's tour, run verbatim on a fresh checkout.

Commands are taken from the Markdown itself (the workflow's ``run:`` steps, the tour's
file, console blocks, Python block and commands), so a change to either that no longer
works fails here. Only GitHub's expressions are given values, as a runner would.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml

from tests.support.fresh_checkout import environment, fresh_checkout
from tests.support.paths import REPO_ROOT

CI_DOC = REPO_ROOT / "docs" / "ci.md"
README = REPO_ROOT / "README.md"
GITHUB_EXPRESSIONS = {"github.base_ref": "main", "github.event_name": "pull_request"}


def _section(text: str, heading: str) -> str:
    """From the line starting with ``heading`` to the next heading (or tour step) at the
    same level, skipping fenced code (a YAML comment is not a heading)."""
    lines = text[text.index(heading):].splitlines(keepends=True)
    level = re.match(r"#+ |\*\*", heading)
    marker = level.group(0) if level else heading
    fenced = False
    for number, line in enumerate(lines[1:], start=1):
        fenced ^= line.startswith("```")
        if not fenced and (line.startswith(marker) if marker == "**" else
                           re.match(rf"#{{1,{len(marker) - 1}}} ", line)):
            return "".join(lines[:number])
    return "".join(lines)


def _fenced(text: str, language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", text, re.MULTILINE | re.DOTALL)


def _shell(command: str, cwd: Path, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(["bash", "-euo", "pipefail", "-c", command], cwd=cwd,
                          env=environment(**env), capture_output=True, text=True, timeout=300)


def _expand(command: str) -> str:
    return re.sub(r"\$\{\{\s*([\w.]+)\s*\}\}", lambda m: GITHUB_EXPRESSIONS[m.group(1)], command)


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", "-c", "user.name=capc-test", "-c", "user.email=capc@example.com",
                    "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false", *arguments],
                   cwd=cwd, check=True, capture_output=True)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return fresh_checkout(tmp_path / "capc")


def test_the_ci_workflow_of_docs_ci_md_passes_on_a_fresh_checkout(
    checkout: Path, tmp_path: Path
) -> None:
    workflow = yaml.safe_load(_fenced(_section(CI_DOC.read_text(), "## The workflow"),
                                      "yaml")[0])
    steps = workflow["jobs"]["capc"]["steps"]
    # A pull request's diff steps compare against the base branch: give it one.
    _git(checkout, "init", "-q")
    _git(checkout, "add", "-A")
    _git(checkout, "commit", "-q", "-m", "base")
    _git(checkout, "update-ref", "refs/remotes/origin/main", "HEAD")
    summary = tmp_path / "step-summary.md"
    ran = []
    for step in steps:
        if "run" not in step or "gh pr comment" in step["run"]:  # actions; GitHub's API
            continue
        result = _shell(_expand(step["run"]), checkout, GITHUB_STEP_SUMMARY=str(summary))
        assert result.returncode == 0, (step["name"], result.stdout, result.stderr)
        assert "Traceback" not in result.stderr
        ran.append(step["name"])
    assert ran[:2] == ["Compile the manifest", "The manifest is what the sources compile to"]
    assert "Diff against the base branch" in ran
    assert "no differences" in (checkout / "capc-diff.md").read_text()
    assert "no differences" in summary.read_text()
    assert "### Tool definition budget" in summary.read_text()  # capc budget, no profiles
    committed = _fenced(_section(CI_DOC.read_text(), "### Repositories that commit"), "yaml")
    for block in committed:
        for step in yaml.safe_load(block):
            result = _shell(step["run"], checkout)
            assert result.returncode == 0, (step["name"], result.stdout, result.stderr)


def test_a_check_with_other_options_names_the_option(checkout: Path) -> None:
    assert _shell("make compile", checkout).returncode == 0
    result = _shell(".venv/bin/capc compile --check --no-plugins --no-strict", checkout)
    assert result.returncode == 1
    assert ("build/manifest.json was compiled with --plugins, this check ran without plugins"
            in result.stderr)


def test_the_readme_tour_works_as_written(checkout: Path) -> None:
    text = README.read_text()
    tour = _section(text, "## A five-minute tour")
    step_one = _section(tour, "**1. Write a capability.**")
    path = checkout / re.search(r"Save as `([^`]+)`", step_one).group(1)
    assert not path.exists(), "the tour must not overwrite a shipped file"
    path.parent.mkdir(parents=True, exist_ok=True)
    written = _fenced(step_one, "yaml")[0]
    path.write_text(written)
    assert _shell(".venv/bin/capc validate", checkout).returncode == 0

    consoles = _fenced(tour, "console")
    assert len(consoles) == 2
    misspelt, wrong = re.search(r"\(`(\w+)` for `(\w+)`\)", tour).groups()
    header = re.search(r"in the clear \(`(Authorization: [^`]+)`\)", tour).group(1)
    edits = [written.replace(f"  {wrong}:", f"  {misspelt}:"),
             re.sub(r"Authorization: .*", header, written)]
    for console, edited in zip(consoles, edits, strict=True):
        command, *expected = console.splitlines()
        path.write_text(edited)
        result = _shell(command.removeprefix("$ "), checkout)
        assert result.returncode == 1
        assert result.stderr.splitlines() == expected
    path.write_text(written)

    assert "`make compile`" in _section(tour, "**3. Compile.**")
    compiled = _shell("make compile", checkout)
    assert compiled.returncode == 0, compiled.stderr

    program = _fenced(_section(tour, "**4. Load it in an agent.**"), "python")[0]
    assert "asyncio.run(" in program
    loaded = _shell(f".venv/bin/python - <<'PY'\n{program}PY", checkout)
    assert loaded.returncode == 0, loaded.stderr
    assert "city_weather" in loaded.stdout and "deepwiki" in loaded.stdout

    explain = re.search(r"`(\.venv/bin/capc explain [^`]+)`",
                        _section(tour, "**5. Explain a tool.**")).group(1)
    explained = _shell(explain, checkout)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("tool city_weather")


def test_the_readme_tool_capc_example_is_what_capc_reads(tmp_path: Path) -> None:
    from compiler.project import KNOWN_KEYS, read_project_settings

    block = _fenced(README.read_text(), "toml")[0]
    uncommented = re.sub(r"^# ", "", block, flags=re.MULTILINE)
    (tmp_path / "pyproject.toml").write_text(uncommented)
    settings = read_project_settings(tmp_path)
    assert settings.roots == ("capabilities",) and settings.variables == ("vars/prod.yaml",)
    keys = set(re.findall(r"^#? ?(\w+) =", block, flags=re.MULTILINE))
    assert keys == set(KNOWN_KEYS)


def test_the_release_recipe_reads_the_version(tmp_path: Path) -> None:
    block = _fenced(_section(CI_DOC.read_text(), "## Releasing"), "sh")[0]
    version_line = block.splitlines()[0]
    result = _shell(f"{version_line}\necho \"v$version\"", REPO_ROOT)
    assert result.returncode == 0, result.stderr
    import tomllib

    expected = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())["project"]["version"]
    assert result.stdout == f"v{expected}\n"
