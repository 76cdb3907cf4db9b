"""Fixtures of the profile tests: a recording server on 127.0.0.1 (an api tool's upstream)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.runtime import RecordingServer, recording_server


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running
