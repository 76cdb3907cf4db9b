"""``capc serve``: the reviewed tools of a manifest served to any MCP client (SPEC §15).

    from compiler.runtime.serve import create_app
    app = create_app("build/manifest.json", profiles=["support"])

``identity`` holds the ``Identity`` value and the ``Authenticator`` protocol an
authenticator implements; ``app`` the ASGI application factory; ``endpoint`` the MCP
methods; ``transport`` streamable HTTP and ``stdio`` standard I/O. Needs the extra
``capc[serve]`` (starlette, uvicorn, mcp).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from compiler.runtime.serve.app import create_app
    from compiler.runtime.serve.endpoint import ServeLimits
    from compiler.runtime.serve.identity import Authenticator, Identity

__all__ = ["Authenticator", "Identity", "ServeLimits", "create_app"]

_EXPORTS = {
    "create_app": "compiler.runtime.serve.app",
    "ServeLimits": "compiler.runtime.serve.endpoint",
    "Identity": "compiler.runtime.serve.identity",
    "Authenticator": "compiler.runtime.serve.identity",
}


def __getattr__(name: str) -> Any:
    from importlib import import_module

    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'compiler.runtime.serve' has no attribute {name!r}")
    value = getattr(import_module(module), name)
    globals()[name] = value
    return value
