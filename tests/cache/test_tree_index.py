"""The stat index (compiler/cache/tree_index.py) answers exactly what the general path does.

Each test compiles a tree in this process through ``compiler.build.build``, edits it, and
compares the cached compile with an uncached one (the general path: list, read, parse,
check). The racy window is set to "trust every signature" here, and each edit gives the
file a modification time of its own (as a ticking clock would), so the index is used
whenever the listing holds and a changed file can only be noticed by its signature; the
racy rule itself is tested on its own, on signatures made for it.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path

import pytest

from compiler import build as build_module
from compiler.build import build
from compiler.cache import tree_index
from compiler.cache.read_recorder import RACY_NS
from compiler.cache.store import CompileCache
from compiler.cache.tree_index import TreeIndex, read_index
from compiler.compile_result import CompileOptions, CompileResult
from compiler.runtime.manifest.format import dump_manifest
from compiler.source import tree_listing

_TICK = [1_000_000_000_000_000_000]


def _api(code: str, tool: str, description: str = "d") -> str:
    return (f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code}\ntype: api\n"
            f"options:\n  name: {tool}\n  description: {description}\n"
            "  url: https://api.example.com/v1/x\n")


def _write(path: Path, text: str) -> None:
    """Write ``path`` and give it a modification time no earlier write had."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    _TICK[0] += 1_000_000
    os.utime(path, ns=(_TICK[0], _TICK[0]))


def _seen(result: CompileResult) -> tuple[bytes | None, list[dict[str, object]]]:
    content = dump_manifest(result.manifest) if result.manifest is not None else None
    return content, [d.as_dict() for d in result.diagnostics]


@pytest.fixture
def tree(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A two-file tree in the working directory, every signature trusted."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(tree_index, "RACY_NS", -(1 << 62))
    _write(tmp_path / "src" / "a.yaml", _api("a", "t1"))
    _write(tmp_path / "src" / "team" / "b.yaml", _api("b", "t2"))
    return tmp_path


def _reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The source files the compiles read from now on (display paths)."""
    read: list[str] = []
    original = build_module._read_file

    def counting(source: object) -> tuple[bytes | None, object]:
        read.append(getattr(source, "display_path", "?"))
        return original(source)  # type: ignore[arg-type]

    monkeypatch.setattr(build_module, "_read_file", counting)
    return read


def _check(tree: Path, options: CompileOptions | None = None) -> CompileResult:
    """The cached compile, asserted equal to an uncached one of the same tree."""
    cached = build(["src"], options=options, cache_dir=tree / "cache")
    assert _seen(cached) == _seen(build(["src"], options=options, use_cache=False))
    return cached


def test_an_unchanged_tree_is_served_without_listing_or_reading_a_file(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _check(tree)
    read = _reads(monkeypatch)
    monkeypatch.setattr(tree_listing, "discover", _refused)
    cached = build(["src"], cache_dir=tree / "cache")
    assert read == []
    assert cached.manifest is not None and cached.manifest_bytes is not None


def _refused(*_: object, **__: object) -> None:
    raise AssertionError("discovery ran")


EDITS: dict[str, Callable[[Path], object]] = {
    "same-size rewrite": lambda tree: _write(tree / "src" / "a.yaml", _api("a", "t9")),
    "rename a tool to clash with another": lambda tree: _write(tree / "src" / "a.yaml",
                                                               _api("a", "t2")),
    "a code clash": lambda tree: _write(tree / "src" / "a.yaml", _api("b", "t1")),
    "touch without change": lambda tree: _write(tree / "src" / "a.yaml", _api("a", "t1")),
    "file added": lambda tree: _write(tree / "src" / "c.yaml", _api("c", "t3")),
    "file added in a new folder": lambda tree: _write(tree / "src" / "new" / "deep" / "c.yaml",
                                                      _api("c", "t2")),
    "file deleted": lambda tree: (tree / "src" / "team" / "b.yaml").unlink(),
    "file renamed": lambda tree: (tree / "src" / "team" / "b.yaml").rename(
        tree / "src" / "team" / "z.yaml"),
    "hidden file added": lambda tree: _write(tree / "src" / ".c.yaml", _api("c", "t2")),
    "an override of another file's tool": lambda tree: _write(
        tree / "src" / "o.yaml",
        "apiVersion: capc/v1\nkind: ToolOverride\ntool: t1\ndescription: new\n"),
    "folder replaced by a symlink": lambda tree: _relink(tree),
}


def _relink(tree: Path) -> None:
    _write(tree / "elsewhere" / "b.yaml", _api("b", "t1"))
    (tree / "src" / "team" / "b.yaml").unlink()
    (tree / "src" / "team").rmdir()
    (tree / "src" / "team").symlink_to(tree / "elsewhere", target_is_directory=True)


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_each_edit_gives_what_an_uncached_compile_gives(edit: str, tree: Path) -> None:
    _check(tree)
    _check(tree)  # the indexed hit
    EDITS[edit](tree)
    _check(tree)
    _check(tree)  # and the index written by the edited compile


def test_a_root_that_resolves_elsewhere_is_listed_again(tree: Path) -> None:
    (tree / "one").mkdir()
    _write(tree / "one" / "a.yaml", _api("a", "t1"))
    (tree / "two").mkdir()
    _write(tree / "two" / "a.yaml", _api("x", "t7"))
    (tree / "root").symlink_to(tree / "one", target_is_directory=True)
    first = build(["root"], cache_dir=tree / "cache")
    (tree / "root").unlink()
    (tree / "root").symlink_to(tree / "two", target_is_directory=True)
    second = build(["root"], cache_dir=tree / "cache")
    assert _seen(second) == _seen(build(["root"], use_cache=False))
    assert _seen(first) != _seen(second)


def test_changed_options_use_their_own_index(tree: Path) -> None:
    _check(tree)
    _write(tree / "src" / "a.yaml", _api("a", "t1").replace("https://api.example.com",
                                                            "http://127.0.0.1"))
    _check(tree)
    _check(tree, CompileOptions(allow_private_networks=True))
    _check(tree, CompileOptions(strict=True))
    _check(tree)


@pytest.mark.parametrize("damage", ["truncated", "flipped", "empty", "garbage"])
@pytest.mark.parametrize("kind", ["index", "tree", "files", "entries"])
def test_a_damaged_entry_falls_back_to_a_compile(kind: str, damage: str, tree: Path) -> None:
    _check(tree)
    _write(tree / "src" / "a.yaml", _api("a", "t5"))
    _check(tree)
    (entry,) = (tree / "cache").glob(f"*.{kind}")
    content = entry.read_bytes()
    entry.write_bytes({"truncated": content[: len(content) // 2],
                       "flipped": content[:-9] + bytes([content[-9] ^ 1]) + content[-8:],
                       "empty": b"",
                       "garbage": os.urandom(len(content))}[damage])
    _check(tree)
    _check(tree)


def _index(started_ns: int, changed_ns: int, path: str) -> TreeIndex:
    known = os.stat(path)
    signature = (known.st_dev, known.st_ino, known.st_size, changed_ns, changed_ns)
    return TreeIndex(started_ns, (), ((os.path.dirname(path), signature),),
                     ((path, "a.yaml", None, signature, "key"),))


def test_a_signature_taken_within_the_racy_window_is_not_trusted(tmp_path: Path) -> None:
    path = tmp_path / "a.yaml"
    path.write_text("x", encoding="utf-8")
    now = time.time_ns()
    racy = _index(now, now - RACY_NS // 2, str(path))
    assert not racy.trusted(racy.files[0][3])
    assert racy.unchanged() == [None]
    assert not racy.listing_holds([])
    old = _index(now, now - 2 * RACY_NS, str(path))
    assert old.trusted(old.files[0][3])
    assert not old.trusted(None)


def test_an_index_entry_of_another_shape_is_a_miss(tree: Path) -> None:
    _check(tree)
    store = CompileCache.for_tree(tree / "cache", ["src"], CompileOptions())
    assert read_index(store) is not None
    store.write_entry(tree_index.ENTRY_KIND, ["not", "an", "index"])
    assert read_index(store) is None
    store.write_entry(tree_index.ENTRY_KIND, [1, [], [("a", ("x",))], []])
    assert read_index(store) is None
    _check(tree)


def test_an_edit_reads_only_the_edited_file(tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _write(tree / "src" / "c.yaml", _api("c", "t3"))
    _check(tree)
    _check(tree)
    _write(tree / "src" / "a.yaml", _api("a", "t9", "edited"))
    read = _reads(monkeypatch)
    build(["src"], cache_dir=tree / "cache")
    assert read == ["src/a.yaml"]


def test_an_unchanged_file_read_late_is_read_again_when_it_no_longer_matches(
        tree: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A position nobody asked before is wanted of an unchanged file (the code clash below
    points at b.yaml too), and b.yaml changes between the index check and that read (to no
    clash at all): the compile is the general path's of the tree as it now is."""
    _check(tree)
    _check(tree)
    _write(tree / "src" / "a.yaml", _api("b", "t1"))
    read: list[str] = []
    original = build_module._read_file

    def changing(source: object) -> tuple[bytes | None, object]:
        shown = getattr(source, "display_path", "?")
        read.append(shown)
        if shown == "src/team/b.yaml" and read.count(shown) == 1:
            _write(tree / "src" / "team" / "b.yaml", "# moved\n" + _api("z", "t7"))
        return original(source)  # type: ignore[arg-type]

    monkeypatch.setattr(build_module, "_read_file", changing)
    cached = build(["src"], cache_dir=tree / "cache")
    monkeypatch.setattr(build_module, "_read_file", original)
    assert read.count("src/team/b.yaml") == 2  # late, for the clash; then listed again
    assert _seen(cached) == _seen(build(["src"], use_cache=False))
    assert cached.manifest is not None  # no clash is left
    _check(tree)
