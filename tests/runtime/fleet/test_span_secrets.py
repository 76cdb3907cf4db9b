"""SPEC §13: an api tool call's spans carry "method, host, status; never a query, path
slot value or secret". A setting may name the host itself (``https://${TENANT}.example``):
the resolved value is a secret like any other setting and is masked everywhere else, so
the client span must not export it either. Real OpenTelemetry SDK, real loopback server.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry import trace
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from tests.support.runtime import RecordingServer, api_capability, recording_server, write_manifest

pytestmark = pytest.mark.independent

HOST_SETTING = "localhost"  # resolves to the loopback server; a setting's value all the same


@pytest.fixture(scope="module")
def exporter() -> InMemorySpanExporter:
    memory = InMemorySpanExporter()
    provider = trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):  # set once per process, as OTel allows
        provider = TracerProvider()
        trace.set_tracer_provider(provider)
    provider.add_span_processor(SimpleSpanProcessor(memory))
    return memory


async def test_a_host_from_a_setting_is_not_exported_in_a_span(
    tmp_path: Path, exporter: InMemorySpanExporter
) -> None:
    server: RecordingServer
    with recording_server() as server:
        port = server.base_url.rsplit(":", 1)[1]
        entry = api_capability("lookup", f"http://${{API_HOST}}:{port}/items",
                               properties={}, arguments={}, placeholders=["API_HOST"])
        manifest = load_manifest(write_manifest(tmp_path / "m.json", [entry]),
                                 registry=ToolRegistry(), allow_private_networks=True)
        ctx = RuntimeContext(settings=StaticSettings({"API_HOST": HOST_SETTING}))
        exporter.clear()
        async with manifest:
            (tool,) = (await manifest.resolve(["lookup"], ctx)).tools
            with trace.get_tracer("tests").start_as_current_span("agent turn"):
                answer = await tool.ainvoke({})
        assert answer == '{"ok": true}' and server.last().path == "/items"
    spans = exporter.get_finished_spans()
    client = [span for span in spans if span.kind == trace.SpanKind.CLIENT]
    assert len(client) == 1 and client[0].attributes is not None
    assert client[0].attributes["http.response.status_code"] == 200
    for span in spans:
        exported = " ".join([span.name, *(str(v) for v in (span.attributes or {}).values())])
        assert HOST_SETTING not in exported, dict(span.attributes or {})
