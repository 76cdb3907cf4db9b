"""The one way to compile (compiler/tree_compile.py): options from [tool.capc] and the flags,
and a tree compiled with in-memory files exactly as it compiles once they are written."""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from compiler.compile_result import CompileOptions, CompileResult, TreeOverlay
from compiler.tree_compile import CompileRequest, compile_options_for, compile_tree, covering
from tests.support.doc_blocks import code_blocks
from tests.support.paths import REPO_ROOT


def api(code: str, url: str = "https://api.example.com/v1/items") -> str:
    return (f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code}\ntype: api\n"
            f"options:\n  name: {code}\n  description: Items\n  method: GET\n  url: {url}\n")


TEMPLATE = ("apiVersion: capc/v1\nkind: Capability\ncode: listed\nname: '{{ title }}'\n"
            "type: api\noptions:\n  name: listed\n  description: Items\n  method: GET\n"
            "  url: https://api.example.com/v1/items\n")


def _shown(result: CompileResult) -> tuple[bytes | None, list[str]]:
    manifest = result.file_bytes() if result.manifest is not None else None
    return manifest, [str(d) for d in result.diagnostics]


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / "pyproject.toml").write_text('[tool.capc]\nvars = ["vars.yaml"]\n')
    (tmp_path / "vars.yaml").write_text("title: Listed\n")
    tree = tmp_path / "capabilities"
    tree.mkdir()
    (tree / "kept.yaml").write_text(api("kept"))
    (tree / "gone.yaml").write_text(api("gone"))
    (tree / "listed.yaml.j2").write_text(TEMPLATE)
    monkeypatch.chdir(tmp_path)
    return tmp_path


def test_an_overlay_compiles_as_the_tree_it_would_leave(project: Path) -> None:
    overlay = TreeOverlay.of({"capabilities/new/added.yaml": api("added").encode(),
                              "capabilities/kept.yaml": api("kept", "https://b.example/x")
                              .encode()}, frozenset({"capabilities/gone.yaml"}))
    request = CompileRequest(use_cache=False)
    in_memory = compile_tree(request, overlay)
    assert not (project / "capabilities" / "new").exists()
    assert (project / "capabilities" / "gone.yaml").exists()
    for path, raw in overlay.files.items():
        (project / path).parent.mkdir(parents=True, exist_ok=True)
        (project / path).write_bytes(raw)
    (project / "capabilities" / "gone.yaml").unlink()
    written = compile_tree(request)
    assert _shown(in_memory) == _shown(written)
    assert in_memory.manifest is not None
    codes = [entry["code"] for entry in in_memory.manifest["capabilities"]]
    assert codes == ["added", "kept", "listed"]  # the template rendered with [tool.capc] vars


def test_an_overlay_clash_with_a_template_is_the_compile_s_error(project: Path) -> None:
    overlay = TreeOverlay.of({"capabilities/imported/listed.yaml": api("listed").encode()})
    result = compile_tree(CompileRequest(use_cache=False), overlay)
    assert result.manifest is None
    assert any(d.code == "duplicate-code" for d in result.diagnostics), result.diagnostics


def test_a_file_outside_the_roots_is_not_part_of_the_tree(project: Path) -> None:
    overlay = TreeOverlay.of({"elsewhere/listed.yaml": api("listed").encode(),
                              "capabilities/.hidden/listed.yaml": api("listed").encode(),
                              "capabilities/notes.txt": b"not a source"})
    with_overlay = compile_tree(CompileRequest(use_cache=False), overlay)
    assert _shown(with_overlay) == _shown(compile_tree(CompileRequest(use_cache=False)))


def test_a_root_that_does_not_exist_yet_holds_the_overlay(project: Path) -> None:
    overlay = TreeOverlay.of({"fresh/one.yaml": api("one").encode()})
    result = compile_tree(CompileRequest(sources=("fresh",), use_cache=False), overlay)
    assert result.manifest is not None, result.diagnostics
    assert [entry["code"] for entry in result.manifest["capabilities"]] == ["one"]
    assert result.manifest["capabilities"][0]["source"]["path"] == "fresh/one.yaml"


def test_the_cache_gives_the_same_result_for_an_overlay_then_the_written_tree(
        project: Path, tmp_path: Path) -> None:
    request = CompileRequest(cache_dir=str(tmp_path / "cache"))
    overlay = TreeOverlay.of({"capabilities/new.yaml": api("new").encode()})
    first = compile_tree(request, overlay)
    (project / "capabilities" / "new.yaml").write_text(api("new"))
    assert _shown(compile_tree(request)) == _shown(first)
    assert _shown(compile_tree(CompileRequest(use_cache=False))) == _shown(first)


def test_covering_adds_the_folder_written_outside_the_roots(project: Path) -> None:
    inside = covering(CompileRequest(), "capabilities/api")
    assert inside == CompileRequest()
    outside = covering(CompileRequest(), "other/api")
    assert outside.sources == ("capabilities", "other/api")
    missing = covering(CompileRequest(sources=("nothing-here", "capabilities")), "other")
    assert missing.sources == ("capabilities", "other")


def test_options_come_from_the_project_and_the_flags_win(project: Path) -> None:
    (project / "pyproject.toml").write_text(
        '[tool.capc]\nstrict = true\nallowed_networks = ["10.20.0.0/16"]\n'
        'context_attributes = ["page_type"]\n')
    options = compile_options_for(CompileRequest(allowed_networks=("10.30.0.0/16",)))
    assert options == CompileOptions(strict=True, allowed_networks=("10.20.0.0/16",
                                                                    "10.30.0.0/16"),
                                     context_attributes=("page_type",))
    assert compile_options_for(CompileRequest(strict=False)).strict is False


def test_the_example_in_docs_architecture_runs(tmp_path: Path,
                                                monkeypatch: pytest.MonkeyPatch) -> None:
    (tmp_path / "pyproject.toml").write_text("[tool.capc]\nstrict = true\n")
    (tmp_path / "capabilities" / "api").mkdir(parents=True)
    (tmp_path / "capabilities" / "api" / "get_weather.yaml").write_text(api("get_weather"))
    monkeypatch.chdir(tmp_path)
    [block] = [b for b in code_blocks(REPO_ROOT / "docs" / "architecture.md")
               if b.lang == "python"]
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.text, "docs/architecture.md", "exec"), {})
    assert printed.getvalue() == "[]\n"
    assert not (tmp_path / "capabilities" / "overrides").exists()
    (tmp_path / "capabilities" / "api" / "get_weather.yaml").unlink()
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(block.text, "docs/architecture.md", "exec"), {})
    assert "capabilities/overrides/extra.yaml" in printed.getvalue()
