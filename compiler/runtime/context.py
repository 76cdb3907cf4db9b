"""Who a toolset is resolved for: user, group, chat, their settings and documents.

The settings and document services are protocols, so the agent process passes its own
objects (the reference's PT services satisfy them unchanged).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Iterable, Mapping
from typing import Any, Protocol, runtime_checkable

from compiler.runtime.errors import UnresolvedPlaceholderError
from compiler.runtime.log_masking import LIVE_SECRETS, log_spellings
from compiler.runtime.placeholders import REDACTED, Redactor

CONTEXT_FIELDS = ("user_id", "group_id", "chat_id", "settings", "documents", "approve")
SERVICE_FIELDS = frozenset({"settings", "documents", "approve"})


@runtime_checkable
class SettingsService(Protocol):
    """Per-user settings, as the reference's plugin context provides them."""

    async def get_user_setting_value(
        self, name: str, user_id: Any, group_id: Any
    ) -> str | None:
        """The setting's value for this user and group, or None."""
        ...


@runtime_checkable
class DocumentService(Protocol):
    """The documents of the chats a user can see."""

    async def get_document_by_id(self, document_id: int) -> Any:
        """The document (with a ``chat_id`` attribute), or None."""
        ...

    async def fetch_document_bytes(self, document: Any) -> tuple[str, bytes]:
        """``(filename, content)`` of a document."""
        ...


class StaticSettings:
    """A dict-backed settings service, for tests and fixed deployments."""

    def __init__(self, values: Mapping[str, str] | None = None) -> None:
        self._values = dict(values or {})

    async def get_user_setting_value(
        self, name: str, user_id: Any = None, group_id: Any = None
    ) -> str | None:
        """The value of ``name`` whoever asks, or None."""
        return self._values.get(name)

    def __repr__(self) -> str:
        # Values are secrets; only the names may show up in logs and tracebacks.
        return f"StaticSettings(names={sorted(self._values)!r})"


class RuntimeContext:
    """One agent turn's identity and services; extra keywords become condition attributes.

    Attributes are read-only. Each context resolves a setting at most once and owns the
    Redactor that masks the resolved values in tool outputs and log lines.
    """

    __slots__ = ("__weakref__", "_attributes", "_lock", "_log_spellings", "_resolved", "redactor")

    def __init__(
        self,
        user_id: Any = None,
        group_id: Any = None,
        chat_id: Any = None,
        settings: SettingsService | None = None,
        documents: DocumentService | None = None,
        approve: Callable[[str, dict[str, Any]], Awaitable[bool]] | None = None,
        **attributes: Any,
    ) -> None:
        values = {
            "user_id": user_id,
            "group_id": group_id,
            "chat_id": chat_id,
            "settings": settings,
            "documents": documents,
            # async (tool_name, args) -> bool: a human's yes before a client-side MCP call
            # whose require_approval is not "never".
            "approve": approve,
        }
        object.__setattr__(self, "_attributes", {**attributes, **values})
        object.__setattr__(self, "_resolved", {})
        object.__setattr__(self, "_lock", asyncio.Lock())
        object.__setattr__(self, "redactor", Redactor())
        object.__setattr__(self, "_log_spellings", ())
        # Log records of any library are masked with this context's secrets while it lives.
        LIVE_SECRETS.register(self)

    @property
    def user_id(self) -> Any:
        """The user the turn runs for (compared by conditions, passed to settings)."""
        return self._attributes["user_id"]

    @property
    def group_id(self) -> Any:
        """The user's group (passed to settings)."""
        return self._attributes["group_id"]

    @property
    def chat_id(self) -> Any:
        """The chat of the turn; None means no chat (file-bearing tools are left out)."""
        return self._attributes["chat_id"]

    @property
    def settings(self) -> SettingsService | None:
        """Where ``${NAME}`` placeholders are resolved."""
        settings: SettingsService | None = self._attributes["settings"]
        return settings

    @property
    def documents(self) -> DocumentService | None:
        """Where uploaded files come from."""
        documents: DocumentService | None = self._attributes["documents"]
        return documents

    @property
    def approve(self) -> Callable[[str, dict[str, Any]], Awaitable[bool]] | None:
        """The human's yes before a gated client-side MCP call (None: such tools are left out)."""
        approve: Callable[[str, dict[str, Any]], Awaitable[bool]] | None = (
            self._attributes["approve"])
        return approve

    def __getattr__(self, name: str) -> Any:
        attributes = object.__getattribute__(self, "_attributes")
        if name in attributes:
            return attributes[name]
        raise AttributeError(f"RuntimeContext has no attribute {name!r}")

    def __setattr__(self, name: str, value: Any) -> None:
        raise AttributeError("RuntimeContext is read-only")

    def __repr__(self) -> str:
        attributes = self._attributes
        shown = {key: value for key, value in attributes.items() if key in CONTEXT_FIELDS[:3]}
        extras = {key: value for key, value in attributes.items() if key not in CONTEXT_FIELDS}
        return f"RuntimeContext({shown | extras!r})"

    def with_changes(self, **changes: Any) -> RuntimeContext:
        """A new context with the same values but ``changes`` (the constructor's keywords);
        nothing resolved is carried over, so the new one resolves its own settings."""
        return RuntimeContext(**{**self._attributes, **changes})

    def mask_secrets(self, text: str) -> str:
        """``text`` with this context's resolved settings masked, as in tool outputs, and
        in the escaped spellings a log line may show them in (``b'...'`` reprs)."""
        text = self.redactor.redact(text)
        for spelling in self._log_spellings:
            if spelling in text:
                text = text.replace(spelling, REDACTED)
        return text

    def condition_attribute(self, name: str) -> Any:
        """The attribute ``name`` for ``when:`` conditions, None when absent.

        The services (settings, documents) are not attributes: a condition must never
        compare, or show in a skip reason, what they hold.
        """
        if name in SERVICE_FIELDS:
            return None
        return self._attributes.get(name)

    def plugin_context(self) -> PluginContext:
        """The reference-style plugin context over this context's services and identity."""
        attributes = self._attributes
        return PluginContext(
            attributes["settings"], attributes["documents"], user_id=attributes["user_id"],
            group_id=attributes["group_id"], chat_id=attributes["chat_id"],
        )

    async def resolve_settings(self, names: Iterable[str]) -> dict[str, str]:
        """The values of ``names``; raises UnresolvedPlaceholderError naming those missing."""
        wanted = sorted(set(names))
        async with self._lock:
            for name in wanted:
                if name not in self._resolved:
                    self._resolved[name] = await self._lookup(name)
        missing = [name for name in wanted if not self._resolved[name]]
        if missing:
            raise UnresolvedPlaceholderError(missing)
        return {name: self._resolved[name] for name in wanted}

    async def _lookup(self, name: str) -> str | None:
        settings = self._attributes["settings"]
        if settings is None:
            return None
        value = await settings.get_user_setting_value(
            name, self._attributes["user_id"], self._attributes["group_id"]
        )
        if value is None or value == "":
            return None
        value = str(value)
        self.redactor.add(value)
        spellings = {*self._log_spellings, *log_spellings(value)}
        object.__setattr__(
            self, "_log_spellings", tuple(sorted(spellings, key=len, reverse=True))
        )
        return value


class PluginContext:
    """The reference's plugin context (``register(registry_fn, context)``) over capc's services.

    Plugins written for the reference call ``await context.get_user_setting_value(name,
    user_id, group_id)`` and use ``context.document_service``; this adapter gives them the
    same settings and document services a RuntimeContext uses. Pass it as
    ``load_manifest(..., plugin_context=PluginContext.from_services(settings, documents))``.
    ``user_id``/``group_id`` fill in when a plugin asks without naming them.
    """

    __slots__ = ("chat_id", "document_service", "group_id", "settings", "user_id")

    def __init__(
        self,
        settings: SettingsService | None = None,
        document_service: DocumentService | None = None,
        *,
        user_id: Any = None,
        group_id: Any = None,
        chat_id: Any = None,
    ) -> None:
        self.settings = settings
        self.document_service = document_service
        self.user_id = user_id
        self.group_id = group_id
        self.chat_id = chat_id

    @classmethod
    def from_services(
        cls,
        settings: SettingsService | None = None,
        documents: DocumentService | None = None,
        *,
        user_id: Any = None,
        group_id: Any = None,
        chat_id: Any = None,
    ) -> PluginContext:
        """The context of a settings service and a document service (either may be None)."""
        return cls(settings, documents, user_id=user_id, group_id=group_id, chat_id=chat_id)

    @property
    def documents(self) -> DocumentService | None:
        """The document service (the reference calls it ``document_service``)."""
        return self.document_service

    async def get_user_setting_value(
        self, name: str, user_id: Any = None, group_id: Any = None
    ) -> str | None:
        """The setting's value for the user and group (default: this context's), or None."""
        if self.settings is None:
            return None
        return await self.settings.get_user_setting_value(
            name,
            self.user_id if user_id is None else user_id,
            self.group_id if group_id is None else group_id,
        )

    def __repr__(self) -> str:
        # The services may hold secrets; only their kinds and the identity are shown.
        services = {
            "settings": type(self.settings).__name__ if self.settings else None,
            "document_service": (
                type(self.document_service).__name__ if self.document_service else None
            ),
        }
        ids = {"user_id": self.user_id, "group_id": self.group_id, "chat_id": self.chat_id}
        return f"PluginContext({services | ids!r})"
