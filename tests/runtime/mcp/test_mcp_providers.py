"""MCP per provider, checked against the official SDK request types with extra keys forbidden,
the Anthropic gating rules, and attach_mcp on real ChatOpenAI / ChatAnthropic models."""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest
from anthropic.types.beta import BetaMCPToolsetParam, BetaRequestMCPServerURLDefinitionParam
from openai.types.responses.tool_param import Mcp
from pydantic import ConfigDict, TypeAdapter, ValidationError, with_config

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, attach_mcp, load_manifest
from compiler.runtime import load_manifest as _load
from compiler.runtime.mcp.gating import anthropic_dropped_headers, anthropic_gate
from tests.support.runtime import mcp_capability, write_manifest


def strict(typed_dict: type) -> TypeAdapter[Any]:
    """A validator of ``typed_dict`` that refuses keys the SDK type does not declare."""
    subclass = type("Strict" + typed_dict.__name__, (typed_dict,), {})
    return TypeAdapter(with_config(ConfigDict(extra="forbid"))(subclass))


OPENAI_MCP = strict(Mcp)
ANTHROPIC_SERVER = strict(BetaRequestMCPServerURLDefinitionParam)
ANTHROPIC_TOOLSET = strict(BetaMCPToolsetParam)

SERVERS = [
    mcp_capability("deepwiki"),
    mcp_capability("ha_remote", server_url="https://ha.example.com/api/mcp",
                   headers={"Authorization": "Bearer ${HA_REMOTE_TOKEN}"},
                   allowed_tools=["lights_on", "lights_off"],
                   extra={"server_description": "Home Assistant"},
                   placeholders=["HA_REMOTE_TOKEN"]),
    mcp_capability("approval", require_approval="always"),
    mcp_capability("api_key", headers={"X-Api-Key": "k"}),
    mcp_capability("basic", headers={"Authorization": "Basic dXNlcg=="}),
    mcp_capability("filtered", allowed_tools={"read_only": True}),
]


# Unrestricted, so the langchain provider hands it out (a restricted one it never does).
HA_OPEN = mcp_capability("ha_open", server_url="https://ha.example.com/api/mcp",
                         headers={"Authorization": "Bearer ${HA_REMOTE_TOKEN}"},
                         placeholders=["HA_REMOTE_TOKEN"])


async def toolset(
    tmp_path: Path, codes: list[str] | None = None, servers: list[Any] = SERVERS
) -> Any:
    manifest = _load(write_manifest(tmp_path / "m.json", servers), registry=ToolRegistry())
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"HA_REMOTE_TOKEN": "tok-123"}))
    return await manifest.resolve(codes or manifest.codes(), ctx)


def test_the_strict_validators_really_refuse_extra_keys() -> None:
    with pytest.raises(ValidationError):
        ANTHROPIC_SERVER.validate_python(
            {"type": "url", "url": "https://x", "name": "x", "headers": {}})
    with pytest.raises(ValidationError):
        ANTHROPIC_TOOLSET.validate_python(
            {"type": "mcp_toolset", "mcp_server_name": "x", "allowed_tools": ["a"]})
    with pytest.raises(ValidationError):
        OPENAI_MCP.validate_python({"type": "mcp", "server_label": "x", "url": "https://x"})


async def test_openai_entries_validate_and_pass_extras_through(tmp_path: Path) -> None:
    config = (await toolset(tmp_path)).mcp("openai")
    assert config.mcp_servers == [] and config.betas == []
    for entry in config.tools:
        OPENAI_MCP.validate_python(entry)
    by_label = {entry["server_label"]: entry for entry in config.tools}
    assert set(by_label) == {"deepwiki", "ha_remote", "approval", "api_key", "basic", "filtered"}
    assert by_label["ha_remote"] == {
        "type": "mcp", "server_label": "ha_remote",
        "server_url": "https://ha.example.com/api/mcp", "require_approval": "never",
        "headers": {"Authorization": "Bearer tok-123"},
        "allowed_tools": ["lights_on", "lights_off"], "server_description": "Home Assistant",
    }
    assert by_label["deepwiki"] == {"type": "mcp", "server_label": "deepwiki",
                                    "server_url": "https://mcp.deepwiki.com/mcp",
                                    "require_approval": "never"}


async def test_anthropic_entries_validate_and_gating_fails_closed(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        config = (await toolset(tmp_path)).mcp("anthropic")
    for server in config.mcp_servers:
        ANTHROPIC_SERVER.validate_python(server)
    for entry in config.tools:
        ANTHROPIC_TOOLSET.validate_python(entry)
    assert config.betas == ["mcp-client-2025-11-20"]
    # Rule 3 as the reference states it: the headers Anthropic cannot send are dropped
    # and the server is attached without them.
    assert config.mcp_servers == [
        {"type": "url", "url": "https://mcp.deepwiki.com/mcp", "name": "api_key"},
        {"type": "url", "url": "https://mcp.deepwiki.com/mcp", "name": "basic"},
        {"type": "url", "url": "https://mcp.deepwiki.com/mcp", "name": "deepwiki"},
        {"type": "url", "url": "https://ha.example.com/api/mcp", "name": "ha_remote",
         "authorization_token": "tok-123"},
    ]
    assert config.tools == [
        {"type": "mcp_toolset", "mcp_server_name": "api_key"},
        {"type": "mcp_toolset", "mcp_server_name": "basic"},
        {"type": "mcp_toolset", "mcp_server_name": "deepwiki"},
        {"type": "mcp_toolset", "mcp_server_name": "ha_remote",
         "default_config": {"enabled": False},
         "configs": {"lights_on": {"enabled": True}, "lights_off": {"enabled": True}}},
    ]
    reasons = {skip.code: skip.reason for skip in config.skipped}
    assert set(reasons) == {"approval", "filtered"}
    assert "[require_approval]" in reasons["approval"]
    assert "[allowed_tools]" in reasons["filtered"]
    for code in ("approval", "filtered"):
        assert f"capability {code}) skipped on Anthropic" in caplog.text
    dropped = [record.getMessage() for record in caplog.records
               if "attached to Anthropic without some headers" in record.getMessage()]
    assert len(dropped) == 2
    assert "'api_key' (capability api_key)" in dropped[0] and "X-Api-Key" in dropped[0]
    assert "'basic' (capability basic)" in dropped[1] and "not a Bearer token" in dropped[1]
    assert "dXNlcg==" not in caplog.text and "tok-123" not in caplog.text


async def test_unsupported_auth_skip_keeps_the_stricter_rule(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        config = (await toolset(tmp_path)).mcp("anthropic", unsupported_auth="skip")
    assert [server["name"] for server in config.mcp_servers] == ["deepwiki", "ha_remote"]
    assert [entry["mcp_server_name"] for entry in config.tools] == ["deepwiki", "ha_remote"]
    reasons = {skip.code: skip.reason for skip in config.skipped}
    assert set(reasons) == {"approval", "api_key", "basic", "filtered"}
    assert "[authentication]" in reasons["api_key"] and "X-Api-Key" in reasons["api_key"]
    assert "[authentication]" in reasons["basic"] and "Bearer" in reasons["basic"]
    for code in ("approval", "api_key", "basic", "filtered"):
        assert f"capability {code}) skipped on Anthropic" in caplog.text
    assert "without some headers" not in caplog.text


async def test_a_bearer_token_survives_beside_dropped_headers(tmp_path: Path) -> None:
    servers = [mcp_capability("mixed", headers={"Authorization": "Bearer t-1",
                                                "X-Tenant": "acme"})]
    manifest = _load(write_manifest(tmp_path / "m.json", servers), registry=ToolRegistry())
    result = await manifest.resolve(["mixed"], RuntimeContext(user_id=1))
    config = result.mcp("anthropic")
    assert config.mcp_servers == [{"type": "url", "url": "https://mcp.deepwiki.com/mcp",
                                   "name": "mixed", "authorization_token": "t-1"}]
    assert result.mcp("anthropic", unsupported_auth="skip").mcp_servers == []
    for provider in ("anthropic", "openai"):
        with pytest.raises(ValueError, match="unsupported_auth"):
            result.mcp(provider, unsupported_auth="ignore")


@pytest.mark.parametrize(
    ("server", "rule"),
    [
        ({"server_label": "x", "server_url": "https://x"}, "require_approval"),
        ({"server_label": "", "server_url": "https://x", "require_approval": "never"},
         "endpoint"),
        ({"server_label": "x", "require_approval": "never"}, "endpoint"),
        ({"server_label": "x", "server_url": "https://x", "require_approval": "never",
          "headers": {"Authorization": "Bearer "}}, "authentication"),
        ({"server_label": "x", "server_url": "https://x", "require_approval": "never",
          "allowed_tools": "all"}, "allowed_tools"),
        ({"server_label": "x", "server_url": "https://x", "require_approval": "never",
          "allowed_tools": ["a", 3]}, "allowed_tools"),
    ],
)
def test_each_gating_rule_names_itself(server: dict[str, Any], rule: str) -> None:
    reason = anthropic_gate(server, unsupported_auth="skip")
    assert reason is not None and reason.startswith(f"[{rule}]")
    if rule == "authentication":  # by default rule 3 drops the header instead
        assert anthropic_gate(server) is None
        dropped = anthropic_dropped_headers(server)
        assert dropped is not None and dropped.startswith("[authentication]")
    else:
        assert anthropic_gate(server) == reason


def test_a_compliant_server_passes_the_gate() -> None:
    server = {"server_label": "x", "server_url": "https://x", "require_approval": "never",
              "headers": {"authorization": "bearer abc"},
              "allowed_tools": {"tool_names": ["a"]}}
    assert anthropic_gate(server, unsupported_auth="skip") is None
    assert anthropic_dropped_headers(server) is None


async def test_langchain_connections_fit_the_adapters(tmp_path: Path) -> None:
    config = (await toolset(tmp_path, ["deepwiki", "ha_open"], [*SERVERS, HA_OPEN])
              ).mcp("langchain")
    assert config.tools == [] and config.skipped == ()
    assert config.mcp_servers == [
        {"name": "deepwiki", "transport": "streamable_http",
         "url": "https://mcp.deepwiki.com/mcp"},
        {"name": "ha_open", "transport": "streamable_http",
         "url": "https://ha.example.com/api/mcp",
         "headers": {"Authorization": "Bearer tok-123"}},
    ]
    sessions = pytest.importorskip("langchain_mcp_adapters.sessions")
    client_module = pytest.importorskip("langchain_mcp_adapters.client")
    # The TypedDict has a Protocol-typed key pydantic cannot build a validator for, so its
    # declared and required keys are checked directly.
    declared = {name: str(getattr(annotation, "__forward_arg__", annotation))
                for name, annotation in sessions.StreamableHttpConnection.__annotations__.items()}
    required = {name for name, annotation in declared.items()
                if not annotation.startswith("NotRequired")}
    assert required == {"transport", "url"}
    for connection in config.connections.values():
        assert required <= set(connection) <= set(declared)
        assert connection["transport"] == "streamable_http"
    client = client_module.MultiServerMCPClient(config.connections)
    assert set(client.connections) == {"deepwiki", "ha_open"}


async def test_an_unknown_provider_gets_nothing_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    with caplog.at_level(logging.WARNING):
        config = (await toolset(tmp_path, ["deepwiki"])).mcp("gemini")
    assert (config.tools, config.mcp_servers, config.betas) == ([], [], [])
    assert "provider 'gemini'" in caplog.text


async def test_attach_mcp_on_chat_openai(tmp_path: Path) -> None:
    langchain_openai = pytest.importorskip("langchain_openai")
    llm = langchain_openai.ChatOpenAI(model="gpt-4.1", api_key="sk-test")
    model, tools = attach_mcp(llm, await toolset(tmp_path, ["deepwiki"]))
    assert model is llm
    assert tools == [{"type": "mcp", "server_label": "deepwiki",
                      "server_url": "https://mcp.deepwiki.com/mcp", "require_approval": "never"}]
    bound = model.bind_tools(tools)
    assert bound.kwargs["tools"][0]["type"] == "mcp"


async def test_attach_mcp_on_chat_anthropic_copies_the_model(tmp_path: Path) -> None:
    langchain_anthropic = pytest.importorskip("langchain_anthropic")
    llm = langchain_anthropic.ChatAnthropic(model="claude-sonnet-4-5", api_key="sk-test",
                                            betas=["context-1m-2025-08-07"])
    model, tools = attach_mcp(llm, await toolset(tmp_path, ["deepwiki", "approval"]))
    assert model is not llm and llm.mcp_servers is None
    assert model.mcp_servers == [
        {"type": "url", "url": "https://mcp.deepwiki.com/mcp", "name": "deepwiki"}]
    assert model.betas == ["context-1m-2025-08-07", "mcp-client-2025-11-20"]
    assert tools == [{"type": "mcp_toolset", "mcp_server_name": "deepwiki"}]
    payload = model.bind_tools(tools)
    assert payload.kwargs["tools"] == tools
    request = model._get_request_payload("hello", tools=tools)
    assert request["mcp_servers"] == model.mcp_servers
    assert "mcp-client-2025-11-20" in request["betas"]


async def test_attach_mcp_on_another_model_warns(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    from langchain_core.language_models.fake_chat_models import FakeListChatModel

    llm = FakeListChatModel(responses=["hi"])
    with caplog.at_level(logging.WARNING):
        model, tools = attach_mcp(llm, await toolset(tmp_path, ["deepwiki"]))
    assert model is llm and tools == []
    assert "deepwiki" in caplog.text and "not attached" in caplog.text


@pytest.mark.parametrize(("host", "allowed"), [
    ("169.254.169.254", False), ("127.0.0.1:8080", False), ("[::ffff:10.0.0.1]", False),
    ("metadata.google.internal", False), ("mcp.example.com", True)])
async def test_a_server_url_from_settings_is_checked_once_resolved(
    tmp_path: Path, host: str, allowed: bool
) -> None:
    path = write_manifest(tmp_path / "m.json", [mcp_capability(
        "tenant", server_label="tenant", server_url="https://${MCP_HOST}/mcp",
        require_approval="never", placeholders=["MCP_HOST"])])
    manifest = load_manifest(path, registry=ToolRegistry())
    ctx = RuntimeContext(user_id=1, group_id=1, settings=StaticSettings({"MCP_HOST": host}))
    async with manifest:
        result = await manifest.resolve(["tenant"], ctx)
    connections = result.mcp("langchain").mcp_servers
    if allowed:
        assert [c["url"] for c in connections] == ["https://mcp.example.com/mcp"]
    else:
        assert connections == [] and result.mcp("openai").tools == []
        assert "MCP server URL is refused" in result.skipped[0].reason
