"""An entry whose tail is given in pieces (joined a few MiB at a time as they come, its
HMAC put in place afterwards: compiler/cache/store.py) is the very file the joined tail
makes."""

from __future__ import annotations

from pathlib import Path

import pytest

from compiler.atomic import joined_runs
from compiler.cache.store import CompileCache


@pytest.mark.parametrize("pieces", [[], [b""], [b"abc"],
                                    [b"a", memoryview(b"bc"), b"", b"d" * 70_000]])
def test_pieces_write_the_joined_entry(tmp_path: Path, pieces: list[bytes | memoryview]) -> None:
    joined = CompileCache(tmp_path / "joined", "tree", b"k" * 32)
    pieced = CompileCache(tmp_path / "pieced", "tree", b"k" * 32)
    joined.write_entry("files", {"payload": [1, 2]}, b"".join(pieces))
    pieced.write_entry("files", {"payload": [1, 2]}, iter(pieces))
    assert (tmp_path / "pieced" / "tree.files").read_bytes() == \
        (tmp_path / "joined" / "tree.files").read_bytes()
    assert pieced.read_entry("files") == ({"payload": [1, 2]}, b"".join(pieces))


def test_a_pieced_entry_under_another_key_is_a_miss(tmp_path: Path) -> None:
    CompileCache(tmp_path, "tree", b"k" * 32).write_entry("files", 1, iter([b"x", b"y"]))
    assert CompileCache(tmp_path, "tree", b"j" * 32).read_entry("files") is None


@pytest.mark.parametrize("bound", [1, 3, 4, 5, 1 << 30])
def test_pieces_are_joined_in_order_in_bounded_chunks(bound: int) -> None:
    pieces: list[bytes | memoryview] = [b"ab", memoryview(b"c"), b"", b"defgh", b"i", b"jk"]
    chunks = [bytes(chunk) for chunk in joined_runs(iter(pieces), bound)]
    assert b"".join(chunks) == b"abcdefghijk"
    # Each chunk but the last reaches the bound; none holds more than a bound plus a piece.
    assert all(len(chunk) >= bound for chunk in chunks[:-1])
    assert all(len(chunk) < bound + 5 for chunk in chunks)
    if bound == 1 << 30:
        assert len(chunks) == 1
