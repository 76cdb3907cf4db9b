"""The README's tour and the stale-check message, run verbatim on a fresh checkout.

Commands are taken from the Markdown itself (the workflow's ``run:`` steps, the tour's
file, console blocks, Python block and commands), so a change to either that no longer
works fails here. Only GitHub's expressions are given values, as a runner would.
"""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from tests.support.fresh_checkout import environment, fresh_checkout
from tests.support.paths import REPO_ROOT

README = REPO_ROOT / "README.md"


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


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    return fresh_checkout(tmp_path / "capc")


# The workflow of docs/ci.md is an adopter's (no Makefile): tests/adoption/test_adopter_ci.py
# runs it verbatim in a fresh repository that has only capabilities/ and a pyproject.toml.


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


# The release recipe of docs/ci.md (scripts/release.sh) runs in tests/adoption/test_release.py.


def test_a_fresh_checkout_copies_what_git_tracks_not_the_working_directory(
        tmp_path: Path) -> None:
    # After the README tour, capabilities/api/city_weather.yaml sits untracked in the
    # working tree: a test copying the repository must not pick it up.
    from tests.support.fresh_checkout import copy_tracked, tracked_files

    source = tmp_path / "source"
    (source / "capabilities").mkdir(parents=True)
    (source / "capabilities" / "shipped.yaml").write_text("a: 1\n")
    subprocess.run(["git", "init", "-q"], cwd=source, check=True)
    subprocess.run(["git", "add", "-A"], cwd=source, check=True)
    (source / "capabilities" / "city_weather.yaml").write_text("b: 2\n")  # the tour's file
    assert tracked_files(source) == ["capabilities/shipped.yaml"]
    copied = copy_tracked(tmp_path / "copy", source)
    assert sorted(str(path.relative_to(copied)) for path in copied.rglob("*.yaml")) == [
        "capabilities/shipped.yaml"]
