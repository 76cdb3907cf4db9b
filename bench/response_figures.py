"""Figure 8: what ``options.response`` saves the model, and what ``select`` costs a call.

A realistic 200-result search reply (about 170 KB of JSON: titles, links, snippets,
authors, tags, thumbnails, ranking data) is served from 127.0.0.1. The same tool is
compiled three ways: as is, with ``select`` (title, url, snippet), and with ``select`` and
``max_items: 10``. Reported: the characters the model receives, and the latency of a call
with ``select`` against the same call without it (median of interleaved runs).
"""

from __future__ import annotations

import asyncio
import json
import random
import statistics
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from bench.runtime_figures import compile_to_file
from bench.timing import Figure, ratio_figure
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest

RESULTS = 200
SELECT = "results[].{title: title, url: url, snippet: snippet}"
_CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
type: api
options:
  description: Search the web
  url: http://127.0.0.1:{port}/search
  params:
    q: {{type: string, required: true}}
  headers:
    Authorization: Bearer ${{SEARCH_TOKEN}}
{response}"""
_SHAPES = {
    "raw": "",
    "selected": f'  response:\n    select: "{SELECT}"\n',
    "selected_10": f'  response:\n    select: "{SELECT}"\n    max_items: 10\n',
}


def search_reply(results: int = RESULTS, seed: int = 7) -> bytes:
    """A search API's reply as real ones look: much the model never needs."""
    rng = random.Random(seed)
    words = ("capability", "compiler", "manifest", "agent", "tool", "schema", "retry",
             "response", "token", "security", "review", "python", "http", "json", "yaml")

    def text(count: int) -> str:
        return " ".join(rng.choice(words) for _ in range(count))

    items = [{
        "id": f"doc-{index:05d}", "rank": index + 1, "score": round(rng.random(), 4),
        "title": text(6).title(), "url": f"https://example.org/articles/{index}/{text(3)}",
        "snippet": text(30), "language": "en",
        "published": f"2026-0{1 + index % 9}-1{index % 10}",
        "author": {"name": text(2).title(), "url": f"https://example.org/people/{index}"},
        "tags": [rng.choice(words) for _ in range(5)],
        "thumbnail": {"small": f"https://cdn.example.org/{index}/s.jpg",
                      "large": f"https://cdn.example.org/{index}/l.jpg", "width": 640,
                      "height": 360},
        "ranking": {"bm25": rng.random(), "freshness": rng.random(),
                    "clicks": rng.randrange(9999)},
    } for index in range(results)]
    reply = {"query": "capability compiler", "total": 48213, "took_ms": 38, "results": items}
    return json.dumps(reply, indent=1).encode()


@contextmanager
def json_server(body: bytes) -> Iterator[int]:
    """A threaded HTTP/1.1 server on 127.0.0.1 answering every GET with ``body`` (JSON);
    yields its port."""
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield int(server.server_address[1])
    finally:
        server.shutdown()
        server.server_close()


def response_figures(work: Path, runs: int, calls: int = 40) -> list[Figure]:
    """Figures 8a-8c: characters received with select / select+max_items, select's cost."""
    body = search_reply()
    with json_server(body) as port:
        tree = work / "response-tree"
        tree.mkdir(parents=True, exist_ok=True)
        for code, response in _SHAPES.items():
            (tree / f"{code}.yaml").write_text(
                _CAPABILITY.format(code=code, port=port, response=response), encoding="utf-8")
        manifest = compile_to_file(tree, work / "response.json", allow_private=True)
        return asyncio.run(_rounds(manifest, runs, calls))


async def _rounds(manifest_path: Path, runs: int, calls: int) -> list[Figure]:
    manifest = load_manifest(manifest_path, registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"SEARCH_TOKEN": "tok-9f8e7d6c5b"}))
    toolset = await manifest.resolve(list(_SHAPES), ctx)
    tools = {tool.name: tool for tool in toolset.tools}
    arguments = {"q": "capability compiler"}
    received = {code: len(str(await tools[code].ainvoke(arguments))) for code in _SHAPES}

    async def latency(code: str) -> float:
        started = time.perf_counter()
        for _ in range(calls):
            await tools[code].ainvoke(arguments)
        return (time.perf_counter() - started) / calls

    pairs = [(await latency("selected"), await latency("raw")) for _ in range(runs)]
    await manifest.aclose()
    with_select = statistics.median(pair[0] for pair in pairs)
    without = statistics.median(pair[1] for pair in pairs)
    return [
        ratio_figure("8a", f"characters the model gets: select vs raw ({RESULTS}-result reply)",
                     received["selected"], received["raw"], goal_ratio=None, unit="chars"),
        ratio_figure("8b", "characters the model gets: select + max_items 10 vs raw",
                     received["selected_10"], received["raw"], goal_ratio=None, unit="chars"),
        ratio_figure("8c", "api call latency with select vs without (same reply)",
                     with_select, without, goal_ratio=None),
    ]
