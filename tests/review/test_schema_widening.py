"""``capc diff`` reports nested input-schema changes by field path and flags every one
that lets the model send more as security-relevant (SPEC §10)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.review.diff import SECURITY_RANKS, diff_manifests
from compiler.review.diff_report import render_text
from tests.support.structured import compile_yaml

CHECKOUT = """\
apiVersion: capc/v1
kind: Capability
code: checkout
name: Checkout
type: api
options:
  description: Create a checkout
  method: POST
  url: https://api.example.com/v1/checkout
  body:
    line_items:
      type: array
      required: true
      max_items: 10
      items:
        type: object
        properties:
          price: {type: string, required: true, pattern: "^price_[a-z0-9]+$"}
          quantity: {type: integer, minimum: 1, maximum: 10}
          mode: {type: string, enum: [payment, setup]}
    metadata:
      type: object
      properties:
        order: {type: string, max_length: 40}
"""

WIDENINGS = [
    ("maximum: 10}", "maximum: 99}",
     "line_items[].quantity: maximum raised from 10 to 99"),
    ("minimum: 1, ", "minimum: 0, ", "line_items[].quantity: minimum lowered from 1 to 0"),
    ("enum: [payment, setup]", "enum: [payment, setup, subscription]",
     "line_items[].mode: enum widened with ['subscription']"),
    ("{type: string, enum: [payment, setup]}", "{type: string}",
     "line_items[].mode: enum restriction removed"),
    ('pattern: "^price_[a-z0-9]+$"', 'pattern: "^price_.+$"',
     "line_items[].price: pattern changed from '^price_[a-z0-9]+$' to '^price_.+$'"),
    ("      max_items: 10\n", "", "line_items: maxItems 10 removed"),
    ("        order: {type: string, max_length: 40}\n",
     "        order: {type: string, max_length: 40}\n      additional_properties: {type: string}\n",
     "metadata: a closed object opened to any key"),
    ("          mode:", "          coupon: {type: string}\n          mode:",
     "line_items[]: new field(s) ['coupon']"),
    ("order: {type: string, max_length: 40}", "order: {type: string, max_length: 40, "
     "nullable: true}", "metadata.order: type widened from 'string' to ['string', 'null']"),
]


@pytest.mark.parametrize(("old", "new", "message"), WIDENINGS,
                         ids=[message.split(":")[1].strip() for *_, message in WIDENINGS])
def test_a_nested_widening_is_security_relevant_by_field_path(
        tmp_path: Path, old: str, new: str, message: str) -> None:
    assert old in CHECKOUT
    before = compile_yaml(tmp_path / "old", CHECKOUT)
    after = compile_yaml(tmp_path / "new", CHECKOUT.replace(old, new))
    diff = diff_manifests(before, after)
    findings = [(f.kind, f.message) for f in diff.security]
    assert ("input-schema-widened", f"the model may send more: {message}") in findings
    rank = SECURITY_RANKS["input-schema-widened"]
    assert f"[{rank}] input-schema-widened checkout: the model may send more: {message}" \
        in render_text(diff)


@pytest.mark.parametrize(("old", "new"), [
    ("maximum: 10}", "maximum: 5}"),
    ("enum: [payment, setup]", "enum: [payment]"),
    ("order: {type: string, max_length: 40}", "order: {type: string, max_length: 20}"),
    ("          mode: {type: string, enum: [payment, setup]}\n", ""),
])
def test_a_narrowing_is_reported_as_a_change_but_not_as_a_widening(
        tmp_path: Path, old: str, new: str) -> None:
    before = compile_yaml(tmp_path / "old", CHECKOUT)
    after = compile_yaml(tmp_path / "new", CHECKOUT.replace(old, new))
    diff = diff_manifests(before, after)
    assert [f for f in diff.security if f.kind == "input-schema-widened"] == []
    (entry,) = diff.entries
    paths: list[Any] = [change.path for change in entry.fields]
    assert any(path.startswith("tool.input_schema.properties.") for path in paths), paths


def test_the_text_report_names_nested_changes_by_field_path(tmp_path: Path) -> None:
    before = compile_yaml(tmp_path / "old", CHECKOUT)
    after = compile_yaml(tmp_path / "new", CHECKOUT.replace("maximum: 10}", "maximum: 99}"))
    diff = diff_manifests(before, after)
    assert "    tool.input_schema: line_items[].quantity maximum: 10 → 99" in \
        render_text(diff).splitlines()
    (entry,) = diff.entries  # the JSON keeps the raw path
    assert [c.path for c in entry.fields] == [
        "tool.input_schema.properties.line_items.items.properties.quantity.maximum"]
