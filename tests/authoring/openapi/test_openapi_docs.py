"""docs/openapi.md, run: import, review, override, re-import, drift check, as written."""

from __future__ import annotations

from pathlib import Path

import yaml

from tests.support.capc import run_capc
from tests.support.doc_blocks import code_blocks, run_blocks
from tests.support.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "openapi.md"


def _console(starting: str) -> list[str]:
    """The lines of the page's first console block whose first line starts with ``starting``."""
    blocks = [block.text.rstrip("\n").splitlines() for block in code_blocks(PAGE)
              if block.lang == "console"]
    return next(lines for lines in blocks if lines[0].startswith(starting))


def _upstream_changes(document: Path) -> None:
    """What the drift section says changed upstream."""
    data = yaml.safe_load(document.read_text())
    data["servers"][0]["variables"]["region"]["default"] = "us"
    parameters = data["paths"]["/pets"]["get"]["parameters"]
    parameters[0]["required"] = True
    del parameters[1]["schema"]["items"]["enum"]
    data["paths"]["/pets/{id}"] = {"delete": {
        "operationId": "deletePet", "tags": ["pets"],
        "parameters": [{"name": "id", "in": "path", "required": True,
                        "schema": {"type": "string"}}],
        "responses": {"204": {"description": "Deleted"}}}}
    document.write_text(yaml.safe_dump(data, sort_keys=False))


async def test_the_page_runs_and_shows_what_capc_prints(tmp_path: Path) -> None:
    printed = await run_blocks(PAGE, tmp_path, {})
    written = _console("capabilities/petstore/")
    secured = _console("$ capc import openapi openapi/billing.yaml --all")[1:]
    assert all(line in printed.splitlines() for line in [*written, *secured]), printed
    billing = (tmp_path / "capabilities" / "billing" / "list_invoices.yaml").read_text()
    assert "# Imported with --security apiKey" in billing and "X-Billing-Key" in billing
    assert not (tmp_path / "capabilities" / "billing" / "list_payouts.yaml").exists()
    assert "capabilities/billing: up to date with the document" in printed
    shown = next(block.text for block in code_blocks(PAGE)
                 if block.text.startswith("# yaml-language-server"))
    generated = (tmp_path / "capabilities" / "petstore" / "list_pets.yaml").read_text()
    assert shown == generated
    explained = run_capc("explain", "list_pets", cwd=tmp_path)
    assert "at most 100 per call." in explained.stdout  # the override survived re-import
    assert "imported from OpenAPI 'Pet Store' 1.0.0" in explained.stdout


async def test_the_drift_output_is_what_capc_prints(tmp_path: Path) -> None:
    await run_blocks(PAGE, tmp_path, {})
    _upstream_changes(tmp_path / "openapi" / "petstore.yaml")
    command, *expected = _console("$ capc import openapi openapi/petstore.yaml")
    argv = command.removeprefix("$ capc ").split()
    checked = run_capc(*argv, cwd=tmp_path)
    assert checked.returncode == 1, checked.stderr
    assert checked.stdout.splitlines() == expected


async def test_the_shapes_section_imports_and_sends_as_shown(tmp_path: Path) -> None:
    from tests.authoring.openapi.helpers import imported
    from tests.authoring.openapi.wire import received
    from tests.support.loopback import start_server, stop_server

    await run_blocks(PAGE, tmp_path, {})
    command, *expected = _console("$ capc import openapi openapi/shapes.yaml")
    checked = run_capc(*command.removeprefix("$ capc ").split(), cwd=tmp_path)
    assert checked.returncode == 0, checked.stderr
    assert checked.stdout.splitlines() == expected
    excerpt = next(block.text for block in code_blocks(PAGE)
                   if block.skip is not None and block.text.startswith("url: https://api.shapes"))
    options = yaml.safe_load((tmp_path / "capabilities/shapes/get_thing.yaml").read_text())[
        "options"]
    assert {key: options[key] for key in yaml.safe_load(excerpt)} == yaml.safe_load(excerpt)
    server = start_server(b"")
    try:
        out = tmp_path / "on-loopback"
        outcome = imported(tmp_path / "openapi" / "shapes.yaml", out,
                           server=server.url("/v1"), allow_private_networks=True)
        assert outcome.exit_code == 0, outcome.lines
        (sent,) = await received(out, server, [("get_thing", {
            "id": "7", "fields": ["name", "size"]})], settings={"SHAPES_SESSION_TOKEN": "t"})
    finally:
        stop_server(server)
    assert sent.path == "/v1/things/7?fields=name%7Csize"
    assert sent.headers["Cookie"] == "lang=en-GB; session_token=t"
