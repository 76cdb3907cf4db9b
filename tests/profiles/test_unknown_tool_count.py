"""The up-front tool count is a lower bound (``>=``) when a capability's tools are unknown.

An unpinned MCP server up front sends tools capc cannot list, and an internal capability
without a recorded catalogue may be several tools (deferred, a namespace of its own), so
the count is at least, never exactly, what is known: said in text, markdown and JSON,
and in compile's tool errors. A deferred unpinned server adds no entry up front, so it
leaves the count exact. Real CLI on compiled trees.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.profiles.trees import WEATHER as WEATHER_TOOL
from tests.support.capc import run_capc

WEATHER = WEATHER_TOOL + """\
---
apiVersion: capc/v1
kind: Capability
code: deepwiki
name: DeepWiki
type: mcp
options: {server_label: deepwiki, server_url: "https://mcp.deepwiki.com/mcp"}
---
apiVersion: capc/v1
kind: Capability
code: notes
name: Notes
type: internal
"""


def _project(root: Path, deferred: str, budget: str = "{tools: 10}") -> Path:
    (root / "capabilities").mkdir(parents=True, exist_ok=True)
    (root / "capabilities" / "tools.yaml").write_text(WEATHER)
    (root / "capabilities" / "profiles.yaml").write_text(
        "apiVersion: capc/v1\nkind: Profile\nname: wiki-bot\n"
        f"capabilities: [get_weather, deepwiki, notes]\ndeferred: {deferred}\nbudget: {budget}\n")
    return root


def _budget(root: Path, output_format: str) -> str:
    result = run_capc("budget", "--format", output_format, cwd=root)
    assert result.returncode == 0, result.stderr
    return result.stdout


def _openai(root: Path) -> dict[str, Any]:
    report = json.loads(_budget(root, "json"))
    return dict(report["profiles"][0]["providers"]["openai"]["up_front"])


# (deferred, OpenAI up-front entries as shown): the count of known entries, marked when
# an unknown capability is up front or deferred into a possible namespace of its own.
CASES = [
    ("[]", ">=1"),                 # get_weather; deepwiki and notes up front, unknown
    ("[deepwiki]", ">=2"),         # get_weather, the search tool; notes up front, unknown
    ("[notes]", ">=2"),            # get_weather, the search tool; deepwiki up front
    ("[deepwiki, notes]", ">=2"),  # notes deferred may still be a namespace entry
]


@pytest.mark.parametrize(("deferred", "shown"), CASES)
def test_the_count_is_marked_in_every_format(tmp_path: Path, deferred: str,
                                             shown: str) -> None:
    root = _project(tmp_path, deferred)
    assert run_capc("compile", cwd=root).returncode == 0
    up_front = _openai(root)
    assert (up_front["tools"], up_front["tools_complete"]) == (int(shown[2:]), False)
    assert f"| wiki-bot | openai | {shown} |" in _budget(root, "markdown")
    text_row = next(line for line in _budget(root, "text").splitlines()
                    if line.strip().startswith("openai"))
    assert text_row.split()[1] == shown


def test_a_deferred_unpinned_server_leaves_the_count_exact(tmp_path: Path) -> None:
    root = tmp_path
    (root / "capabilities").mkdir()
    (root / "capabilities" / "tools.yaml").write_text(WEATHER.rsplit("---\n", 1)[0])
    (root / "capabilities" / "profiles.yaml").write_text(
        "apiVersion: capc/v1\nkind: Profile\nname: wiki-bot\n"
        "capabilities: [get_weather, deepwiki]\ndeferred: [deepwiki]\n")
    assert run_capc("compile", cwd=root).returncode == 0
    up_front = _openai(root)
    assert (up_front["tools"], up_front["tools_complete"]) == (2, True)
    assert "| wiki-bot | openai | 2 |" in _budget(root, "markdown")


def test_compile_says_at_least_when_over_a_tools_budget(tmp_path: Path) -> None:
    root = _project(tmp_path, "[deepwiki]", "{tools: 1}")
    result = run_capc("compile", cwd=root)
    assert result.returncode == 1
    assert "sends at least 2 tools up front, over its budget of 1" in result.stderr, \
        result.stderr
