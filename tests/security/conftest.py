"""Fixtures: two loopback servers (two origins) and one gzip bomb per session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from loopback_servers import LoopbackServer, make_gzip_bomb, start_server, stop_server


@pytest.fixture(scope="session")
def gzip_bomb() -> bytes:
    return make_gzip_bomb()


@pytest.fixture
def server(gzip_bomb: bytes) -> Iterator[LoopbackServer]:
    running = start_server(gzip_bomb)
    yield running
    stop_server(running)


@pytest.fixture
def other_server(gzip_bomb: bytes) -> Iterator[LoopbackServer]:
    """A second server: another port, so another origin."""
    running = start_server(gzip_bomb)
    yield running
    stop_server(running)
