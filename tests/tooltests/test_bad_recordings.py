"""Bad input to ``capc test``: malformed and hostile case files, recordings that do not
match the request. Each is bounded, located, exit 1 or 2, never a traceback, and never a
real connection: the upstream is stopped before every replay here."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from compiler.tooltests.cases import ToolCase
from compiler.tooltests.replaying import CallRecord, _result_findings, output_schema_problem
from compiler.tooltests.session import replay_all
from tests.tooltests.conftest import Project

PLAIN = """\
apiVersion: capc/v1
kind: Capability
code: plain
name: Plain
type: api
options:
  description: A plain GET
  url: {base}/v1/plain
  params:
    q: {{type: string, required: true, description: Query}}
"""


def case_file(base: str, exchanges: str, expected: str = "result: ok") -> str:
    return textwrap.dedent("""\
        apiVersion: capc/v1
        kind: ToolTest
        code: plain
        cases:
          - name: one
            arguments: {q: x}
            exchanges:
        """) + textwrap.indent(textwrap.dedent(exchanges).format(base=base), "      ") \
        + f"    {expected}\n"


OK_REPLY = """\
- request: {{method: GET, url: "{base}/v1/plain?q=x"}}
  response: {{status: 200, body: ok}}
"""


def offline(project: Project) -> str:
    project.write("plain.yaml", PLAIN.format(base=project.server.base_url))
    project.stop()
    return project.server.base_url


def test_the_plain_case_passes(project: Project) -> None:
    base = offline(project)
    project.write("plain.test.yaml", case_file(base, OK_REPLY))
    done = project.capc("test")
    assert done.returncode == 0, done.stderr
    assert project.server.received == []


def test_a_recording_for_another_request_fails_at_the_url(project: Project) -> None:
    base = offline(project)
    project.write("plain.test.yaml", case_file(base, OK_REPLY.replace("q=x", "q=y")))
    done = project.capc("test")
    assert done.returncode == 1
    assert "plain.test.yaml:8:" in done.stderr and "[tooltest-request]" in done.stderr
    assert 'query parameter "q": expected "y", the tool sent "x"' in done.stderr
    assert "Traceback" not in done.stderr


def test_a_request_past_the_recording_fails_without_connecting(project: Project) -> None:
    base = offline(project)
    # A recorded redirect the tool follows: the next request has no recorded reply.
    redirect = """\
    - request: {{method: GET, url: "{base}/v1/plain?q=x"}}
      response: {{status: 307, headers: {{location: "{base}/v1/moved"}}}}
    """
    project.write("plain.test.yaml", case_file(base, redirect))
    done = project.capc("test")
    assert done.returncode == 1
    assert "[tooltest-extra-request]" in done.stderr
    assert "the tool sent request 2" in done.stderr
    assert project.server.received == []


def test_a_recorded_request_never_sent_is_reported(project: Project) -> None:
    base = offline(project)
    project.write("plain.test.yaml", case_file(base, OK_REPLY + OK_REPLY))
    done = project.capc("test")
    assert done.returncode == 1
    assert "[tooltest-unused-recording]" in done.stderr
    assert "recorded request 2 was never sent" in done.stderr


def test_a_result_that_differs_is_located_at_result(project: Project) -> None:
    base = offline(project)
    project.write("plain.test.yaml", case_file(base, OK_REPLY, "result: not ok"))
    done = project.capc("test")
    assert done.returncode == 1
    assert "plain.test.yaml:10:13: error[tooltest-result]" in done.stderr, done.stderr


def test_an_error_where_a_result_was_recorded(project: Project) -> None:
    base = offline(project)
    failing = OK_REPLY.replace("status: 200", "status: 500")
    project.write("plain.test.yaml", case_file(base, failing))
    done = project.capc("test")
    assert done.returncode == 1
    assert "[tooltest-result]" in done.stderr and "the call failed" in done.stderr


def test_bad_base64_is_a_located_error(project: Project) -> None:
    base = offline(project)
    broken = OK_REPLY.replace("body: ok", "body_base64: '@@@'")
    project.write("plain.test.yaml", case_file(base, broken))
    done = project.capc("test")
    assert done.returncode == 1
    assert "plain.test.yaml:" in done.stderr and "[tooltest-invalid]" in done.stderr


def test_a_fifo_and_a_device_as_case_files_are_refused_without_blocking(
        project: Project, tmp_path: Path) -> None:
    offline(project)
    os.mkfifo(project.root / "capabilities" / "fifo.yaml")
    (project.root / "capabilities" / "zero.test.yaml").symlink_to("/dev/zero")
    done = project.capc("test")
    assert done.returncode in (1, 2)
    assert "capabilities/fifo.yaml:1:1: error[" in done.stderr, done.stderr
    assert "capabilities/zero.test.yaml:1:1: error[" in done.stderr, done.stderr
    assert "Traceback" not in done.stderr


def test_a_50_mib_recorded_reply_is_refused_by_a_bounded_read(project: Project) -> None:
    base = offline(project)
    huge = "x" * (50 * 1024 * 1024)
    project.write("plain.test.yaml", case_file(base, OK_REPLY.replace("body: ok",
                                                                      f"body: {huge}")))
    done = project.capc("test")
    assert done.returncode == 1
    assert "capabilities/plain.test.yaml:1:1: error[" in done.stderr
    assert len(done.stderr) < 10_000  # the reply is never echoed


def test_an_unknown_code_in_capc_test_is_the_compile_error(project: Project) -> None:
    base = offline(project)
    project.write("plain.test.yaml", case_file(base, OK_REPLY).replace("code: plain",
                                                                       "code: plane"))
    done = project.capc("test")
    assert done.returncode == 1
    assert "plain.test.yaml:3:7: error[tooltest-unknown-code]" in done.stderr
    assert "did you mean 'plain'?" in done.stderr


def test_a_case_of_a_capability_missing_from_the_manifest_is_a_setup_error() -> None:
    case = ToolCase(code="gone", name="one", arguments={}, settings=(), documents={},
                    exchanges=(), result="x", error=None)
    run = replay_all([case], {"capabilities": []})
    assert [d.code for d in run.diagnostics] == ["tooltest-setup"]
    assert run.summary() == "1 case: 0 passed, 1 failed"


def test_a_document_the_case_does_not_hold_is_refused_as_live(project: Project) -> None:
    base = offline(project)
    project.write("plain.yaml", PLAIN.format(base=base).replace(
        "  params:", "  files:\n    doc: {description: A document}\n  params:")
        .replace("url: ", "method: POST\n  url: "))
    project.write("plain.test.yaml", case_file(base, OK_REPLY).replace(
        "arguments: {q: x}", "arguments: {q: x, doc: 7}"))
    done = project.capc("test")
    assert done.returncode == 1, done.stderr
    assert "[tooltest-result]" in done.stderr and "document 7 does not exist" in done.stderr
    assert "[tooltest-unused-recording]" in done.stderr


def test_an_unknown_profile_is_a_usage_error(project: Project) -> None:
    base = offline(project)
    project.write("plain.test.yaml", case_file(base, OK_REPLY))
    done = project.capc("test", "--profile", "nope")
    assert done.returncode == 2
    assert "no profile 'nope'" in done.stderr


def test_the_output_schema_check_names_the_path() -> None:
    schema = {"type": "object", "properties": {"temp": {"type": "number"}},
              "required": ["temp"]}
    assert output_schema_problem(schema, None, '{"temp": 12}') is None
    problem = output_schema_problem(schema, None, '{"temp": "warm"}')
    assert problem is not None and problem.startswith("at $.temp:")
    assert output_schema_problem(schema, None, "not json") == "the result is not JSON"


def test_a_reply_breaking_the_output_schema_is_a_located_failure() -> None:
    case = ToolCase(code="plain", name="one", arguments={}, settings=(), documents={},
                    exchanges=(), result='{"temp": "warm"}', error=None)
    record = CallRecord((), '{"temp": "warm"}', False, None,
                        {"type": "object", "properties": {"temp": {"type": "number"}}})
    found = _result_findings(case, record)
    assert [finding.code for finding in found] == ["tooltest-output-schema"]
    assert "at $.temp" in found[0].message


def test_a_recorded_redirect_to_a_metadata_address_is_refused_as_live(
        project: Project) -> None:
    base = offline(project)
    redirect = """\
    - request: {{method: GET, url: "{base}/v1/plain?q=x"}}
      response: {{status: 302, headers: {{location: "http://169.254.169.254/latest/"}}}}
    """
    project.write("plain.test.yaml", case_file(base, redirect))
    done = project.capc("test")
    assert done.returncode == 1
    assert "[tooltest-result]" in done.stderr and "refused" in done.stderr, done.stderr
    assert "[tooltest-extra-request]" not in done.stderr  # refused before it was sent
