"""The conformance fixtures served by the official ``mcp`` SDK: the harness's known-good peer.

Run as ``python -m tests.support.conformance_reference PORT``: a stateless Streamable HTTP
server on 127.0.0.1 with the tools the runner's tools-only scenarios call (the same texts
and schema as the fixture plugin, imported from its source), written with the SDK's
FastMCP. ``tests/serve/test_conformance_harness.py`` runs the runner against it, so a
failure in capc serve's run is capc's, not the harness's.
"""

from __future__ import annotations

import base64
import sys
from pathlib import Path
from typing import Any

from mcp.server.fastmcp import FastMCP
from mcp.server.fastmcp.utilities.types import Audio, Image
from mcp.server.transport_security import TransportSecuritySettings

PLUGIN_SOURCE = Path(__file__).resolve().parents[1] / "plugins" / \
    "capc-conformance-plugin" / "src"


def build(port: int) -> FastMCP:
    """The reference server on ``127.0.0.1:port``, path ``/mcp``."""
    sys.path.insert(0, str(PLUGIN_SOURCE))
    from capc_conformance_plugin import (
        ERROR_TEXT,
        JSON_SCHEMA_2020_12,
        PNG_BASE64,
        SIMPLE_TEXT,
        WAV_BASE64,
    )

    security = TransportSecuritySettings(
        enable_dns_rebinding_protection=True,
        allowed_hosts=[f"127.0.0.1:{port}", f"localhost:{port}"],
        allowed_origins=[f"http://127.0.0.1:{port}", f"http://localhost:{port}"])
    server = FastMCP("conformance-reference", host="127.0.0.1", port=port,
                     stateless_http=True, json_response=True, log_level="WARNING",
                     transport_security=security)

    @server.tool(name="test_simple_text", description="Return a simple text response.")
    def simple_text() -> str:
        return str(SIMPLE_TEXT)

    @server.tool(name="test_image_content", description="Return a tiny PNG image.")
    def image_content() -> Image:
        return Image(data=base64.b64decode(PNG_BASE64), format="png")

    @server.tool(name="test_audio_content", description="Return a tiny WAV clip.")
    def audio_content() -> Audio:
        return Audio(data=base64.b64decode(WAV_BASE64), format="wav")

    @server.tool(name="test_error_handling", description="Always fail.")
    def error_handling() -> str:
        raise RuntimeError(ERROR_TEXT)

    @server.tool(name="json_schema_2020_12_tool",
                 description="Tool with JSON Schema 2020-12 features")
    def with_schema(name: str = "", address: dict[str, Any] | None = None) -> str:
        return name

    # FastMCP derives schemas from signatures; the scenario wants this one exactly.
    server._tool_manager._tools["json_schema_2020_12_tool"].parameters = JSON_SCHEMA_2020_12
    return server


if __name__ == "__main__":
    build(int(sys.argv[1])).run("streamable-http")
