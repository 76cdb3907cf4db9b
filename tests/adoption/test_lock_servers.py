"""``capc lock --server``, partial failures, ``unpinned:`` and MCP option typos, against
real MCP servers on 127.0.0.1 (one of them gone)."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from compiler.checks.mcp import OPENAI_PASS_THROUGH_OPTIONS, OPENAI_REFUSED_OPTIONS
from compiler.normalize import MCP_KNOWN_OPTIONS
from tests.support.capc import run_capc
from tests.support.mcp_server import running_mcp_server
from tests.support.paths import REPO_ROOT

LOOPBACK = ("--allow-network", "127.0.0.0/8")


def capc(root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_capc(*args, cwd=root, extra_env={"PYTHONPATH": str(REPO_ROOT)})


def mcp_capability(label: str, url: str, extra: str = "") -> str:
    return ("apiVersion: capc/v1\nkind: Capability\n"
            f"code: {label}\nname: {label.title()}\ntype: mcp\n"
            f"options:\n  server_label: {label}\n  server_url: {url}\n"
            f"  require_approval: never\n{extra}")


def tree(root: Path, servers: dict[str, str], extra: dict[str, str] | None = None) -> Path:
    folder = root / "capabilities"
    folder.mkdir(parents=True, exist_ok=True)
    for label, url in servers.items():
        (folder / f"{label}.yaml").write_text(mcp_capability(label, url, (extra or {}).get(label,
                                                                                          "")))
    return root


def pinned_names(root: Path) -> dict[str, list[str]]:
    lock = json.loads((root / "capc.lock").read_text())
    return {label: [tool["name"] for tool in server["tools"]]
            for label, server in lock["servers"].items()}


def test_reachable_servers_are_written_when_another_is_not(tmp_path: Path) -> None:
    with running_mcp_server() as gone:
        gone_url = gone.url
    with running_mcp_server() as calc:
        root = tree(tmp_path, {"calc": calc.url, "wiki": gone_url})
        done = capc(root, "lock", "--timeout", "5", *LOOPBACK)
        assert done.returncode == 2
        assert "server 'wiki'" in done.stderr and "cannot be reached" in done.stderr
        assert "1 server(s) could not be listed" in done.stderr
        assert pinned_names(root) == {"calc": ["add", "echo"]}


def test_one_server_at_a_time_keeps_the_other_pins(tmp_path: Path) -> None:
    with running_mcp_server() as calc, running_mcp_server() as wiki:
        root = tree(tmp_path, {"calc": calc.url, "wiki": wiki.url})
        assert capc(root, "lock", *LOOPBACK).returncode == 0
        calc.add_tool(lambda a, b: a * b, "mul", "Multiply.")
        wiki.add_tool(lambda a, b: a - b, "sub", "Subtract.")
        done = capc(root, "lock", "--server", "calc", *LOOPBACK)
        assert done.returncode == 0, done.stderr
        assert "1 other server(s) kept as pinned" in done.stderr
        assert pinned_names(root) == {"calc": ["add", "echo", "mul"], "wiki": ["add", "echo"]}
        # --check of one server looks at that server only.
        assert capc(root, "lock", "--check", "--server", "calc", *LOOPBACK).returncode == 0
        drifted = capc(root, "lock", "--check", *LOOPBACK)
        assert drifted.returncode == 1 and "server wiki:" in drifted.stdout
        unknown = capc(root, "lock", "--server", "wikk", *LOOPBACK)
        assert unknown.returncode == 2 and "did you mean 'wiki'" in unknown.stderr


def test_a_missing_setting_is_reported_and_the_others_written(tmp_path: Path) -> None:
    with running_mcp_server() as calc, running_mcp_server() as wiki:
        root = tree(tmp_path, {"calc": calc.url, "wiki": wiki.url},
                    {"wiki": '  headers:\n    Authorization: "Bearer ${WIKI_TOKEN}"\n'})
        done = capc(root, "lock", *LOOPBACK)
        assert done.returncode == 2 and "WIKI_TOKEN" in done.stderr
        assert pinned_names(root) == {"calc": ["add", "echo"]}


def test_unpinned_is_a_documented_exception_that_strict_accepts_and_diff_shows(
        tmp_path: Path) -> None:
    with running_mcp_server() as calc, running_mcp_server() as wiki:
        root = tree(tmp_path, {"calc": calc.url, "wiki": wiki.url})
        assert capc(root, "lock", *LOOPBACK).returncode == 0
        assert capc(root, "compile", "--strict", *LOOPBACK, "-o", "old.json").returncode == 0
        reason = "lists tools per user"
        tree(root, {"wiki": wiki.url}, {"wiki": f"  unpinned: {reason}\n"})
        locked = capc(root, "lock", *LOOPBACK)
        assert locked.returncode == 0, locked.stderr
        assert f"server wiki: not pinned on purpose (unpinned: {reason})" in locked.stderr
        assert pinned_names(root) == {"calc": ["add", "echo"]}
        built = capc(root, "compile", "--strict", *LOOPBACK, "-o", "new.json")
        assert built.returncode == 0, built.stderr
        manifest = json.loads((root / "new.json").read_text())
        entry = next(c for c in manifest["capabilities"] if c["code"] == "wiki")
        assert entry["mcp"]["unpinned"] == reason and "unpinned" not in entry["mcp"]["extra"]
        shown = capc(root, "diff", "old.json", "new.json")
        assert reason in shown.stdout
    # Without the reason, --strict refuses the server the lock does not pin.
    tree(root, {"wiki": "http://127.0.0.1:9/mcp"})
    refused = capc(root, "validate", "--strict", *LOOPBACK)
    assert refused.returncode == 1 and "mcp-unpinned" in refused.stderr


@pytest.mark.parametrize(("typo", "meant"), [("allowed_tool", "allowed_tools"),
                                             ("require_aproval", "require_approval"),
                                             ("server_descripton", "server_description")])
def test_mcp_option_typos_are_errors_with_did_you_mean(tmp_path: Path, typo: str,
                                                       meant: str) -> None:
    root = tree(tmp_path, {"wiki": "https://wiki.example.com/mcp"},
                {"wiki": f"  {typo}: [search]\n"})
    done = capc(root, "validate")
    assert done.returncode == 1
    assert f"capabilities/wiki.yaml:10:3: error[mcp-unknown-option]: unknown mcp option " \
           f"{typo!r}; did you mean {meant!r}?" in done.stderr


def test_openai_mcp_fields_pass_through_and_nothing_else(tmp_path: Path) -> None:
    from openai.types.responses.tool_param import Mcp

    sdk = set(Mcp.__annotations__)
    capc_fields = set(MCP_KNOWN_OPTIONS) - {"unpinned"}
    assert capc_fields <= sdk
    assert set(OPENAI_PASS_THROUGH_OPTIONS) | set(OPENAI_REFUSED_OPTIONS) == sdk - capc_fields
    root = tree(tmp_path, {"wiki": "https://wiki.example.com/mcp"},
                {"wiki": "  server_description: The company wiki\n  defer_loading: true\n"})
    built = capc(root, "compile", "-o", "m.json")
    assert built.returncode == 0, built.stderr
    entry = json.loads((root / "m.json").read_text())["capabilities"][0]["mcp"]
    assert entry["extra"] == {"server_description": "The company wiki", "defer_loading": True}
    refused = tree(tmp_path / "auth", {"wiki": "https://wiki.example.com/mcp"},
                   {"wiki": "  authorization: abc\n"})
    done = capc(refused, "validate")
    assert done.returncode == 1 and "Authorization: Bearer ${SETTING}" in done.stderr
    assert "abc" not in done.stderr
