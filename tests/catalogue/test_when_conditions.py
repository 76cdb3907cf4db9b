"""``when:`` from YAML to ``resolve()``: compiled, then evaluated against real plugin tools."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from compiler.runtime import RuntimeContext, load_manifest
from compiler.runtime.tools.registry import ToolRegistry
from tests.support.catalogue import capability, write

TREE = {
    "crm.yaml": capability("crm", "when:\n  page_type: canvas\n"),
    "manage.yaml": capability("obviously_manage", """\
when:
  any:
    - subchat_direction: {in: [up, down]}
    - not: {page_type: chat}
"""),
    "memory.yaml": capability("memory", "when:\n  all: [{group_id: 5}, {beta: true}]\n"),
}


@pytest.fixture
def compiled(tmp_path: Path, run_capc: Callable) -> Path:
    for name, text in TREE.items():
        write(tmp_path / "capabilities" / name, text)
    result = run_capc(tmp_path, "compile", "--plugins", "-o", "m.json")
    assert result.returncode == 0, result.stderr
    return tmp_path / "m.json"


async def _resolve(path: Path, codes: list[str], ctx: RuntimeContext
                   ) -> tuple[list[str], dict[str, str]]:
    async with load_manifest(path, registry=ToolRegistry.discover()) as manifest:
        toolset = await manifest.resolve(codes, ctx)
    return sorted(t.name for t in toolset.tools), {s.code: s.reason for s in toolset.skipped}


async def test_true_condition_offers_the_plugin_tools(compiled: Path) -> None:
    tools, skipped = await _resolve(compiled, ["crm"], RuntimeContext(page_type="canvas"))
    assert tools == ["crm_create_contact", "crm_search_contacts"] and skipped == {}


async def test_false_condition_leaves_the_capability_out_with_the_reason(compiled: Path) -> None:
    tools, skipped = await _resolve(compiled, ["crm", "obviously_manage"],
                                    RuntimeContext(page_type="chat", subchat_direction="up"))
    assert tools == ["create_timer", "search_matters"]
    assert skipped == {"crm": "condition not met: page_type is 'chat', not 'canvas'"}
    tools, skipped = await _resolve(compiled, ["obviously_manage"],
                                    RuntimeContext(page_type="chat", subchat_direction="left"))
    assert tools == []
    assert skipped["obviously_manage"].startswith("condition not met: none of the alternatives")


async def test_missing_attribute_fails_closed(compiled: Path) -> None:
    tools, skipped = await _resolve(compiled, ["crm", "memory"], RuntimeContext(group_id=5))
    assert tools == []
    assert skipped == {"crm": "condition not met: context attribute 'page_type' is not set",
                       "memory": "condition not met: context attribute 'beta' is not set"}
    tools, _ = await _resolve(compiled, ["memory"], RuntimeContext(group_id=5, beta=True))
    assert tools == ["memory__recall", "memory__remember"]


INVALID = "invalid-condition]: "


@pytest.mark.parametrize(("when", "position", "message"), [
    ("when:\n  page_type: {gt: 3}\n", "7:14", INVALID + "test of 'page_type' may only use 'in'"),
    ("when: canvas\n", "6:7", "schema-type]: when: expected object, got string"),
    ("when:\n  not: [{page_type: chat}]\n", "7:8", INVALID + "expected a mapping, got list"),
    ("when:\n  all: []\n  page_type: x\n", "7:3", INVALID + "'all' must be the only key"),
    ("when:\n  page_type: {in: canvas}\n", "7:19", INVALID + "'in' of 'page_type' takes a list"),
    ("when:\n  any:\n    - user_id: '7'\n", "8:16", INVALID + "user_id is an integer"),
])
def test_invalid_expression_is_a_located_error(
    tmp_path: Path, run_capc: Callable, when: str, position: str, message: str
) -> None:
    write(tmp_path / "capabilities" / "c.yaml", capability("canvas", when))
    result = run_capc(tmp_path, "validate")
    assert result.returncode == 1
    assert f"capabilities/c.yaml:{position}: error[{message}" in result.stderr
