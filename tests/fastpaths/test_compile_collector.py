"""A compile pauses the cyclic garbage collector and always gives it back as it found it."""

from __future__ import annotations

import gc
from pathlib import Path

import pytest

import compiler.build
from compiler.build import build

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
