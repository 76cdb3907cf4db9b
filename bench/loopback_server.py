"""A small keep-alive HTTP/1.1 server on 127.0.0.1 for the tool-call figures.

It runs in its own process (``python -m bench.loopback_server``; it prints its port), so
its work does not share the client's interpreter lock: the figures then compare client
costs, which is what differs between an api tool and a raw httpx request.
"""

from __future__ import annotations

import asyncio
import sys

_BODY = b'{"items": [{"id": 1, "status": "open"}], "total": 1}'
_RESPONSE = (b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
             b"Content-Length: " + str(len(_BODY)).encode() + b"\r\n\r\n" + _BODY)


async def _serve_connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value.strip())
            if length:
                await reader.readexactly(length)
            writer.write(_RESPONSE)
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        pass  # the client closed the connection: the normal end
    finally:
        writer.close()


async def serve() -> None:
    """Listen on an ephemeral loopback port, print it, serve until stdin closes."""
    server = await asyncio.start_server(_serve_connection, "127.0.0.1", 0, backlog=512)
    port = server.sockets[0].getsockname()[1]
    print(port, flush=True)
    loop = asyncio.get_running_loop()
    # The parent closes our stdin to stop us: no signal handling, no stray process.
    await loop.run_in_executor(None, sys.stdin.read)
    server.close()


if __name__ == "__main__":
    asyncio.run(serve())
