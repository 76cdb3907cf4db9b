"""docs/output.md is executable: its GitHub capability compiles to the manifest schema the
page shows, and a reply through the real tool comes back as text plus that structured value;
its Stripe capability and Python block run against a loopback server on 127.0.0.1."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.output_shaping import shaped_output_schema
from compiler.runtime.api.output import OutputContract
from compiler.runtime.api.shaping import ResponseShaping, shape_structured
from compiler.runtime.redaction import CutText, Redactor
from tests.support.capc import run_capc
from tests.support.doc_blocks import code_blocks
from tests.support.paths import REPO_ROOT
from tests.support.scripted_server import Reply, scripted_server

PAGE = REPO_ROOT / "docs" / "output.md"


def test_the_github_example_compiles_to_the_schema_shown(tmp_path: Path) -> None:
    yaml_block = next(b for b in code_blocks(PAGE) if b.lang == "yaml")
    json_block = next(b for b in code_blocks(PAGE) if b.lang == "json")
    source = tmp_path / "capabilities" / "github" / "list_org_repos.yaml"
    source.parent.mkdir(parents=True)
    source.write_text(yaml_block.text, encoding="utf-8")
    result = run_capc("compile", "capabilities", "-o", "m.json", cwd=tmp_path)
    assert result.returncode == 0, result.stdout + result.stderr
    [capability] = json.loads((tmp_path / "m.json").read_text())["capabilities"]
    shown = json.loads(json_block.text)
    assert capability["tool"]["output_schema"] == shown
    reply = [{"name": "capc", "stargazers_count": 7, "topics": ["a"]}, {"name": "old"}]
    body = json.dumps(reply)
    shaping = ResponseShaping.from_manifest(capability["api"]["response"])
    structured = shape_structured(Redactor(), CutText(body, False, len(body)), shaping,
                                  OutputContract("list_org_repos", shown))
    assert structured.structured
    assert structured.value == [{"name": "capc", "stars": 7}, {"name": "old", "stars": None}]


def test_every_code_in_the_table_is_one_the_check_emits() -> None:
    text = PAGE.read_text(encoding="utf-8")
    source = (REPO_ROOT / "compiler" / "output_shaping.py").read_text()
    for code in ("api-output-schema-invalid", "api-output-schema-size",
                 "api-output-schema-pattern", "api-output-schema-max-items",
                 "api-output-schema-unsupported", "api-output-schema-dropped"):
        assert f"`{code}`" in text and f'"{code}"' in source
    assert shaped_output_schema({}).schema is None


def test_the_stripe_example_runs_against_a_loopback_stripe(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    yaml_block = [b for b in code_blocks(PAGE) if b.lang == "yaml"][1]
    python_block = next(b for b in code_blocks(PAGE) if b.lang == "python")
    customers = {"object": "list", "has_more": False, "url": "/v1/customers", "data": [
        {"id": "cus_1", "object": "customer", "email": "ada@example.com", "balance": 0,
         "metadata": {}},
        {"id": "cus_2", "object": "customer", "email": None, "balance": -250}]}
    with scripted_server() as server:
        server.script("/v1/customers", Reply(200, json.dumps(customers).encode(),
                                             (("Content-Type", "application/json"),)))
        source = tmp_path / "capabilities" / "stripe" / "list_customers.yaml"
        source.parent.mkdir(parents=True)
        # The one change: Stripe's host becomes the loopback server.
        source.write_text(yaml_block.text.replace("https://api.stripe.com", server.base_url),
                          encoding="utf-8")
        result = run_capc("compile", "capabilities", "-o", "build/manifest.json",
                          "--allow-private-networks", cwd=tmp_path)
        assert result.returncode == 0, result.stdout + result.stderr
        monkeypatch.chdir(tmp_path)
        code = python_block.text.replace("registry=None)",
                                         "registry=None, allow_private_networks=True)")
        exec(compile(code, str(PAGE), "exec"), {"__name__": "docs_output"})
        [arrival] = server.to("/v1/customers")
    assert arrival.path == "/v1/customers?limit=2"
    assert arrival.header("Authorization") == "Bearer sk_test_123"
    printed = capsys.readouterr().out.splitlines()
    assert printed == [
        "[{'id': 'cus_1', 'email': 'ada@example.com', 'balance': 0}, "
        "{'id': 'cus_2', 'email': None, 'balance': -250}]",
        "['id', 'email', 'balance']"]
