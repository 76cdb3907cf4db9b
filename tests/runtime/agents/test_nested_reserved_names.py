"""Reserved names keep working at every depth (SPEC §9 with §10): a nested object whose
fields are the names Python, pydantic, LangChain and LangGraph claim reaches the request
whole, through ``ainvoke`` and ``invoke``; and an argument object named ``args`` beside a
``type`` of "tool_call" is the tool's own arguments, not a ToolCall."""

from __future__ import annotations

import json
import keyword
import re
from pathlib import Path
from typing import Any

from langchain_core.tools.base import FILTERED_ARGS
from pydantic import BaseModel

from compiler.runtime import ToolRegistry, load_manifest
from tests.support.runtime import RecordingServer
from tests.support.structured import context, manifest_file

FIELD_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_-]{0,63}$")  # capability-v1.json's
NAMES = sorted(name for name in {*keyword.kwlist, *keyword.softkwlist, "self", "cls",
                                 *dir(BaseModel), *FILTERED_ARGS, "args", "kwargs", "type",
                                 "id", "name", "config", "callbacks", "run_manager",
                                 "runtime", "tool_call_id", "__pydantic_extra__",
                                 "model_config", "schema", "_private"}
               if FIELD_PATTERN.match(name))


def tree() -> str:
    fields = "\n".join(f"            {json.dumps(name)}: {{type: string}}" for name in NAMES)
    return f"""\
apiVersion: capc/v1
kind: Capability
code: nested_names
name: Nested Names
type: api
options:
  description: Send reserved names in a nested object
  method: POST
  url: BASE/v1/names
  body:
    type: {{type: string}}
    args:
      type: object
      properties:
        inner:
          type: object
          properties:
{fields}
"""


async def test_every_reserved_name_travels_at_depth_both_ways(
        tmp_path: Path, server: RecordingServer) -> None:
    assert len(NAMES) > 100
    inner = {name: f"v-{name}" for name in NAMES}
    arguments: dict[str, Any] = {"type": "tool_call", "args": {"inner": inner}}
    manifest = load_manifest(manifest_file(tmp_path, tree(), server.base_url),
                             registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        (tool,) = (await manifest.resolve(["nested_names"], context())).tools
        shown = tool.tool_call_schema["properties"]["args"]["properties"]["inner"]
        assert sorted(shown["properties"]) == NAMES
        assert await tool.ainvoke(arguments) == '{"ok": true}'
        assert tool.invoke(arguments) == '{"ok": true}'
    for request in server.received:
        assert json.loads(request.body) == arguments
    assert len(server.received) == 2
