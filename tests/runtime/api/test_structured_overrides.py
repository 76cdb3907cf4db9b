"""ToolOverride reaches nested parameters (SPEC §10): ``input_schema_patch`` patches any
depth, the unbound-parameter warning and the call-time drop of §2.2 see nested fields."""

from __future__ import annotations

import json
from pathlib import Path

from compiler.runtime import ToolOverride
from tests.support.runtime import RecordingServer
from tests.support.structured import (
    call_tool,
    compile_problems,
    compile_yaml,
    context,
    manifest_file,
)

TOOL = """\
apiVersion: capc/v1
kind: Capability
code: order
name: Order
type: api
options:
  description: Create an order
  method: POST
  url: BASE/v1/orders
  body:
    items:
      type: array
      required: true
      items:
        type: object
        properties:
          sku: {type: string, required: true}
          quantity: {type: integer, minimum: 1, maximum: 10}
"""

PATCH = """\
---
apiVersion: capc/v1
kind: ToolOverride
tool: order
input_schema_patch:
  properties:
    items:
      description: What to order
      items:
        properties:
          quantity: {maximum: 3, description: How many}
"""

ADDS_A_FIELD = """\
---
apiVersion: capc/v1
kind: ToolOverride
tool: order
input_schema_patch:
  properties:
    items:
      items:
        properties:
          discount: {type: number}
"""


def test_a_nested_patch_reaches_the_field_and_records_provenance(tmp_path: Path) -> None:
    manifest = compile_yaml(tmp_path, TOOL + PATCH)
    (capability,) = manifest["capabilities"]
    items = capability["tool"]["input_schema"]["properties"]["items"]
    assert items["description"] == "What to order"
    assert items["items"]["properties"]["quantity"] == {
        "type": "integer", "minimum": 1, "maximum": 3, "description": "How many"}
    assert capability["tool"]["overrides"][0]["fields"] == ["input_schema_patch"]


async def test_a_patched_nested_bound_is_enforced_by_field_path(
        tmp_path: Path, server: RecordingServer) -> None:
    path = manifest_file(tmp_path, TOOL + PATCH, server.base_url)
    answer = await call_tool(path, "order", {"items": [{"sku": "a", "quantity": 5}]})
    assert "items[0].quantity:" in answer and answer.startswith("Error")
    assert server.received == []


def test_a_nested_field_the_source_never_declared_is_warned_about(tmp_path: Path) -> None:
    problems = compile_problems(tmp_path, TOOL.replace("BASE", "https://api.example.com")
                                + ADDS_A_FIELD)
    assert problems == ["override-unbound-parameter: field 'items[].discount' is not in the "
                        "source's declaration of 'items': the model may send it, and it is "
                        "dropped before the request"]


async def test_a_nested_field_an_override_added_is_dropped_before_the_request(
        tmp_path: Path, server: RecordingServer) -> None:
    path = manifest_file(tmp_path, TOOL + ADDS_A_FIELD, server.base_url)
    answer = await call_tool(path, "order", {"items": [{"sku": "a", "discount": 0.5}]})
    assert not answer.startswith("Error"), answer
    assert json.loads(server.last().body) == {"items": [{"sku": "a"}]}


async def test_a_runtime_override_adding_a_nested_field_is_dropped_too(
        tmp_path: Path, server: RecordingServer) -> None:
    from compiler.runtime import ToolRegistry, load_manifest

    path = manifest_file(tmp_path, TOOL, server.base_url)
    override = ToolOverride("order", input_schema_patch={"properties": {"items": {"items": {
        "properties": {"note": {"type": "string"}}}}}})
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        toolset = await manifest.resolve(["order"], context(), overrides=[override])
        (tool,) = toolset.tools
        assert "note" in tool.tool_call_schema["properties"]["items"]["items"]["properties"]
        await tool.ainvoke({"items": [{"sku": "b", "note": "hi", "quantity": 2}]})
    assert json.loads(server.last().body) == {"items": [{"quantity": 2, "sku": "b"}]}
