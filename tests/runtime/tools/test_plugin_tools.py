"""Plugins through real entry points (capc-test-plugin, installed from tests/plugins), and
boot-time overrides of their tools: clone, patch, expose; the registry's original intact."""

from __future__ import annotations

import logging
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from langchain_core.messages import ToolMessage
from langchain_core.utils.function_calling import convert_to_openai_tool

from compiler.runtime import RuntimeContext, ToolOverride, ToolRegistry, load_manifest
from compiler.runtime.tools.registry import accepts_context, discover_plugins
from tests.support.runtime import internal_capability, write_manifest

pytest.importorskip("capc_test_plugin", reason="make installs tests/plugins/* into the venv")


def test_plugins_are_discovered_with_and_without_context() -> None:
    plain = ToolRegistry.discover()
    with_documents = ToolRegistry.discover(context=SimpleNamespace(document_service=object()))
    assert {"crm", "obviously_manage", "manage_search", "memory"} <= set(plain.codes())
    assert [t.name for t in plain.tools_for("crm")] == ["crm_search_contacts",
                                                        "crm_create_contact"]
    crm = plain.get("crm")
    assert crm is not None and crm.name == "CRM Integration"
    assert [t.name for t in plain.tools_for("obviously_manage")] == ["search_matters",
                                                                     "create_timer"]
    # Only the two-parameter register saw the context, and used it.
    assert [t.name for t in with_documents.tools_for("obviously_manage")] == [
        "search_matters", "create_timer", "manage_attach_document"]
    assert plain.failures == ()


def test_the_signature_rule() -> None:
    def one(registry_fn: Any) -> None: ...
    def two(registry_fn: Any, context: Any = None) -> None: ...
    def variadic(*args: Any) -> None: ...
    def keyword_only(registry_fn: Any, *, context: Any = None) -> None: ...

    assert [accepts_context(f) for f in (one, two, variadic, keyword_only)] == [
        False, True, True, False]


def test_faulty_plugins_are_logged_and_skipped_without_partial_registrations(
    caplog: pytest.LogCaptureFixture,
) -> None:
    registry = ToolRegistry()
    with caplog.at_level(logging.ERROR):
        loaded = discover_plugins(registry, group="capc_test.faulty")
    assert loaded == ["healthy"]
    assert registry.codes() == ["crm"]
    assert {failure.plugin for failure in registry.failures} == {
        "broken_import", "half_registered", "missing_module"}
    assert "tool plugin broken_import" in caplog.text
    assert "settings are missing" in caplog.text


async def test_plugin_tools_resolve_and_run_with_the_config(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.json", [internal_capability("crm")])
    manifest = load_manifest(path)  # registry=None: discovery
    toolset = await manifest.resolve(["crm"], RuntimeContext(user_id=1))
    search = toolset.tools[0]
    output = await search.ainvoke({"query": "ada"},
                                  config={"configurable": {"logged_user_id": 9}})
    assert output == "contacts matching 'ada' (limit=10, user=9)"


def memory_registry() -> ToolRegistry:
    from capc_test_plugin.memory import register

    registry = ToolRegistry()
    register(registry.register_tools)
    return registry


CATEGORY_SCHEMA = {
    "type": "object",
    "properties": {
        "content": {"type": "string"},
        "category": {"type": "string",
                     "enum": ["memory:health", "memory:identity", "memory:preferences"]},
    },
    "required": ["content", "category"],
}


def pending(tool: str, line: int, **patch: Any) -> dict[str, Any]:
    return {"tool": tool, "source": {"path": "capabilities/overrides/memory.yaml",
                                     "line": line}, "patch": patch}


async def test_manifest_overrides_patch_a_plugin_tool_at_boot(tmp_path: Path) -> None:
    registry = memory_registry()
    original = registry.tools_for("memory")[0]
    original_schema = convert_to_openai_tool(original)
    path = write_manifest(tmp_path / "m.json", [internal_capability("memory")], overrides=[
        pending("memory__remember", 1, description="step 1"),
        pending("memory__remember", 5, description_append=" | step 2"),
        pending("memory__remember", 9, input_schema=CATEGORY_SCHEMA),
    ])
    manifest = load_manifest(path, registry=registry)
    toolset = await manifest.resolve(["memory"], RuntimeContext())
    remember, recall = toolset.tools
    assert remember.description == "step 1 | step 2"
    assert convert_to_openai_tool(remember)["function"]["parameters"] == CATEGORY_SCHEMA
    refused = await remember.ainvoke({"content": "likes tea", "category": "memory:food"})
    stored = await remember.ainvoke({"content": "likes tea", "category": "memory:preferences"})
    assert refused.startswith("Error: invalid arguments") and "category" in refused
    # The executor is the original: it never receives `category`, which it does not accept.
    assert stored == "remembered: likes tea"
    # Unpatched, yet a copy: the copy carries its provenance, the registry's tool does not.
    registered_recall = registry.tools_for("memory")[1]
    assert (recall.name, recall.description) == (registered_recall.name,
                                                 registered_recall.description)
    assert recall.metadata["capc.kind"] == "internal" and not registered_recall.metadata
    # The registry's original is untouched.
    assert registry.tools_for("memory")[0] is original
    assert original.description == "Store a fact in long-term memory."
    assert convert_to_openai_tool(original) == original_schema


async def test_python_overrides_compose_after_the_manifest_ones(tmp_path: Path) -> None:
    registry = memory_registry()
    path = write_manifest(tmp_path / "m.json", [internal_capability("memory")], overrides=[
        pending("memory__remember", 1, description="from yaml"),
    ])
    manifest = load_manifest(path, registry=registry)
    toolset = await manifest.resolve(["memory"], RuntimeContext(), overrides=[
        ToolOverride(tool="memory__remember", description_append=" + python"),
        ToolOverride(tool="memory__remember", namespace="recall"),
    ])
    plain = await manifest.resolve(["memory"], RuntimeContext())
    patched = toolset.tools[0]
    assert patched.name == "recall__remember"
    assert patched.description == "from yaml + python"
    assert convert_to_openai_tool(patched)["function"]["name"] == "recall__remember"
    message = await patched.ainvoke({"name": "recall__remember", "args": {"content": "x"},
                                     "id": "c1", "type": "tool_call"})
    assert isinstance(message, ToolMessage) and message.content == "remembered: x"
    assert plain.tools[0].name == "memory__remember"
    assert plain.tools[0].description == "from yaml"


async def test_unknown_override_targets_are_logged_and_skipped(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    registry = memory_registry()
    path = write_manifest(tmp_path / "m.json", [internal_capability("memory")], overrides=[
        pending("memory__forget", 3, description="renamed away"),
        pending("memory__recall", 4, description="still applies"),
    ])
    manifest = load_manifest(path, registry=registry)
    with caplog.at_level(logging.WARNING):
        toolset = await manifest.resolve(["memory"], RuntimeContext(),
                                         overrides=[ToolOverride(tool="nope", description="x")])
    assert [t.description for t in toolset.tools] == ["Store a fact in long-term memory.",
                                                      "still applies"]
    assert "'memory__forget'" in caplog.text and "memory.yaml:3" in caplog.text
    assert "'nope' (Python API) skipped" in caplog.text
    assert [r.levelname for r in caplog.records if "memory__forget" in r.message] == ["WARNING"]


async def test_a_late_registration_is_patched_too(tmp_path: Path) -> None:
    registry = ToolRegistry()
    path = write_manifest(tmp_path / "m.json", [internal_capability("memory")], overrides=[
        pending("memory__remember", 1, description="patched"),
    ])
    manifest = load_manifest(path, registry=registry)
    before = await manifest.resolve(["memory"], RuntimeContext())
    from capc_test_plugin.memory import register

    register(registry.register_tools)
    after = await manifest.resolve(["memory"], RuntimeContext())
    assert before.tools == [] and after.tools[0].description == "patched"
