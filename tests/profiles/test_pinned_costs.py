"""SPEC §12 "MCP servers are costed from their pins (§7) without connecting; unpinned
servers are reported as unknown", through the real commands: ``capc lock`` against the
real loopback MCP server, ``capc compile``, then ``capc budget`` with the server stopped.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.mcp_server import running_mcp_server
from tests.support.trees import WEATHER

pytestmark = pytest.mark.independent

PYPROJECT = """\
[tool.capc]
allow_private_networks = true
"""
SERVER = """\
apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
type: mcp
options:
  server_label: {code}
  server_url: {url}
  require_approval: never
{allowed}"""
PROFILES = """\
apiVersion: capc/v1
kind: Profile
name: pinned-bot
capabilities: [get_weather, calc]
---
apiVersion: capc/v1
kind: Profile
name: narrow-bot
capabilities: [narrow]
---
apiVersion: capc/v1
kind: Profile
name: deferring-bot
capabilities: [get_weather, calc]
deferred: [calc]
---
apiVersion: capc/v1
kind: Profile
name: unpinned-bot
capabilities: [get_weather, elsewhere]
"""


def test_pinned_servers_are_costed_offline_and_unpinned_ones_are_unknown(
    tmp_path: Path,
) -> None:
    (tmp_path / "pyproject.toml").write_text(PYPROJECT)
    tree = tmp_path / "capabilities"
    tree.mkdir()
    with running_mcp_server() as server:
        (tree / "tools.yaml").write_text("---\n".join([
            WEATHER.format(base="https://api.example.com"),
            SERVER.format(code="calc", url=server.url, allowed=""),
            SERVER.format(code="narrow", url=server.url, allowed="  allowed_tools: [add]\n"),
        ]))
        locked = run_capc("lock", "--server", "calc", "--server", "narrow", cwd=tmp_path)
        assert locked.returncode == 0, locked.stderr
    # The server is gone: everything below works from the lock alone.
    (tree / "elsewhere.yaml").write_text(SERVER.format(
        code="elsewhere", url="https://mcp.example.com/mcp", allowed=""))
    (tree / "profiles.yaml").write_text(PROFILES)
    compiled = run_capc("compile", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    result = run_capc("budget", "--format", "json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    profiles = {profile["name"]: profile for profile in json.loads(result.stdout)["profiles"]}

    pinned = profiles["pinned-bot"]["providers"]["openai"]
    assert pinned["complete"] is True and pinned["unknown"] == []
    # get_weather and calc's add and echo: every pinned tool counted.
    assert pinned["up_front"]["tools"] == 3
    assert sorted(tool["name"] for tool in pinned["biggest"]) == ["add", "echo", "get_weather"]
    assert all(tool["tokens"] > 0 for tool in pinned["biggest"])
    # allowed_tools narrows what is costed.
    narrow = profiles["narrow-bot"]["providers"]["openai"]
    assert [tool["name"] for tool in narrow["biggest"]] == ["add"]
    assert narrow["up_front"]["tools"] == 1 and narrow["complete"] is True

    deferring = profiles["deferring-bot"]["providers"]["openai"]
    assert deferring["deferred"]["tools"] == 2 and deferring["deferred"]["tokens"] > 0
    assert [tool["name"] for tool in deferring["biggest"]] == ["get_weather"]

    unpinned = profiles["unpinned-bot"]["providers"]
    for provider in unpinned.values():
        assert provider["complete"] is False
        assert [item["capability"] for item in provider["unknown"]] == ["elsewhere"]
    text = run_capc("budget", "--profile", "unpinned-bot", cwd=tmp_path).stdout
    assert ">=" in text and "elsewhere" in text and "not pinned" in text
