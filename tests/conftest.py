"""Shared fixtures: the repository root and a CLI runner that works in a given folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def repo_root() -> Path:
    return REPO_ROOT


@pytest.fixture
def in_dir() -> Iterator[object]:
    """Temporarily change the working directory (diagnostic paths are cwd-relative)."""
    original = Path.cwd()

    def enter(path: Path) -> None:
        os.chdir(path)

    yield enter
    os.chdir(original)
