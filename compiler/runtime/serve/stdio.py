"""MCP over standard I/O: one client, one profile, newline-delimited JSON-RPC.

The client (an IDE, a desktop assistant) starts ``capc serve --stdio`` and keeps the
pipe open: requests are answered as they finish (several may run at once), the server's
own requests (an approval's ``elicitation/create``) go out on the same pipe, and with
``--watch`` each reload sends ``notifications/tools/list_changed``. Logs go to stderr,
never to stdout, which carries protocol messages only.
"""

from __future__ import annotations

import asyncio
import itertools
import sys
from typing import TYPE_CHECKING, Any, BinaryIO

from compiler.runtime.serve.identity import ANONYMOUS
from compiler.runtime.serve.protocol import (
    INVALID_REQUEST,
    Incoming,
    ProtocolError,
    encode,
    error_reply,
    notification_message,
    parse_message,
    request_message,
)

if TYPE_CHECKING:
    from compiler.runtime.context import RuntimeContext
    from compiler.runtime.serve.app import McpServer
    from compiler.runtime.serve.endpoint import Approver, McpEndpoint

MAX_PENDING = 64


class StdioSession:
    """One client on a pair of byte streams: what it said at ``initialize`` and its calls."""

    def __init__(self, server: McpServer, endpoint: McpEndpoint,
                 writer: asyncio.StreamWriter | None, output: BinaryIO | None) -> None:
        self._server = server
        self._endpoint = endpoint
        self._writer = writer
        self._output = output
        self._write_lock = asyncio.Lock()
        self._elicits = False
        self._pending: dict[str, asyncio.Future[Any]] = {}
        self._ids = itertools.count(1)
        self._tasks: set[asyncio.Task[None]] = set()

    @property
    def can_elicit(self) -> bool:
        """Whether the client declared the elicitation capability at ``initialize``."""
        return self._elicits

    @property
    def notifies_changes(self) -> bool:
        """True when the server watches its manifest: reloads are announced."""
        return self._server.watching

    async def elicit(self, params: dict[str, Any]) -> dict[str, Any] | None:
        """Ask the client; its result, or None when it answered with an error."""
        if len(self._pending) >= MAX_PENDING:
            return None
        request_id = f"capc-elicit-{next(self._ids)}"
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self._pending[request_id] = future
        try:
            await self.send(request_message(request_id, "elicitation/create", params))
            result = await future
        finally:
            del self._pending[request_id]
        return result if isinstance(result, dict) else None

    async def send(self, message: dict[str, Any]) -> None:
        """Write one message as one line."""
        line = encode(message) + b"\n"
        async with self._write_lock:
            if self._writer is not None:
                self._writer.write(line)
                await self._writer.drain()
            elif self._output is not None:
                self._output.write(line)
                self._output.flush()

    async def list_changed(self) -> None:
        """Tell the client the tool list changed (after a reload)."""
        await self.send(notification_message("notifications/tools/list_changed"))

    def receive(self, line: bytes) -> None:
        """Handle one line: answer a request in its own task, route a response."""
        try:
            message = parse_message(line)
        except ProtocolError as problem:
            self._spawn(self.send(problem.reply()))
            return
        if message.kind == "response":
            future = self._pending.get(str(message.id))
            if future is not None and not future.done():
                future.set_result(message.result if message.error is None else None)
            return
        if message.method == "initialize":
            capabilities = (message.params or {}).get("capabilities")
            self._elicits = isinstance(capabilities, dict) and isinstance(
                capabilities.get("elicitation"), dict)
        if message.kind == "request":
            self._spawn(self._answer(message))

    async def _answer(self, message: Incoming) -> None:
        async def make_context(approve: Approver) -> RuntimeContext:
            return await self._server.context_for(None, ANONYMOUS, approve)

        reply = await self._endpoint.dispatch(message, make_context, self)
        if reply is not None:
            await self.send(reply)

    def _spawn(self, work: Any) -> None:
        task = asyncio.ensure_future(work)
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def finish(self) -> None:
        """Wait for the calls still running (the client closed its end)."""
        for future in self._pending.values():
            if not future.done():
                future.set_result(None)
        while self._tasks:
            await asyncio.gather(*list(self._tasks), return_exceptions=True)


async def serve_stdio(server: McpServer, profile: str | None, *,
                      input_stream: BinaryIO | None = None,
                      output_stream: BinaryIO | None = None) -> None:
    """Serve ``profile`` of ``server`` on stdin/stdout until stdin closes."""
    loop = asyncio.get_running_loop()
    limit = server.limits.max_body_bytes
    reader = asyncio.StreamReader(limit=limit)
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                 input_stream or sys.stdin.buffer)
    session = StdioSession(server, server.endpoints[profile], None,
                           output_stream or sys.stdout.buffer)
    await server.start()
    server.change_listeners.append(session.list_changed)
    try:
        await _read_lines(reader, session, limit)
    finally:
        server.change_listeners.remove(session.list_changed)
        await session.finish()


async def _read_lines(reader: asyncio.StreamReader, session: StdioSession, limit: int) -> None:
    discarding = False  # the rest of a line that was too long is dropped, not parsed
    while True:
        try:
            line = await reader.readline()
        except ValueError as error:
            if not discarding:
                await session.send(error_reply(None, INVALID_REQUEST, "Invalid Request: a "
                                               f"message is at most {limit} bytes"))
            # The reader dropped what it had; without a newline in it, the line goes on.
            discarding = "not found" in str(error)
            continue
        if not line:
            return
        if discarding:
            discarding = not line.endswith(b"\n")
            continue
        if line.strip():
            session.receive(line)
