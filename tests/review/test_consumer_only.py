"""``consumer_only``: an override's parameter read from the tool call, not by the executor.

Issue 19, item 14. At compile time a declared parameter is not unbound (no warning); a
declaration that is false (no such parameter, or one the executor consumes) is an error;
an undeclared added parameter is still the warning. At run time the model is shown the
parameter, consumers read it from the tool call, and the executor never receives it:
neither a plugin tool that would accept the name nor an api endpoint (a real server on
127.0.0.1 records what arrived).
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from langchain.agents import create_agent
from langchain_core.messages import AIMessage
from langchain_core.tools import tool
from langchain_core.utils.function_calling import convert_to_openai_tool
from pydantic import BaseModel

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.agents import ScriptedChatModel
from tests.support.capc import run_capc
from tests.support.doc_blocks import code_blocks
from tests.support.runtime import (
    RecordingServer,
    internal_capability,
    recording_server,
    write_manifest,
)

CATEGORIES = ["memory:health", "memory:identity", "memory:preferences"]

LOOKUP = """\
apiVersion: capc/v1
kind: Capability
code: lookup
name: Lookup
type: api
options:
  description: Look something up
  url: {url}
  params:
    q: {{type: string, description: What to look up, required: true}}
"""

OVERRIDE = """\
apiVersion: capc/v1
kind: ToolOverride
tool: lookup
input_schema_patch:
  properties:
    audience: {{type: string, enum: [staff, customers]}}
    urgency: {{type: integer}}
{declaration}"""


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running


def compile_tree(tmp_path: Path, declaration: str, url: str = "https://api.example.com/v1",
                 strict: bool = True) -> Any:
    source = tmp_path / "src"
    source.mkdir(exist_ok=True)
    (source / "a-lookup.yaml").write_text(LOOKUP.format(url=url))
    (source / "b-override.yaml").write_text(OVERRIDE.format(declaration=declaration))
    options = CompileOptions(strict=strict, allow_private_networks=True)
    return build([str(source)], options=options, cwd=tmp_path, use_cache=False)


def found(result: Any) -> list[tuple[str, int, str, str]]:
    return [(Path(d.path).name, d.line, d.severity, d.code) for d in result.diagnostics]


def test_declared_parameters_compile_without_a_warning_and_undeclared_ones_still_warn(
    tmp_path: Path,
) -> None:
    declared = compile_tree(tmp_path, "consumer_only: [audience, urgency]\n")
    assert found(declared) == [] and declared.manifest is not None
    partly = compile_tree(tmp_path, "consumer_only: [audience]\n")
    # --strict turns the warning of the parameter nobody declared into an error.
    assert found(partly) == [("b-override.yaml", 7, "error", "override-unbound-parameter")]
    assert "'urgency'" in partly.diagnostics[0].message
    assert "consumer_only: [urgency]" in partly.diagnostics[0].message


@pytest.mark.parametrize(("declaration", "code", "named"), [
    ("consumer_only: [audience, urgency, topic]\n", "override-consumer-only-unknown", "'topic'"),
    ("consumer_only: [audience, urgency, q]\n", "override-consumer-only-bound", "'q'"),
])
def test_a_false_declaration_is_a_located_error(
    tmp_path: Path, declaration: str, code: str, named: str
) -> None:
    result = compile_tree(tmp_path, declaration)
    assert found(result) == [("b-override.yaml", 8, "error", code)]
    assert named in result.diagnostics[0].message and result.manifest is None


def test_consumer_only_must_be_a_list_of_names(tmp_path: Path) -> None:
    result = compile_tree(tmp_path, "consumer_only: audience\n")
    assert [(name, line) for name, line, _, _ in found(result)] == [("b-override.yaml", 8)]
    assert result.manifest is None


async def test_an_api_endpoint_never_receives_a_consumer_only_parameter(
    tmp_path: Path, server: RecordingServer
) -> None:
    result = compile_tree(tmp_path, "consumer_only: [audience, urgency]\n",
                          url=server.base_url + "/lookup", strict=False)
    # Only the loopback URL is reported (a warning under --allow-private-networks).
    assert [code for _, _, _, code in found(result)] == ["url-private-address"]
    path = tmp_path / "m.json"
    path.write_bytes(dump_manifest(result.manifest))
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        (lookup,) = (await manifest.resolve(["lookup"], RuntimeContext(user_id=1))).tools
        shown = convert_to_openai_tool(lookup)["function"]["parameters"]["properties"]
        assert shown["audience"]["enum"] == ["staff", "customers"]
        await lookup.ainvoke({"q": "tea", "audience": "staff", "urgency": 2})
    assert [request.raw_path for request in server.received] == ["/lookup?q=tea"]


class RememberInput(BaseModel):
    content: str
    category: str | None = None  # the executor would take it: the declaration must win


def memory_tree(tmp_path: Path, declared: bool) -> tuple[Any, list[dict[str, Any]]]:
    received: list[dict[str, Any]] = []

    @tool("memory__remember", args_schema=RememberInput)
    async def remember(content: str, category: str | None = None) -> str:
        """Store something in memory."""
        received.append({"content": content, **({"category": category} if category else {})})
        return "remembered"

    registry = ToolRegistry()
    registry.register_tools("memory", [remember])
    patch: dict[str, Any] = {"input_schema": {
        "type": "object",
        "properties": {"content": {"type": "string"},
                       "category": {"type": "string", "enum": CATEGORIES}},
        "required": ["content", "category"]}}
    if declared:
        patch["consumer_only"] = ["category"]
    override = {"tool": "memory__remember", "patch": patch, "lines": {"input_schema": 4},
                "source": {"path": "capabilities/overrides/20-memory-category.yaml", "line": 1}}
    path = write_manifest(tmp_path / "m.json", [internal_capability("memory")], [override])
    return load_manifest(path, registry=registry), received


@pytest.mark.parametrize("declared", [True, False])
async def test_an_agent_sets_the_parameter_consumers_read_and_the_executor_never_sees_it(
    tmp_path: Path, declared: bool
) -> None:
    manifest, received = memory_tree(tmp_path, declared)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({}))
    tools = (await manifest.resolve(["memory"], ctx)).tools
    arguments = {"content": "allergic to nuts", "category": "memory:health"}
    model = ScriptedChatModel(script=[
        AIMessage(content="", tool_calls=[{"name": "memory__remember", "args": arguments,
                                           "id": "c1"}]),
        AIMessage(content="done")])
    result = await create_agent(model, tools).ainvoke({"messages": [("user", "remember")]})
    (bound,) = model.bound_tools[0]
    parameters = bound["function"]["parameters"]
    assert parameters["properties"]["category"]["enum"] == CATEGORIES
    assert parameters["required"] == ["content", "category"]
    # What consumer code reads: the category in the model's tool call.
    calls = [call for message in result["messages"] if isinstance(message, AIMessage)
             for call in message.tool_calls]
    assert [call["args"] for call in calls] == [arguments]
    # What the executor got: without the declaration it would have taken the category.
    expected = {"content": "allergic to nuts"}
    assert received == ([expected] if declared else [arguments])


def test_the_shipped_tree_restores_the_category_override() -> None:
    shipped = Path(__file__).parents[2] / "capabilities" / "overrides" / "20-memory-category.yaml"
    text = shipped.read_text()
    assert "consumer_only: [category]" in text
    assert f"enum: {json.dumps(CATEGORIES)}" in text


def test_the_docs_block_compiles_strictly_against_the_installed_plugin(tmp_path: Path) -> None:
    pytest.importorskip("capc_test_plugin", reason="make installs tests/plugins/* into the venv")
    page = Path(__file__).parents[2] / "docs" / "overrides.md"
    (block,) = [block for block in code_blocks(page)
                if block.lang == "yaml" and "consumer_only" in block.text]
    source = tmp_path / "src"
    source.mkdir()
    (source / "a-memory.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: memory\nname: Memory\ntype: internal\n")
    (source / "b-category.yaml").write_text(block.text)
    compiled = run_capc("compile", "src", "-o", "m.json", "--plugins", "--strict", cwd=tmp_path)
    assert compiled.returncode == 0 and compiled.stderr == "no problems found\n", compiled.stderr
    (pending,) = json.loads((tmp_path / "m.json").read_text())["overrides"]
    assert pending["patch"]["consumer_only"] == ["category"]
    # Without the declaration, the same block is the unbound-parameter finding.
    (source / "b-category.yaml").write_text(block.text.replace("consumer_only: [category]\n", ""))
    again = run_capc("compile", "src", "-o", "m.json", "--plugins", "--strict", cwd=tmp_path)
    assert again.returncode != 0 and "error[override-unbound-parameter]" in again.stderr
