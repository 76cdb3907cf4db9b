"""The published capability schema describes nested parameter entries (SPEC §10): an
editor completes and checks them at every depth, and capc reports a mistake deep inside
one as a schema diagnostic."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from jsonschema import Draft202012Validator

from compiler.schema.validation import schema_text
from tests.support.structured import compile_problems

SCHEMA = json.loads(schema_text("Capability"))
HEAD = """\
apiVersion: capc/v1
kind: Capability
code: a
name: a
type: api
options:
  description: d
  method: POST
  url: https://api.example.com/v1
  body:
    items:
      type: array
      items:
        type: object
        properties:
          price:
"""


def test_the_schema_is_a_valid_json_schema_with_recursive_entries() -> None:
    Draft202012Validator.check_schema(SCHEMA)
    definitions = SCHEMA["$defs"]
    assert definitions["parameter"]["properties"]["items"]["$ref"] == "#/$defs/parameterItems"
    assert "required" in definitions["parameterField"]["properties"]
    assert "required" not in definitions["parameterItems"]["properties"]
    assert "style" not in definitions["parameterField"]["properties"]


@pytest.mark.parametrize(("line", "expected"), [
    ("            type: strin\n", "schema-value"),
    ("            min_itmes: 3\n", "schema-unknown-key"),
    # typed object: an untyped entry (a string) with properties is also a semantic error,
    # which a schema error no longer hides (issue 21)
    ("            type: object\n            properties: {a: {typo: 1}}\n", "schema-unknown-key"),
])
def test_a_mistake_deep_inside_an_entry_is_refused_by_the_schema(
        tmp_path: Path, line: str, expected: str) -> None:
    problems = compile_problems(tmp_path, HEAD + line)
    assert len(problems) == 1 and problems[0].startswith(expected), problems


def test_a_schema_valid_nested_tree_compiles_cleanly(tmp_path: Path) -> None:
    assert compile_problems(tmp_path, HEAD + "            type: string\n"
                            "            required: true\n") == []
