"""A plugin upgrade (capc-test-plugin 0.1.0 → 0.2.0, a real pip install) seen by
``capc diff`` and, at boot, as drift warnings."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.capc import run_capc_process
from tests.support.catalogue import capability, write

BOOT = """\
import logging, sys
logging.basicConfig(level=logging.WARNING, stream=sys.stdout,
                    format="%(levelname)s %(name)s %(message)s")
{body}
"""
BOOT_WITH_DRIFT_CHECK = """\
from compiler.runtime.manifest.read import read_manifest
from compiler.runtime.tools.plugin_drift import log_plugin_drift
from compiler.runtime.tools.registry import ToolRegistry
log_plugin_drift(read_manifest(sys.argv[1]).plugins, ToolRegistry.discover())
"""
BOOT_THROUGH_LOADER = """\
from compiler.runtime import load_manifest
load_manifest(sys.argv[1])
"""


@pytest.fixture(scope="module")
def manifests(tmp_path_factory: pytest.TempPathFactory, plugin_v2_site: Path
              ) -> tuple[Path, Path]:
    """The same tree compiled against 0.1.0 (installed) and against 0.2.0."""
    folder = tmp_path_factory.mktemp("upgrade")
    write(folder / "capabilities" / "crm.yaml", capability("crm"))
    write(folder / "capabilities" / "memory.yaml", capability("memory"))
    for output, site in (("old.json", None), ("new.json", plugin_v2_site)):
        env = {**os.environ, "CAPC_NO_CACHE": "1"}
        env.pop("PYTHONPATH", None)
        if site is not None:
            env["PYTHONPATH"] = str(site)
        # A child process: which plugin version is installed is decided at its start-up.
        done = run_capc_process("compile", "--plugins", "-o", output, cwd=folder, env=env)
        assert done.returncode == 0, done.stderr
    return folder / "old.json", folder / "new.json"


def test_upgrade_shows_in_capc_diff_as_version_and_tool_changes(
    manifests: tuple[Path, Path], run_capc: Callable
) -> None:
    old, new = manifests
    result = run_capc(old.parent, "diff", str(old), str(new))
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("capc diff: tools 1 removed, 1 changed; plugins 1 changed; "
                        "0 security-relevant changes")
    assert "~ plugin capc-test-plugin (version 0.1.0 → 0.2.0) changed" in lines
    assert '    version: "0.1.0" → "0.2.0"' in lines
    assert "    tools.crm_search_contacts.input_schema.properties.limit.default: 10 → 25" in lines
    assert ('    tools.crm_search_contacts.input_schema.properties.country.type: (absent) → '
            '"string"') in lines
    assert ('    codes.memory.tools: ["memory__remember", "memory__recall"] → '
            '["memory__remember"]') in lines
    as_json = run_capc(old.parent, "diff", str(old), str(new), "--format", "json")
    assert json.loads(as_json.stdout)["tools"] == {
        "added": [], "removed": ["memory__recall"], "changed": ["crm_search_contacts"]}
    same = run_capc(old.parent, "diff", str(old), str(old))
    assert same.stdout.startswith("capc diff: no differences")


def _boot(script: str, manifest: Path, site: Path | None) -> str:
    env = {**os.environ}
    env.pop("PYTHONPATH", None)
    if site is not None:
        env["PYTHONPATH"] = str(site)
    done = subprocess.run([sys.executable, "-c", BOOT.format(body=script), str(manifest)],
                          capture_output=True, text=True, env=env, timeout=60, check=True)
    return done.stdout


def test_drift_is_logged_at_boot_with_the_upgraded_plugin_installed(
    manifests: tuple[Path, Path], plugin_v2_site: Path
) -> None:
    old, new = manifests
    drift = _boot(BOOT_WITH_DRIFT_CHECK, old, plugin_v2_site).splitlines()
    prefix = "WARNING compiler.runtime.tools.plugin_drift plugin drift: "
    assert drift[0] == (prefix + "plugin capc-test-plugin is 0.2.0, the manifest was "
                        "compiled against 0.1.0 (overrides and docs were checked against the "
                        "recorded version)")
    assert any("input schema of tool 'crm_search_contacts' changed since compile time "
               "(properties.country, properties.limit.default)" in line for line in drift)
    assert any("tool 'memory__recall' is no longer registered" in line for line in drift)
    assert len(drift) == 3
    # No drift when the installed plugin is the recorded one (either way round).
    assert _boot(BOOT_WITH_DRIFT_CHECK, new, plugin_v2_site) == ""
    assert _boot(BOOT_WITH_DRIFT_CHECK, old, None) == ""


def test_load_manifest_logs_drift(manifests: tuple[Path, Path], plugin_v2_site: Path) -> None:
    old, _ = manifests
    assert "plugin capc-test-plugin is 0.2.0" in _boot(BOOT_THROUGH_LOADER, old, plugin_v2_site)


def test_the_compile_cache_misses_when_the_plugins_change(
    tmp_path: Path, plugin_v2_site: Path
) -> None:
    write(tmp_path / "capabilities" / "crm.yaml", capability("crm"))
    env = {**os.environ, "CAPC_CACHE_DIR": str(tmp_path / "cache")}
    env.pop("CAPC_NO_CACHE", None)
    env.pop("PYTHONPATH", None)
    versions = []
    for site in (None, plugin_v2_site, None):
        if site is not None:
            env["PYTHONPATH"] = str(site)
        else:
            env.pop("PYTHONPATH", None)
        done = run_capc_process("compile", "--plugins", "-o", "m.json", cwd=tmp_path, env=env)
        assert done.returncode == 0, done.stderr
        manifest = json.loads((tmp_path / "m.json").read_text())
        versions.append(manifest["plugins"]["capc-test-plugin"]["version"])
    assert versions == ["0.1.0", "0.2.0", "0.1.0"]
    assert any((tmp_path / "cache").iterdir())  # the cache was in use all along
