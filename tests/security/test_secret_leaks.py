"""No resolved secret in any tool output or log line, across every failure path.

End to end: YAML sources → the compiler → a manifest on disk → the runtime loader →
LangChain tools → the egress client → real loopback servers that echo whatever they get
(as careless APIs do in their error pages).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import pytest

from compiler.build import build
from compiler.pipeline import CompileOptions
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.manifest.format import dump_manifest
from tests.support.loopback import LoopbackServer

SECRETS = {
    "API_KEY": "sk-test-Zq8Vw3Kp1Lm9Xr2T",
    "API_TOKEN": "tok-Hs7Ue2Pd4Ya6Wc1N",
    "QUERY_KEY": "qk-Mb5Rf8Gj3Tn0Ve4C",
}


def _capability(code: str, url: str, method: str = "GET", extra: str = "") -> str:
    return f"""apiVersion: capc/v1
kind: Capability
code: {code}
name: {code}
type: api
options:
  description: {code}
  method: {method}
  url: "{url}"
  headers:
    Authorization: "Bearer ${{API_TOKEN}}"
    X-Api-Key: "${{API_KEY}}"
  params:
    q: {{type: string, description: a query, required: true}}
{extra}"""


def _sources(server: LoopbackServer, other: LoopbackServer) -> dict[str, str]:
    base = f"http://127.0.0.1:{server.port}"
    away = f"http://127.0.0.1:{other.port}/echo-error"
    return {
        "error_echo": _capability("error_echo", base + "/echo-error?status=500"),
        "client_error_echo": _capability("client_error_echo", base + "/echo-error?status=401"),
        "ok_echo": _capability("ok_echo", base + "/echo"),
        "query_secret": _capability("query_secret", base + "/echo-error?key=${QUERY_KEY}"),
        "closed_port": _capability("closed_port", "http://127.0.0.1:1/x"),
        "stalled": _capability("stalled", base + "/stall", extra="  timeout: 0.5\n"),
        "truncated": _capability("truncated", base + "/truncated"),
        "reset": _capability("reset", base + "/reset"),
        "redirect_away": _capability(
            "redirect_away", base + "/redirect?status=307&to=" + away.replace(":", "%3A")
        ),
        "redirect_metadata": _capability(
            "redirect_metadata", base + "/redirect?to=http%3A//169.254.169.254/latest/"
        ),
        "too_large": _capability(
            "too_large", base + "/big?n=5000", extra="  max_response_bytes: 1000\n"
        ),
        "body_secret": _capability(
            "body_secret", base + "/echo-error", method="POST",
            extra='  body_template: {"auth": "${API_KEY}", "q": "{q}"}\n',
        ).replace("  params:\n    q:", "  body_params:\n    q:"),
        "body_secret_redirect": _capability(
            "body_secret_redirect",
            base + "/redirect?status=307&to=" + away.replace(":", "%3A"), method="POST",
            extra='  body_template: {"auth": "${API_KEY}", "q": "{q}"}\n',
        ).replace("  params:\n    q:", "  body_params:\n    q:"),
    }


def _compile(tmp_path: Path, sources: dict[str, str]) -> Path:
    tree = tmp_path / "capabilities"
    tree.mkdir()
    for code, text in sources.items():
        (tree / f"{code}.yaml").write_text(text)
    result = build([str(tree)], options=CompileOptions(allow_private_networks=True),
                   use_cache=False)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    path = tmp_path / "manifest.json"
    path.write_bytes(dump_manifest(result.manifest))
    return path


async def _outputs(manifest: Path, allow_private: bool, calls: list[tuple[str, dict[str, Any]]]
                   ) -> list[str]:
    loaded = load_manifest(manifest, registry=ToolRegistry(), allow_private_networks=allow_private)
    context = RuntimeContext(user_id=1, group_id=2, chat_id=3, settings=StaticSettings(SECRETS))
    toolset = await loaded.resolve(sorted({code for code, _ in calls}), context)
    tools = {tool.name: tool for tool in toolset.tools}
    assert set(tools) == {code for code, _ in calls}, toolset.skipped
    return [str(await tools[code].ainvoke(arguments)) for code, arguments in calls]


async def test_no_secret_in_any_output_or_log_line(
    tmp_path: Path, server: LoopbackServer, other_server: LoopbackServer,
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    manifest = _compile(tmp_path, _sources(server, other_server))
    failing: list[tuple[str, dict[str, Any]]] = [
        (code, {"q": "x"}) for code in _sources(server, other_server) if code != "ok_echo"
    ]
    calls: list[tuple[str, dict[str, Any]]] = [
        *failing, ("ok_echo", {"q": "x"}), ("ok_echo", {"q": 5}), ("ok_echo", {}),
        ("ok_echo", {"q": "x", "extra": SECRETS["API_KEY"][:6]}),
    ]
    outputs = await _outputs(manifest, True, calls)
    refused = await _outputs(manifest, False, [("ok_echo", {"q": "x"})])

    # The secrets really were sent (so masking is what keeps them out, not luck) ...
    sent = " ".join(str(request.headers) + request.path for request in server.requests)
    assert all(secret in sent for secret in SECRETS.values())
    # ... every failure is a short "Error" text, and no output or log line holds a secret.
    for (code, _), output in zip(calls[: len(failing)], outputs, strict=False):
        if code == "too_large":  # not a failure: the body is cut at the cap, with a note
            assert "[truncated:" in output, (code, output)
            continue
        assert output.startswith("Error"), (code, output)
    assert refused[0].startswith("Error")
    everything = "\n".join([*outputs, *refused, caplog.text])
    for secret in SECRETS.values():
        assert secret not in everything
    # The cross-origin hops carried no secret header, and the secret body never went there.
    assert [request.method for request in other_server.requests] == ["GET"]
    for request in other_server.requests:
        assert "X-Api-Key" not in request.headers and "Authorization" not in request.headers
