"""Pinned MCP fixtures for runtime tests: a tree of three MCP capabilities on the real
loopback MCP server (``tests.support.mcp_server``), locked with ``capc lock``'s own code and
compiled with the lock, plus a resolve helper with the token in the context's settings."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.pins.lock_command import LockRequest, run_lock
from compiler.pins.lockfile import read_lock
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.egress.addresses import EgressPolicy
from tests.support.mcp_server import McpTestServer, running_mcp_server

TOKEN = "tok-runtime-secret-987654321"


def capability(code: str, url: str, allowed: str | None, approval: str = "never") -> str:
    allowed_line = f"  allowed_tools: {allowed}\n" if allowed is not None else ""
    return ("apiVersion: capc/v1\nkind: Capability\n"
            f"code: {code}\nname: {code}\ntype: mcp\noptions:\n  server_label: {code}\n"
            f"  server_url: {url}\n  headers:\n    Authorization: \"Bearer ${{CALC_TOKEN}}\"\n"
            f"  require_approval: {approval}\n{allowed_line}")


OVERRIDE = """apiVersion: capc/v1
kind: ToolOverride
tool: calc/echo
description: "Echo the text back (reviewed wording)."
input_schema_patch:
  properties:
    note: {type: string, description: "A note for the model only"}
"""


@dataclass
class Pinned:
    server: McpTestServer
    manifest: Path


def compile_pinned(root: Path, server: McpTestServer, overrides: bool = True) -> Path:
    tree = root / "capabilities"
    tree.mkdir(parents=True)
    (tree / "calc.yaml").write_text(capability("calc", server.url, "[add, echo]"))
    (tree / "open.yaml").write_text(capability("open", server.url, None))
    (tree / "gated.yaml").write_text(capability("gated", server.url, "[add]", "always"))
    if overrides:
        (tree / "z-override.yaml").write_text(OVERRIDE)
    options = CompileOptions(allow_private_networks=True)
    unpinned = build([str(tree)], options=options, use_cache=False)
    assert unpinned.manifest is not None, unpinned.diagnostics
    lock = root / "capc.lock"
    outcome = run_lock(unpinned.manifest, LockRequest(str(lock), timeout=10),
                       {"CALC_TOKEN": TOKEN}, EgressPolicy(allow_private_networks=True))
    assert outcome.exit_code == 0, outcome
    pins, problems = read_lock(str(lock))
    assert pins is not None, problems
    result = build([str(tree)], options=CompileOptions(allow_private_networks=True, pins=pins),
                   use_cache=False)
    assert result.manifest is not None, result.diagnostics
    path = root / "manifest.json"
    path.write_bytes(dump_manifest(result.manifest))
    return path


@pytest.fixture
def pinned(tmp_path: Path) -> Iterator[Pinned]:
    with running_mcp_server() as server:
        yield Pinned(server, compile_pinned(tmp_path, server))


async def resolve(manifest: Path, codes: list[str], **context: Any) -> Any:
    loaded = load_manifest(manifest, registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"CALC_TOKEN": TOKEN}), **context)
    return await loaded.resolve(codes, ctx)


