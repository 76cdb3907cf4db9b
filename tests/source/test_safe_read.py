"""read_regular_file: the whole file up to its bound, with reads sized to the file."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest

from compiler.source import safe_read
from compiler.source.safe_read import read_regular_file


@pytest.mark.parametrize("size", [0, 1, 8191, 8192, 8193, 100_000])
def test_a_file_within_the_bound_is_read_whole(tmp_path: Path, size: int) -> None:
    path = tmp_path / "f.yaml"
    content = bytes(index % 251 for index in range(size))
    path.write_bytes(content)
    assert read_regular_file(path, 200_000) == content


def test_a_file_past_the_bound_gives_one_byte_more_than_the_bound(tmp_path: Path) -> None:
    path = tmp_path / "f.yaml"
    path.write_bytes(b"x" * 50_000)
    assert read_regular_file(path, 10_000) == b"x" * 10_001


def test_reads_are_sized_to_the_file_not_to_a_megabyte(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # Each request allocates its full size first: a small file must not ask for 1 MiB.
    path = tmp_path / "f.yaml"
    path.write_bytes(b"a: 1\n" * 100)
    requests: list[int] = []
    real_read = os.read

    def recording(handle: int, size: int) -> bytes:
        requests.append(size)
        return real_read(handle, size)

    monkeypatch.setattr(safe_read.os, "read", recording)
    assert read_regular_file(path, 1024 * 1024) == b"a: 1\n" * 100
    assert requests and max(requests) <= 8192


def test_a_file_larger_than_its_stat_said_is_still_read_to_the_bound(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A file that grew after fstat: the loop reads on until the end or the bound.
    path = tmp_path / "f.yaml"
    path.write_bytes(b"y" * 30_000)
    real_fstat = os.fstat

    def stale(handle: int) -> Any:
        info = real_fstat(handle)
        return os.stat_result((info.st_mode, *tuple(info)[1:6], 10, *tuple(info)[7:]))

    monkeypatch.setattr(safe_read.os, "fstat", stale)
    assert read_regular_file(path, 100_000) == b"y" * 30_000
    assert read_regular_file(path, 20_000) == b"y" * 20_001
