"""``capc plugins`` and ``capc new`` with the real capc-test-plugin installed."""

from __future__ import annotations

import json
import shutil
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest
import yaml

from compiler.authoring.scaffold import scalar
from tests.support.capc import run_capc as run_capc_in_process
from tests.support.catalogue import REPO


def capc(folder: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return run_capc_in_process(*args, cwd=folder,
                               env={"PATH": "/usr/bin:/bin", "CAPC_NO_CACHE": "1"})


def test_plugins_lists_codes_names_descriptions_and_tools(
    tmp_path: Path, run_capc: Callable
) -> None:
    text = run_capc(tmp_path, "plugins")
    assert text.returncode == 0, text.stderr
    lines = text.stdout.splitlines()
    assert "capc-test-plugin 0.1.0" in lines
    assert ("  code crm — CRM Integration: Search and manage contacts in the CRM system"
            in lines)
    assert ("    crm_search_contacts(query: string, limit?: integer) — Search for contacts "
            "in the CRM by name, email, or phone number.") in lines
    assert "    memory__remember(content: string) — Store a fact in long-term memory." in lines
    listed = json.loads(run_capc(tmp_path, "plugins", "--format", "json").stdout)
    plugin = listed["distributions"]["capc-test-plugin"]
    assert listed["group"] == "primethink.tools" and listed["failures"] == []
    assert sorted(plugin["codes"]) == ["base", "canvas", "crm", "manage_search", "memory",
                                      "obviously_manage", "rag"]
    assert plugin["codes"]["obviously_manage"] == {
        "name": "Manage", "description": "Search and manage matters, timers, and billing",
        "entry_points": ["manage"], "tools": ["search_matters", "create_timer"]}
    assert plugin["tools"]["create_timer"]["input_schema"]["required"] == [
        "matter_id", "description"]


def test_plugins_exits_1_and_names_a_plugin_that_failed(
    tmp_path: Path, run_capc: Callable, make_distribution: Callable
) -> None:
    site = make_distribution("broken", {"boom": "def register(registry_fn):\n"
                                                "    raise RuntimeError('no settings')\n"})
    result = run_capc(tmp_path, "plugins", pythonpath=site)
    assert result.returncode == 1
    assert ("FAILED boom (broken_boom:register, broken 1.0): RuntimeError: no settings"
            in result.stdout)
    assert "capc-test-plugin 0.1.0" in result.stdout


@pytest.mark.parametrize("kind", ["internal", "api", "mcp"])
def test_each_scaffold_compiles_as_written(tmp_path: Path, kind: str, run_capc: Callable
                                           ) -> None:
    shutil.copytree(REPO / "schemas", tmp_path / "schemas",
                    ignore=shutil.ignore_patterns("__pycache__", "*.py"))
    name = {"internal": "crm", "api": "order_status", "mcp": "docs_server"}[kind]
    created = run_capc(tmp_path, "new", kind, name)
    assert created.returncode == 0, created.stderr
    path = tmp_path / "capabilities" / kind / f"{name}.yaml"
    assert created.stdout.strip() == f"capabilities/{kind}/{name}.yaml"
    text = path.read_text()
    first = text.splitlines()[0]
    assert first == "# yaml-language-server: $schema=../../schemas/capability-v1.json"
    assert (path.parent / first.partition("$schema=")[2]).resolve().is_file()
    plugins = ["--plugins"] if kind == "internal" else []
    # The api and mcp scaffolds keep TODO text and a placeholder URL to fill in: they
    # compile (to try them) and fail --strict until filled in; internal has none.
    strict = ["--strict"] if kind == "internal" else []
    compiled = run_capc(tmp_path, "compile", *plugins, *strict, "-o", "m.json")
    assert compiled.returncode == 0, compiled.stderr
    if kind != "internal":
        refused = run_capc(tmp_path, "validate", "--strict")
        assert refused.returncode == 1 and "scaffold-placeholder" in refused.stderr
    manifest = json.loads((tmp_path / "m.json").read_text())
    [entry] = manifest["capabilities"]
    assert (entry["code"], entry["type"]) == (name, kind)
    if kind == "internal":  # filled from the registration
        assert entry["name"] == "CRM Integration"
        assert entry["description"] == "Search and manage contacts in the CRM system"
        assert "#   crm_search_contacts, crm_create_contact" in text
        assert "capc-test-plugin" in manifest["plugins"]


def test_new_refuses_to_overwrite_and_unknown_codes(tmp_path: Path) -> None:
    target = tmp_path / "capabilities" / "api" / "x.yaml"
    target.parent.mkdir(parents=True)
    target.write_text("keep me\n")
    refused = capc(tmp_path, "new", "api", "x")
    assert refused.returncode == 1
    assert "capabilities/api/x.yaml already exists; not overwriting it" in refused.stderr
    assert target.read_text() == "keep me\n"
    unknown = capc(tmp_path, "new", "internal", "obviously_manag")
    assert unknown.returncode == 1
    assert ("no installed plugin registers code 'obviously_manag'; did you mean "
            "'obviously_manage'?") in unknown.stderr
    assert not (tmp_path / "capabilities" / "internal").exists()
    bad_name = capc(tmp_path, "new", "mcp", "Bad-Name")
    assert bad_name.returncode == 2 and "is not a capability code" in bad_name.stderr
    elsewhere = capc(tmp_path, "new", "mcp", "wiki", "-o", "deep/w.yaml")
    assert elsewhere.returncode == 0
    assert (tmp_path / "deep" / "w.yaml").read_text().startswith(
        "# yaml-language-server: $schema=../schemas/capability-v1.json\n")


@pytest.mark.parametrize("value", ["CRM Integration", "yes", "a: b", "#tag", "Don't", " x",
                                   "50% off", "x\ny", "[list]", "O'Brien & co", "null"])
def test_scaffold_scalars_read_back_unchanged(value: str) -> None:
    assert yaml.safe_load(f"key: {scalar(value)}") == {"key": value}
