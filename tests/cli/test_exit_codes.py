"""docs/cli.md's exit-code table is what every command does: each cell is run.

The table lists every command of the group; for each, every exit code it documents has a
scenario here that produces it (and a command documenting "—" has none). Also the two
defects of issue 20: `docs`/`explain` honour `[tool.capc] output`, and a refused
manifest exits 1 from every command that reads one.
"""

from __future__ import annotations

import contextlib
import json
import os
import re
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.cli import cli
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT
from tests.support.redteam import api_capability

CLI_DOC = REPO_ROOT / "docs" / "cli.md"
UNREACHABLE_MCP = """\
apiVersion: capc/v1
kind: Capability
code: wiki
name: wiki
type: mcp
options:
  server_label: wiki
  server_url: https://wiki.invalid/mcp
"""
BROKEN_PLUGIN = "raise ImportError('this plugin is broken on purpose')\n"


def documented_codes() -> dict[str, set[int]]:
    """command -> the exit codes its row of the table documents (not "—")."""
    rows = re.findall(r"^\| `(\w+)` \|(.*)\|$", CLI_DOC.read_text(encoding="utf-8"),
                      flags=re.MULTILINE)
    table: dict[str, set[int]] = {}
    for command, cells in rows:
        texts = [cell.strip() for cell in cells.split("|")]
        assert len(texts) == 3, (command, texts)
        table[command] = {code for code, text in enumerate(texts) if text != "—"}
    return table


class Tree:
    """A project folder: a good tree, its manifest, a tampered copy, a bad tree."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.stack = contextlib.ExitStack()  # servers a scenario starts, closed after it
        (root / "capabilities").mkdir()
        (root / "capabilities" / "a.yaml").write_text(api_capability())
        (root / "bad").mkdir()
        (root / "bad" / "b.yaml").write_text(api_capability(url="not a url"))
        (root / "mcp").mkdir()
        (root / "mcp" / "wiki.yaml").write_text(UNREACHABLE_MCP)
        done = run_capc("compile", "-o", "m.json", cwd=root)
        assert done.returncode == 0, done.stderr
        self.manifest = root / "m.json"
        self.tampered = root / "tampered.json"
        self.tampered.write_text(self.manifest.read_text().replace('"tool_a"', '"tool_b"', 1))
        other = root / "other"
        other.mkdir()
        (other / "a.yaml").write_text(api_capability(url="https://other.example.com/v1"))
        assert run_capc("compile", "other", "-o", "other.json", cwd=root).returncode == 0

    def broken_plugin(self) -> dict[str, str]:
        """The environment of a project where an installed plugin fails to import."""
        site = self.root / "site"
        info = site / "broken_plugin-1.0.dist-info"
        info.mkdir(parents=True)
        (info / "METADATA").write_text("Metadata-Version: 2.1\nName: broken-plugin\n"
                                       "Version: 1.0\n")
        (info / "entry_points.txt").write_text(
            "[primethink.tools]\nbroken = broken_plugin:register\n")
        (site / "broken_plugin.py").write_text(BROKEN_PLUGIN)
        return {"PYTHONPATH": os.pathsep.join([str(site), str(REPO_ROOT)])}


Scenario = Callable[[Tree], tuple[list[str], dict[str, str]]]


def args(*arguments: str) -> Scenario:
    """A scenario that is just a command line."""
    return lambda tree: (list(arguments), {})


SCENARIOS: dict[str, dict[int, Scenario]] = {
    "compile": {0: args("compile", "-o", "out.json"), 1: args("compile", "bad"),
                2: args("compile", "missing-folder")},
    "validate": {0: args("validate"), 1: args("validate", "bad"),
                 2: args("validate", "missing-folder")},
    "keygen": {0: args("keygen", "-o", "new.pem"), 2: args("keygen", "-o", "m.json")},
    "verify": {0: lambda tree: (_signed(tree), {}),
               1: args("verify", "m.json", "--public-key", "ed25519:" + "A" * 43 + "="),
               2: args("verify", "missing.json", "--public-key", "ed25519:" + "A" * 43 + "=")},
    "lock": {0: args("lock", "capabilities", "--lock", "new.lock"), 1: args("lock", "bad"),
             2: args("lock", "mcp", "--timeout", "0.5")},
    "schema": {0: args("schema"), 2: args("schema", "Nothing")},
    "explain": {0: args("explain", "tool_a", "-m", "m.json"),
                1: args("explain", "tool_a", "-m", "tampered.json"),
                2: args("explain", "tool_a", "-m", "missing.json")},
    "docs": {0: args("docs", "-m", "m.json"), 1: args("docs", "-m", "tampered.json"),
             2: args("docs", "-m", "missing.json")},
    "diff": {0: args("diff", "m.json", "m.json"),
             1: args("diff", "--exit-code", "m.json", "other.json"),
             2: args("diff", "m.json", "missing.json")},
    "migrate": {0: args("migrate", "capabilities"), 1: args("migrate", "bad"),
                2: args("migrate", "--no-such-flag")},
    "import": {0: lambda tree: (_rows(tree, "fresh_code"), {}),
               1: lambda tree: (_rows(tree, "tool_a"), {}),
               2: args("import", "missing.json")},
    "new": {0: args("new", "api", "fresh"), 1: args("new", "api", "tool_a"),
            2: args("new", "gadget", "fresh")},
    "budget": {0: args("budget", "-m", "m.json"), 1: args("budget", "-m", "tampered.json"),
               2: args("budget", "-m", "m.json", "--profile", "nobody")},
    "serve": {0: args("serve", "--help"), 1: args("serve", "tampered.json"),
              2: args("serve", "m.json", "--host", "0.0.0.0")},
    "plugins": {0: args("plugins"), 1: lambda tree: (["plugins"], tree.broken_plugin()),
                2: args("plugins", "--format", "yaml")},
    "test": {0: args("test"), 1: args("test", "bad"), 2: args("test", "missing-folder")},
    "record": {0: lambda tree: (_recordable(tree), {}),
               1: lambda tree: (_unrecordable(tree), {}),
               2: args("record", "tool_a", "--args", "[1]")},
}


def _recordable(tree: Tree) -> list[str]:
    """A tree whose api tool answers from a real loopback server (closed with the tree)."""
    from tests.support.runtime import recording_server

    server = tree.stack.enter_context(recording_server())
    (tree.root / "served").mkdir()
    (tree.root / "served" / "a.yaml").write_text(api_capability(url=server.base_url + "/v1"))
    (tree.root / "pyproject.toml").write_text(
        '[tool.capc]\nroots = ["served"]\nallow_private_networks = true\n')
    return ["record", "tool_a", "--args", "{}"]


def _unrecordable(tree: Tree) -> list[str]:
    (tree.root / "capabilities" / "b.yaml").write_text(api_capability(url="not a url"))
    return ["record", "tool_a", "--args", "{}"]


def _signed(tree: Tree) -> list[str]:
    key = run_capc("keygen", "-o", "signing.pem", cwd=tree.root)
    signed = run_capc("compile", "-o", "signed.json", "--sign-key", "signing.pem", cwd=tree.root)
    assert signed.returncode == 0, signed.stderr
    return ["verify", "signed.json", "--public-key", key.stdout.strip()]


def _rows(tree: Tree, code: str) -> list[str]:
    rows = tree.root / "rows.json"
    rows.write_text(json.dumps([{"code": code, "name": "N", "type": "internal",
                                 "is_active": True}]))
    return ["import", "rows.json"]


def test_the_table_lists_every_command_and_each_cell_has_a_scenario() -> None:
    table = documented_codes()
    assert set(table) == set(cli.commands)
    assert {command: set(cells) for command, cells in SCENARIOS.items()} == table


@pytest.mark.parametrize(("command", "code"), [
    (command, code) for command, cells in sorted(SCENARIOS.items()) for code in sorted(cells)])
def test_each_documented_exit_code_is_what_the_command_gives(
        tmp_path: Path, command: str, code: int) -> None:
    tree = Tree(tmp_path)
    with tree.stack:
        arguments, environment = SCENARIOS[command][code](tree)
        done = run_capc(*arguments, cwd=tmp_path,
                        extra_env={"CAPC_NO_CACHE": "1", **environment})
    assert done.returncode == code, (arguments, done.stdout, done.stderr)
    assert "Traceback" not in done.stdout + done.stderr


@pytest.mark.parametrize("arguments", [
    ["docs", "-m", "{manifest}"], ["explain", "tool_a", "-m", "{manifest}"],
    ["diff", "{manifest}", "m.json"], ["diff", "m.json", "{manifest}"],
    ["verify", "{manifest}", "--public-key", "ed25519:" + "A" * 43 + "="]])
@pytest.mark.parametrize("refusal", ["digest", "duplicate-code", "version", "structure"])
def test_a_refused_manifest_exits_1_from_every_reader(
        tmp_path: Path, arguments: list[str], refusal: str) -> None:
    from compiler.manifest import dump_manifest

    tree = Tree(tmp_path)
    document = json.loads(tree.manifest.read_text())
    document.pop("digest")
    if refusal == "duplicate-code":
        document["capabilities"].append(document["capabilities"][0])
    elif refusal == "version":
        document["manifest_version"] = 99
    elif refusal == "structure":
        document["capabilities"][0]["type"] = 7
    refused = tmp_path / "refused.json"
    refused.write_bytes(dump_manifest(document))
    if refusal == "digest":
        refused.write_text(tree.tampered.read_text())
    done = run_capc(*[part.format(manifest="refused.json") for part in arguments],
                    cwd=tmp_path)
    assert done.returncode == 1, done.stderr
    check = {"digest": "digest", "duplicate-code": "structure", "version": "manifest_version",
             "structure": "structure"}[refusal]
    assert f"manifest refused ({check})" in done.stderr


def test_docs_and_explain_read_the_manifest_tool_capc_output_names(tmp_path: Path) -> None:
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "a.yaml").write_text(api_capability())
    (tmp_path / "pyproject.toml").write_text('[tool.capc]\noutput = "out/m.json"\n')
    assert run_capc("compile", cwd=tmp_path).returncode == 0
    assert (tmp_path / "out" / "m.json").is_file() and not (tmp_path / "build").exists()
    docs = run_capc("docs", cwd=tmp_path)
    assert docs.returncode == 0, docs.stderr
    assert "tool_a" in docs.stdout
    explained = run_capc("explain", "tool_a", cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert explained.stdout.startswith("tool tool_a")
