"""The runtime loader: a frozen capc manifest in, LangChain tools and MCP configs out.

A leaf package: it imports nothing of the compile side, nor jinja2, jsonschema or click.
Every error it raises on purpose is a ``RuntimeLoaderError``; the services a host
application passes in are the ``SettingsService`` and ``DocumentService`` protocols
(SPEC §5). The public names are loaded on first use, so ``import compiler.runtime`` stays cheap and
LangChain, httpx and pydantic load only when a manifest is actually resolved.

    from compiler.runtime import load_manifest, RuntimeContext, StaticSettings

    manifest = load_manifest("build/manifest.json")
    toolset = await manifest.resolve(["base", "get_weather"], RuntimeContext(user_id=1,
                                     group_id=5, chat_id=42, settings=StaticSettings({})))
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compiler.runtime.context import (
        DocumentService,
        PluginContext,
        RuntimeContext,
        SettingsService,
        StaticSettings,
    )
    from compiler.runtime.descriptors import ToolOverride
    from compiler.runtime.errors import (
        CapabilityUnavailable,
        ManifestError,
        RuntimeLoaderError,
        ToolCallRefused,
        UnresolvedPlaceholderError,
        UnsafeSettingError,
    )
    from compiler.runtime.fleet.watch import ManifestWatcher, watch_manifest
    from compiler.runtime.fleet.watch_status import WatchStatus
    from compiler.runtime.loader import Manifest, load_manifest
    from compiler.runtime.loading_policy import ProfileOverBudget
    from compiler.runtime.mcp.providers import McpConfig
    from compiler.runtime.serve.app import create_app
    from compiler.runtime.serve.endpoint import ServeLimits
    from compiler.runtime.serve.identity import Identity
    from compiler.runtime.tools.registry import ToolRegistry
    from compiler.runtime.toolset import SkippedCapability, Toolset, attach_mcp

_EXPORTS = {
    "load_manifest": "compiler.runtime.loader",
    "Manifest": "compiler.runtime.loader",
    "RuntimeContext": "compiler.runtime.context",
    "PluginContext": "compiler.runtime.context",
    "StaticSettings": "compiler.runtime.context",
    "ToolRegistry": "compiler.runtime.tools.registry",
    "Toolset": "compiler.runtime.toolset",
    "SkippedCapability": "compiler.runtime.toolset",
    "attach_mcp": "compiler.runtime.toolset",
    "McpConfig": "compiler.runtime.mcp.providers",
    "ToolOverride": "compiler.runtime.descriptors",
    "SettingsService": "compiler.runtime.context",
    "DocumentService": "compiler.runtime.context",
    "ManifestError": "compiler.runtime.errors",
    "RuntimeLoaderError": "compiler.runtime.errors",
    "UnresolvedPlaceholderError": "compiler.runtime.errors",
    "UnsafeSettingError": "compiler.runtime.errors",
    "ToolCallRefused": "compiler.runtime.errors",
    "CapabilityUnavailable": "compiler.runtime.errors",
    "watch_manifest": "compiler.runtime.fleet.watch",
    "ManifestWatcher": "compiler.runtime.fleet.watch",
    "WatchStatus": "compiler.runtime.fleet.watch_status",
    "ProfileOverBudget": "compiler.runtime.loading_policy",
    "create_app": "compiler.runtime.serve.app",
    "ServeLimits": "compiler.runtime.serve.endpoint",
    "Identity": "compiler.runtime.serve.identity",
}

__all__ = [
    "CapabilityUnavailable",
    "DocumentService",
    "Identity",
    "Manifest",
    "ManifestError",
    "ManifestWatcher",
    "McpConfig",
    "PluginContext",
    "ProfileOverBudget",
    "RuntimeContext",
    "RuntimeLoaderError",
    "ServeLimits",
    "SettingsService",
    "SkippedCapability",
    "StaticSettings",
    "ToolCallRefused",
    "ToolOverride",
    "ToolRegistry",
    "Toolset",
    "UnresolvedPlaceholderError",
    "UnsafeSettingError",
    "WatchStatus",
    "attach_mcp",
    "create_app",
    "load_manifest",
    "watch_manifest",
]


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compiler.runtime' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
