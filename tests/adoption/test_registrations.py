"""``[tool.capc] registrations``: the host application's own registrations build the
compile-time catalogue, honoured by compile, validate, lock, new and plugins."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.adoption.host_app import REGISTRATIONS, internal_capability, write_host_app
from tests.support.capc import run_capc


@pytest.fixture
def app(tmp_path: Path) -> Path:
    root = write_host_app(tmp_path / "acme")
    (root / "capabilities" / "internal").mkdir(parents=True)
    for code in ("base", "rag", "crm"):
        (root / "capabilities" / "internal" / f"{code}.yaml").write_text(
            internal_capability(code))
    (root / "pyproject.toml").write_text(
        f"[project]\nname = 'acme'\n\n[tool.capc]\nregistrations = {REGISTRATIONS}\n")
    return root


def test_registered_codes_compile_cleanly_and_are_recorded(app: Path) -> None:
    done = run_capc("compile", "--strict", cwd=app)
    assert done.returncode == 0, done.stderr
    manifest = json.loads((app / "build" / "manifest.json").read_text())
    recorded = manifest["plugins"]["(project registrations)"]
    assert sorted(recorded["codes"]) == ["base", "crm", "rag"]
    assert recorded["codes"]["base"]["tools"] == ["get_document_text", "remember"]
    assert recorded["entry_points"] == {"myapp.crm:register": "myapp.crm:register",
                                        "myapp.tool_registrations": "myapp.tool_registrations"}


def test_a_code_nobody_registers_is_an_error_with_did_you_mean(app: Path) -> None:
    (app / "capabilities" / "internal" / "crn.yaml").write_text(internal_capability("crn"))
    done = run_capc("validate", cwd=app)
    assert done.returncode == 1
    assert "'crn'" in done.stderr and "did you mean 'crm'" in done.stderr


def test_every_command_that_checks_codes_honours_them(app: Path) -> None:
    assert run_capc("validate", "--strict", cwd=app).returncode == 0
    locked = run_capc("lock", cwd=app)
    assert locked.returncode == 0, locked.stderr
    new = run_capc("new", "internal", "crm", "-o", "elsewhere/crm.yaml", cwd=app)
    assert new.returncode == 1 and "already" in new.stderr  # the tree defines crm
    (app / "capabilities" / "internal" / "crm.yaml").unlink()
    new = run_capc("new", "internal", "crm", cwd=app)
    assert new.returncode == 0, new.stderr
    scaffolded = (app / "capabilities" / "internal" / "crm.yaml").read_text()
    assert "CRM" in scaffolded and "find_contact" in scaffolded
    listed = run_capc("plugins", cwd=app)
    assert "code crm — CRM: Contacts" in listed.stdout
    assert "remember(fact: string)" in listed.stdout


def test_a_registration_that_fails_is_named_and_the_compile_fails(app: Path) -> None:
    (app / "myapp" / "crm.py").write_text("raise RuntimeError('no database in CI')\n")
    done = run_capc("validate", cwd=app)
    assert done.returncode == 1
    assert "myapp.crm:register" in done.stderr and "no database in CI" in done.stderr
    assert "Traceback" not in done.stderr


def test_a_malformed_registration_is_a_usage_error(app: Path) -> None:
    (app / "pyproject.toml").write_text("[tool.capc]\nregistrations = ['myapp/crm.py']\n")
    done = run_capc("validate", cwd=app)
    assert done.returncode == 2 and "myapp.tools:register" in done.stderr
