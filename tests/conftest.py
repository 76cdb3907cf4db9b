"""Shared fixtures: the repository root and a CLI runner that works in a given folder."""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="session", autouse=True)
def cache_outside_the_repository(tmp_path_factory: pytest.TempPathFactory) -> Iterator[None]:
    """Compiles in tests (and their subprocesses) keep the compile cache in a temp folder,
    so golden-case folders stay clean while every CLI test still runs through the cache."""
    previous = {name: os.environ.get(name) for name in ("CAPC_CACHE_DIR", "XDG_CACHE_HOME")}
    os.environ["CAPC_CACHE_DIR"] = str(tmp_path_factory.mktemp("capc-cache"))
    # The cache's machine key too (it lives in the user cache root).
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("user-cache"))
    yield
    for name, value in previous.items():
        if value is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = value


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
