"""The internal tool registry and the discovery of ``primethink.tools`` plugins.

``ToolRegistry.register_tools`` is the reference's ``register_tools(code, tools, *,
name="", description="")``, so plugins written for the reference work unchanged: each
plugin's ``register(registry_fn[, context])`` receives the bound method. The context is
passed only to a register function that takes a second positional parameter (the
reference's ``inspect.signature`` rule). A plugin that fails to import or to register is
logged and skipped, and none of its registrations are kept.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from importlib.metadata import entry_points
from typing import Any

logger = logging.getLogger(__name__)

ENTRY_POINT_GROUP = "primethink.tools"


@dataclass(frozen=True, slots=True)
class RegisteredCode:
    """One registry code: its display metadata and tools, in registration order."""

    code: str
    name: str
    description: str
    tools: tuple[Any, ...]


@dataclass(frozen=True, slots=True)
class PluginFailure:
    """A plugin that could not be loaded or registered."""

    plugin: str
    target: str
    error: str


class ToolRegistry:
    """Python tools grouped under capability codes; a tool may sit under several codes."""

    def __init__(self) -> None:
        self._codes: dict[str, RegisteredCode] = {}
        self._failures: list[PluginFailure] = []
        self._revision = 0

    def register_tools(
        self, code: str, tools: Iterable[Any], *, name: str = "", description: str = ""
    ) -> None:
        """Register ``tools`` (LangChain BaseTools) under ``code``; last non-empty metadata wins."""
        from langchain_core.tools import BaseTool

        if not isinstance(code, str) or not code:
            raise ValueError(f"a capability code must be a non-empty string, got {code!r}")
        tools = list(tools)
        for tool in tools:
            if not isinstance(tool, BaseTool):
                raise TypeError(
                    f"register_tools({code!r}): {tool!r} is not a LangChain BaseTool"
                )
        current = self._codes.get(code) or RegisteredCode(code, "", "", ())
        names = {tool.name for tool in current.tools}
        added = []
        for tool in tools:
            if tool.name not in names:
                added.append(tool)
                names.add(tool.name)
        self._codes[code] = RegisteredCode(
            code=code,
            name=name or current.name,
            description=description or current.description,
            tools=current.tools + tuple(added),
        )
        self._revision += 1

    def capability(self, *codes: str) -> Callable[[Any], Any]:
        """Decorator form: ``@registry.capability("base", "rag")`` over a tool or tool list."""

        def register(tools: Any) -> Any:
            listed = tools if isinstance(tools, list | tuple) else [tools]
            for code in codes:
                self.register_tools(code, listed)
            return tools

        return register

    def codes(self) -> list[str]:
        """The registered codes, sorted."""
        return sorted(self._codes)

    def get(self, code: str) -> RegisteredCode | None:
        """The registration of ``code``, or None."""
        return self._codes.get(code)

    def tools_for(self, code: str) -> tuple[Any, ...]:
        """The tools registered under ``code`` (empty when none)."""
        registered = self._codes.get(code)
        return registered.tools if registered else ()

    def all_tools(self) -> dict[str, Any]:
        """Every registered tool by name (first registration wins)."""
        found: dict[str, Any] = {}
        for code in self.codes():
            for tool in self._codes[code].tools:
                found.setdefault(tool.name, tool)
        return found

    @property
    def revision(self) -> int:
        """Grows with every registration: lets a manifest know its patched view is stale."""
        return self._revision

    @property
    def failures(self) -> tuple[PluginFailure, ...]:
        """The plugins that failed during discovery."""
        return tuple(self._failures)

    def merge(self, other: ToolRegistry) -> None:
        """Register everything ``other`` holds, in its order."""
        for code in other._codes.values():
            self.register_tools(code.code, code.tools, name=code.name, description=code.description)

    def record_failure(self, failure: PluginFailure) -> None:
        """Remember a plugin that failed (``capc plugins`` shows them)."""
        self._failures.append(failure)

    @classmethod
    def discover(cls, context: Any = None, group: str = ENTRY_POINT_GROUP) -> ToolRegistry:
        """A registry filled by every installed plugin of the entry-point ``group``."""
        registry = cls()
        discover_plugins(registry, context=context, group=group)
        return registry


def discover_plugins(
    registry: ToolRegistry, context: Any = None, group: str = ENTRY_POINT_GROUP
) -> list[str]:
    """Load each ``group`` entry point and call its register function; returns loaded names."""
    loaded = []
    for entry_point in sorted(entry_points(group=group), key=lambda point: point.name):
        staged = ToolRegistry()
        try:
            register = entry_point.load()
            call_register(register, staged.register_tools, context)
        except Exception as error:
            logger.error(
                "tool plugin %s (%s) skipped: %s: %s",
                entry_point.name, entry_point.value, type(error).__name__, error,
            )
            failure = f"{type(error).__name__}: {error}"
            registry.record_failure(PluginFailure(entry_point.name, entry_point.value, failure))
            continue
        registry.merge(staged)
        loaded.append(entry_point.name)
        logger.info("tool plugin %s registered codes %s", entry_point.name, staged.codes())
    return loaded


def call_register(
    register: Callable[..., Any], registry_fn: Callable[..., Any], context: Any
) -> None:
    """Call a plugin's ``register`` with the context only if it takes a second parameter."""
    if accepts_context(register):
        register(registry_fn, context)
    else:
        register(registry_fn)


def accepts_context(register: Callable[..., Any]) -> bool:
    """Whether ``register`` takes a second positional parameter (or ``*args``)."""
    try:
        parameters: Sequence[inspect.Parameter] = list(
            inspect.signature(register).parameters.values()
        )
    except (TypeError, ValueError):
        return False
    positional = [
        parameter for parameter in parameters
        if parameter.kind in (inspect.Parameter.POSITIONAL_ONLY,
                              inspect.Parameter.POSITIONAL_OR_KEYWORD)
    ]
    variadic = any(parameter.kind is inspect.Parameter.VAR_POSITIONAL for parameter in parameters)
    return len(positional) >= 2 or variadic
