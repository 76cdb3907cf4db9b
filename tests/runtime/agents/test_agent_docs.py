"""docs/agents.md, run top to bottom: real clients, loopback APIs, the documented output.

The page's hosts stay as written: api.example.com resolves (in the egress client's
injectable resolver) to a public address that the injected connector dials on a
loopback HTTPS server holding a certificate for that name; OpenAI and Anthropic are
reached through their SDKs' own base-URL variables.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

import compiler.runtime.egress.client as egress_client
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from tests.support.agents import (
    anthropic_text,
    anthropic_tool_use,
    openai_function_call,
    openai_text,
    request_bodies,
    unknown_keys,
)
from tests.support.doc_blocks import code_blocks, run_blocks
from tests.support.loopback import FakeDns, RoutingConnector
from tests.support.paths import REPO_ROOT
from tests.support.runtime import ReceivedRequest, RecordingServer, recording_server
from tests.support.tls import tls_contexts

PAGE = REPO_ROOT / "docs" / "agents.md"
WEATHER = b'{"city": "Oslo", "sky": "sunny"}'


def openai_answer(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    body = json.loads(request.body)
    answered = any(item.get("type") == "function_call_output" for item in body["input"])
    reply = openai_text("Sunny.") if answered else openai_function_call(
        "get_weather", {"city": "Oslo"})
    return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()


def anthropic_answer(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    body = json.loads(request.body)
    answered = any(isinstance(message["content"], list) and any(
        block.get("type") == "tool_result" for block in message["content"])
        for message in body["messages"])
    reply = anthropic_text("Sunny.") if answered else anthropic_tool_use(
        "get_weather", {"city": "Oslo"})
    return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()


@pytest.fixture
def apis(
    monkeypatch: pytest.MonkeyPatch, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[dict[str, RecordingServer]]:
    server_tls, client_tls = tls_contexts("api.example.com", tmp_path_factory.mktemp("tls"))
    with recording_server(server_tls) as weather, recording_server() as openai, \
            recording_server() as anthropic:
        weather.responder = lambda request: (200, {"Content-Type": "application/json"}, WEATHER)
        openai.responder = openai_answer
        anthropic.responder = anthropic_answer
        port = int(weather.base_url.rsplit(":", 1)[1])

        def routed_client(policy: EgressPolicy) -> Any:
            return build_egress_client(
                policy,
                resolver=FakeDns({"api.example.com": [["93.184.215.14"]]}),
                connector=RoutingConnector(public_port=port, private_port=port),
                ssl_context=client_tls,
            )

        monkeypatch.setattr(egress_client, "build_egress_client", routed_client)
        monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.delenv("ANTHROPIC_API_URL", raising=False)
        monkeypatch.delenv("OPENAI_API_BASE", raising=False)
        yield {"weather": weather, "openai": openai, "anthropic": anthropic}


async def test_the_agents_page_runs_as_written(
    apis: dict[str, RecordingServer], tmp_path: Path
) -> None:
    namespace: dict[str, Any] = {}
    printed = await run_blocks(PAGE, tmp_path, namespace)
    assert "['get_weather']" in printed
    assert "unresolved setting placeholder(s) ${WEATHER_API_KEY}" in printed
    assert "Error: invalid arguments for get_weather: city: Field required" in printed
    assert "attach_mcp cannot attach to a RunnableRetry: tools cannot be bound" in printed
    assert WEATHER.decode() in printed
    weather = apis["weather"].received
    # OpenAI async + sync agent runs, the direct call, Anthropic async + sync runs.
    assert [request.raw_path for request in weather] == ["/v1/weather?city=Oslo"] * 5
    assert {request.header("Authorization") for request in weather} == {"Bearer k-123"}
    assert "k-123" not in printed
    openai_bodies = request_bodies(apis["openai"])
    assert len(openai_bodies) == 4
    for body in openai_bodies:
        TypeAdapter(ResponseCreateParamsNonStreaming).validate_python(body)
        assert unknown_keys(body, ResponseCreateParamsNonStreaming) == []
        assert [tool["type"] for tool in body["tools"]] == ["function", "mcp"]
    anthropic_bodies = request_bodies(apis["anthropic"])
    assert len(anthropic_bodies) == 4
    for body in anthropic_bodies:
        TypeAdapter(MessageCreateParamsNonStreaming).validate_python(body)
        assert unknown_keys(body, MessageCreateParamsNonStreaming) == []
        assert [server["name"] for server in body["mcp_servers"]] == ["deepwiki"]
    assert namespace["manifest"]._closed


def test_every_block_of_the_page_is_run_or_says_why_not() -> None:
    blocks = code_blocks(PAGE)
    assert {block.lang for block in blocks} == {"yaml", "sh", "python"}
    skipped = [block for block in blocks if block.skip is not None]
    assert [block.skip for block in skipped] == [
        "connects to the MCP server itself; tests/runtime/mcp runs client_mcp_tools and "
        "MultiServerMCPClient against a real server on 127.0.0.1"]


def test_the_page_says_to_install_every_package_its_code_imports() -> None:
    import re
    import sys

    text = PAGE.read_text(encoding="utf-8")
    match = re.search(r"`python -m pip install ([^`]+)`", text)
    assert match is not None, "docs/agents.md names no install command"
    named = set(match.group(1).split())
    imported = {module.split(".")[0] for block in code_blocks(PAGE) if block.lang == "python"
                for module in re.findall(r"^(?:from|import) ([\w.]+)", block.text, re.M)}
    needed = {module.replace("_", "-") for module in imported
              if module not in sys.stdlib_module_names and module != "compiler"}
    assert "langchain" in needed and needed <= named, needed - named
