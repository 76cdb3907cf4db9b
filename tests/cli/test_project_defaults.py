"""Issue 20 "every default once": a project whose ``[tool.capc]`` moves the tree and the
manifest is honoured by every command, run from the project root and from a folder below
it, with no flags. A command that writes sources writes them into the project's tree
(``roots``), so the next ``capc compile`` sees them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.trees import CRM, WEATHER

pytestmark = pytest.mark.independent

PYPROJECT = """\
[project]
name = "agents"
version = "0"

[tool.capc]
roots = ["caps"]
output = "out/m.json"
"""
PROFILES = """\
apiVersion: capc/v1
kind: Profile
name: support-bot
capabilities: [get_weather, crm_*]
deferred: [crm_*]
"""
ROWS = [{"name": "Imported weather", "code": "imported_weather", "type": "api",
         "options": {"name": "imported_weather", "description": "Weather, imported.",
                     "url": "https://api.example.com/imported"}}]


@pytest.fixture(params=[".", "sub/deeper"], ids=["root", "subfolder"])
def project(tmp_path: Path, request: pytest.FixtureRequest) -> tuple[Path, Path]:
    """(project root, the folder commands run in)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    tree = tmp_path / "caps"
    tree.mkdir()
    base = "https://api.example.com"
    (tree / "tools.yaml").write_text("---\n".join(doc.format(base=base) for doc in (WEATHER, CRM)))
    (tree / "profiles.yaml").write_text(PROFILES)
    here = tmp_path / request.param
    here.mkdir(parents=True, exist_ok=True)
    return tmp_path, here


def test_review_commands_read_the_configured_manifest(project: tuple[Path, Path]) -> None:
    root, here = project
    assert run_capc("compile", cwd=here).returncode == 0
    assert (root / "out" / "m.json").is_file() and not (here / "build").exists()
    outcomes = {args[0]: run_capc(*args, cwd=here).returncode for args in (
        ("compile", "--check"), ("validate",), ("explain", "get_weather"), ("budget",),
        ("docs", "-o", str(root / "catalogue.md")))}
    assert outcomes == dict.fromkeys(outcomes, 0)


def test_new_writes_into_the_configured_tree(project: tuple[Path, Path]) -> None:
    root, here = project
    result = run_capc("new", "api", "fresh_tool", cwd=here)
    assert result.returncode == 0, result.stderr
    written = root / "caps" / "api" / "fresh_tool.yaml"
    assert written.is_file(), sorted(p.as_posix() for p in root.rglob("*.yaml"))
    assert not (here / "capabilities").exists()
    # The modeline points at a schema file that exists.
    modeline = written.read_text().splitlines()[0]
    schema = modeline.split("$schema=", 1)[1]
    assert (written.parent / schema).resolve().is_file(), modeline
    # The next compile of the project sees it (the scaffold is a valid capability).
    run_capc("compile", cwd=here)
    manifest = json.loads((root / "out" / "m.json").read_text())
    assert "fresh_tool" in {entry["code"] for entry in manifest["capabilities"]}


def test_new_refuses_a_code_of_the_configured_tree(project: tuple[Path, Path]) -> None:
    _, here = project
    result = run_capc("new", "api", "get_weather", cwd=here)
    assert result.returncode == 1 and "already exists" in result.stderr


def test_import_writes_into_the_configured_tree(project: tuple[Path, Path]) -> None:
    root, here = project
    rows = here / "rows.json"
    rows.write_text(json.dumps(ROWS))
    result = run_capc("import", str(rows), cwd=here)
    assert result.returncode == 0, result.stderr
    assert list((root / "caps").rglob("imported_weather.yaml")), sorted(
        p.as_posix() for p in root.rglob("*.yaml"))


@pytest.mark.parametrize("missing", ["nowhere.yaml", "a-folder"])
def test_an_unreadable_input_file_is_exit_2_on_every_command(tmp_path: Path,
                                                             missing: str) -> None:
    """docs/cli.md: a file that cannot be read is a usage or I/O error (2) everywhere."""
    (tmp_path / "a-folder").mkdir()
    commands = {
        "import": ["import", missing],
        "import openapi": ["import", "openapi", missing, "--all"],
        "compile --vars": ["compile", "--vars", missing],
        "docs": ["docs", "-m", missing],
        "budget": ["budget", "-m", missing],
    }
    codes = {name: run_capc(*args, cwd=tmp_path).returncode for name, args in commands.items()}
    assert codes == dict.fromkeys(commands, 2)
