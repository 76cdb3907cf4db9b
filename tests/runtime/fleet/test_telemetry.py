"""OpenTelemetry for api tool calls, through the SDK's real in-memory span exporter.

With a span active, a call adds capc's provenance and the GenAI tool attributes to it and
records each HTTP attempt as a CLIENT span with the HTTP convention names. What must
never appear in any span: the query, a path slot value, a header value, a secret.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.runtime import RecordingServer, api_capability, write_manifest
from tests.support.scripted_server import Reply, scripted_server

SECRET = "sk-live-7d1e9c0b5a"
SLOT = "customer-4411-private"
QUERY = "needle-in-query"


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    memory = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # set once per process, as OTel allows
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory


@pytest.fixture
def spans(exporter: InMemorySpanExporter) -> Iterator[InMemorySpanExporter]:
    exporter.clear()
    yield exporter
    exporter.clear()


def lookup(url: str, **api: Any) -> dict[str, Any]:
    entry = api_capability(
        "lookup", url + "/customers/{id}", properties={"id": {"type": "string"},
                                                      "q": {"type": "string"}},
        arguments={"id": {"bindings": ["path"], "type": "string"},
                   "q": {"bindings": ["query"], "type": "string"}},
        headers={"Authorization": "Bearer ${KEY}"}, placeholders=["KEY"],
    )
    entry["api"].update(api)
    return entry


async def tool_of(tmp_path: Path, entry: dict[str, Any]) -> tuple[Any, Any]:
    manifest = load_manifest(write_manifest(tmp_path / "m.json", [entry]),
                             registry=ToolRegistry(), allow_private_networks=True)
    ctx = RuntimeContext(user_id=1, settings=StaticSettings({"KEY": SECRET}))
    toolset = await manifest.resolve(["lookup"], ctx, profile="support-bot")
    return manifest, toolset.tools[0]


def every_value(span: ReadableSpan) -> str:
    values = [str(value) for value in (span.attributes or {}).values()]
    for event in span.events:
        values += [event.name, *(str(value) for value in (event.attributes or {}).values())]
    return " ".join([span.name, *values])


async def test_a_call_annotates_its_span_and_records_the_http_leg(
        tmp_path: Path, server: RecordingServer, spans: InMemorySpanExporter) -> None:
    manifest, built = await tool_of(tmp_path, lookup(server.base_url))
    tracer = trace.get_tracer("tests")
    with tracer.start_as_current_span("execute_tool lookup"):
        answer = await built.ainvoke({"id": SLOT, "q": QUERY})
    await manifest.aclose()
    assert answer == '{"ok": true}'
    assert server.last().path == f"/customers/{SLOT}"  # what was sent had them all
    client, parent = spans.get_finished_spans()
    assert parent.attributes is not None and client.attributes is not None
    assert dict(parent.attributes) == {
        "capc.capability": "lookup", "capc.kind": "api",
        "capc.manifest_digest": manifest.digest, "capc.profile": "support-bot",
        "gen_ai.tool.name": "lookup", "gen_ai.tool.type": "extension",
        "gen_ai.operation.name": "execute_tool", "capc.http.attempts": 1,
    }
    assert client.kind == trace.SpanKind.CLIENT and client.name == "GET"
    assert client.parent is not None and client.parent.span_id == parent.context.span_id
    port = int(server.base_url.rsplit(":", 1)[1])
    assert dict(client.attributes) == {
        "http.request.method": "GET", "server.address": "127.0.0.1", "server.port": port,
        "url.scheme": "http", "http.response.status_code": 200,
    }
    for span in (client, parent):
        shown = every_value(span)
        assert SLOT not in shown and QUERY not in shown and SECRET not in shown
        assert "/customers" not in shown


async def test_retries_are_counted_and_their_waits_recorded(
        tmp_path: Path, spans: InMemorySpanExporter) -> None:
    with scripted_server() as scripted:
        url = scripted.script("/customers/a", Reply(503, b"busy", ()), Reply(200, b"ok", ()))
        base = url.rsplit("/customers", 1)[0]
        retry = {"attempts": 3, "on_errors": [503], "backoff": 0.01, "idempotency_key": None}
        manifest, built = await tool_of(tmp_path, lookup(base, retry=retry))
        with trace.get_tracer("tests").start_as_current_span("execute_tool lookup"):
            assert await built.ainvoke({"id": "a"}) == "ok"
        await manifest.aclose()
    first, second, parent = spans.get_finished_spans()
    assert first.attributes is not None and second.attributes is not None
    assert first.attributes["http.response.status_code"] == 503
    assert first.attributes["error.type"] == "503"
    assert "http.request.resend_count" not in first.attributes
    assert second.attributes["http.request.resend_count"] == 1
    assert second.attributes["http.response.status_code"] == 200
    assert parent.attributes is not None and parent.attributes["capc.http.attempts"] == 2
    (wait,) = parent.events
    assert wait.name == "capc.retry.wait" and wait.attributes is not None
    assert wait.attributes["http.request.resend_count"] == 1
    assert float(wait.attributes["capc.retry.wait_seconds"]) >= 0


async def test_a_refused_connection_is_an_error_span_without_its_message(
        tmp_path: Path, spans: InMemorySpanExporter) -> None:
    manifest, built = await tool_of(tmp_path, lookup("http://127.0.0.1:9"))
    with trace.get_tracer("tests").start_as_current_span("execute_tool lookup"):
        answer = await built.ainvoke({"id": SLOT})
    await manifest.aclose()
    assert answer.startswith("Error")
    client = next(s for s in spans.get_finished_spans() if s.kind == trace.SpanKind.CLIENT)
    assert client.attributes is not None
    assert client.attributes["error.type"] == "EgressConnectionError"
    assert client.status.status_code == trace.StatusCode.ERROR
    assert not client.events and SLOT not in every_value(client)


async def test_without_an_active_span_nothing_is_recorded(
        tmp_path: Path, server: RecordingServer, spans: InMemorySpanExporter) -> None:
    manifest, built = await tool_of(tmp_path, lookup(server.base_url))
    assert await built.ainvoke({"id": "a"}) == '{"ok": true}'
    await manifest.aclose()
    assert spans.get_finished_spans() == ()


BLOCK_OTEL = """
import importlib.abc, sys
class Absent(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name == "opentelemetry" or name.startswith("opentelemetry."):
            raise ModuleNotFoundError(name)
        return None
sys.meta_path.insert(0, Absent())
"""

CALL = """
import asyncio, json, sys
from compiler.runtime import RuntimeContext, ToolRegistry, load_manifest
manifest = load_manifest(sys.argv[1], registry=ToolRegistry(), allow_private_networks=True)
loaded = "opentelemetry" in sys.modules
async def main():
    toolset = await manifest.resolve(["lookup"], RuntimeContext())
    answer = await toolset.tools[0].ainvoke({"id": "a"})
    await manifest.aclose()
    return answer
answer = asyncio.run(main())
print(json.dumps([answer, loaded, "opentelemetry" in sys.modules]))
"""


@pytest.mark.parametrize("installed", [False, True])
def test_opentelemetry_is_imported_only_for_a_call_and_only_when_installed(
        tmp_path: Path, server: RecordingServer, installed: bool) -> None:
    path = write_manifest(tmp_path / "m.json", [api_capability(
        "lookup", server.base_url + "/customers/{id}", properties={"id": {"type": "string"}},
        arguments={"id": {"bindings": ["path"], "type": "string"}})])
    program = CALL if installed else BLOCK_OTEL + CALL
    done = subprocess.run([sys.executable, "-c", program, str(path)], capture_output=True,
                          text=True, check=True, cwd=Path(__file__).parents[3])
    answer, at_load, after_call = json.loads(done.stdout)
    assert answer == '{"ok": true}'
    assert at_load is False  # import compiler.runtime and load_manifest never import it
    assert after_call is installed


async def test_a_sync_call_is_traced_under_the_callers_span(
        tmp_path: Path, server: RecordingServer, spans: InMemorySpanExporter) -> None:
    manifest, built = await tool_of(tmp_path, lookup(server.base_url))

    def call_from_a_worker_thread() -> str:
        # The portal runs the call on its own loop; the caller's span must still be the parent.
        with trace.get_tracer("tests").start_as_current_span("execute_tool lookup"):
            return str(built.invoke({"id": "a"}))

    assert await asyncio.to_thread(call_from_a_worker_thread) == '{"ok": true}'
    await manifest.aclose()
    client, parent = spans.get_finished_spans()
    assert client.kind == trace.SpanKind.CLIENT and client.parent is not None
    assert client.parent.span_id == parent.context.span_id
    assert parent.attributes is not None and parent.attributes["capc.kind"] == "api"
