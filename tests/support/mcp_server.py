"""A real MCP server (the ``mcp`` package's FastMCP, streamable HTTP) on 127.0.0.1.

The suite's one MCP test server. It runs under uvicorn in a daemon thread, on a port bound
when it is created (xdist-safe: never released and picked again). Its tools start as ``add`` and
``echo``; a test changes them between calls (:meth:`McpTestServer.add_tool`,
:meth:`rewrite_description`, :meth:`change_schema`) the way a remote server would after
review. Every ``tools/call`` is recorded (``calls``) and every request's headers are kept
(``seen_headers``), so a test can assert what reached the server.
"""

from __future__ import annotations

import asyncio
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import uvicorn
from mcp import types
from mcp.server.fastmcp import FastMCP
from mcp.types import ToolAnnotations

ADD_DESCRIPTION = "Add two integers."
ECHO_DESCRIPTION = "Echo the text back."


class McpTestServer:
    """A FastMCP server whose tool listing a test may change while it runs."""

    def __init__(self, page_size: int | None = None) -> None:
        # Bound now and handed to uvicorn: a port picked, released and bound again could be
        # taken in between by another test worker.
        self._listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self._listener.bind(("127.0.0.1", 0))
        self.port = int(self._listener.getsockname()[1])
        self.calls: list[tuple[str, dict[str, Any]]] = []
        self.seen_headers: list[dict[str, str]] = []
        self.mcp = FastMCP("capc-test", host="127.0.0.1", port=self.port, stateless_http=True,
                           json_response=True, log_level="WARNING")
        self.add_tool(self._add, "add", ADD_DESCRIPTION, read_only=True)
        self.add_tool(self._echo, "echo", ECHO_DESCRIPTION)
        if page_size is not None:
            self._paginate(page_size)
        self._server: uvicorn.Server | None = None
        self._thread: threading.Thread | None = None

    @property
    def url(self) -> str:
        """The streamable HTTP endpoint."""
        return f"http://127.0.0.1:{self.port}/mcp"

    @property
    def authorizations(self) -> list[str | None]:
        """The ``Authorization`` header of every HTTP request so far (None: absent)."""
        return [headers.get("authorization") for headers in self.seen_headers]

    def _add(self, a: int, b: int) -> int:
        self.calls.append(("add", {"a": a, "b": b}))
        return a + b

    def _echo(self, text: str) -> str:
        self.calls.append(("echo", {"text": text}))
        return text

    def add_tool(self, function: Callable[..., Any], name: str, description: str,
                 read_only: bool = False) -> None:
        """Add (or replace) a tool."""
        if name in self.tool_names():
            self.mcp.remove_tool(name)
        annotations = ToolAnnotations(readOnlyHint=True) if read_only else None
        self.mcp.add_tool(function, name=name, description=description, annotations=annotations)

    def _paginate(self, page_size: int) -> None:
        """List ``page_size`` tools per ``tools/list``, with a ``nextCursor`` to the rest."""
        async def paged(request: types.ListToolsRequest) -> types.ListToolsResult:
            tools = await self.mcp.list_tools()
            cursor = request.params.cursor if request.params else None
            start = int(cursor) if cursor else 0
            end = start + page_size
            return types.ListToolsResult(tools=tools[start:end],
                                         nextCursor=str(end) if end < len(tools) else None)
        self.mcp._mcp_server.list_tools()(paged)

    def tool_names(self) -> list[str]:
        """The tools listed right now."""
        return sorted(tool.name for tool in self.mcp._tool_manager.list_tools())

    def rewrite_description(self, name: str, description: str) -> None:
        """Keep the tool's function, change the text the model obeys (a rug pull)."""
        tool = self.mcp._tool_manager.get_tool(name)
        assert tool is not None
        self.add_tool(tool.fn, name, description,
                      read_only=bool(tool.annotations and tool.annotations.readOnlyHint))

    def change_schema(self) -> None:
        """``add`` gains a third parameter (its input schema changes)."""
        def add(a: int, b: int, c: int = 0) -> int:
            self.calls.append(("add", {"a": a, "b": b, "c": c}))
            return a + b + c
        self.add_tool(add, "add", ADD_DESCRIPTION, read_only=True)

    def start(self) -> None:
        """Serve in a daemon thread; return once the port accepts connections."""
        app = self.mcp.streamable_http_app()
        recorder = self

        async def recording(scope: Any, receive: Any, send: Any) -> None:
            if scope["type"] == "http":
                recorder.seen_headers.append(
                    {k.decode(): v.decode() for k, v in scope.get("headers", [])})
            await app(scope, receive, send)

        config = uvicorn.Config(recording, log_level="warning", lifespan="on")
        self._server = uvicorn.Server(config)
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        deadline = time.monotonic() + 20
        while not self._server.started:
            if time.monotonic() > deadline or not self._thread.is_alive():
                raise RuntimeError("the MCP test server did not start")
            time.sleep(0.02)

    def _run(self) -> None:
        assert self._server is not None
        asyncio.run(self._server.serve(sockets=[self._listener]))

    def stop(self) -> None:
        """Stop serving and wait for the thread."""
        if self._server is not None:
            self._server.should_exit = True
        if self._thread is not None:
            self._thread.join(timeout=10)
        self._listener.close()


@contextmanager
def stalled_server() -> Iterator[str]:
    """An MCP URL on 127.0.0.1 whose server accepts connections and never answers."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    held: list[socket.socket] = []
    stop = threading.Event()

    def accept() -> None:
        listener.settimeout(0.2)
        while not stop.is_set():
            try:
                held.append(listener.accept()[0])
            except OSError:
                continue

    thread = threading.Thread(target=accept, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}/mcp"
    finally:
        stop.set()
        thread.join(timeout=5)
        for connection in held:
            connection.close()
        listener.close()


@contextmanager
def running_mcp_server(page_size: int | None = None) -> Iterator[McpTestServer]:
    """A started :class:`McpTestServer` (listing ``page_size`` tools a page), stopped after."""
    server = McpTestServer(page_size)
    server.start()
    try:
        yield server
    finally:
        server.stop()
