"""Fixtures of the runtime loader tests: a recording server on 127.0.0.1, manifests, contexts."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.runtime import RecordingServer, recording_server


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running
