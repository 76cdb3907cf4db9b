"""Only ``True`` approves a gated MCP call (issue 19, item 12).

The gated tool runs against the real MCP server on 127.0.0.1; what is asserted is whether
the server was called, for each answer an ``approve`` callback may give.
"""

from __future__ import annotations

from typing import Any

import pytest

from tests.support.pinning import Pinned, resolve

REFUSING = {"the string no": "no", "a list holding False": [False], "None": None,
            "the number 1": 1, "a non-empty dict": {"approved": True}, "False": False,
            "the string True": "True"}


async def gated_add(pinned: Pinned, approve: Any) -> Any:
    toolset = await resolve(pinned.manifest, ["gated"], approve=approve)
    result = await toolset.client_mcp_tools(timeout=10)
    assert [tool.name for tool in result.tools] == ["add"]
    return result.tools[0]


@pytest.mark.parametrize("label", sorted(REFUSING))
async def test_any_answer_but_true_refuses_the_call(pinned: Pinned, label: str) -> None:
    asked: list[str] = []

    async def approve(tool_name: str, args: dict[str, Any]) -> Any:
        asked.append(tool_name)
        return REFUSING[label]

    add = await gated_add(pinned, approve)
    calls_before = len(pinned.server.calls)
    text = str(await add.ainvoke({"a": 2, "b": 2}))
    assert asked == ["add"]
    assert text == "Error: the call to add was not approved"
    assert len(pinned.server.calls) == calls_before


@pytest.mark.parametrize("style", ["async", "plain"])
async def test_true_approves_the_call(pinned: Pinned, style: str) -> None:
    async def approve_async(tool_name: str, args: dict[str, Any]) -> bool:
        return True

    def approve_plain(tool_name: str, args: dict[str, Any]) -> bool:
        return True

    add = await gated_add(pinned, approve_async if style == "async" else approve_plain)
    assert "4" in str(await add.ainvoke({"a": 2, "b": 2}))
    assert pinned.server.calls[-1] == ("add", {"a": 2, "b": 2})
