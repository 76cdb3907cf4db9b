"""Test support for ``capc serve``: sealed manifests with profiles, an app under a real
uvicorn on 127.0.0.1 (a socket bound before the server starts, xdist-safe), and the
official SDK client."""

from __future__ import annotations

import asyncio
import json
import os
import socket
import threading
import time
from collections.abc import AsyncIterator, Iterator
from contextlib import asynccontextmanager, contextmanager
from pathlib import Path
from typing import Any

import httpx
import uvicorn

from tests.support.runtime import manifest_document, seal

JSON_HEADERS = {"content-type": "application/json",
                "accept": "application/json, text/event-stream"}


def profile(name: str, codes: list[str], deferred: list[str] | None = None) -> dict[str, Any]:
    """A manifest profile entry naming ``codes``."""
    return {"name": name, "description": None, "capabilities": codes,
            "deferred": deferred or [], "budget": {},
            "source": {"path": f"capabilities/profiles/{name}.yaml", "line": 1}}


def write_served_manifest(path: Path, capabilities: list[dict[str, Any]],
                          profiles: list[dict[str, Any]] | None = None) -> Path:
    """A sealed manifest with ``profiles`` (as ``capc compile`` writes it)."""
    document = {key: value for key, value in manifest_document(capabilities).items()
                if key != "digest"}
    if profiles:
        document["profiles"] = profiles
    text = json.dumps(seal(document), sort_keys=True, indent=2, ensure_ascii=False) + "\n"
    write_atomically(path, text)
    return path


def write_atomically(path: Path, text: str) -> None:
    """Replace ``path`` in one step, as a deployment does (a watcher never sees half)."""
    partial = path.with_name(path.name + ".partial")
    partial.write_text(text, encoding="utf-8")
    os.replace(partial, path)


class RunningServer:
    """An ASGI app served by uvicorn in a daemon thread on 127.0.0.1."""

    def __init__(self, app: Any) -> None:
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        config = uvicorn.Config(app, log_level="warning", lifespan="on")
        self.server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True)

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT``."""
        return f"http://127.0.0.1:{self.port}"

    def url(self, path: str) -> str:
        """The URL of ``path`` on this server."""
        return self.base_url + path

    def _run(self) -> None:
        asyncio.run(self.server.serve(sockets=[self._listener]))

    def start(self) -> None:
        """Serve; return once uvicorn has started."""
        self._thread.start()
        deadline = time.monotonic() + 30
        while not self.server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the served app did not start")
            time.sleep(0.02)

    def stop(self) -> None:
        """Stop serving and wait for the thread (lifespan shutdown included)."""
        self.server.should_exit = True
        self._thread.join(timeout=30)
        self._listener.close()


@contextmanager
def running(app: Any) -> Iterator[RunningServer]:
    """``app`` under uvicorn for the duration of the block."""
    server = RunningServer(app)
    server.start()
    try:
        yield server
    finally:
        server.stop()


def rpc(method: str, params: dict[str, Any] | None = None, request_id: Any = 1) -> bytes:
    """One JSON-RPC request as bytes."""
    message: dict[str, Any] = {"jsonrpc": "2.0", "id": request_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def post(url: str, body: bytes, headers: dict[str, str] | None = None) -> httpx.Response:
    """POST ``body`` to ``url`` with MCP's headers (``headers`` over them)."""
    return httpx.post(url, content=body, headers={**JSON_HEADERS, **(headers or {})},
                      timeout=60)


@asynccontextmanager
async def sdk_session(url: str, headers: dict[str, str] | None = None,
                      **session_options: Any) -> AsyncIterator[Any]:
    """An initialized official SDK ``ClientSession`` on ``url`` (streamable HTTP)."""
    from mcp import ClientSession
    from mcp.client.streamable_http import streamable_http_client

    async with httpx.AsyncClient(timeout=60, headers=headers) as http, \
            streamable_http_client(url, http_client=http) as (read, write, _), \
            ClientSession(read, write, **session_options) as session:
        await session.initialize()
        yield session
