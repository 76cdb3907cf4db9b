"""SPEC §11 on documents with oddities nobody here wrote for: cookie parameters,
non-object bodies, ``$ref`` cycles, huge enums. Never a traceback; what is written
compiles; what cannot be kept is said, located or in the file's comments."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi.schema_scalars import MAX_ENUM_VALUES
from compiler.schema.validation import schema_text
from tests.support.capc import run_capc

pytestmark = pytest.mark.independent

HUGE = 20_000


def document() -> dict[str, Any]:
    return {
        "openapi": "3.1.0", "info": {"title": "Odd API", "version": "1"},
        "servers": [{"url": "https://{region}.example.com/v1",
                     "variables": {"region": {"default": "eu"}}}],
        "components": {"schemas": {
            "Node": {"type": "object", "properties": {
                "name": {"type": "string"},
                "children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}},
            "A": {"$ref": "#/components/schemas/B"}, "B": {"$ref": "#/components/schemas/A"},
        }},
        "paths": {
            "/cookie": {"get": {"operationId": "optionalCookie", "parameters": [
                {"name": "session_id", "in": "cookie", "schema": {"type": "string"}},
                {"name": "q", "in": "query", "schema": {"type": "string"}}]}},
            "/required-cookie": {"get": {"operationId": "requiredCookie", "parameters": [
                {"name": "theme", "in": "cookie", "required": True,
                 "schema": {"type": "string"}}]}},
            "/arraybody": {"post": {"operationId": "arrayBody", "requestBody": {
                "required": True, "content": {"application/json": {
                    "schema": {"type": "array", "items": {"type": "string"}}}}}}},
            "/textbody": {"post": {"operationId": "textBody", "requestBody": {
                "content": {"text/plain": {"schema": {"type": "string"}}}}}},
            "/tree": {"post": {"operationId": "postTree", "requestBody": {"content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/Node"}}}}}},
            "/cycle": {"post": {"operationId": "refCycle", "requestBody": {"content": {
                "application/json": {"schema": {"$ref": "#/components/schemas/A"}}}}}},
            "/huge": {"get": {"operationId": "hugeEnum", "parameters": [
                {"name": "v", "in": "query", "required": True,
                 "schema": {"type": "string", "enum": [f"v{i}" for i in range(HUGE)]}}]}},
            "/fine": {"get": {"operationId": "fineEnum", "parameters": [
                {"name": "v", "in": "query",
                 "schema": {"type": "string", "enum": ["a", "b"]}}]}},
        },
    }


@pytest.fixture
def spec(tmp_path: Path) -> Path:
    path = tmp_path / "odd.json"
    path.write_text(json.dumps(document()))
    return path


def test_a_huge_enum_is_imported_as_a_field_that_compiles(tmp_path: Path, spec: Path) -> None:
    result = run_capc("import", "openapi", str(spec), "--operations", "hugeEnum", "fineEnum",
                      cwd=tmp_path)
    assert result.returncode == 0, result.stderr[:2000]
    written = (tmp_path / "capabilities" / "odd_api" / "huge_enum.yaml").read_text()
    assert "enum of 20000 values left out" in written
    assert "v19999" not in written
    fine = (tmp_path / "capabilities" / "odd_api" / "fine_enum.yaml").read_text()
    assert "enum: [a, b]" in fine
    compiled = run_capc("compile", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr[:2000]


def test_the_importers_enum_limit_is_the_schemas(tmp_path: Path) -> None:
    schema = json.loads(schema_text("Capability"))
    limits = {name: definition["properties"]["enum"]["maxItems"]
              for name, definition in schema["$defs"].items()
              if "enum" in definition.get("properties", {})}
    assert limits and set(limits.values()) == {MAX_ENUM_VALUES}


def test_a_schema_error_on_a_huge_value_is_one_short_located_line(tmp_path: Path) -> None:
    values = ", ".join(f"v{i}" for i in range(HUGE))
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "huge.yaml").write_text(f"""\
apiVersion: capc/v1
kind: Capability
code: huge
name: Huge
type: api
options:
  description: Too many values.
  url: https://api.example.com/huge
  params:
    v: {{type: string, enum: [{values}]}}
""")
    result = run_capc("validate", cwd=tmp_path)
    assert result.returncode == 1
    (line,) = [line for line in result.stderr.splitlines() if "error[" in line]
    assert line.startswith("capabilities/huge.yaml:10:")
    assert f"has {HUGE} items; at most {MAX_ENUM_VALUES} allowed" in line, line[:500]
    assert len(line) < 400, line[:500]


def test_every_oddity_is_reported_never_a_traceback(tmp_path: Path, spec: Path) -> None:
    listing = run_capc("import", "openapi", str(spec), cwd=tmp_path)
    assert listing.returncode == 0 and "refCycle" in listing.stdout
    everything = run_capc("import", "openapi", str(spec), "--all", cwd=tmp_path)
    # One bad operation never refuses the whole document (issue 35): the loop is skipped
    # with a located reason, the rest is imported.
    assert everything.returncode == 0, everything.stderr
    assert "Traceback" not in everything.stderr and "internal error" not in everything.stderr
    assert "warning[openapi-ref-loop]" in everything.stderr
    assert "POST /cycle not imported" in everything.stderr
    written = {path.name for path in (tmp_path / "capabilities" / "odd_api").iterdir()}
    assert "fine_enum.yaml" in written and not any("cycle" in name for name in written)


def test_cookies_and_bodies_capc_cannot_express_are_said(tmp_path: Path, spec: Path) -> None:
    result = run_capc("import", "openapi", str(spec), "--operations", "optionalCookie",
                      "requiredCookie", "arrayBody", "textBody", "postTree", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "requiredCookie" in result.stderr or "/required-cookie" in result.stderr
    assert "/arraybody" not in result.stderr  # a body that is an array: one argument
    folder = tmp_path / "capabilities" / "odd_api"
    assert sorted(path.name for path in folder.iterdir()) == [
        "array_body.yaml", "optional_cookie.yaml", "post_tree.yaml", "text_body.yaml"]
    assert "body_template: '{body}'" in (folder / "array_body.yaml").read_text()
    assert "session_id" in (folder / "optional_cookie.yaml").read_text()  # said, in a comment
    assert "text/plain" in (folder / "text_body.yaml").read_text()
    assert "recursive" in (folder / "post_tree.yaml").read_text()
    assert run_capc("compile", cwd=tmp_path).returncode == 0


ALL_OF = {
    "openapi": "3.0.3", "info": {"title": "Merge API", "version": "1"},
    "servers": [{"url": "https://api.example.com"}],
    "components": {"schemas": {
        "Base": {"type": "object", "required": ["status"], "properties": {
            "status": {"type": "string", "description": "The state"},
            "note": {"type": "string", "maxLength": 200}}},
    }},
    "paths": {"/tickets": {"post": {"operationId": "createTicket", "requestBody": {
        "required": True, "content": {"application/json": {"schema": {"allOf": [
            {"$ref": "#/components/schemas/Base"},
            {"type": "object", "properties": {
                "status": {"enum": ["open", "closed"]},
                "note": {"maxLength": 20},
                "count": {"type": "integer", "minimum": 1}}},
            {"properties": {"count": {"maximum": 9}}},
        ]}}}}}}},
}


def test_all_of_merges_every_parts_restrictions(tmp_path: Path) -> None:
    """SPEC §11 "allOf merged": a property restricted by several parts keeps every
    restriction (the tightest bound, the enum), so no request is invalid for the document."""
    spec = tmp_path / "merge.json"
    spec.write_text(json.dumps(ALL_OF))
    result = run_capc("import", "openapi", str(spec), "--all", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    import yaml

    written = yaml.safe_load(
        (tmp_path / "capabilities" / "merge_api" / "create_ticket.yaml").read_text())
    body = written["options"]["body"]
    assert body["status"]["enum"] == ["open", "closed"] and body["status"]["required"] is True
    assert body["status"]["description"] == "The state"
    assert body["note"]["max_length"] == 20
    assert (body["count"]["minimum"], body["count"]["maximum"]) == (1, 9)
    assert run_capc("compile", cwd=tmp_path).returncode == 0
