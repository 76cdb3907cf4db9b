"""docs/overrides.md: its override block compiles as written, and its `capc explain` output
is what capc prints for the tree the page describes."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.doc_blocks import code_blocks
from tests.support.paths import REPO_ROOT

pytest.importorskip("capc_test_plugin", reason="make installs tests/plugins/* into the venv")

PAGE = REPO_ROOT / "docs" / "overrides.md"
REMEMBER = """apiVersion: capc/v1
kind: Capability
code: remember
name: Memory
type: internal
options:
  codes: [memory]
"""


def _override(field: str, value: str) -> str:
    return f'apiVersion: capc/v1\nkind: ToolOverride\ntool: memory__remember\n{field}: "{value}"\n'


def _tree(tmp_path: Path, *overrides: str) -> Path:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a-tools.yaml").write_text(REMEMBER)
    for name, text in zip(("b-step1.yaml", "c-step2.yaml"), overrides, strict=False):
        (source / name).write_text(text)
    compiled = run_capc("compile", "src", "-o", "m.json", "--plugins", cwd=tmp_path)
    assert compiled.returncode == 0, compiled.stderr
    return tmp_path / "m.json"


def test_the_override_block_compiles_and_patches_the_plugin_tool(tmp_path: Path) -> None:
    block = next(block for block in code_blocks(PAGE) if block.lang == "yaml")
    manifest = _tree(tmp_path, block.text)
    explained = run_capc("explain", "memory__remember", "-m", str(manifest), cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    assert '"Store something in memory; tag it with a category."' in explained.stdout


def test_the_explain_output_is_what_capc_prints(tmp_path: Path) -> None:
    shown = next(block for block in code_blocks(PAGE) if block.lang == "console")
    command, *expected = shown.text.rstrip("\n").splitlines()
    assert command == "$ capc explain memory__remember"
    manifest = _tree(tmp_path, _override("description", "step 1"),
                     _override("description_append", " | step 2"))
    explained = run_capc("explain", "memory__remember", "-m", str(manifest), cwd=tmp_path)
    assert explained.returncode == 0, explained.stderr
    printed = explained.stdout.splitlines()
    # Every line the page shows appears, in order ("..." stands for lines left out).
    position = 0
    for line in (line for line in expected if line != "..."):
        assert line in printed[position:], line
        position = printed.index(line, position) + 1
