"""Import a document, compile it, load the manifest and call its tools against a loopback
server: what the server received, per call (for the importer's wire tests)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.manifest import dump_manifest
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.loopback import LoopbackServer, RecordedRequest


async def received(out: Path, loopback: LoopbackServer,
                   calls: list[tuple[str, dict[str, Any]]],
                   settings: dict[str, str] | None = None) -> list[RecordedRequest]:
    """Compile the generated tree ``out`` (private networks allowed: the server is on
    127.0.0.1), then make each ``(code, arguments)`` call; the request each one sent."""
    result = build([str(out)], options=CompileOptions(allow_private_networks=True),
                   cwd=out.parent, use_cache=False)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    path = out.parent / f"{out.name}-manifest.json"
    path.write_bytes(dump_manifest(result.manifest))
    loaded = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    context = RuntimeContext(user_id=1, settings=StaticSettings(settings or {}))
    found: list[RecordedRequest] = []
    async with loaded:
        for code, arguments in calls:
            (tool,) = (await loaded.resolve([code], context)).tools
            before = len(loopback.requests)
            reply = await tool.ainvoke(arguments)
            sent = loopback.requests[before:]
            assert len(sent) == 1, (code, reply)
            found.append(sent[0])
    return found
