"""Loopback-server fixtures (two origins and a gzip bomb) for the egress and attack suites.

The servers live for the whole session (starting and stopping one costs half a second);
each test gets them with an empty request log.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback import LoopbackServer, make_gzip_bomb, start_server, stop_server


@pytest.fixture(scope="session")
def gzip_bomb() -> bytes:
    return make_gzip_bomb()


@pytest.fixture(scope="session")
def _servers(gzip_bomb: bytes) -> Iterator[tuple[LoopbackServer, LoopbackServer]]:
    running = (start_server(gzip_bomb), start_server(gzip_bomb))
    yield running
    for each in running:
        stop_server(each)


@pytest.fixture
def server(_servers: tuple[LoopbackServer, LoopbackServer]) -> LoopbackServer:
    _servers[0].requests.clear()
    return _servers[0]


@pytest.fixture
def other_server(_servers: tuple[LoopbackServer, LoopbackServer]) -> LoopbackServer:
    """A second server: another port, so another origin."""
    _servers[1].requests.clear()
    return _servers[1]
