"""The capability checks' memo (compiler/cache/check_memo.py): an edit re-checks only the
edited file's documents, and every compile prints and builds what an uncached one does.

Compiles run in this process through ``compiler.build.build`` on the bench corpus (api,
MCP and internal capabilities, tool overrides, warnings in several files) and compare
the cached compile with an uncached one after each edit, cross-document facts included.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from bench.corpus import write_corpus
from compiler import pipeline
from compiler.build import build
from compiler.cache.check_memo import CheckMemo
from compiler.compile_result import CompileOptions, CompileResult
from compiler.diagnostics import Diagnostic, Severity
from compiler.runtime.manifest.format import dump_manifest
from compiler.source.documents import SourceDocument

_ANTHROPIC = "require_approval: never"


def _seen(result: CompileResult) -> tuple[bytes | None, list[dict[str, object]]]:
    content = dump_manifest(result.manifest) if result.manifest is not None else None
    return content, [d.as_dict() for d in result.diagnostics]


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    monkeypatch.chdir(tmp_path)
    return list(write_corpus(tmp_path / "src", 40, seed=7).files)


def _checked(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The paths of the capability documents the compiles check from now on."""
    checked: list[str] = []
    original = pipeline._check_capabilities

    def counting(documents: list[SourceDocument], *rest: object) -> list[Diagnostic]:
        checked.extend(document.path for document in documents)
        return original(documents, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(pipeline, "_check_capabilities", counting)
    return checked


def _compare(tree: Path, options: CompileOptions | None = None) -> CompileResult:
    cached = build(["src"], options=options, cache_dir=tree / "cache")
    assert _seen(cached) == _seen(build(["src"], options=options, use_cache=False))
    return cached


def _append(path: Path, text: str) -> None:
    path.write_text(path.read_text(encoding="utf-8") + text, encoding="utf-8")


def _replace(path: Path, old: str, new: str) -> None:
    content = path.read_text(encoding="utf-8")
    assert old in content
    path.write_text(content.replace(old, new, 1), encoding="utf-8")


def test_an_edit_rechecks_only_the_edited_file(corpus: list[Path], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _compare(tmp_path)
    checked = _checked(monkeypatch)
    edited = next(path for path in corpus if "/api/" in path.as_posix())
    _append(edited, "# an edit\n")
    cached = build(["src"], cache_dir=tmp_path / "cache")
    assert checked == [edited.relative_to(tmp_path).as_posix()]
    assert _seen(cached) == _seen(build(["src"], use_cache=False))


def _mcp(corpus: list[Path]) -> Path:
    return next(path for path in corpus if "/mcp/" in path.as_posix()
                and _ANTHROPIC in path.read_text(encoding="utf-8"))


def _api(corpus: list[Path], number: int = 0) -> Path:
    return [path for path in corpus if "/api/" in path.as_posix()][number]


def _tool_name(path: Path) -> str:
    for line in path.read_text(encoding="utf-8").splitlines():
        if line.startswith("  name: "):
            return line.split(": ", 1)[1]
    raise AssertionError(f"no tool name in {path}")


EDITS: dict[str, Callable[[list[Path]], object]] = {
    "a warning added": lambda corpus: _replace(_mcp(corpus), _ANTHROPIC,
                                               "require_approval: always"),
    "an error added": lambda corpus: _replace(_api(corpus), "https://", "ftp://"),
    "a tool renamed to clash with another": lambda corpus: _replace(
        _api(corpus), f"  name: {_tool_name(_api(corpus))}",
        f"  name: {_tool_name(_api(corpus, 1))}"),
    "a schema error added": lambda corpus: _replace(_api(corpus), "  url: ", "  urls: "),
    "a legacy row added": lambda corpus: (corpus[0].parent / "row.yaml").write_text(
        "code: row_one\nname: Row one\ntype: internal\n", encoding="utf-8"),
    "a file deleted": lambda corpus: _api(corpus, 2).unlink(),
    "a file touched without change": lambda corpus: _append(_api(corpus), ""),
    "a file copied under a new name": lambda corpus: (
        corpus[0].parent / "copy.yaml").write_bytes(corpus[0].read_bytes()),
    "an override of a changed tool": lambda corpus: _append(
        _api(corpus, 3), "---\napiVersion: capc/v1\nkind: ToolOverride\n"
        f"tool: {_tool_name(_api(corpus, 4))}\ndescription: overridden\n"),
}


def test_an_edit_validates_only_the_edited_file(corpus: list[Path], tmp_path: Path,
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    _replace(_api(corpus, 5), "  url: ", "  urls: ")  # a file that stays invalid
    _compare(tmp_path)
    validated: list[str] = []
    original = pipeline.validate_document  # type: ignore[attr-defined]

    def counting(document: SourceDocument, kind: str) -> list[Diagnostic]:
        validated.append(document.path)
        return original(document, kind)

    monkeypatch.setattr(pipeline, "validate_document", counting)
    edited = _api(corpus)
    _append(edited, "# an edit\n")
    cached = build(["src"], cache_dir=tmp_path / "cache")
    invalid = _api(corpus, 5).relative_to(tmp_path).as_posix()
    assert sorted(set(validated)) == sorted([edited.relative_to(tmp_path).as_posix(), invalid])
    monkeypatch.setattr(pipeline, "validate_document", original)
    assert _seen(cached) == _seen(build(["src"], use_cache=False))


@pytest.mark.parametrize("edit", sorted(EDITS))
def test_each_edit_gives_what_an_uncached_compile_gives(edit: str, corpus: list[Path],
                                                        tmp_path: Path) -> None:
    _compare(tmp_path)
    EDITS[edit](corpus)
    _compare(tmp_path)
    _compare(tmp_path)
    EDITS["a file touched without change"](corpus)
    _compare(tmp_path)


def test_options_have_their_own_memo(corpus: list[Path], tmp_path: Path) -> None:
    _replace(_api(corpus), "https://", "http://")
    for options in (None, CompileOptions(strict=True),
                    CompileOptions(allow_private_networks=True),
                    CompileOptions(context_attributes=("tenant",)), None):
        _compare(tmp_path, options)
    _append(_api(corpus, 1), "# edit\n")
    _compare(tmp_path, CompileOptions(strict=True))


def test_findings_outside_the_checked_files_are_not_kept() -> None:
    memo = CheckMemo({"known.yaml": []})
    here = Diagnostic("a.yaml", 1, 1, Severity.WARNING, "w", "m")
    memo.record(["a.yaml", "b.yaml", "known.yaml"], [here])
    assert memo.found == {"a.yaml": [here], "b.yaml": []}
    assert not memo.spoiled
    memo.record(["c.yaml"], [Diagnostic("elsewhere.yaml", 1, 1, Severity.WARNING, "w", "m")])
    assert memo.spoiled
    assert memo.recalled(["known.yaml", "a.yaml", "known.yaml"]) == []


def test_a_spoiled_memo_is_not_stored(corpus: list[Path], tmp_path: Path,
                                      monkeypatch: pytest.MonkeyPatch) -> None:
    original = pipeline._check_capabilities

    def misplaced(documents: list[SourceDocument], *rest: object) -> list[Diagnostic]:
        found = original(documents, *rest)  # type: ignore[arg-type]
        return [*found, Diagnostic("", 0, 0, Severity.WARNING, "w", "unlocated")]

    monkeypatch.setattr(pipeline, "_check_capabilities", misplaced)
    build(["src"], cache_dir=tmp_path / "cache")
    assert not list((tmp_path / "cache").glob("*.checks"))
