"""create_temporary: a new file only this process opened, never an existing path or link."""

from __future__ import annotations

import os
import stat
from pathlib import Path

import pytest

from compiler import atomic
from compiler.atomic import create_temporary


def test_a_new_private_file_in_the_folder(tmp_path: Path) -> None:
    handle, path = create_temporary(tmp_path, ".m.", ".tmp")
    os.close(handle)
    created = Path(path)
    assert created.parent == tmp_path and created.name.startswith(".m.")
    assert created.name.endswith(".tmp") and created.read_bytes() == b""
    assert stat.S_IMODE(created.stat().st_mode) == 0o600


def test_a_taken_name_is_never_opened_and_another_is_tried(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The first two names drawn are taken: one by a file, one by a link to a file outside.
    outside = tmp_path / "outside"
    outside.write_bytes(b"keep")
    folder = tmp_path / "folder"
    folder.mkdir()
    (folder / f"x{'00' * 6}").write_bytes(b"keep")
    (folder / f"x{'01' * 6}").symlink_to(outside)
    draws = iter([b"\0" * 6, b"\1" * 6, b"\2" * 6])
    monkeypatch.setattr(atomic.os, "urandom", lambda size: next(draws))
    handle, path = create_temporary(folder, "x")
    os.close(handle)
    assert path == str(folder / f"x{'02' * 6}")
    assert outside.read_bytes() == b"keep" and (folder / f"x{'00' * 6}").read_bytes() == b"keep"


def test_a_folder_that_cannot_hold_the_file_is_an_os_error(tmp_path: Path) -> None:
    with pytest.raises(OSError):
        create_temporary(tmp_path / "missing", "x")
