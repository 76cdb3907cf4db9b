"""SPEC §16, bad input: hostile schemas and replies are bounded, located at compile time
where they can be, a clear note at run time, never a crash or a frozen event loop.

Compile time: a ToolOverride's ``output_schema`` gets the api capability's checks (a
catastrophic pattern, a schema too large to check: located errors; 10,000 levels or over
1 MiB: refused by the reader, located). Run time (a manifest edited by hand, so the
compiler's refusals are bypassed): a catastrophic pattern is not run and the text says so,
in time linear in the reply (n vs 8n in a child process); large structured replies are
shaped off the event loop thread.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.api import tool_call as api_tool
from compiler.runtime.api.output import OutputContract
from compiler.runtime.api.shaping import ResponseShaping, shape_structured
from compiler.runtime.redaction import CutText, Redactor
from tests.support.capc import run_capc
from tests.support.complexity import assert_linear
from tests.support.runtime import api_capability, write_manifest
from tests.support.scripted_server import Reply, ScriptedServer, scripted_server

THIS = "tests.runtime.api.test_output_bad_input"
CATASTROPHIC = {"type": "object", "required": ["name"],
                "properties": {"name": {"type": "string", "pattern": "(a+)+$"}}}
CAPABILITY = """apiVersion: capc/v1
kind: Capability
code: lookup
name: Lookup
type: api
options:
  description: Look something up
  url: https://api.example.com/v1/lookup
---
"""


@pytest.fixture
def scripted() -> Iterator[ScriptedServer]:
    with scripted_server() as server:
        yield server


def compile_override(tmp_path: Path, override: str) -> tuple[int, str]:
    tree = tmp_path / "capabilities"
    tree.mkdir()
    (tree / "lookup.yaml").write_text(CAPABILITY + override, encoding="utf-8")
    result = run_capc("compile", str(tree), "-o", str(tmp_path / "m.json"), cwd=tmp_path)
    return result.returncode, result.stdout + result.stderr


def test_an_override_output_schema_with_a_catastrophic_pattern_is_a_located_error(
    tmp_path: Path
) -> None:
    code, output = compile_override(tmp_path, (
        "apiVersion: capc/v1\nkind: ToolOverride\ntool: lookup\noutput_schema:\n"
        "  type: object\n  properties:\n    name: {type: string, pattern: '(a+)+$'}\n"))
    assert code == 1, output
    assert "lookup.yaml:16:" in output and "error[api-output-schema-pattern]" in output
    assert not (tmp_path / "m.json").exists()


def test_an_override_output_schema_too_large_to_check_is_a_located_error(
    tmp_path: Path
) -> None:
    schema = {"type": "object",
              "properties": {f"p{index}": {"type": "string"} for index in range(25_000)}}
    document = {"apiVersion": "capc/v1", "kind": "ToolOverride", "tool": "lookup",
                "output_schema": schema}
    code, output = compile_override(tmp_path, json.dumps(document) + "\n")
    assert code == 1, output
    assert "lookup.yaml:10:" in output and "error[api-output-schema-size]" in output
    assert "more than 20000 nodes" in output


@pytest.mark.parametrize(("shape", "expected"), [("deep", "error[yaml-syntax]"),
                                                 ("1 MiB", "error[file-too-large]")])
def test_a_10000_deep_or_1_mib_override_schema_is_refused_located(
    tmp_path: Path, shape: str, expected: str
) -> None:
    if shape == "deep":
        schema = "{type: object, properties: {a: " * 10_000 + "{type: string}" + "}}" * 10_000
    else:
        schema = json.dumps({"type": "object", "properties": {
            f"p{index}": {"type": "string"} for index in range(40_000)}})
    assert shape == "deep" or len(schema) > 1 << 20
    code, output = compile_override(
        tmp_path, f"apiVersion: capc/v1\nkind: ToolOverride\ntool: lookup\n"
                  f"output_schema: {schema}\n")
    assert code == 1, output[-2000:]
    assert "lookup.yaml:" in output and expected in output
    assert "Traceback" not in output


def structured_call(n: int) -> Callable[[], object]:
    """Workload: a reply whose string of n characters meets a catastrophic pattern."""
    contract = OutputContract("t", CATASTROPHIC)
    body = json.dumps({"name": "a" * n + "!"})
    cut = CutText(body, False, len(body))
    return lambda: shape_structured(Redactor(), cut, ResponseShaping.from_manifest(None),
                                    contract)


def test_a_catastrophic_pattern_is_never_run_on_a_reply() -> None:
    reply = structured_call(50_000)()
    assert reply.structured  # (a+)+$ is not checked: the value is kept, and the text says so
    assert reply.text.endswith("[output schema: the pattern at $.name was not checked "
                               "(unsafe pattern)]")
    assert_linear(f"{THIS}:structured_call", 200_000, time_limit=90)


async def call(tmp_path: Path, url: str, schema: Any) -> Any:
    entry = api_capability("lookup", url, properties={}, arguments={}, timeout=60.0,
                           max_response_bytes=16 << 20)
    entry["tool"]["output_schema"] = schema
    manifest = load_manifest(write_manifest(tmp_path / "m.json", [entry]),
                             registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        [tool] = (await manifest.resolve(["lookup"], RuntimeContext(
            user_id=1, settings=StaticSettings({})))).tools
        return await tool.ainvoke({"type": "tool_call", "name": "lookup", "args": {},
                                   "id": "c1"})


async def test_a_10_mib_reply_with_a_catastrophic_pattern_is_checked_off_the_loop(
    scripted: ScriptedServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    threads: list[str] = []
    real = api_tool.shape_structured

    def recording(*arguments: Any) -> Any:
        threads.append(threading.current_thread().name)
        return real(*arguments)

    monkeypatch.setattr(api_tool, "shape_structured", recording)
    body = json.dumps({"name": "a" * (10 << 20) + "!"}).encode()
    url = scripted.script("/r", Reply(200, body, (("Content-Type", "application/json"),)))
    message = await call(tmp_path, url, CATASTROPHIC)
    assert message.artifact == {"name": "a" * (10 << 20) + "!"}
    assert "the pattern at $.name was not checked" in message.content[-200:]
    assert threads and threads[0].startswith("capc-shaping"), threads
    assert threads[0] != threading.current_thread().name


@pytest.mark.parametrize(("body", "content_type", "note"), [
    (b"\xff\xfe not json at all {", "application/json", "the response is not JSON"),
    (b'{"items": 5}', "application/json", "$: expected array, got object"),
])
async def test_a_reply_that_breaks_the_schema_is_text_with_a_note(
    scripted: ScriptedServer, tmp_path: Path, body: bytes, content_type: str, note: str
) -> None:
    url = scripted.script("/r", Reply(200, body, (("Content-Type", content_type),)))
    message = await call(tmp_path, url, {"type": "array"})
    assert message.artifact is None
    assert note in message.content
