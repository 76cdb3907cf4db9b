"""``capc serve --stdio`` in a child process, as an IDE or a desktop assistant starts it:
newline-delimited JSON-RPC on its pipes, the official SDK's stdio client, and
``notifications/tools/list_changed`` after a reload under ``--watch``."""

from __future__ import annotations

import asyncio
import json
import os
import queue
import subprocess
import sys
import threading
from pathlib import Path
from typing import Any

from tests.serve.conftest import weather_capabilities
from tests.serve.support import profile, rpc, write_served_manifest
from tests.support.paths import REPO_ROOT
from tests.support.runtime import RecordingServer


def environment() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(REPO_ROOT), env.get("PYTHONPATH", "")])
    return env


class Child:
    """``capc serve --stdio``, its lines read by a thread (a read never blocks a test)."""

    def __init__(self, *arguments: str) -> None:
        self.process = subprocess.Popen(
            [sys.executable, "-m", "compiler", "serve", *arguments, "--stdio"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
            env=environment(), cwd=REPO_ROOT)
        self.__init_reader__()

    def __init_reader__(self) -> None:
        """Start reading the child's lines on a thread."""
        self.lines: queue.Queue[bytes] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        assert self.process.stdout is not None
        for line in self.process.stdout:
            self.lines.put(line)

    def send(self, line: bytes) -> None:
        assert self.process.stdin is not None
        self.process.stdin.write(line + b"\n")
        self.process.stdin.flush()

    def receive(self) -> dict[str, Any]:
        message: dict[str, Any] = json.loads(self.lines.get(timeout=60))
        return message

    def close(self) -> tuple[int, str]:
        assert self.process.stdin is not None and self.process.stderr is not None
        self.process.stdin.close()
        code = self.process.wait(timeout=60)
        return code, self.process.stderr.read().decode()


def initialize(child: Child) -> dict[str, Any]:
    child.send(rpc("initialize", {"protocolVersion": "2025-11-25", "capabilities": {},
                                  "clientInfo": {"name": "test", "version": "1"}}))
    reply = child.receive()
    child.send(b'{"jsonrpc": "2.0", "method": "notifications/initialized"}')
    return reply


def test_stdio_answers_lists_calls_and_exits_when_stdin_closes(
        weather_manifest: Path, upstream: RecordingServer) -> None:
    child = Child(str(weather_manifest), "--profile", "support", "--allow-private-networks")
    reply = initialize(child)
    assert reply["result"]["protocolVersion"] == "2025-11-25"
    assert reply["result"]["capabilities"]["tools"]["listChanged"] is False
    child.send(rpc("tools/list", request_id=2))
    assert [tool["name"] for tool in child.receive()["result"]["tools"]] == [
        "create_ticket", "get_weather"]
    child.send(b"{oops")
    assert child.receive()["error"]["code"] == -32700
    child.send(rpc("tools/call", {"name": "get_weather", "arguments": {"city": "Kyiv"}},
                   request_id=3))
    result = child.receive()
    assert result["id"] == 3 and result["result"]["isError"] is False
    code, errors = child.close()
    assert code == 0, errors
    assert "Traceback" not in errors
    assert [request.raw_path for request in upstream.received] == ["/weather?city=Kyiv"]


def test_a_reload_is_announced_on_the_pipe(tmp_path: Path, upstream: RecordingServer) -> None:
    capabilities = weather_capabilities(upstream.base_url)
    path = write_served_manifest(tmp_path / "manifest.json", capabilities,
                                 [profile("support", ["get_weather"])])
    child = Child(str(path), "--profile", "support", "--watch")
    assert initialize(child)["result"]["capabilities"]["tools"]["listChanged"] is True
    write_served_manifest(path, capabilities,
                          [profile("support", ["get_weather", "create_ticket"])])
    assert child.receive() == {"jsonrpc": "2.0", "method": "notifications/tools/list_changed"}
    child.send(rpc("tools/list", request_id=2))
    assert [tool["name"] for tool in child.receive()["result"]["tools"]] == [
        "create_ticket", "get_weather"]
    assert child.close()[0] == 0


def test_the_official_sdk_stdio_client(weather_manifest: Path,
                                       upstream: RecordingServer) -> None:
    from mcp import ClientSession, StdioServerParameters
    from mcp.client.stdio import stdio_client

    parameters = StdioServerParameters(
        command=sys.executable, cwd=str(REPO_ROOT), env=environment(),
        args=["-m", "compiler", "serve", str(weather_manifest), "--profile", "support",
              "--stdio", "--allow-private-networks"])

    async def work() -> tuple[list[str], str]:
        async with stdio_client(parameters) as (read, write), \
                ClientSession(read, write) as session:
            await session.initialize()
            tools = await session.list_tools()
            result = await session.call_tool("get_weather", {"city": "Quito"})
            return [tool.name for tool in tools.tools], result.content[0].text  # type: ignore[union-attr]

    names, text = asyncio.run(work())
    assert names == ["create_ticket", "get_weather"]
    assert json.loads(text)["query"] == "city=Quito"


def test_stdio_needs_exactly_one_endpoint(weather_manifest: Path) -> None:
    done = subprocess.run([sys.executable, "-m", "compiler", "serve", str(weather_manifest),
                           "--stdio"], capture_output=True, text=True, env=environment(),
                          cwd=REPO_ROOT, stdin=subprocess.DEVNULL, timeout=120)
    assert done.returncode == 2 and "one --profile" in done.stderr
