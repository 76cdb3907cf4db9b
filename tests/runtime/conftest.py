"""Fixtures of the runtime loader tests: a recording server on 127.0.0.1, manifests, contexts."""

from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parent))

from runtime_support import RecordingServer, recording_server


@pytest.fixture
def server() -> Iterator[RecordingServer]:
    with recording_server() as running:
        yield running
