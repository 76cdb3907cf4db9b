"""A project tree whose api tools call a real HTTP server on 127.0.0.1, for tool tests."""

from __future__ import annotations

import json
import re
import subprocess
import textwrap
from collections.abc import Callable, Iterator
from contextlib import ExitStack
from dataclasses import dataclass
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.runtime import ReceivedRequest, RecordingServer, recording_server

SECRET = "s3cr3t-Value/with+chars"


def weather_yaml(base_url: str, *, units_name: str = "units", units_default: str = "metric",
                 client_header: str = "capc-tests", select: str = "current") -> str:
    """The capability pull requests edit in these tests."""
    return textwrap.dedent(f"""\
        apiVersion: capc/v1
        kind: Capability
        code: weather
        name: Weather
        type: api
        options:
          description: Current weather in a city
          url: {base_url}/v1/current?token=${{WEATHER_KEY}}
          headers:
            X-Client: {client_header}
            X-Api-Key: "${{WEATHER_KEY}}"
          params:
            city: {{type: string, required: true, description: City name}}
            {units_name}: {{type: string, default: {units_default}, description: Units}}
          response:
            select: {select}
        """)


def weather_reply(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    """The upstream: the weather of the city asked for."""
    city = re.search(r"city=([^&]*)", request.raw_path)
    body = {"current": {"city": city.group(1) if city else None, "temp": 12},
            "units": "metric"}
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


@dataclass
class Project:
    """A project folder (pyproject + capabilities/) and the server its tools call."""

    root: Path
    server: RecordingServer
    stop: Callable[[], None]

    def write(self, name: str, text: str) -> Path:
        path = self.root / "capabilities" / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
        return path

    def capc(self, *args: str, **env: str) -> subprocess.CompletedProcess[str]:
        return run_capc(*args, cwd=self.root,
                        extra_env={"CAPC_NO_CACHE": "1", "WEATHER_KEY": SECRET, **env})

    def record(self, code: str, arguments: dict[str, object], *extra: str
               ) -> subprocess.CompletedProcess[str]:
        return self.capc("record", code, "--args", json.dumps(arguments),
                         "--settings-from-env", *extra)


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Project]:
    """A tree calling a loopback server that is running for the test's duration."""
    (tmp_path / "pyproject.toml").write_text(
        "[tool.capc]\nroots = [\"capabilities\"]\nallow_private_networks = true\n")
    with ExitStack() as running:
        server = running.enter_context(recording_server())
        server.responder = weather_reply
        yield Project(tmp_path, server, running.close)
