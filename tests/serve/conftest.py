"""Fixtures of the ``capc serve`` tests: a loopback upstream and a served manifest."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.serve.support import profile, write_served_manifest
from tests.support.runtime import (
    ReceivedRequest,
    RecordingServer,
    api_capability,
    recording_server,
)


def echo_upstream(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    """Answer with what was asked: path, query and the Authorization header."""
    body = {"path": request.path, "query": request.query,
            "authorization": request.header("authorization")}
    return 200, {"Content-Type": "application/json"}, json.dumps(body).encode()


@pytest.fixture
def upstream() -> Iterator[RecordingServer]:
    """A loopback HTTP upstream that echoes each request."""
    with recording_server() as server:
        server.responder = echo_upstream
        yield server


def weather_capabilities(base_url: str) -> list[dict[str, Any]]:
    """A GET tool, a POST tool and a tool of another profile, all on ``base_url``."""
    city = {"city": {"type": "string", "description": "City name", "minLength": 1}}
    return [
        api_capability("get_weather", base_url + "/weather", properties=city,
                       arguments={"city": {"bindings": ["query"], "type": "string"}},
                       required=["city"], description="Current weather of a city"),
        api_capability("create_ticket", base_url + "/tickets", method="POST",
                       properties={"title": {"type": "string"}},
                       arguments={"title": {"bindings": ["body"], "type": "string"}},
                       body_template={"title": "{title}"}, required=["title"]),
        api_capability("admin_reset", base_url + "/reset", method="DELETE",
                       properties={}, arguments={}),
    ]


@pytest.fixture
def weather_manifest(tmp_path: Path, upstream: RecordingServer) -> Path:
    """Profiles ``support`` (weather, tickets) and ``admin`` (reset) over the upstream."""
    return write_served_manifest(
        tmp_path / "manifest.json", weather_capabilities(upstream.base_url),
        [profile("support", ["get_weather", "create_ticket"]),
         profile("admin", ["admin_reset"])])
