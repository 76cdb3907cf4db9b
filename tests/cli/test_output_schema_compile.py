"""SPEC §16 through the commands: ``capc compile`` carries the shaped output schema (and
refuses one too large to check), ``capc docs`` shows its fields, ``capc diff`` ranks a
removed or retyped output field as a contract change after every security change."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.support.capc import run_capc

CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: list_repos
name: List repositories
type: api
options:
  description: The repositories of an organisation
  url: {url}
  params:
    org: {{type: string, required: true}}
  response:
    select: "[*].{{name: name, stars: stargazers_count}}"
    max_items: 20
  output_schema: {schema}
"""
REPO = {"type": "object", "required": ["name"], "properties": {
    "name": {"type": "string"}, "stargazers_count": {"type": "integer"},
    "topics": {"type": "array", "items": {"type": "string"}}}}


def write_tree(root: Path, schema: Any, url: str = "https://api.github.com/repos") -> Path:
    source = root / "capabilities" / "list_repos.yaml"
    source.parent.mkdir(parents=True, exist_ok=True)
    source.write_text(CAPABILITY.format(url=url, schema=json.dumps(schema)), encoding="utf-8")
    return source


def compile_tree(root: Path, name: str) -> dict[str, Any]:
    result = run_capc("compile", "capabilities", "-o", name, cwd=root)
    assert result.returncode == 0, result.stderr
    document: dict[str, Any] = json.loads((root / name).read_text(encoding="utf-8"))
    return document


def test_the_manifest_carries_the_shaped_schema_and_where_it_came_from(tmp_path: Path) -> None:
    write_tree(tmp_path, {"type": "array", "items": REPO})
    [capability] = compile_tree(tmp_path, "m.json")["capabilities"]
    assert capability["tool"]["output_schema"] == {
        "type": "array", "maxItems": 20, "items": {
            "type": "object", "additionalProperties": False, "required": ["name", "stars"],
            "properties": {"name": {"type": "string"},
                           "stars": {"type": ["integer", "null"]}}}}
    assert capability["tool"]["provenance"]["output_schema"] == {
        "path": "capabilities/list_repos.yaml", "line": 14}


def test_a_schema_too_large_to_check_is_a_located_error(tmp_path: Path) -> None:
    huge = {"type": "array", "items": {"type": "object", "properties": {
        f"field_{index}": {"type": "string"} for index in range(11_000)}}}
    write_tree(tmp_path, huge)
    result = run_capc("compile", "capabilities", "-o", "m.json", cwd=tmp_path)
    assert result.returncode == 1
    assert ("capabilities/list_repos.yaml:14:18: error[api-output-schema-size]: output_schema "
            "is too large to check replies against: it has more than 20000 nodes"
            ) in result.stdout + result.stderr
    assert not (tmp_path / "m.json").exists()


def test_docs_show_the_output_fields(tmp_path: Path) -> None:
    write_tree(tmp_path, {"type": "array", "items": REPO})
    compile_tree(tmp_path, "m.json")
    result = run_capc("docs", "-m", "m.json", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert ("| output field | type |\n| --- | --- |\n| `@` | array |\n| `[]` | object |\n"
            "| `[].name` | string |\n| `[].stars` | integer or null |\n") in result.stdout


def test_diff_ranks_a_removed_or_retyped_output_field_after_security(tmp_path: Path) -> None:
    write_tree(tmp_path, {"type": "array", "items": REPO})
    compile_tree(tmp_path, "old.json")
    retyped = {**REPO, "properties": {**REPO["properties"],
                                      "stargazers_count": {"type": "string"}}}
    write_tree(tmp_path, {"type": "array", "items": retyped},
               url="https://api.github.example.org/repos")
    compile_tree(tmp_path, "new.json")
    result = run_capc("diff", "old.json", "new.json", "--format", "json", cwd=tmp_path)
    findings = json.loads(result.stdout)["security"]
    assert [(f["kind"], f["message"]) for f in findings] == [
        ("new-host", "talks to a new host api.github.example.org (was api.github.com)"),
        ("output-contract-changed",
         "output field [].stars changed type from integer or null to string or null"),
    ]


def test_diff_does_not_report_an_added_output_field(tmp_path: Path) -> None:
    write_tree(tmp_path, {"type": "array", "items": REPO})
    compile_tree(tmp_path, "old.json")
    source = write_tree(tmp_path, {"type": "array", "items": REPO})
    source.write_text(source.read_text().replace(
        "stars: stargazers_count}", "stars: stargazers_count, topics: topics}"))
    compile_tree(tmp_path, "new.json")
    result = run_capc("diff", "old.json", "new.json", "--format", "json", cwd=tmp_path)
    assert json.loads(result.stdout)["security"] == []
    assert "output_schema" in result.stdout  # still shown as a changed field
