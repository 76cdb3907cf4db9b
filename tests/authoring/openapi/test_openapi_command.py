"""``capc import openapi`` end to end through the real console entry point."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import yaml

from tests.authoring.openapi.helpers import document, get, write
from tests.support.capc import run_capc, run_capc_process


def tickets(version: str = "1") -> dict[str, Any]:
    """A small API whose v2 changes in the ways drift must rank."""
    v2 = version == "2"
    status = {"name": "status", "in": "query", "schema": {"type": "string"}}
    if not v2:
        status["schema"]["enum"] = ["open", "closed"]
    list_parameters: list[dict[str, Any]] = [status]
    if v2:
        list_parameters.append({"name": "org", "in": "query", "required": True,
                                "schema": {"type": "string"}})
    paths: dict[str, Any] = {
        "/tickets": {"get": get("listTickets", summary="List tickets", tags=["tickets"],
                                parameters=list_parameters)},
        "/tickets/{id}": {"get": get("getTicket", summary="One ticket", tags=["tickets"],
                                     parameters=[{"name": "id", "in": "path", "required": True,
                                                  "schema": {"type": "integer"}}])},
        "/admin": {"get": get("adminStats", summary="Stats", tags=["admin"])},
    }
    if v2:
        paths["/tickets/{id}"]["delete"] = get("deleteTicket", summary="Delete",
                                               tags=["tickets"], parameters=[
            {"name": "id", "in": "path", "required": True, "schema": {"type": "integer"}}])
    data = document(paths, security=[{"token": []}], components={"securitySchemes": {
        "token": {"type": "http", "scheme": "bearer"}}})
    data["info"]["version"] = version
    if v2:
        data["servers"] = [{"url": "https://api.other-host.example"}]
    return data


def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.capc]\nroots = ["capabilities"]\n')
    return tmp_path


def test_without_a_selection_it_lists_and_writes_nothing(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    listed = run_capc("import", "openapi", "tickets.yaml", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    assert "listTickets" in listed.stdout and "GET /tickets/{id}" in listed.stdout
    as_json = run_capc("import", "openapi", "tickets.yaml", "--format", "json", cwd=tmp_path)
    rows = json.loads(as_json.stdout)
    assert {row["code"] for row in rows} == {"list_tickets", "get_ticket", "admin_stats"}
    assert not (tmp_path / "capabilities").exists()


def test_import_writes_reviewable_files_that_compile(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    done = run_capc("import", "openapi", "tickets.yaml", "--operations", "tag:tick*",
                    cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "capabilities" / "test_api"
    assert sorted(p.name for p in folder.iterdir()) == ["get_ticket.yaml", "list_tickets.yaml"]
    assert "TEST_API_TOKEN: a bearer token" in done.stdout
    data = yaml.safe_load((folder / "list_tickets.yaml").read_text())
    assert data["options"]["headers"] == {"Authorization": "Bearer ${TEST_API_TOKEN}"}
    compiled = run_capc("compile", "--strict", "-o", "m.json", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    manifest = json.loads((tmp_path / "m.json").read_text())
    origins = {c["code"]: c["origin"]["openapi"] for c in manifest["capabilities"]}
    assert origins["list_tickets"]["operation"] == "#/paths/~1tickets/get"
    assert origins["list_tickets"]["selection"] == ["tag:tick*"]
    explained = run_capc("explain", "list_tickets", "-m", "m.json", cwd=tmp_path)
    assert "imported from OpenAPI 'Test API' 1" in explained.stdout


def test_reimport_is_byte_identical_and_check_is_clean(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    run_capc("import", "openapi", "tickets.yaml", "--all", cwd=tmp_path)
    folder = tmp_path / "capabilities" / "test_api"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    again = run_capc("import", "openapi", "tickets.yaml", "--all", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before
    check = run_capc("import", "openapi", "tickets.yaml", "--check", cwd=tmp_path)
    assert check.returncode == 0, check.stdout + check.stderr
    assert "up to date" in check.stdout


def test_check_reports_drift_security_first_and_writes_nothing(tmp_path: Path) -> None:
    write(project(tmp_path), tickets("1"), "tickets.yaml")
    run_capc("import", "openapi", "tickets.yaml", "--operations", "tag:tickets", cwd=tmp_path)
    folder = tmp_path / "capabilities" / "test_api"
    before = {p.name: p.read_bytes() for p in folder.iterdir()}
    write(tmp_path, tickets("2"), "tickets.yaml")
    check = run_capc("import", "openapi", "tickets.yaml", "--check", cwd=tmp_path)
    assert check.returncode == 1
    lines = check.stdout.splitlines()
    security = [line for line in lines if line.startswith("SECURITY ")]
    assert lines[: len(security)] == security  # ranked first
    joined = "\n".join(security)
    assert "delete_ticket: new operation" in joined
    assert "list_tickets: new required argument params.org" in joined
    assert "list_tickets: params.status: enum restriction removed" in joined
    assert "talks to a new host api.other-host.example" in joined
    assert {p.name: p.read_bytes() for p in folder.iterdir()} == before


def test_a_failed_import_writes_nothing_and_existing_files_are_kept(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    folder = tmp_path / "capabilities" / "test_api"
    folder.mkdir(parents=True)
    (folder / "list_tickets.yaml").write_text("# written by a person\n")
    refused = run_capc("import", "openapi", "tickets.yaml", "--all", cwd=tmp_path)
    assert refused.returncode == 1
    assert "import-exists" in refused.stderr
    assert sorted(p.name for p in folder.iterdir()) == ["list_tickets.yaml"]
    assert (folder / "list_tickets.yaml").read_text() == "# written by a person\n"


def test_a_code_clash_with_the_tree_is_refused(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    shutil.copytree(Path(__file__).parents[3] / "capabilities" / "api",
                    tmp_path / "capabilities" / "api")
    data = tickets()
    data["paths"]["/tickets"]["get"]["operationId"] = "get_weather"
    write(tmp_path, data, "tickets.yaml")
    refused = run_capc("import", "openapi", "tickets.yaml", "--all", cwd=tmp_path)
    assert refused.returncode == 1
    assert "get_weather" in refused.stderr
    assert not (tmp_path / "capabilities" / "test_api").exists()


def test_selector_errors_and_usage(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    unknown = run_capc("import", "openapi", "tickets.yaml", "--operations", "listTicket",
                       cwd=tmp_path)
    assert unknown.returncode == 1
    assert "did you mean 'listTickets'" in unknown.stderr
    both = run_capc("import", "openapi", "tickets.yaml", "--all", "--operations", "x",
                    cwd=tmp_path)
    assert both.returncode == 2
    missing = run_capc("import", "openapi", "nowhere.yaml", cwd=tmp_path)
    # An unreadable SPEC is an I/O error, exit 2 as on every command (docs/cli.md).
    assert missing.returncode == 2 and "no such file" in missing.stderr
    for result in (unknown, both, missing):
        assert "Traceback" not in result.stderr


def test_several_selectors_after_one_flag_and_server_override(tmp_path: Path) -> None:
    write(project(tmp_path), tickets(), "tickets.yaml")
    done = run_capc("import", "openapi", "tickets.yaml", "--operations", "listTickets",
                    "GET /admin", "--server", "https://staging.example.com/api", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    folder = tmp_path / "capabilities" / "test_api"
    assert sorted(p.name for p in folder.iterdir()) == ["admin_stats.yaml", "list_tickets.yaml"]
    assert "url: https://staging.example.com/api/admin" in (folder / "admin_stats.yaml").read_text()


def _many(count: int) -> dict[str, Any]:
    return document({f"/things/{index}": {"get": get(f"getThing{index}")}
                     for index in range(count)})


def test_a_progress_line_on_a_terminal_only(tmp_path: Path) -> None:
    import os
    import pty
    import subprocess

    write(project(tmp_path), _many(60), "many.yaml")
    primary, secondary = pty.openpty()
    try:
        done = run_capc_process("import", "openapi", "many.yaml", "--all", cwd=tmp_path,
                                text=False, stdout=subprocess.PIPE, stderr=secondary)
        os.close(secondary)
        shown = b""
        while True:
            try:
                chunk = os.read(primary, 65536)
            except OSError:
                break
            if not chunk:
                break
            shown += chunk
    finally:
        os.close(primary)
    assert done.returncode == 0
    assert b"capc import openapi: 60/60 operations (100%)" in shown
    (tmp_path / "piped").mkdir()
    other = project(tmp_path / "piped")
    write(other, _many(60), "many.yaml")
    piped = run_capc("import", "openapi", "many.yaml", "--all", cwd=other)
    assert piped.returncode == 0, piped.stderr
    assert "operations (" not in piped.stderr


def test_check_in_json_lists_each_change(tmp_path: Path) -> None:
    write(project(tmp_path), tickets("1"), "tickets.yaml")
    run_capc("import", "openapi", "tickets.yaml", "--operations", "tag:tickets", cwd=tmp_path)
    write(tmp_path, tickets("2"), "tickets.yaml")
    check = run_capc("import", "openapi", "tickets.yaml", "--check", "--format", "json",
                     cwd=tmp_path)
    assert check.returncode == 1
    report = json.loads(check.stdout)
    assert report["changed"] is True
    assert {"code": "list_tickets", "change": "new required argument params.org",
            "security": True, "kind": "input-schema-widened",
            "rank": "security-relevant"} in report["changes"]
    flags = [change["security"] for change in report["changes"]]
    assert flags == sorted(flags, reverse=True)


def test_both_import_forms_keep_their_own_help_and_usage(tmp_path: Path) -> None:
    help_text = run_capc("import", "openapi", "-h", cwd=tmp_path)
    assert help_text.returncode == 0
    assert help_text.stdout.splitlines()[0].endswith("import openapi [OPTIONS] SPEC "
                                                     "[SELECTOR...]")
    missing = run_capc("import", "openapi", cwd=tmp_path)
    assert missing.returncode == 2 and "Missing argument 'SPEC'" in missing.stderr
    assert "ROWS.json" not in missing.stderr
    rows = run_capc("import", "--help", cwd=tmp_path)
    assert rows.returncode == 0 and "ROWS.json" in rows.stdout
