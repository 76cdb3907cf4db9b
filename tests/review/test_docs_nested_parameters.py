"""``capc docs`` renders nested parameters readably: one row per nested field, by field
path, with its type, requiredness, default and query style (SPEC §10)."""

from __future__ import annotations

from pathlib import Path

from compiler.review.docs import render_catalogue
from compiler.runtime.manifest.model import parse_manifest_document
from tests.support.paths import REPO_ROOT
from tests.support.structured import compile_yaml

CASE = REPO_ROOT / "tests" / "cases" / "good" / "api-structured" / "src" / "issues.yaml"


def test_nested_fields_get_rows_by_field_path(tmp_path: Path) -> None:
    model = parse_manifest_document(compile_yaml(tmp_path, CASE.read_text()))
    text = render_catalogue(model)
    for row in [
        "| `labels` | array of string, comma in the query | no | — | query | Labels to filter by",
        "| `filter` | object, deep object in the query | no | — | query |",
        "| `filter.state` | string | yes | — | query |",
        "| `line_items` | array of object | yes | — | body |",
        "| `line_items[].price` | string | yes | — | body | The price id |",
        "| `line_items[].quantity` | integer | no | `1` | body |",
        "| `metadata.*` | any key: string | no | — | body |",
        "| `reason` | string or null | no | — | body | Why the labels are added |",
        "| `payload.user.id` | integer | yes | — | template |",
    ]:
        assert row in text, row
