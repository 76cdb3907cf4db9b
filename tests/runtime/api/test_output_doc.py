"""docs/output.md is executable: its GitHub capability compiles to the manifest schema the
page shows, and a reply through the real tool comes back as text plus that structured value."""

from __future__ import annotations

import json
from pathlib import Path

from compiler.checks.output_schema import shaped_output_schema
from compiler.runtime.api.output import OutputContract
from compiler.runtime.api.shaping import ResponseShaping, shape_structured
from compiler.runtime.redaction import CutText, Redactor
from tests.support.capc import run_capc
from tests.support.doc_blocks import code_blocks
from tests.support.paths import REPO_ROOT

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
    source = (REPO_ROOT / "compiler" / "checks" / "output_schema.py").read_text()
    for code in ("api-output-schema-invalid", "api-output-schema-size",
                 "api-output-schema-pattern", "api-output-schema-max-items",
                 "api-output-schema-unsupported", "api-output-schema-dropped"):
        assert f"`{code}`" in text and f'"{code}"' in source
    assert shaped_output_schema({}).schema is None
