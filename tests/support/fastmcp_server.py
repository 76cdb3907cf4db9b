"""A real MCP server (the ``mcp`` package's FastMCP, streamable HTTP) on 127.0.0.1.

The server runs under uvicorn in a daemon thread on a port the OS picks, and records the
``Authorization`` header of every HTTP request it gets, so a test can see that the
credentials capc resolved really reach the server.
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

import uvicorn
from mcp.server.fastmcp import FastMCP


@dataclass
class RunningMcpServer:
    """A FastMCP server being served: its MCP endpoint and the headers it received."""

    url: str
    authorizations: list[str | None] = field(default_factory=list)


def arithmetic_server() -> FastMCP:
    """A FastMCP server with two tools, ``add`` and ``echo``."""
    server = FastMCP("arithmetic", host="127.0.0.1")

    @server.tool(description="Add two integers")
    def add(a: int, b: int) -> int:
        return a + b

    @server.tool(description="Echo a text back")
    def echo(text: str) -> str:
        return text

    return server


@contextmanager
def running_mcp_server(server: FastMCP | None = None) -> Iterator[RunningMcpServer]:
    """Serve ``server`` (default: :func:`arithmetic_server`) for the duration of the block."""
    app = (server or arithmetic_server()).streamable_http_app()
    listening = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    state = RunningMcpServer(url=f"http://127.0.0.1:{port}/mcp")

    async def recording_app(scope: Any, receive: Any, send: Any) -> None:
        if scope["type"] == "http":
            headers = dict(scope.get("headers") or [])
            value = headers.get(b"authorization")
            state.authorizations.append(value.decode() if value is not None else None)
        await app(scope, receive, send)

    config = uvicorn.Config(recording_app, log_level="warning", lifespan="on")
    uvicorn_server = uvicorn.Server(config)
    thread = threading.Thread(target=uvicorn_server.run, kwargs={"sockets": [listening]},
                              daemon=True)
    thread.start()
    while not uvicorn_server.started:
        if not thread.is_alive():
            raise RuntimeError("the MCP server did not start")
        time.sleep(0.01)
    try:
        yield state
    finally:
        uvicorn_server.should_exit = True
        thread.join(timeout=10)
        listening.close()
