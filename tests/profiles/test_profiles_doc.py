"""docs/profiles.md, run top to bottom: the compile, the budget table, resolve_profile and
the worked OpenAI and Anthropic examples against loopback look-alikes of both APIs, whose
recorded requests must carry exactly the deferred tools and one search tool."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta.message_create_params import MessageCreateParamsNonStreaming
from openai.types.responses.response_create_params import ResponseCreateParamsNonStreaming
from pydantic import TypeAdapter

from tests.support.agents import anthropic_text, openai_text, request_bodies, unknown_keys
from tests.support.doc_blocks import code_blocks, run_blocks
from tests.support.paths import REPO_ROOT
from tests.support.runtime import ReceivedRequest, RecordingServer, recording_server

PAGE = REPO_ROOT / "docs" / "profiles.md"


def answering(reply: dict[str, Any]) -> Any:
    def respond(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
        return 200, {"Content-Type": "application/json"}, json.dumps(reply).encode()

    return respond


def _fresh_default_clients() -> None:
    """langchain-openai and langchain-anthropic cache one default httpx client per base
    URL (None when it comes from the environment, as on this page); a client cached by an
    earlier test is bound to that test's closed event loop."""
    from langchain_anthropic import _client_utils as anthropic_clients
    from langchain_openai.chat_models import _client_utils as openai_clients

    for cached in (openai_clients._cached_async_httpx_client,
                   openai_clients._cached_sync_httpx_client,
                   anthropic_clients._get_default_async_httpx_client,
                   anthropic_clients._get_default_httpx_client):
        cached.cache_clear()


@pytest.fixture
def providers(monkeypatch: pytest.MonkeyPatch) -> Iterator[dict[str, RecordingServer]]:
    _fresh_default_clients()
    with recording_server() as openai, recording_server() as anthropic:
        openai.responder = answering(openai_text("Ada is in the CRM."))
        anthropic.responder = answering(anthropic_text("Ada is in the CRM."))
        monkeypatch.setenv("OPENAI_BASE_URL", openai.base_url + "/v1")
        monkeypatch.setenv("OPENAI_API_KEY", "sk-test")
        monkeypatch.setenv("ANTHROPIC_BASE_URL", anthropic.base_url)
        monkeypatch.setenv("ANTHROPIC_API_KEY", "sk-ant-test")
        monkeypatch.delenv("ANTHROPIC_API_URL", raising=False)
        monkeypatch.delenv("OPENAI_API_BASE", raising=False)
        yield {"openai": openai, "anthropic": anthropic}
    _fresh_default_clients()  # nor should a later test get this one


async def test_the_profiles_page_runs_as_written(
    providers: dict[str, RecordingServer], tmp_path: Path
) -> None:
    namespace: dict[str, Any] = {}
    printed = await run_blocks(PAGE, tmp_path, namespace)
    assert "profile support-bot (budget: 2000 tokens, 10 tools)" in printed
    # get_weather, the namespace crm and the tool search
    assert "| support-bot | openai | 3 |" in printed
    assert "['support-bot']" in printed
    assert "get_weather support-bot None" in printed
    assert "crm_search support-bot {'defer_loading': True}" in printed
    assert printed.count("Ada is in the CRM.") == 2
    (openai_body,) = request_bodies(providers["openai"])
    TypeAdapter(ResponseCreateParamsNonStreaming).validate_python(openai_body)
    assert unknown_keys(openai_body, ResponseCreateParamsNonStreaming) == []
    assert [(tool["type"], tool.get("name"), tool.get("defer_loading"))
            for tool in openai_body["tools"]] == [
        ("function", "get_weather", None), ("namespace", "crm", None),
        ("tool_search", None, None)]
    crm = openai_body["tools"][1]
    assert crm["description"].startswith("Contacts in the CRM - search them")
    assert [(tool["type"], tool["name"], tool["defer_loading"]) for tool in crm["tools"]] == [
        ("function", "crm_create", True), ("function", "crm_search", True)]
    (anthropic_body,) = request_bodies(providers["anthropic"])
    TypeAdapter(MessageCreateParamsNonStreaming).validate_python(anthropic_body)
    assert unknown_keys(anthropic_body, MessageCreateParamsNonStreaming) == []
    assert [(tool.get("name"), tool.get("defer_loading")) for tool in anthropic_body["tools"]
            ] == [("get_weather", None), ("crm_create", True), ("crm_search", True),
                  ("tool_search_tool_bm25", None)]
    assert "advanced-tool-use" in (providers["anthropic"].last().header("anthropic-beta") or "")
    assert ("{'type': 'tool_search_tool_regex_20251119', 'name': 'tool_search_tool_regex'}"
            in printed)
    assert "['get_weather', 'crm_create', 'crm_search', 'tool_search_tool_bm25']" in printed
    assert namespace["manifest"]._closed


def test_every_block_of_the_page_is_run() -> None:
    blocks = code_blocks(PAGE)
    assert {block.lang for block in blocks} == {"yaml", "sh", "python"}
    assert [block for block in blocks if block.skip is not None] == []
