"""Pure pieces of the catalogue: cutting the snapshot, settings, drift messages."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from compiler.errors import UsageError
from compiler.plugins import (
    discover_catalogue,
    plugin_tool_names,
    read_plugin_settings,
    recorded_snapshot,
    registered_codes,
)
from compiler.runtime.manifest.read import freeze
from compiler.runtime.tools.plugin_drift import changed_paths, plugin_drift
from compiler.runtime.tools.registry import ToolRegistry
from tests.support.catalogue import REPO


@pytest.fixture(scope="module")
def catalogue() -> dict[str, Any]:
    return discover_catalogue(60)


def test_discovery_matches_the_runtime_registry(catalogue: dict[str, Any]) -> None:
    registry = ToolRegistry.discover()
    assert sorted(registered_codes(catalogue)) == registry.codes()
    assert plugin_tool_names(catalogue) == set(registry.all_tools())
    for code in registry.codes():
        entry = catalogue["distributions"]["capc-test-plugin"]["codes"][code]
        assert entry["tools"] == [tool.name for tool in registry.tools_for(code)]
        assert entry["name"] == registry.get(code).name  # type: ignore[union-attr]


def test_snapshot_keeps_only_what_the_tree_uses(catalogue: dict[str, Any]) -> None:
    before = copy.deepcopy(catalogue)
    snapshot = recorded_snapshot(catalogue, {"manage_search"}, {"memory__recall"})
    plugin = snapshot["capc-test-plugin"]
    assert sorted(plugin["codes"]) == ["manage_search"]
    assert sorted(plugin["tools"]) == ["memory__recall", "search_table"]
    assert recorded_snapshot(catalogue, {"nothing"}, set()) == {}
    assert catalogue == before  # the catalogue itself is not touched


def test_settings_come_from_the_flag_then_pyproject(tmp_path: Path) -> None:
    assert read_plugin_settings(None, tmp_path).enabled is False
    (tmp_path / "pyproject.toml").write_text(
        "[project]\nname = 'x'\n\n[ tool.capc ]\nplugins_timeout = 5\nplugins = true\n")
    settings = read_plugin_settings(None, tmp_path)
    assert (settings.enabled, settings.timeout) == (True, 5.0)
    assert settings.origin is not None and (settings.origin.path, settings.origin.line) == (
        "pyproject.toml", 6)
    assert read_plugin_settings(False, tmp_path).enabled is False
    assert read_plugin_settings(True, tmp_path).origin is None  # the flag decided
    (tmp_path / "pyproject.toml").write_text("[tool.capc]\nplugins_timeout = -1\n")
    with pytest.raises(UsageError, match="plugins_timeout must be a positive number"):
        read_plugin_settings(None, tmp_path)
    (tmp_path / "pyproject.toml").write_text("[tool.capc\n")
    with pytest.raises(UsageError, match="invalid TOML"):
        read_plugin_settings(None, tmp_path)


def test_drift_against_the_live_registry(catalogue: dict[str, Any]) -> None:
    snapshot = recorded_snapshot(catalogue, {"crm", "memory"}, set())
    registry = ToolRegistry.discover()
    same = freeze(snapshot)  # as the loader hands it over
    assert plugin_drift(same, registry, lambda name: "0.1.0") == []
    changed = copy.deepcopy(snapshot)
    tools = changed["capc-test-plugin"]["tools"]
    tools["crm_search_contacts"]["input_schema"]["properties"]["limit"]["default"] = 5
    tools["memory__recall"]["description"] = "old words"
    tools["gone_tool"] = {"name": "gone_tool", "description": "", "input_schema": {}}
    changed["capc-test-plugin"]["codes"]["retired"] = {"tools": []}
    messages = plugin_drift(freeze(changed), registry, lambda name: None)
    assert messages == [
        "plugin capc-test-plugin 0.1.0 was recorded at compile time but is not installed",
        "plugin capc-test-plugin: code 'retired' is no longer registered",
        "plugin capc-test-plugin: the input schema of tool 'crm_search_contacts' changed "
        "since compile time (properties.limit.default)",
        "plugin capc-test-plugin: tool 'gone_tool' is no longer registered",
        "plugin capc-test-plugin: the description of tool 'memory__recall' changed since "
        "compile time",
    ]
    # An older, undocumented snapshot shape is not drift (and does not crash the boot).
    assert plugin_drift({"crm": {"version": "1", "tools": ["x"]}}, registry) == []


def test_changed_paths_names_where_schemas_differ() -> None:
    old = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    new = {"type": "object", "properties": {"a": {"type": "integer"}, "b": {}},
           "required": ["a"]}
    assert changed_paths(old, new) == ["properties.a.type", "properties.b"]
    assert changed_paths(old, json.loads(json.dumps(old))) == []
    assert changed_paths({"v": 1}, {"v": True}) == ["v"]
    many = {str(n): n for n in range(9)}
    assert changed_paths(many, {})[-1] == "…"


def test_the_discovery_child_keeps_stdout_for_its_records() -> None:
    done = subprocess.run([sys.executable, "-m", "compiler.plugin_discovery"], cwd=REPO,
                          capture_output=True, text=True, timeout=60, check=True)
    events = [json.loads(line)["event"] for line in done.stdout.splitlines()]
    assert events == ["start", "loaded"] * 4 + ["end"]
    usage = subprocess.run([sys.executable, "-m", "compiler.plugin_discovery", "--bogus"], cwd=REPO,
                           capture_output=True, text=True, timeout=60)
    assert usage.returncode == 2 and usage.stdout == ""
