"""Every name Python, pydantic, LangChain and LangGraph claim works as an api argument.

The names are read from the installed packages (keywords, BaseModel's attributes, the
parameters of ``BaseTool.run`` and ``StructuredTool._run``, LangGraph's ToolRuntime and
Runtime fields), plus names beginning with ``_``. A tree using all of them compiles without
a diagnostic; the model is shown the declared names; and the request a loopback server
records carries every value, through ``ainvoke``, ``invoke`` and LangGraph agents run
both ways. capc refuses none of them: argument-model fields are positional names aliased
to the declared ones, so no declared name ever becomes a Python identifier.
"""

from __future__ import annotations

import dataclasses
import inspect
import json
import keyword
import re
from pathlib import Path
from typing import Any
from urllib.parse import parse_qsl

import pytest
from langchain.agents import create_agent
from langchain_core.tools import BaseTool, StructuredTool
from langchain_core.tools.base import FILTERED_ARGS
from langchain_core.utils.function_calling import convert_to_openai_tool
from langgraph.prebuilt import ToolRuntime
from langgraph.runtime import Runtime
from pydantic import BaseModel

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime import RuntimeContext, ToolRegistry, load_manifest
from tests.support.agents import ScriptedChatModel, tool_call
from tests.support.runtime import RecordingServer

NAME_PATTERN = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")  # capability-v1.json's


def _claimed_names() -> dict[str, set[str]]:
    return {
        "python": {*keyword.kwlist, *keyword.softkwlist, "self", "cls", "__class__",
                   "__dict__", "__init__"},
        "pydantic": {*dir(BaseModel), "Config", "fields", "model_anything", "schema_json"},
        "langchain": {*FILTERED_ARGS, *inspect.signature(BaseTool.run).parameters,
                      *inspect.signature(StructuredTool._run).parameters,
                      "args", "kwargs", "type", "id", "name", "InjectedToolArg"},
        "langgraph": {*(field.name for field in dataclasses.fields(ToolRuntime)),
                      *(field.name for field in dataclasses.fields(Runtime)),
                      "runtime", "tool_runtime", "writer", "messages", "remaining_steps"},
        "underscore": {"_", "_private", "__dunder__", "_sunder_"},
    }


CLAIMED = _claimed_names()
NAMES = sorted({name for names in CLAIMED.values() for name in names if NAME_PATTERN.match(name)})


def value_of(name: str) -> str:
    return f"v-{name}"


def write_tree(root: Path, base_url: str) -> Path:
    """One GET tool taking every name in the query, one POST tool in a JSON body (with a
    path slot and a template slot named like reserved words)."""
    # Quoted: YAML reads a bare True or False key as a boolean.
    params = "".join(f"    '{name}':\n      type: string\n      required: true\n"
                     for name in NAMES)
    (root / "src").mkdir()
    (root / "src" / "query.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: query_names\nname: Query names\n"
        "type: api\noptions:\n  description: Every reserved name in the query\n"
        f"  url: {base_url}/query\n  params:\n{params}", encoding="utf-8")
    (root / "src" / "body.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: body_names\nname: Body names\n"
        "type: api\noptions:\n  description: Reserved names in a path slot and a template\n"
        f"  method: POST\n  url: {base_url}/items/{{self}}/{{class}}\n"
        "  body_template:\n    config: '{config}'\n    run_manager: '{run_manager}'\n"
        "    nested: {runtime: '{runtime}', model_config: '{model_config}'}\n"
        "  body_params:\n"
        "    config: {type: string, required: true}\n"
        "    run_manager: {type: integer, required: true}\n"
        "    runtime: {type: boolean, required: true}\n"
        "    model_config: {type: string, required: true}\n", encoding="utf-8")
    result = build([str(root / "src")], options=CompileOptions(allow_private_networks=True),
                   use_cache=False)
    errors = [found for found in result.diagnostics if found.severity.value == "error"]
    assert errors == [], [f"{found.line}: {found.code}: {found.message}" for found in errors]
    assert result.manifest is not None
    out = root / "manifest.json"
    out.write_bytes(dump_manifest(result.manifest))
    return out


BODY_ARGUMENTS = {"self": "a/b", "class": "c", "config": "strict", "run_manager": 7,
                  "runtime": True, "model_config": "m"}
BODY_EXPECTED = {"config": "strict", "run_manager": 7,
                 "nested": {"runtime": True, "model_config": "m"}}


async def tools_of(tmp_path: Path, server: RecordingServer) -> tuple[Any, dict[str, Any]]:
    manifest = load_manifest(write_tree(tmp_path, server.base_url), registry=ToolRegistry(),
                             allow_private_networks=True)
    toolset = await manifest.resolve(["query_names", "body_names"], RuntimeContext(user_id=1))
    assert toolset.skipped == ()
    return manifest, {tool.name: tool for tool in toolset.tools}


def query_of(server: RecordingServer, index: int = -1) -> dict[str, str]:
    return dict(parse_qsl(server.received[index].query, keep_blank_values=True))


def test_the_matrix_covers_every_family() -> None:
    for family, names in CLAIMED.items():
        assert {name for name in names if NAME_PATTERN.match(name)}, family
    for name in ("self", "config", "run_manager", "callbacks", "runtime", "Config",
                 "model_config", "model_fields", "schema", "json", "dict", "copy", "construct",
                 "validate", "fields", "tags", "metadata", "run_name", "run_id",
                 "tool_call_id", "state", "store", "writer", "tool_runtime", "class", "from",
                 "def", "_private"):
        assert name in NAMES, name


async def test_every_name_reaches_the_model_and_the_request(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tools = await tools_of(tmp_path, server)
    query, body = tools["query_names"], tools["body_names"]
    shown = convert_to_openai_tool(query)["function"]["parameters"]
    assert sorted(shown["properties"]) == NAMES and sorted(shown["required"]) == NAMES
    assert sorted(convert_to_openai_tool(body)["function"]["parameters"]["properties"]) == sorted(
        BODY_ARGUMENTS)
    arguments = {name: value_of(name) for name in NAMES}
    async with manifest:
        assert await query.ainvoke(arguments) == '{"ok": true}'
        assert query_of(server) == arguments
        assert query.invoke(arguments) == '{"ok": true}'
        assert query_of(server) == arguments
        assert await body.ainvoke(BODY_ARGUMENTS) == '{"ok": true}'
        assert body.invoke(BODY_ARGUMENTS) == '{"ok": true}'
    for request in server.received[2:]:
        assert request.path == "/items/a%2Fb/c"
        assert json.loads(request.body) == BODY_EXPECTED


async def test_a_wrong_value_for_a_reserved_name_is_refused_by_its_declared_name(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tools = await tools_of(tmp_path, server)
    async with manifest:
        output = await tools["body_names"].ainvoke({**BODY_ARGUMENTS, "run_manager": "many"})
        extra = await tools["body_names"].ainvoke({**BODY_ARGUMENTS, "argument_0": "x"})
    assert output.startswith("Error: invalid arguments for body_names: run_manager:")
    assert extra.startswith("Error: invalid arguments for body_names: argument_0:")
    assert server.received == []


async def test_an_argument_named_type_is_not_mistaken_for_a_tool_call(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, tools = await tools_of(tmp_path, server)
    arguments = {**{name: value_of(name) for name in NAMES}, "type": "tool_call"}
    async with manifest:
        assert tools["query_names"].invoke(arguments) == '{"ok": true}'
        assert await tools["query_names"].ainvoke(arguments) == '{"ok": true}'
    assert query_of(server, 0)["type"] == query_of(server, 1)["type"] == "tool_call"


@pytest.mark.parametrize("mode", ["sync", "async"])
async def test_a_langgraph_agent_sends_every_name(
    server: RecordingServer, tmp_path: Path, mode: str
) -> None:
    manifest, tools = await tools_of(tmp_path, server)
    arguments = {name: value_of(name) for name in NAMES}
    model = ScriptedChatModel(script=[
        tool_call("query_names", arguments, "call_q"),
        tool_call("body_names", BODY_ARGUMENTS, "call_b"),
        tool_call("done", {}, "unused").model_copy(update={"tool_calls": [], "content": "done"}),
    ])
    agent = create_agent(model, list(tools.values()))
    question = {"messages": [{"role": "user", "content": "go"}]}
    async with manifest:
        result = agent.invoke(question) if mode == "sync" else await agent.ainvoke(question)
    statuses = [(m.name, m.status, m.content) for m in result["messages"] if m.type == "tool"]
    assert statuses == [("query_names", "success", '{"ok": true}'),
                        ("body_names", "success", '{"ok": true}')]
    assert query_of(server, 0) == arguments
    assert json.loads(server.received[1].body) == BODY_EXPECTED
    shown = {tool["function"]["name"]: tool["function"]["parameters"]
             for tool in model.bound_tools[0]}
    assert sorted(shown["query_names"]["properties"]) == NAMES
