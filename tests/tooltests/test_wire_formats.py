"""Bodies byte for byte (form, multipart, JSON), per-call values normalised (multipart
boundary, idempotency key), and retries replayed without waiting."""

from __future__ import annotations

import asyncio
import json
import re
import threading
from pathlib import Path

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.source.discovery import discover
from compiler.source.documents import load_files
from compiler.tooltests.cases import case_of, is_tool_test
from compiler.tooltests.clock import FastForwardLoop
from compiler.tooltests.replaying import capabilities_of, replay_outcome
from tests.tooltests.conftest import Project, weather_yaml

UPLOAD = """\
apiVersion: capc/v1
kind: Capability
code: upload
name: Upload
type: api
options:
  description: Upload a document with a note
  method: POST
  url: {base}/v1/upload
  files:
    doc: {{description: The document, required: true}}
  body:
    note: {{type: string, default: {note}, description: A note}}
  retry:
    attempts: 3
    on_errors: [503]
    idempotency_key: Idempotency-Key
"""

FORM = """\
apiVersion: capc/v1
kind: Capability
code: charge
name: Charge
type: api
options:
  description: Create a charge
  method: POST
  url: {base}/v1/charges
  headers:
    Content-Type: application/x-www-form-urlencoded
  body:
    {amount}: {{type: integer, required: true, description: Amount in cents}}
    metadata:
      type: object
      description: Labels
      additional_properties: {{type: string}}
"""


def test_multipart_boundary_and_idempotency_key_replay_equal(project: Project,
                                                             tmp_path: Path) -> None:
    document = tmp_path / "report.txt"
    document.write_bytes(b"quarterly numbers\n")
    project.write("upload.yaml", UPLOAD.format(base=project.server.base_url, note="hello"))
    done = project.record("upload", {"doc": 7}, "--document", f"7={document}")
    assert done.returncode == 0, done.stderr
    sent = project.server.received[0]
    boundary = re.search(r"boundary=(\S+)", sent.headers["Content-Type"]).group(1)
    case = (project.root / "capabilities" / "upload.test.yaml").read_text()
    assert boundary not in case and "--BOUNDARY" in case
    assert sent.headers["Idempotency-Key"] not in case and "<idempotency-key>" in case
    assert "quarterly numbers" in case and "name=\\\"note\\\"" in case.replace("\r", "")
    project.stop()
    replayed = project.capc("test")
    assert replayed.returncode == 0, replayed.stderr
    project.write("upload.yaml", UPLOAD.format(base=project.server.base_url, note="bye"))
    edited = project.capc("test")
    assert edited.returncode == 1
    assert "[tooltest-request]" in edited.stderr and "body differs" in edited.stderr
    assert '"hello' in edited.stderr and '"bye' in edited.stderr


def test_a_form_body_names_the_renamed_field(project: Project) -> None:
    project.write("charge.yaml", FORM.format(base=project.server.base_url, amount="amount"))
    done = project.record("charge", {"amount": 250, "metadata": {"plan": "pro"}})
    assert done.returncode == 0, done.stderr
    assert project.server.received[0].body == b"amount=250&metadata[plan]=pro"
    case = (project.root / "capabilities" / "charge.test.yaml").read_text()
    assert "body: amount=250&metadata[plan]=pro" in case
    project.stop()
    assert project.capc("test").returncode == 0
    project.write("charge.yaml", FORM.format(base=project.server.base_url, amount="amount"
                                             ).replace("amount:", "amount_cents:"))
    edited = project.capc("test")
    assert edited.returncode == 1
    assert "[tooltest-result]" in edited.stderr or "[tooltest-request]" in edited.stderr


RETRIED = """\
apiVersion: capc/v1
kind: Capability
code: flaky
name: Flaky
type: api
options:
  description: A service that asks to come back later
  url: {base}/v1/flaky
  timeout: 300
  retry:
    attempts: 3
    on_errors: [503]
    backoff: 60
"""


def retried_case(base: str, retry_after: str, second: str, expected: str) -> str:
    return f"""\
apiVersion: capc/v1
kind: ToolTest
code: flaky
cases:
  - name: busy then fine
    exchanges:
      - request: {{method: GET, url: "{base}/v1/flaky"}}
        response: {{status: 503, headers: {{retry-after: "{retry_after}"}}, body: busy}}
{second}    {expected}
"""


def test_retry_after_replays_without_waiting(project: Project) -> None:
    base = project.server.base_url
    project.write("flaky.yaml", RETRIED.format(base=base))
    project.stop()
    # Live, this call waits 250 s before its second attempt; replayed, no time passes.
    second = (f'      - request: {{method: GET, url: "{base}/v1/flaky"}}\n'
              "        response: {status: 200, body: fine}\n")
    project.write("flaky.test.yaml", retried_case(base, "250", second, "result: fine"))
    done = project.capc("test")
    assert done.returncode == 0, done.stderr


def test_a_retry_after_beyond_the_timeout_gives_up_as_live(project: Project) -> None:
    base = project.server.base_url
    project.write("flaky.yaml", RETRIED.format(base=base))
    project.stop()
    project.write("flaky.test.yaml", retried_case(base, "3600", "", "error: placeholder"))
    result = build([str(project.root / "capabilities")], use_cache=False,
                   options=CompileOptions(allow_private_networks=True))
    assert result.manifest is not None, result.diagnostics
    documents, _ = load_files(discover([str(project.root / "capabilities")]))
    case = case_of(next(d for d in documents if is_tool_test(d)), 0)
    capability = capabilities_of(result.manifest)["flaky"]
    with asyncio.Runner(loop_factory=FastForwardLoop) as runner:
        text, failed = runner.run(replay_outcome(case, capability))
    assert failed and "HTTP 503" in text
    assert "retry after 3600 s, beyond the tool's timeout" in text, text


def test_the_loop_skips_an_idle_wait() -> None:
    with asyncio.Runner(loop_factory=FastForwardLoop) as runner:
        loop = runner.get_loop()
        start = loop.time()
        runner.run(asyncio.sleep(3600))  # would hang the suite if the clock did not skip
        assert loop.time() - start >= 3600


def test_the_loop_waits_for_real_while_a_thread_works() -> None:
    release = threading.Event()

    async def job_under_deadline() -> str:
        loop = asyncio.get_running_loop()
        threading.Timer(0.05, release.set).start()
        async with asyncio.timeout(1000):  # a skip while the job runs would fire this
            return await loop.run_in_executor(None, lambda: "done" if release.wait(60)
                                              else "stuck")

    with asyncio.Runner(loop_factory=FastForwardLoop) as runner:
        assert runner.run(job_under_deadline()) == "done"


def test_a_large_reply_shaped_on_a_thread_replays_equal(project: Project) -> None:
    big = {"current": {"city": "Paris", "temp": 12},
           "history": [{"day": day, "temp": day % 30} for day in range(6000)]}
    project.server.responder = lambda request: (
        200, {"Content-Type": "application/json"}, json.dumps(big).encode())
    project.write("weather.yaml", weather_yaml(project.server.base_url, select="history"))
    done = project.record("weather", {"city": "Paris"})
    assert done.returncode == 0, done.stderr
    assert len(json.dumps(big)) > 64 * 1024  # over the size shaped on a worker thread
    project.stop()
    assert project.capc("test").returncode == 0
