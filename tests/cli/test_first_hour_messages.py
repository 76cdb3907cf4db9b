"""Messages a newcomer meets in the first hour: hints that fit, no Python spellings,
"did you mean", exit codes as documented, help with examples, stale manifests explained."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from compiler.cli import cli
from compiler.manifest import dump_manifest
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT

API = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: N
type: api
options:
  description: d
  url: https://api.example.com/x
  headers:
    {header}
"""


def capc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_capc(*args, cwd=cwd)


@pytest.mark.parametrize(("header", "hint"), [
    ("X-API-Key: abc123secretvalue", "e.g. X-API-Key: ${MY_API_KEY}, and"),
    ("Authorization: Basic dXNlcjpwYXNz", 'e.g. Authorization: "Basic ${MY_BASIC_AUTH}", and'),
    ("Authorization: Bearer abc123", 'e.g. Authorization: "Bearer ${MY_API_TOKEN}", and'),
    ("Authorization: Token abc123", 'e.g. Authorization: "Token ${MY_API_TOKEN}", and'),
])
def test_the_literal_credential_hint_fits_the_header(tmp_path: Path, header: str,
                                                     hint: str) -> None:
    (tmp_path / "a.yaml").write_text(API.format(code="a", header=header))
    result = capc(tmp_path, "validate", "a.yaml")
    assert result.returncode == 1
    assert "error[literal-credential]" in result.stderr and hint in result.stderr


def test_no_python_none_in_messages_about_empty_values(tmp_path: Path) -> None:
    for key in ("apiVersion", "kind", "code", "name", "type", "options"):
        text = API.format(code=f"c_{key.lower()}", header="A: b")
        lines = [f"{key}: ~" if line.startswith(f"{key}:") else line
                 for line in text.splitlines()]
        (tmp_path / f"{key}.yaml").write_text("\n".join(lines) + "\n")
    result = capc(tmp_path, "validate", ".")
    assert result.returncode == 1
    assert result.stderr.count("error[") == 6
    assert "None" not in result.stderr and "null null" not in result.stderr
    assert "unknown kind (empty)" in result.stderr


def test_a_misspelt_kind_gets_did_you_mean(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text("apiVersion: capc/v1\nkind: ToolOveride\ntool: x\n")
    result = capc(tmp_path, "validate", "a.yaml")
    assert "did you mean 'ToolOverride'?" in result.stderr


@pytest.fixture(scope="module")
def manifest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("explain") / "m.json"
    assert capc(REPO_ROOT, "compile", "-o", str(out)).returncode == 0
    return out


@pytest.mark.parametrize(("name", "expected"), [
    ("get_wether", "no tool 'get_wether' in {m}; did you mean 'get_weather'?"),
    ("deepwiki", "'deepwiki' is an MCP server: the model calls its tools through the provider"),
    ("memory", "'memory' is a capability code; explain one of its tools: memory__recall, "
               "memory__remember"),
])
def test_explain_of_an_unknown_tool_helps(manifest: Path, name: str, expected: str) -> None:
    result = capc(REPO_ROOT, "explain", name, "-m", str(manifest))
    assert result.returncode == 1
    assert expected.format(m=manifest) in result.stderr


def test_schema_output_file_is_honoured(tmp_path: Path) -> None:
    result = capc(tmp_path, "schema", "ToolOverride", "-o", "override.json")
    assert result.returncode == 0 and result.stdout == "override.json\n"
    assert json.loads((tmp_path / "override.json").read_text())["title"]


def test_io_errors_exit_2(tmp_path: Path) -> None:
    assert capc(tmp_path, "compile", "missing").returncode == 2
    (tmp_path / "tree").mkdir()
    # Dangling, but inside the tree: a link out of it is refused before it is read.
    (tmp_path / "tree" / "gone.yaml").symlink_to(tmp_path / "tree" / "nowhere.yaml")
    unreadable = capc(tmp_path, "validate", "tree")
    assert unreadable.returncode == 2, unreadable.stderr
    assert "error[io]" in unreadable.stderr
    assert capc(tmp_path, "import", "missing.json").returncode == 2
    assert capc(tmp_path, "explain", "x", "-m", "missing.json").returncode == 2


def test_every_command_help_ends_with_an_example() -> None:
    for name in cli.commands:
        result = run_capc(name, "--help")
        assert result.returncode == 0
        assert "Example" in result.stdout and f"capc {name}" in result.stdout, name


def test_validate_help_describes_validate() -> None:
    text = run_capc("validate", "--help").stdout
    assert "record their tools in the manifest" not in text
    assert "[tool.capc] roots" in text and "Exit codes: 0" in text


def test_an_override_of_a_tool_whose_file_failed_adds_no_warning(tmp_path: Path) -> None:
    shutil.copytree(REPO_ROOT / "capabilities", tmp_path / "capabilities")
    weather = tmp_path / "capabilities" / "api" / "get_weather.yaml"
    for broken in (weather.read_text().replace("  params:", "  parms:"),
                   weather.read_text().replace("code: get_weather", "code: get_weather\n x: :")):
        weather.write_text(broken)
        result = capc(tmp_path, "validate", "--plugins", "--no-cache")
        assert result.returncode == 1
        assert result.stderr.count("error[") == 1, result.stderr
        assert "override-unknown-tool" not in result.stderr


def test_stale_manifest_messages_name_what_differs(tmp_path: Path) -> None:
    shutil.copytree(REPO_ROOT / "capabilities", tmp_path / "capabilities")
    (tmp_path / "pyproject.toml").write_text("[tool.capc]\nplugins = true\n")
    out = "build/manifest.json"
    missing = capc(tmp_path, "compile", "--check")
    assert f"{out} is missing: run `capc compile` first" in missing.stderr
    assert capc(tmp_path, "compile", "--no-plugins").returncode == 0
    toggled = capc(tmp_path, "compile", "--check")
    assert toggled.returncode == 1
    assert (f"{out} was compiled with --no-plugins, this check ran with plugins: set "
            "`plugins = false` in [tool.capc]") in toggled.stderr
    assert capc(tmp_path, "compile").returncode == 0
    assert capc(tmp_path, "compile", "--check").returncode == 0
    sms = tmp_path / "capabilities" / "api" / "send_sms.yaml"
    sms.write_text(sms.read_text().replace("name: ", "name: Renamed ", 1))
    edited = capc(tmp_path, "compile", "--check")
    assert edited.returncode == 1
    assert f"{out} differs from what the sources compile to (changed: send_sms)" in edited.stderr
    document = json.loads((tmp_path / out).read_text())
    document["compiler"]["version"] = "0.0.1"
    document.pop("digest")  # an older capc seals what it writes, as this one does
    (tmp_path / out).write_bytes(dump_manifest(document))
    older = capc(tmp_path, "compile", "--check")
    assert f"{out} was written by capc 0.0.1; this is capc" in older.stderr
