"""Figure 21: what checking a reply against its output schema adds to an api tool call.

A ~100 KiB search reply is served from 127.0.0.1; one tool returns it as text, the same
tool with ``options.output_schema`` returns text plus the structured value, checked by the
runtime's validator (SPEC §16). Reported: the call latency with the output schema against
the call without it (median of interleaved runs; the issue's goal is at most 1.2).

Run: ``python -m bench.output_figures``.
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from pathlib import Path

from bench.response_figures import json_server, search_reply
from bench.runtime_figures import compile_to_file
from bench.timing import Figure, ratio_figure
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest

RESULTS = 120  # about 100 KiB of JSON
_ITEM = {"type": "object", "required": ["id", "rank", "title", "url"], "properties": {
    "id": {"type": "string", "pattern": "^doc-[0-9]+$"}, "rank": {"type": "integer"},
    "score": {"type": "number"}, "title": {"type": "string"}, "url": {"type": "string"},
    "snippet": {"type": "string"}, "language": {"type": "string"},
    "published": {"type": "string"},
    "author": {"type": "object", "properties": {"name": {"type": "string"},
                                                "url": {"type": "string"}}},
    "tags": {"type": "array", "items": {"type": "string"}},
    "thumbnail": {"type": "object", "properties": {"width": {"type": "integer"},
                                                   "height": {"type": "integer"}}},
    "ranking": {"type": "object", "properties": {"clicks": {"type": "integer"}}}}}
SCHEMA = {"type": "object", "required": ["results"], "properties": {
    "query": {"type": "string"}, "total": {"type": "integer"}, "took_ms": {"type": "integer"},
    "results": {"type": "array", "items": _ITEM}}}
_CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
type: api
options:
  description: Search the web
  url: http://127.0.0.1:{port}/search
{extra}"""


def output_figures(work: Path, runs: int, calls: int = 40) -> list[Figure]:
    """Figure 21: latency of a call with an output schema vs without."""
    body = search_reply(RESULTS)
    with json_server(body) as port:
        tree = work / "output-tree"
        tree.mkdir(parents=True, exist_ok=True)
        for code, extra in (("plain", ""), ("typed", f"  output_schema: {json.dumps(SCHEMA)}\n")):
            (tree / f"{code}.yaml").write_text(
                _CAPABILITY.format(code=code, port=port, extra=extra), encoding="utf-8")
        manifest = compile_to_file(tree, work / "output.json", allow_private=True)
        return asyncio.run(_rounds(manifest, len(body), runs, calls))


async def _rounds(path: Path, size: int, runs: int, calls: int) -> list[Figure]:
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    toolset = await manifest.resolve(["plain", "typed"],
                                     RuntimeContext(user_id=1, settings=StaticSettings({})))
    tools = {tool.name: tool for tool in toolset.tools}
    call = {"type": "tool_call", "name": "typed", "args": {}, "id": "c"}
    message = await tools["typed"].ainvoke(call)
    assert message.artifact is not None, message.content[-300:]

    async def latency(name: str) -> float:
        started = time.perf_counter()
        for _ in range(calls):
            await tools[name].ainvoke({**call, "name": name})
        return (time.perf_counter() - started) / calls

    pairs = [(await latency("typed"), await latency("plain")) for _ in range(runs)]
    await manifest.aclose()
    return [ratio_figure(
        "21", f"api call latency with output_schema vs without ({size // 1024} KiB reply)",
        statistics.median(p[0] for p in pairs), statistics.median(p[1] for p in pairs),
        goal_ratio=1.2)]


if __name__ == "__main__":
    with tempfile.TemporaryDirectory() as folder:
        for figure in output_figures(Path(folder), runs=5):
            print(figure)
