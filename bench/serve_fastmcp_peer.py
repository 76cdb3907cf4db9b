"""The FastMCP side of the capc serve figure: the same operation, served by FastMCP.

Run by the separate venv the figure creates (FastMCP 4 needs ``mcp>=2``, which cannot
install beside capc's ``mcp<2``): ``python serve_fastmcp_peer.py PORT UPSTREAM_PORT``.
One tool, ``get_item``, does what capc's api tool does: GET the loopback upstream's
``/items/{item_id}`` over a kept-alive connection and return the reply's text. Stateless
streamable HTTP with JSON replies, as capc serve answers.
"""

from __future__ import annotations

import sys

import httpx
from fastmcp import FastMCP


def main(port: int, upstream_port: int) -> None:
    server = FastMCP("fastmcp-peer")
    client = httpx.AsyncClient(base_url=f"http://127.0.0.1:{upstream_port}", timeout=30)

    @server.tool(name="get_item", description="Look up one item by its id")
    async def get_item(item_id: str) -> str:
        reply = await client.get(f"/items/{item_id}")
        reply.raise_for_status()
        return reply.text

    server.run(transport="http", host="127.0.0.1", port=port, path="/mcp",
               stateless_http=True, json_response=True, log_level="warning",
               show_banner=False)


if __name__ == "__main__":
    main(int(sys.argv[1]), int(sys.argv[2]))
