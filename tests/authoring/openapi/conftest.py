"""Fixtures shared by the importer's wire tests."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.loopback import LoopbackServer, start_server, stop_server


@pytest.fixture(scope="module")
def loopback() -> Iterator[LoopbackServer]:
    """One loopback HTTP server per test module; tests read what it received."""
    server = start_server(b"")
    yield server
    stop_server(server)
