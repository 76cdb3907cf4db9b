"""``capc compile --plugins`` against the real capc-test-plugin distribution."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

from compiler.manifest import read_manifest
from tests.support.catalogue import capability, write

REMEMBER_OVERRIDE = """\
apiVersion: capc/v1
kind: ToolOverride
tool: memory__remember
description: Remember one fact.
"""


def test_unknown_internal_code_fails_with_a_located_did_you_mean(
    tmp_path: Path, run_capc: Callable
) -> None:
    write(tmp_path / "capabilities" / "crm.yaml", capability("crm"))
    write(tmp_path / "capabilities" / "manage.yaml",
          capability("manage", "options:\n  codes: [obviously_manage, manage_serch]\n"))
    result = run_capc(tmp_path, "compile", "--plugins", "-o", "m.json")
    assert result.returncode == 1, result.stderr
    assert ("capabilities/manage.yaml:7:29: error[unknown-internal-code]: no installed plugin "
            "registers code 'manage_serch'; did you mean 'manage_search'?") in result.stderr
    assert "crm.yaml" not in result.stderr
    assert not (tmp_path / "m.json").exists()
    # Without the catalogue the compiler cannot know, and says nothing.
    assert run_capc(tmp_path, "compile", "-o", "m.json").returncode == 0


def test_defaulted_code_is_reported_at_the_code_node(tmp_path: Path, run_capc: Callable) -> None:
    write(tmp_path / "capabilities" / "c.yaml", capability("crn"))
    result = run_capc(tmp_path, "validate", "--plugins")
    assert result.returncode == 1
    assert ("capabilities/c.yaml:3:7: error[unknown-internal-code]: no installed plugin "
            "registers code 'crn'; did you mean 'crm'?") in result.stderr


def test_known_codes_record_the_plugin_snapshot(tmp_path: Path, run_capc: Callable) -> None:
    write(tmp_path / "capabilities" / "crm.yaml", capability("crm"))
    write(tmp_path / "capabilities" / "o.yaml", REMEMBER_OVERRIDE)
    result = run_capc(tmp_path, "compile", "--plugins", "-o", "m.json")
    assert result.returncode == 0, result.stderr
    assert "override-unknown-tool" not in result.stderr  # the catalogue knows memory__remember
    manifest = read_manifest(tmp_path / "m.json")  # digest and version verified
    plugin = manifest["plugins"]["capc-test-plugin"]
    assert plugin["version"] == "0.1.0"
    assert plugin["entry_points"]["crm"] == "capc_test_plugin.crm:register"
    # Only what the tree uses: code crm, its tools, and the overridden tool.
    assert sorted(plugin["codes"]) == ["crm"]
    assert plugin["codes"]["crm"]["name"] == "CRM Integration"
    assert plugin["codes"]["crm"]["tools"] == ["crm_search_contacts", "crm_create_contact"]
    assert sorted(plugin["tools"]) == ["crm_create_contact", "crm_search_contacts",
                                       "memory__remember"]
    search = plugin["tools"]["crm_search_contacts"]
    assert search["codes"] == ["crm"]
    assert search["description"].startswith("Search for contacts in the CRM")
    assert search["input_schema"]["required"] == ["query"]
    assert search["input_schema"]["properties"]["limit"] == {
        "default": 10, "description": "Maximum number of results", "type": "integer"}
    # The runtime's view stays out of it: no RunnableConfig parameter in the schema.
    assert "config" not in search["input_schema"]["properties"]


def test_snapshot_is_deterministic_and_absent_without_plugins(
    tmp_path: Path, run_capc: Callable
) -> None:
    write(tmp_path / "capabilities" / "crm.yaml", capability("crm"))
    assert run_capc(tmp_path, "compile", "--plugins", "-o", "a.json").returncode == 0
    assert run_capc(tmp_path, "compile", "--plugins", "-o", "b.json").returncode == 0
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert run_capc(tmp_path, "compile", "-o", "c.json").returncode == 0
    assert json.loads((tmp_path / "c.json").read_text())["plugins"] == {}


def test_pyproject_makes_plugins_the_default_and_the_flag_wins(
    tmp_path: Path, run_capc: Callable
) -> None:
    write(tmp_path / "capabilities" / "c.yaml", capability("nope"))
    assert run_capc(tmp_path, "validate").returncode == 0
    write(tmp_path / "pyproject.toml", "[project]\nname = 'x'\n\n[tool.capc]\nplugins = true\n")
    assert run_capc(tmp_path, "validate").returncode == 1
    assert run_capc(tmp_path, "validate", "--no-plugins").returncode == 0
    write(tmp_path / "pyproject.toml", "[tool.capc]\nplugins = 'yes'\n")
    wrong = run_capc(tmp_path, "validate")
    assert wrong.returncode != 0 and "plugins must be true or false" in wrong.stderr


def test_overrides_of_plugin_tools_are_validated_on_the_snapshot(
    tmp_path: Path, run_capc: Callable
) -> None:
    write(tmp_path / "capabilities" / "memory.yaml", capability("memory"))
    write(tmp_path / "capabilities" / "o1.yaml", """\
apiVersion: capc/v1
kind: ToolOverride
tool: memory__remember
input_schema_patch:
  properties:
    category: {type: string}
""")
    write(tmp_path / "capabilities" / "o2.yaml", """\
apiVersion: capc/v1
kind: ToolOverride
tool: memory__recall
input_schema:
  type: object
  properties:
    text: {type: string}
""")
    write(tmp_path / "capabilities" / "o3.yaml", """\
apiVersion: capc/v1
kind: ToolOverride
tool: crm_search_contacts
input_schema_patch:
  type: 12
""")
    result = run_capc(tmp_path, "validate", "--plugins")
    assert result.returncode == 1, result.stderr
    errors = result.stderr
    assert ("capabilities/o1.yaml:6:15: warning[override-unbound-parameter]: parameter "
            "'category' is not consumed by the executor") in errors
    assert ("capabilities/o2.yaml:5:3: error[override-removes-required]: the executor needs "
            "argument 'query'") in errors
    assert "capabilities/o3.yaml:5:3: error[override-invalid-schema]" in errors
    # Without the catalogue the same overrides are only pending, unknown tools.
    plain = run_capc(tmp_path, "validate")
    assert plain.returncode == 0 and "override-unknown-tool" in plain.stderr


def test_a_plugin_that_fails_to_import_is_a_located_warning(
    tmp_path: Path, run_capc: Callable, make_distribution: Callable
) -> None:
    site = make_distribution("flaky", {
        "flaky": "import not_installed_anywhere\n\ndef register(registry_fn):\n    pass\n"})
    write(tmp_path / "capabilities" / "crm.yaml", capability("crm"))
    write(tmp_path / "capabilities" / "gone.yaml", capability("flaky_tools"))
    result = run_capc(tmp_path, "validate", "--plugins", pythonpath=site)
    assert result.returncode == 1
    assert ("capabilities/gone.yaml:3:7: warning[plugin-load-failed]: tool plugin 'flaky' "
            "(flaky_flaky:register, flaky 1.0) failed to load: ModuleNotFoundError"
            ) in result.stderr
    assert ("error[unknown-internal-code]: no installed plugin registers code 'flaky_tools' "
            "(registered codes: base, canvas, crm, manage_search, memory, obviously_manage, "
            "rag; failed to load, "
            "may register it: flaky)") in result.stderr
    # When nothing is missing, the warning goes to the setting that asked for plugins.
    (tmp_path / "capabilities" / "gone.yaml").unlink()
    write(tmp_path / "pyproject.toml", "[tool.capc]\n# catalogue plugins\nplugins = true\n")
    quiet = run_capc(tmp_path, "validate", pythonpath=site)
    assert quiet.returncode == 0, quiet.stderr
    assert "pyproject.toml:3:1: warning[plugin-load-failed]: tool plugin 'flaky'" in quiet.stderr
    assert run_capc(tmp_path, "validate", "--strict", pythonpath=site).returncode == 1


def test_hanging_exiting_and_printing_plugins_cannot_take_the_compiler_down(
    tmp_path: Path, run_capc: Callable, make_distribution: Callable
) -> None:
    register = ("from capc_test_plugin.memory import remember\n\n"
                "def register(registry_fn):\n"
                "    {action}\n"
                "    registry_fn('{code}', [remember], name='{code}')\n")
    site = make_distribution("rogue", {
        "chatty": register.format(action="print('{not json'); import os; os.write(1, b'}')",
                                  code="chatty"),
        "exits": register.format(action="import os; os._exit(3)", code="exits"),
        # Returns only if capc's 8 s limit never cut it (a hang guard, not a race).
        "hangs": register.format(action="import threading; threading.Event().wait(120)",
                                 code="hangs"),
    })
    write(tmp_path / "pyproject.toml", "[tool.capc]\nplugins = true\nplugins_timeout = 8\n")
    write(tmp_path / "capabilities" / "c.yaml", capability("crm") + "---\n"
          + capability("chatty"))
    result = run_capc(tmp_path, "validate", pythonpath=site)
    assert result.returncode == 0, result.stderr
    warnings = [line for line in result.stderr.splitlines() if "plugin-load-failed" in line]
    assert len(warnings) == 2, result.stderr
    assert any("'exits'" in line and "exited with status 3" in line for line in warnings)
    assert any("'hangs'" in line and "within 8 s" in line for line in warnings)
    assert all(line.startswith("pyproject.toml:2:1: warning") for line in warnings)
