"""PluginContext: the reference's plugin context over capc's settings and documents."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.runtime import PluginContext, RuntimeContext, StaticSettings, ToolRegistry
from compiler.runtime.tools.registry import call_register
from tests.support.runtime import Document, DocumentStore


class RecordingSettings:
    def __init__(self) -> None:
        self.asked: list[tuple[str, Any, Any]] = []

    async def get_user_setting_value(self, name: str, user_id: Any, group_id: Any) -> str:
        self.asked.append((name, user_id, group_id))
        return f"value-of-{name}"


async def test_settings_use_the_ids_given_else_the_contexts_own() -> None:
    settings = RecordingSettings()
    context = PluginContext.from_services(settings, None, user_id=1, group_id=5, chat_id=42)
    assert await context.get_user_setting_value("A") == "value-of-A"
    assert await context.get_user_setting_value("B", 7, 8) == "value-of-B"
    assert settings.asked == [("A", 1, 5), ("B", 7, 8)]
    assert await PluginContext().get_user_setting_value("A") is None


async def test_a_runtime_context_gives_the_same_services() -> None:
    documents = DocumentStore(Document(3, 42, "a.txt", b"hello"))
    settings = StaticSettings({"TOKEN": "plugin-secret"})
    ctx = RuntimeContext(user_id=1, group_id=5, chat_id=42, settings=settings,
                         documents=documents)
    context = ctx.plugin_context()
    assert context.document_service is documents and context.documents is documents
    assert (context.user_id, context.group_id, context.chat_id) == (1, 5, 42)
    assert await context.get_user_setting_value("TOKEN") == "plugin-secret"
    document = await context.document_service.get_document_by_id(3)
    assert await context.document_service.fetch_document_bytes(document) == ("a.txt", b"hello")
    assert "plugin-secret" not in repr(context) and "StaticSettings" in repr(context)


def test_a_reference_style_register_receives_it(tmp_path: Path) -> None:
    seen: list[Any] = []

    def register(registry_fn: Any, context: Any = None) -> None:
        # The reference's own check, verbatim in spirit.
        if context is not None and hasattr(context, "get_user_setting_value"):
            seen.append(context.get_user_setting_value)
        if context is not None and getattr(context, "document_service", None) is not None:
            seen.append(context.document_service)

    documents = DocumentStore()
    context = PluginContext.from_services(StaticSettings({}), documents)
    call_register(register, ToolRegistry().register_tools, context)
    assert seen == [context.get_user_setting_value, documents]
