"""Figures 34a-c, tool tests (SPEC §17, issue 34), each against a baseline of the same run.

- 34a replay: replaying a recorded case through the real tool code, against one live api
  tool call to a loopback server in another process (500 cases; goal <= 1.0x).
- 34b secrets: the bytes of resolved settings that ``capc record`` writes for seeded calls
  whose settings sit in a header, the query, a Basic credential and the body and are
  echoed back, against what vcrpy's default configuration writes for the same calls.
- 34c drift: of 20 seeded upstream contract changes, how many ``--refresh`` flags (goal
  >= 19); 5 value-only changes are the control (goal: none flagged).

    python -m bench.tooltest_figures [--runs 5] [--cases 500]
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import json
import statistics
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import replace
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any
from urllib.parse import quote

from bench.runtime_figures import compile_to_file, loopback_server
from bench.timing import Figure, ratio_figure
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.tooltests.cases import ToolCase, tool_test_yaml
from compiler.tooltests.drift import case_drift
from compiler.tooltests.recording import live_call, settled_result, written_case
from compiler.tooltests.replaying import capabilities_of
from compiler.tooltests.session import replay_all

SECRET = "tok-9f8e7d6c5b4a/3+2=1"
_ITEMS = """\
apiVersion: capc/v1
kind: Capability
code: search_items
name: Search items
type: api
options:
  description: Search the items of the loopback service
  url: http://127.0.0.1:{port}/v1/items
  params:
    query: {{type: string, description: What to look for, required: true}}
    limit: {{type: integer, description: How many, default: 10}}
  headers:
    Authorization: Bearer ${{ITEMS_TOKEN}}
"""
POLICY = EgressPolicy(allow_private_networks=True)


def _manifest(work: Path, name: str, text: str) -> dict[str, Any]:
    tree = work / name
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "tool.yaml").write_text(text, encoding="utf-8")
    path = compile_to_file(tree, work / f"{name}.json", allow_private=True)
    manifest: dict[str, Any] = json.loads(path.read_text())
    return manifest


def replay_figure(work: Path, runs: int, cases: int) -> Figure:
    """34a: one replayed case against one live tool call (per call, medians)."""
    with loopback_server() as port:
        manifest = _manifest(work, "replay", _ITEMS.format(port=port))
        capability = capabilities_of(manifest)["search_items"]
        arguments = {"query": "open invoices", "limit": 5}
        settings = {"ITEMS_TOKEN": SECRET}
        call = live_call(capability, arguments, settings, {}, POLICY)
        case, _ = settled_result(written_case(capability, "invoices", arguments, settings, {},
                                              call), capability)
        batch = [replace(case, name=f"invoices-{index}") for index in range(cases)]
        live = asyncio.run(_live_latencies(work / "replay.json", arguments, runs, cases))
        replayed = []
        for _ in range(runs):
            start = time.perf_counter()
            run = replay_all(batch, manifest)
            replayed.append((time.perf_counter() - start) / cases)
            failed = [found for _, found in run.findings if found]
            if failed:
                raise RuntimeError(f"a benchmark case failed: {failed[0]}")
    return ratio_figure("34a", f"replay one case vs one live api tool call ({cases} cases)",
                        statistics.median(replayed), statistics.median(live), goal_ratio=1.0,
                        reason="replaying costs more than the call it stands for")


async def _live_latencies(manifest_path: Path, arguments: dict[str, Any], runs: int,
                          calls: int) -> list[float]:
    manifest = load_manifest(manifest_path, registry=ToolRegistry(), allow_private_networks=True)
    context = RuntimeContext(settings=StaticSettings({"ITEMS_TOKEN": SECRET}))
    tool = (await manifest.resolve(["search_items"], context)).tools[0]
    await tool.ainvoke(arguments)
    latencies = []
    for _ in range(runs):
        start = time.perf_counter()
        for _ in range(calls):
            await tool.ainvoke(arguments)
        latencies.append((time.perf_counter() - start) / calls)
    await manifest.aclose()
    return latencies


# -- 34b: secrets written ------------------------------------------------------------------

_ECHO = """\
apiVersion: capc/v1
kind: Capability
code: secret_echo
name: Secret echo
type: api
options:
  description: A service that echoes what it was sent
  method: POST
  url: {base}/v1/echo?key=${{API_KEY}}
  headers:
    Authorization: "Basic ${{BASIC}}"
    X-Api-Key: "${{API_KEY}}"
    Content-Type: application/json
  body_template: {{"q": "{{q}}", "token": "${{API_KEY}}"}}
  body_params:
    q: {{type: string, required: true, description: Query}}
"""


class _Echo(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def do_POST(self) -> None:
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        echoed = json.dumps({"path": self.path, "headers": dict(self.headers.items()),
                             "body": body.decode("utf-8", "replace")}).encode()
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(echoed)))
        self.end_headers()
        self.wfile.write(echoed)

    def log_message(self, format: str, *args: Any) -> None:
        return


@contextmanager
def _served(handler: type[BaseHTTPRequestHandler]) -> Iterator[str]:
    import threading

    server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, args=(0.05,), daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def secret_spellings(secret: str) -> set[str]:
    """How a secret shows up in written bytes (written independently of capc's masking)."""
    encoded = secret.encode()
    found = {secret, quote(secret, safe=""), quote(secret), json.dumps(secret)[1:-1],
             base64.b64encode(encoded).decode().rstrip("="),
             base64.urlsafe_b64encode(encoded).decode().rstrip("=")}
    return {spelling for spelling in found if len(spelling) >= 8}


def secret_bytes(text: str, secrets: list[str]) -> int:
    """Bytes of ``text`` that spell one of ``secrets`` (each occurrence counted)."""
    return sum(text.count(spelling) * len(spelling)
               for secret in secrets for spelling in secret_spellings(secret))


def _seeded_secrets(seed: int, calls: int) -> list[tuple[str, str, str]]:
    import random

    rng = random.Random(seed)
    alphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789/+=-_"
    made = []
    for _ in range(calls):
        key = "".join(rng.choice(alphabet) for _ in range(24))
        password = "".join(rng.choice(alphabet) for _ in range(16))
        made.append((key, password, base64.b64encode(f"svc:{password}".encode()).decode()))
    return made


def secrets_figure(work: Path, calls: int = 20, seed: int = 34) -> Figure:
    """34b: secret bytes written by capc record vs by vcrpy's defaults, same calls."""
    seeded = _seeded_secrets(seed, calls)
    with _served(_Echo) as base:
        manifest = _manifest(work, "echo", _ECHO.format(base=base))
        capability = capabilities_of(manifest)["secret_echo"]
        capc_text = ""
        for index, (key, _, basic) in enumerate(seeded):
            settings = {"API_KEY": key, "BASIC": basic}
            call = live_call(capability, {"q": f"call {index}"}, settings, {}, POLICY)
            case = written_case(capability, f"call-{index}", {"q": f"call {index}"}, settings,
                                {}, call)
            capc_text += tool_test_yaml("secret_echo", [case])
        vcr_text = _vcrpy_cassette(work / "cassette.yaml", base, seeded)
    every = [secret for triple in seeded for secret in triple]
    capc_bytes, vcr_bytes = secret_bytes(capc_text, every), secret_bytes(vcr_text, every)
    return Figure("34b", f"secret bytes written, capc record vs vcrpy defaults ({calls} calls)",
                  capc_bytes, vcr_bytes, "B", capc_bytes / vcr_bytes if vcr_bytes else 0.0,
                  "capc writes 0", capc_bytes == 0,
                  "" if capc_bytes == 0 else "capc wrote a secret")


def _vcrpy_cassette(path: Path, base: str, seeded: list[tuple[str, str, str]]) -> str:
    """The same requests through httpx under vcrpy's default configuration."""
    try:
        import httpx
        import vcr
    except ImportError:
        return ""
    with vcr.VCR().use_cassette(str(path)), httpx.Client() as client:
        for index, (key, _, basic) in enumerate(seeded):
            client.post(f"{base}/v1/echo", params={"key": key},
                        headers={"Authorization": f"Basic {basic}", "X-Api-Key": key},
                        json={"q": f"call {index}", "token": key})
    return path.read_text(encoding="utf-8")


# -- 34c: drift ----------------------------------------------------------------------------

_LISTING = """\
apiVersion: capc/v1
kind: Capability
code: listing
name: Listing
type: api
options:
  description: A paged listing
  url: {base}/v1/items
"""
_BASE_BODY: dict[str, Any] = {
    "items": [{"id": 1, "name": "a", "price": 9.5, "tags": ["x"]}],
    "next_cursor": "abc", "total": 1}
_JSON = "application/json"
_LINK = '</v1/items?cursor=abc>; rel="next"'


def _reply(body: Any = None, status: int = 200, media: str = _JSON, link: str | None = _LINK,
           raw: bytes | None = None) -> tuple[int, dict[str, str], bytes]:
    headers = {"Content-Type": media, **({"Link": link} if link else {})}
    payload = raw if raw is not None else json.dumps(_BASE_BODY if body is None else body
                                                     ).encode()
    return status, headers, payload


def _changed(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    body = json.loads(json.dumps(_BASE_BODY))
    change(body)
    return body


def _item(change: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    return _changed(lambda body: change(body["items"][0]))


# Twenty upstream contract changes a refresh must flag, then five value-only controls.
CHANGES: list[tuple[str, Any]] = [
    ("status 200 -> 201", _reply(status=201)),
    ("status 200 -> 500", _reply(status=500)),
    ("content type -> text/plain", _reply(media="text/plain")),
    ("content type -> application/hal+json", _reply(media="application/hal+json")),
    ("field total removed", _reply(_changed(lambda b: b.pop("total")))),
    ("field page added", _reply(_changed(lambda b: b.update(page=1)))),
    ("total retyped to string", _reply(_changed(lambda b: b.update(total="1")))),
    ("items[].price removed", _reply(_item(lambda i: i.pop("price")))),
    ("items[].currency added", _reply(_item(lambda i: i.update(currency="EUR")))),
    ("items[].id retyped to string", _reply(_item(lambda i: i.update(id="1")))),
    ("items[].tags array -> string", _reply(_item(lambda i: i.update(tags="x")))),
    ("next_cursor removed", _reply(_changed(lambda b: b.pop("next_cursor")))),
    ("Link header removed", _reply(link=None)),
    ("Link relations changed", _reply(link='</v1/items?page=9>; rel="last"')),
    ("items array -> object", _reply(_changed(lambda b: b.update(items={"data": []})))),
    ("body no longer JSON", _reply(raw=b"<html>maintenance</html>")),
    ("a redirect appeared", "redirect"),
    ("items[].name now null", _reply(_item(lambda i: i.update(name=None)))),
    ("body wrapped under data", _reply({"data": _BASE_BODY})),
    ("total -> object", _reply(_changed(lambda b: b.update(total={"value": 1})))),
]
CONTROLS: list[tuple[str, Any]] = [
    ("a price moved", _reply(_item(lambda i: i.update(price=10.25)))),
    ("a name changed", _reply(_item(lambda i: i.update(name="b")))),
    ("another cursor", _reply(_changed(lambda b: b.update(next_cursor="def")))),
    ("two items of the same shape", _reply(_changed(
        lambda b: b["items"].append({"id": 2, "name": "c", "price": 1.0, "tags": []})))),
    ("another total", _reply(_changed(lambda b: b.update(total=7)))),
]


def drift_figure(work: Path) -> tuple[Figure, list[str]]:
    """34c: of the 20 seeded changes, how many a refresh flags; and the controls flagged."""
    state: dict[str, Any] = {"reply": _reply()}

    class Upstream(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def do_GET(self) -> None:
            reply = state["reply"]
            if reply == "redirect":
                if self.path.startswith("/v1/items"):
                    status, headers, body = 302, {"Location": "/v2/items"}, b""
                else:
                    status, headers, body = _reply()
            else:
                status, headers, body = reply
            self.send_response(status)
            for name, value in headers.items():
                self.send_header(name, value)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def log_message(self, format: str, *args: Any) -> None:
            return

    missed: list[str] = []
    false_alarms: list[str] = []
    with _served(Upstream) as base:
        manifest = _manifest(work, "listing", _LISTING.format(base=base))
        capability = capabilities_of(manifest)["listing"]

        def recorded() -> ToolCase:
            call = live_call(capability, {}, {}, {}, POLICY)
            return written_case(capability, "page", {}, {}, {}, call)

        baseline = recorded()
        for name, reply in [*CHANGES, *CONTROLS]:
            state["reply"] = reply
            flagged = bool(case_drift(baseline, recorded()))
            if (name, reply) in CHANGES and not flagged:
                missed.append(name)
            if (name, reply) in CONTROLS and flagged:
                false_alarms.append(name)
    caught = len(CHANGES) - len(missed)
    figure = Figure("34c", f"upstream changes flagged by --refresh (of {len(CHANGES)}; "
                           f"{len(false_alarms)} of {len(CONTROLS)} value-only controls flagged)",
                    caught, len(CHANGES), "changes", caught / len(CHANGES), ">= 19 of 20",
                    caught >= 19 and not false_alarms,
                    f"missed: {', '.join(missed + false_alarms)}")
    return figure, missed + [f"false alarm: {name}" for name in false_alarms]


def tooltest_figures(work: Path, runs: int, cases: int = 500) -> list[Figure]:
    """Every figure of this module."""
    drift, _ = drift_figure(work)
    return [replay_figure(work, runs, cases), secrets_figure(work), drift]


def main(argv: list[str] | None = None) -> int:
    """Print the figures (a benchmark reports; it does not gate)."""
    parser = argparse.ArgumentParser(prog="python -m bench.tooltest_figures")
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cases", type=int, default=500)
    arguments = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="capc-bench-tooltests-") as temporary:
        for figure in tooltest_figures(Path(temporary), arguments.runs, arguments.cases):
            print(f"{figure.number}: {figure.title}: measured {figure.measured:.6g} "
                  f"{figure.unit}, baseline {figure.baseline:.6g} {figure.unit}, ratio "
                  f"{figure.ratio:.2f} (goal {figure.goal}) {figure.verdict()}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
