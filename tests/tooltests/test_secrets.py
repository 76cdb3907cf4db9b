"""``capc record`` writes no resolved setting, in any spelling, in any byte it writes or
prints, even when the service echoes it back raw, encoded or split."""

from __future__ import annotations

import base64
import html
import json
import textwrap
from pathlib import Path
from urllib.parse import quote, quote_plus

import pytest

from compiler.errors import ProblemsFound
from compiler.tooltests.cases import ToolCase
from compiler.tooltests.recording import _write_case
from tests.support.runtime import ReceivedRequest
from tests.tooltests.conftest import SECRET, Project

USER = "alice"


def spellings(secret: str) -> set[str]:
    """How a secret can show up in bytes on disk or in output (written independently of
    capc's own masking)."""
    found = {secret, quote(secret, safe=""), quote_plus(secret), quote(secret),
             json.dumps(secret)[1:-1], html.escape(secret),
             base64.b64encode(secret.encode()).decode().rstrip("="),
             base64.urlsafe_b64encode(secret.encode()).decode().rstrip("="),
             # inside Basic auth: the part encoded from the secret's bytes alone
             base64.b64encode(f"{USER}:{secret}".encode()).decode()[8:-4]}
    return {spelling for spelling in found if len(spelling) >= 8}


def echoing(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    body = {
        "raw": SECRET, "percent": quote(SECRET, safe=""), "b64": base64.b64encode(
            SECRET.encode()).decode(), "basic": base64.b64encode(f"{USER}:{SECRET}".encode())
        .decode(), "html": html.escape(SECRET), "path": request.raw_path,
        "headers": dict(request.headers), "body": request.body.decode(),
    }
    text = json.dumps(body).replace("/", "\\/")  # JSON's escaped slash too
    return 200, {"Content-Type": "application/json", "Link": f"<{request.raw_path}>; rel=next",
                 "X-Echo": SECRET}, text.encode()


SEARCH = """\
apiVersion: capc/v1
kind: Capability
code: search
name: Search
type: api
options:
  description: Search with every kind of credential
  method: POST
  url: {base}/v1/search?key=${{WEATHER_KEY}}
  headers:
    Authorization: "Bearer ${{WEATHER_KEY}}"
    X-Api-Key: "${{WEATHER_KEY}}"
    Content-Type: application/json
  body_template: {{"query": "{{q}}", "auth": "${{WEATHER_KEY}}"}}
  body_params:
    q: {{type: string, required: true, description: Query}}
"""


def every_written_byte(root: Path) -> bytes:
    return b"".join(path.read_bytes() for path in sorted(root.rglob("*")) if path.is_file())


def test_record_writes_no_setting_in_any_spelling(project: Project) -> None:
    project.server.responder = echoing
    project.write("search.yaml", SEARCH.format(base=project.server.base_url))
    done = project.record("search", {"q": "rain"}, "--name", "echo")
    assert done.returncode == 0, done.stderr
    sent = project.server.received[0]
    assert SECRET in sent.headers["X-Api-Key"]  # the live call really carried it
    written = every_written_byte(project.root) + done.stdout.encode() + done.stderr.encode()
    for spelling in spellings(SECRET):
        assert spelling.encode() not in written, spelling
    case = (project.root / "capabilities" / "search.test.yaml").read_text()
    assert "key=${WEATHER_KEY}" in case and "Bearer ${WEATHER_KEY}" in case
    assert '"auth":"${WEATHER_KEY}"' in case  # the slot it went to stays visible
    project.stop()
    replayed = project.capc("test", WEATHER_KEY="")
    assert replayed.returncode == 0, replayed.stderr + replayed.stdout


def test_the_last_scan_refuses_to_write_a_setting(tmp_path: Path,
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    case = ToolCase(code="search", name="leak", arguments={"q": SECRET}, settings=("K",),
                    documents={}, exchanges=(), result="ok", error=None)
    target = tmp_path / "search.test.yaml"
    with pytest.raises(ProblemsFound):
        _write_case(target, case, {"K": SECRET}, "text")
    assert not target.exists()
    assert "[tooltest-secret]" in capsys.readouterr().err


def test_a_missing_setting_is_a_usage_error(project: Project) -> None:
    project.write("search.yaml", SEARCH.format(base=project.server.base_url))
    without_flag = project.capc("record", "search", "--args", '{"q": "x"}')
    assert without_flag.returncode == 2
    assert "--settings-from-env" in without_flag.stderr
    unset = project.capc("record", "search", "--args", '{"q": "x"}', "--settings-from-env",
                         WEATHER_KEY="")
    assert unset.returncode == 2 and "WEATHER_KEY" in unset.stderr
    assert project.server.received == []


def test_record_refuses_unknown_codes_and_bad_arguments(project: Project) -> None:
    project.write("search.yaml", SEARCH.format(base=project.server.base_url))
    unknown = project.record("serch", {"q": "x"})
    assert unknown.returncode == 2 and "did you mean 'search'?" in unknown.stderr
    bad = project.capc("record", "search", "--args", "[1]")
    assert bad.returncode == 2 and "--args must be a JSON object" in bad.stderr
    assert project.server.received == []
    assert "Traceback" not in unknown.stderr + bad.stderr


def test_record_compiles_first_and_a_refused_host_receives_nothing(project: Project) -> None:
    (project.root / "pyproject.toml").write_text(textwrap.dedent("""\
        [tool.capc]
        roots = ["capabilities"]
        """))
    project.write("search.yaml", SEARCH.format(base=project.server.base_url))
    refused = project.record("search", {"q": "x"})
    assert refused.returncode == 1
    assert "error[url-private-address]" in refused.stderr
    assert project.server.received == []
    allowed = project.record("search", {"q": "x"}, "--allow-private-networks")
    assert allowed.returncode == 0, allowed.stderr
    assert len(project.server.received) == 1
