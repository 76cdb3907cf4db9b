"""OpenAI namespaces on the wire: a profile's declared namespace reaches the Responses API
through the real langchain-openai client driven by ``create_agent``, against a loopback
look-alike of the API. Each recorded request validates against the SDK request types with
no unknown keys, carries the namespace's deferred functions inside one ``namespace``
entry (its members nowhere else), and a function call the model makes inside the
namespace runs the right capc tool, whose output goes back with the call's id."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from langchain.agents import create_agent
from langchain_anthropic import ChatAnthropic
from langchain_core.tools import StructuredTool
from langchain_openai import ChatOpenAI
from openai.types.responses import NamespaceToolParam, ResponseFunctionToolCall
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, attach_mcp, load_manifest
from compiler.runtime.loading_policy import LoadingPolicy, openai_namespaced
from tests.support.agents import (
    anthropic_text,
    openai_function_call,
    openai_text,
    provider_server,
    request_bodies,
    unknown_keys,
)
from tests.support.runtime import (
    RecordingServer,
    api_capability,
    internal_capability,
    manifest_document,
    mcp_capability,
    seal,
)

OPENAI_REQUEST = TypeAdapter(ResponseCreateParamsNonStreaming)
NAMESPACE = TypeAdapter(NamespaceToolParam)
QUESTION = {"messages": [{"role": "user", "content": "who is Ada?"}]}
QUERY = {"q": {"type": "string", "description": "Search text"}}
ARGUMENTS = {"q": {"bindings": ["query"], "type": "string"}}
CRM = {"type": "namespace", "name": "crm",
       "description": "Contacts in the CRM: look them up and create them."}


def write_manifest(path: Path, base_url: str) -> Path:
    capabilities = [
        api_capability("search", base_url + "/search", properties=QUERY, arguments=ARGUMENTS),
        api_capability("crm_lookup", base_url + "/crm", properties=QUERY, arguments=ARGUMENTS,
                       description="Look a contact up by name."),
        api_capability("crm_create", base_url + "/create", properties=QUERY,
                       arguments=ARGUMENTS, method="POST", description="Create a contact."),
        api_capability("ticket", base_url + "/ticket", properties=QUERY, arguments=ARGUMENTS),
        mcp_capability("deepwiki"),
        internal_capability("notes"),
    ]
    document = manifest_document(capabilities)
    document["profiles"] = [{
        "name": "support-bot", "description": "The support agent",
        "capabilities": ["search", "crm_lookup", "crm_create", "ticket", "deepwiki", "notes"],
        "deferred": ["crm_lookup", "crm_create", "ticket", "deepwiki"], "budget": {},
        "namespaces": [{"name": CRM["name"], "description": CRM["description"],
                        "capabilities": ["crm_lookup", "crm_create"]}],
        "source": {"path": "capabilities/profiles.yaml", "line": 1},
    }]
    path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
    return path


def notes_tool() -> StructuredTool:
    def take_note(text: str) -> str:
        """Write a note."""
        return "noted"

    return StructuredTool.from_function(take_note, name="take_note")


async def resolved(tmp_path: Path, api: RecordingServer) -> tuple[Any, Any]:
    registry = ToolRegistry()
    registry.register_tools("notes", [notes_tool()])
    manifest = load_manifest(write_manifest(tmp_path / "m.json", api.base_url),
                             registry=registry, allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, group_id=2, chat_id=3, settings=StaticSettings({}))
    return manifest, await manifest.resolve_profile("support-bot", ctx)


def namespaced_call(namespace: str, name: str, arguments: dict[str, Any]) -> dict[str, Any]:
    """A Responses API answer calling ``name`` inside ``namespace`` (the SDK's shape)."""
    answer = openai_function_call(name, arguments)
    answer["output"][0]["namespace"] = namespace
    ResponseFunctionToolCall.model_validate(answer["output"][0])
    return answer


def summary(tools: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    """Each top-level entry as (type, name or label, defer_loading, member names)."""
    return [(tool["type"], tool.get("name") or tool.get("server_label"),
             tool.get("defer_loading"),
             [(member["name"], member.get("defer_loading")) for member in tool.get("tools", [])])
            for tool in tools]


async def test_a_namespaced_call_runs_the_right_tool_and_its_output_goes_back(
    server: RecordingServer, tmp_path: Path
) -> None:
    server.responder = lambda request: (200, {"Content-Type": "application/json"},
                                        json.dumps({"seen": request.raw_path}).encode())
    manifest, toolset = await resolved(tmp_path, server)
    answers = [namespaced_call("crm", "crm_lookup", {"q": "Ada"}), openai_text("Ada is a client")]
    async with manifest:
        with provider_server(answers) as provider:
            model = ChatOpenAI(model="gpt-5.4", api_key="sk-test", max_retries=0,
                               base_url=provider.base_url + "/v1", use_responses_api=True)
            model, tools = attach_mcp(model, toolset)
            agent = create_agent(model, tools, middleware=[toolset.namespace_middleware()])
            result = await agent.ainvoke(QUESTION)
    assert result["messages"][-1].text == "Ada is a client"
    # The namespaced call ran crm_lookup, and only it.
    assert [request.raw_path for request in server.received] == ["/crm?q=Ada"]
    bodies = request_bodies(provider)
    assert len(bodies) == 2
    for body in bodies:
        OPENAI_REQUEST.validate_python(body)
        assert unknown_keys(body, ResponseCreateParamsNonStreaming) == []
        assert summary(body["tools"]) == [
            ("function", "search", None, []),
            ("namespace", "crm", None, [("crm_lookup", True), ("crm_create", True)]),
            ("function", "ticket", True, []),
            ("function", "take_note", None, []),
            ("mcp", "deepwiki", True, []),
            ("tool_search", None, None, []),
        ]
        (namespace,) = [tool for tool in body["tools"] if tool["type"] == "namespace"]
        NAMESPACE.validate_python(namespace)
        assert unknown_keys(namespace, NamespaceToolParam) == []
        assert {key: namespace[key] for key in CRM} == CRM
        assert namespace["tools"][0]["description"] == "Look a contact up by name."
        assert namespace["tools"][0]["parameters"]["properties"] == QUERY
    # The second request replays the call with its namespace and answers it by call id.
    items = {item["type"]: item for item in bodies[1]["input"] if "type" in item}
    assert items["function_call"]["namespace"] == "crm"
    assert items["function_call"]["name"] == "crm_lookup"
    output = items["function_call_output"]
    assert output["call_id"] == items["function_call"]["call_id"] == "call_1"
    assert json.loads(output["output"]) == {"seen": "/crm?q=Ada"}  # what crm_lookup got back


async def test_without_the_middleware_the_namespace_tools_stay_plain_deferred_functions(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset = await resolved(tmp_path, server)
    async with manifest:
        with provider_server([openai_text("hello")]) as provider:
            model = ChatOpenAI(model="gpt-5.4", api_key="sk-test", max_retries=0,
                               base_url=provider.base_url + "/v1", use_responses_api=True)
            model, tools = attach_mcp(model, toolset)
            await create_agent(model, tools).ainvoke(QUESTION)
    (body,) = request_bodies(provider)
    assert [entry[:3] for entry in summary(body["tools"])] == [
        ("function", "search", None), ("function", "crm_lookup", True),
        ("function", "crm_create", True), ("function", "ticket", True),
        ("function", "take_note", None), ("mcp", "deepwiki", True), ("tool_search", None, None)]


async def test_anthropic_models_get_the_tools_as_they_are(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset = await resolved(tmp_path, server)
    async with manifest:
        with provider_server([anthropic_text("hello")]) as provider:
            model = ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-ant-test",
                                  base_url=provider.base_url, max_retries=0)
            model, tools = attach_mcp(model, toolset)
            await create_agent(model, tools,
                               middleware=[toolset.namespace_middleware()]).ainvoke(QUESTION)
    (body,) = request_bodies(provider)
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(body)
    assert "namespace" not in {tool.get("type") for tool in body["tools"]}
    assert {tool.get("name") for tool in body["tools"]} >= {"crm_lookup", "crm_create"}


async def test_grouping_keeps_order_and_leaves_up_front_and_foreign_tools_alone(
    server: RecordingServer, tmp_path: Path
) -> None:
    manifest, toolset = await resolved(tmp_path, server)
    async with manifest:
        by_name = {tool.name: tool for tool in toolset.tools}
        foreign = {"type": "web_search"}
        tools = [by_name["crm_create"], foreign, by_name["search"], by_name["crm_lookup"]]
        grouped = openai_namespaced(tools, toolset.policy)
        assert grouped[1:] == [foreign, by_name["search"]]
        assert [member["name"] for member in grouped[0]["tools"]] == ["crm_create", "crm_lookup"]
        # A tool that is not deferred stays up front, even when its code is in a namespace:
        # not flagged, or its code not deferred by the policy.
        unflagged = by_name["crm_lookup"].model_copy(update={"extras": None})
        assert openai_namespaced([unflagged], toolset.policy) == [unflagged]
        up_front = LoadingPolicy("support-bot", frozenset({"crm_create"}),
                                 toolset.policy.namespaces)
        assert openai_namespaced([by_name["crm_lookup"]], up_front) == [by_name["crm_lookup"]]
        assert openai_namespaced(tools, LoadingPolicy("support-bot")) == tools


def test_a_toolset_without_a_profile_has_no_namespace_middleware() -> None:
    from compiler.runtime.toolset import Toolset

    with pytest.raises(ValueError, match="resolve_profile"):
        Toolset((), ()).namespace_middleware()


def memory_tools() -> list[StructuredTool]:
    def memory_remember(fact: str) -> str:
        """Remember a fact."""
        return f"remembered {fact}"

    def memory_recall(topic: str) -> str:
        """Recall facts about a topic."""
        return f"recalled {topic}"

    return [StructuredTool.from_function(memory_remember),
            StructuredTool.from_function(memory_recall)]


async def test_a_deferred_internal_capability_of_several_tools_is_its_own_namespace(
    tmp_path: Path,
) -> None:
    memory = {**internal_capability("memory"), "description": "Facts the agent keeps."}
    single = internal_capability("notes")
    document = manifest_document([memory, single])
    document["profiles"] = [{
        "name": "memory-bot", "description": None, "capabilities": ["memory", "notes"],
        "deferred": ["memory", "notes"], "budget": {},
        "source": {"path": "capabilities/profiles.yaml", "line": 1}}]
    path = tmp_path / "m.json"
    path.write_text(json.dumps(seal(document), sort_keys=True, indent=2))
    registry = ToolRegistry()
    registry.register_tools("memory", memory_tools())
    registry.register_tools("notes", [notes_tool()])
    manifest = load_manifest(path, registry=registry)
    toolset = await manifest.resolve_profile("memory-bot", RuntimeContext(
        settings=StaticSettings({})))
    answers = [namespaced_call("memory", "memory_recall", {"topic": "tea"}), openai_text("ok")]
    async with manifest:
        with provider_server(answers) as provider:
            model = ChatOpenAI(model="gpt-5.4", api_key="sk-test", max_retries=0,
                               base_url=provider.base_url + "/v1", use_responses_api=True)
            model, tools = attach_mcp(model, toolset)
            agent = create_agent(model, tools, middleware=[toolset.namespace_middleware()])
            await agent.ainvoke(QUESTION)
    first, second = request_bodies(provider)
    OPENAI_REQUEST.validate_python(first)
    # Two tools: a namespace named by the code, described by the capability; one tool
    # (notes) gains nothing from one and stays a deferred function.
    assert summary(first["tools"]) == [
        ("namespace", "memory", None, [("memory_remember", True), ("memory_recall", True)]),
        ("function", "take_note", True, []),
        ("tool_search", None, None, [])]
    assert first["tools"][0]["description"] == "Facts the agent keeps."
    output = next(item for item in second["input"] if item.get("type") == "function_call_output")
    assert output["output"] == "recalled tea"


async def test_an_own_namespace_never_takes_a_taken_name(server: RecordingServer,
                                                         tmp_path: Path) -> None:
    manifest, toolset = await resolved(tmp_path, server)
    async with manifest:
        by_name = {tool.name: tool for tool in toolset.tools}
        policy = LoadingPolicy("support-bot", frozenset({"ticket", "search"}),
                               own_namespaces={"ticket": "Tickets", "search": "Search"})
        twice = [by_name["ticket"], by_name["ticket"].model_copy(update={"name": "ticket_two"})]
        # "ticket" is a tool's own name: no namespace may take it.
        assert openai_namespaced(twice, policy) == twice
        renamed = [tool.model_copy(update={"name": name})
                   for tool, name in zip(twice, ["ticket_one", "ticket_two"], strict=True)]
        (namespace,) = openai_namespaced(renamed, policy)
        assert (namespace["name"], namespace["description"]) == ("ticket", "Tickets")
        assert [member["name"] for member in namespace["tools"]] == ["ticket_one", "ticket_two"]


async def test_without_langchain_the_middleware_says_what_to_install(
    server: RecordingServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    manifest, toolset = await resolved(tmp_path, server)
    async with manifest:
        monkeypatch.delitem(sys.modules, "compiler.runtime.namespace_middleware", raising=False)
        monkeypatch.setitem(sys.modules, "langchain.agents.middleware", None)
        with pytest.raises(ImportError, match="install langchain"):
            toolset.namespace_middleware()
