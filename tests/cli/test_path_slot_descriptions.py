"""A URL slot without a described path_params entry is described by where it goes."""

from __future__ import annotations

from pathlib import Path

from compiler.build import build

CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: read_item
name: Read item
type: api
options:
  description: Read one item
  method: DELETE
  url: https://api.example.com/v1/{group}/items/{item_id}?verbose=1
  path_params:
    group: {type: string, description: The owning group}
    item_id: {type: integer}
"""


def test_slots_get_a_description_unless_they_have_one(tmp_path: Path) -> None:
    (tmp_path / "a.yaml").write_text(CAPABILITY, encoding="utf-8")
    (tmp_path / "b.yaml").write_text(
        CAPABILITY.replace("code: read_item", "code: read_other").replace(
            "  description: Read one item", "  name: read_other\n  description: Read one")
        .replace("  path_params:\n    group: {type: string, description: The owning group}\n"
                 "    item_id: {type: integer}\n", ""),
        encoding="utf-8")
    result = build([str(tmp_path)], use_cache=False)
    assert result.manifest is not None, result.diagnostics
    schemas = {entry["code"]: entry["tool"]["input_schema"]["properties"]
               for entry in result.manifest["capabilities"]}
    assert schemas["read_item"] == {
        "group": {"type": "string", "description": "The owning group"},
        "item_id": {"type": "integer",
                    "description": "path segment `item_id` of DELETE /v1/{group}/items/{item_id}"},
    }
    assert schemas["read_other"] == {
        name: {"type": "string",
               "description": f"path segment `{name}` of DELETE /v1/{{group}}/items/{{item_id}}"}
        for name in ("group", "item_id")
    }
