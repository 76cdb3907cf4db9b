"""A compile pauses the cyclic garbage collector and always gives it back as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import compiler.build
from compiler.build import build

pytestmark = pytest.mark.fastpath

CAPABILITY = """\
apiVersion: capc/v1
kind: Capability
code: say_hello
name: Say hello
description: Says hello.
type: internal
"""


def _tree(tmp_path: Path) -> Path:
    root = tmp_path / "capabilities"
    root.mkdir()
    (root / "hello.yaml").write_text(CAPABILITY, encoding="utf-8")
    return root


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_state_is_restored(tmp_path: Path, enabled: bool) -> None:
    root = _tree(tmp_path)
    seen: list[bool] = []
    compile_documents = compiler.build._compile

    def watching(*arguments: object) -> object:
        seen.append(gc.isenabled())
        return compile_documents(*arguments)  # type: ignore[arg-type]

    was = gc.isenabled()
    (gc.enable if enabled else gc.disable)()
    try:
        with pytest.MonkeyPatch.context() as patch:
            patch.setattr(compiler.build, "_compile", watching)
            result = build([str(root)], cwd=tmp_path, use_cache=False)
        assert result.manifest is not None, result.diagnostics
        assert seen == [False] and gc.isenabled() is enabled
    finally:
        (gc.enable if was else gc.disable)()


def test_the_collector_is_restored_when_the_compile_fails(tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    root = _tree(tmp_path)

    def failing(*arguments: object) -> object:
        raise RuntimeError("stop")

    monkeypatch.setattr(compiler.build, "_compile", failing)
    assert gc.isenabled()
    with pytest.raises(RuntimeError):
        build([str(root)], cwd=tmp_path, use_cache=False)
    assert gc.isenabled()


class _Node:
    """A container that can sit in a reference cycle and be watched with a weak reference."""

    def __init__(self) -> None:
        self.other: object = None


def test_what_a_compile_allocated_is_not_left_in_the_young_generation() -> None:
    # Left young, every object of a compile is walked by the first collections after the
    # collector is back on: they must be in the oldest generation when the block ends.
    assert gc.isenabled() and gc.get_freeze_count() == 0
    with compiler.build._collector_paused():
        kept = [[index] for index in range(20_000)]
        marker = _Node()
    oldest = gc.get_objects(generation=2)
    assert any(item is marker for item in oldest)
    assert gc.isenabled() and gc.get_freeze_count() == 0
    del kept, oldest


def test_a_cycle_made_during_a_compile_is_still_collected() -> None:
    import weakref

    with compiler.build._collector_paused():
        first, second = _Node(), _Node()
        first.other, second.other = second, first
        watch = weakref.ref(first)
        del first, second
    assert watch() is not None  # only the collector can free a cycle
    gc.collect()
    assert watch() is None


def test_objects_the_caller_froze_stay_frozen() -> None:
    gc.collect()
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        assert frozen > 0
        with compiler.build._collector_paused():
            kept = [[index] for index in range(1_000)]
        assert gc.get_freeze_count() == frozen and gc.isenabled()
        del kept
    finally:
        gc.unfreeze()


def test_a_kept_compile_hands_its_documents_over_and_gives_the_same_result(
        tmp_path: Path) -> None:
    # The command line holds them to its exit (compiler.cli.exit_without_teardown), so they
    # are never freed one by one; the result must not depend on it, cached or not.
    root = _tree(tmp_path)
    for cached in (False, True):  # (a cold cache each time: a hit keeps nothing)
        plain = build([str(root)], cwd=tmp_path, use_cache=cached,
                      cache_dir=tmp_path / "cache-plain")
        kept: list[object] = []
        held = build([str(root)], cwd=tmp_path, use_cache=cached,
                     cache_dir=tmp_path / "cache-kept", kept=kept)
        assert held == plain and held.manifest is not None
        (documents, *_), = kept
        assert [document.data["code"] for document in documents] == ["say_hello"]


def test_the_command_line_hands_its_compile_a_list_to_keep(
        monkeypatch: pytest.MonkeyPatch) -> None:
    import sys

    import compiler.cli
    import compiler.cli.fast_compile

    given: list[object] = []

    def run(call: object, kept: list[object] | None = None) -> int:
        given.append(kept)
        return 0

    def exit_now(code: int) -> None:
        raise SystemExit(code)

    monkeypatch.setattr(sys, "argv", ["capc", "compile", "src", "-o", "m.json"])
    monkeypatch.setattr(compiler.cli.fast_compile, "run_common_compile", run)
    monkeypatch.setattr(compiler.cli, "exit_without_teardown", exit_now)
    with pytest.raises(SystemExit):
        compiler.cli.main()
    assert given == [[]]
