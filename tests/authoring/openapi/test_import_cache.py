"""The ``capc compile`` after ``capc import openapi`` reuses the import's compile check
(compiler/cache/deferred_entries.py), and says exactly what an uncached compile says.

Each case is a project with its own cache folder; the import and the compiles run in it
through the CLI. What was reused is read from what the compile did: how many files it
parsed and whether it ran the checks at all (the real functions, counted), never time.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi import generated_tree
from tests.authoring.openapi.helpers import PETSTORE
from tests.authoring.openapi.public_corpus import public_document
from tests.support.capc import run_capc

OUT = "capabilities/api"
HAND_WRITTEN = """apiVersion: capc/v1
kind: Capability
code: weather
name: Weather
type: api
options:
  name: weather
  description: Today's weather
  method: GET
  url: https://weather.example.com/v1/today
"""


@dataclass
class Work:
    """What compiles did: files parsed from YAML, tree compiles run (not served whole)."""

    parsed: int = 0
    compiled: int = 0


@pytest.fixture
def work(monkeypatch: pytest.MonkeyPatch) -> Iterator[Work]:
    """Counts of the real parse and compile functions' calls (they still run)."""
    from compiler import pipeline
    from compiler.source import documents

    done = Work()
    parse, compile_documents = documents.parse_source, pipeline.compile_documents

    def parsing(*args: Any, **kwargs: Any) -> Any:
        done.parsed += 1
        return parse(*args, **kwargs)

    def compiling(*args: Any, **kwargs: Any) -> Any:
        done.compiled += 1
        return compile_documents(*args, **kwargs)

    monkeypatch.setattr(documents, "parse_source", parsing)
    monkeypatch.setattr(pipeline, "compile_documents", compiling)
    yield done


def _project(root: Path, files: dict[str, str] | None = None, capc: str = "") -> Path:
    root.mkdir(parents=True)
    (root / "pyproject.toml").write_text(
        f'[project]\nname = "app"\n\n[tool.capc]\nroots = ["capabilities"]\n{capc}')
    for name, text in (files or {}).items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)
    return root


def _capc(project: Path, *args: str) -> Any:
    return run_capc(*args, cwd=project, extra_env={"CAPC_CACHE_DIR": str(project.parent / "cache"),
                                                   "CAPC_NO_CACHE": ""})


def _import(project: Path, spec: Path, *selection: str) -> None:
    done = _capc(project, "import", "openapi", str(spec), *(selection or ("--all",)), "-o", OUT)
    assert done.returncode == 0, done.stderr


def _same_as_uncached(project: Path, work: Work, *flags: str) -> Work:
    """Compile with the cache and without; assert the same exit, output and manifest bytes;
    what the cached compile did."""
    before = Work(work.parsed, work.compiled)
    cached = _capc(project, "compile", "-o", "cached.json", *flags)
    did = Work(work.parsed - before.parsed, work.compiled - before.compiled)
    plain = _capc(project, "compile", "--no-cache", "-o", "plain.json", *flags)
    assert (cached.returncode, cached.stderr) == (plain.returncode, plain.stderr)
    assert cached.stdout.replace("cached.json", "plain.json") == plain.stdout
    if cached.returncode == 0:
        assert (project / "cached.json").read_bytes() == (project / "plain.json").read_bytes()
    return did


def _files(project: Path) -> list[Path]:
    return sorted((project / OUT).glob("*.yaml"))


@pytest.mark.parametrize("spec", ["petstore", "github"])
def test_the_compile_after_an_import_is_served_whole(tmp_path: Path, work: Work,
                                                     spec: str) -> None:
    project = _project(tmp_path / "app")
    if spec == "github":
        _import(project, public_document("github"), "--operations", "tag:git")
    else:
        _import(project, PETSTORE)
    assert _files(project)
    assert _same_as_uncached(project, work) == Work(parsed=0, compiled=0)


def test_a_batched_import_leaves_every_files_work(tmp_path: Path, work: Work,
                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """Batches leave no tree result (none was the tree's), but every file's parse."""
    monkeypatch.setattr(generated_tree, "BATCH_BYTES", 1)  # every file its own batch
    project = _project(tmp_path / "app")
    _import(project, PETSTORE)
    assert len(_files(project)) > 1
    assert _same_as_uncached(project, work) == Work(parsed=0, compiled=1)
    assert _same_as_uncached(project, work) == Work(parsed=0, compiled=0)  # now whole


@pytest.mark.parametrize("batched", [False, True])
def test_an_edited_file_is_parsed_again(tmp_path: Path, work: Work, batched: bool,
                                        monkeypatch: pytest.MonkeyPatch) -> None:
    if batched:
        monkeypatch.setattr(generated_tree, "BATCH_BYTES", 1)
    project = _project(tmp_path / "app")
    _import(project, PETSTORE)
    edited = _files(project)[0]
    text = edited.read_text()
    assert "\nname: " in text
    edited.write_text(text.replace("\nname: ", "\nname: Edited ", 1))
    assert _same_as_uncached(project, work) == Work(parsed=1, compiled=1)
    assert "Edited" in (project / "cached.json").read_text()


def test_other_options_compile_again(tmp_path: Path, work: Work) -> None:
    """--strict is another tree's cache (nothing reused); other variables reuse the
    files' parses but not the tree's result."""
    project = _project(tmp_path / "app", {"vars.yaml": "region: eu\n"})
    _import(project, PETSTORE)
    files = len(_files(project))
    assert _same_as_uncached(project, work, "--strict") == Work(parsed=files, compiled=1)
    assert _same_as_uncached(project, work, "--vars", "vars.yaml") == Work(parsed=0, compiled=1)


def test_a_tree_with_other_files(tmp_path: Path, work: Work,
                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Hand-written files beside: the import's one compile is the tree's (batches are not
    taken); a file added afterwards is compiled with the rest."""
    monkeypatch.setattr(generated_tree, "BATCH_BYTES", 1)
    project = _project(tmp_path / "app", {"capabilities/weather.yaml": HAND_WRITTEN})
    _import(project, PETSTORE)
    assert _same_as_uncached(project, work) == Work(parsed=0, compiled=0)
    (project / "capabilities/news.yaml").write_text(
        HAND_WRITTEN.replace("weather", "news").replace("Weather", "News"))
    assert _same_as_uncached(project, work) == Work(parsed=1, compiled=1)


def _entries(project: Path) -> list[str]:
    folder = project.parent / "cache"
    return sorted(path.suffix for path in folder.iterdir()
                  if path.suffix in {".files", ".tree", ".checks", ".entries"}) \
        if folder.exists() else []


def test_check_and_no_cache_and_refusals_store_nothing(tmp_path: Path) -> None:
    project = _project(tmp_path / "app")
    _import(project, PETSTORE)
    assert _entries(project) == [".checks", ".entries", ".files", ".tree"]
    cache = project.parent / "cache"
    for entry in cache.iterdir():
        entry.unlink()
    assert _capc(project, "import", "openapi", str(PETSTORE), "--check", "-o", OUT
                 ).returncode == 0
    assert _entries(project) == []  # --check writes nothing, the cache included
    for name, flags, env in (("off", (), "1"), ("flag", ("--no-cache",), "")):
        other = _project(tmp_path / name)
        done = run_capc("import", "openapi", str(PETSTORE), "--all", "-o", OUT, *flags,
                        cwd=other, extra_env={"CAPC_CACHE_DIR": str(tmp_path / "cache"),
                                              "CAPC_NO_CACHE": env})
        assert done.returncode == 0 and _entries(project) == [], done.stderr
    elsewhere = _project(tmp_path / "elsewhere")
    assert run_capc("import", "openapi", str(PETSTORE), "--all", "-o", OUT, "--cache-dir",
                    str(tmp_path / "cache"), cwd=elsewhere).returncode == 0
    assert _entries(project) == [".checks", ".entries", ".files", ".tree"]
    # A tree the compile refuses (a hand-written file with the generated one's code): the
    # import writes nothing, and stores nothing.
    clash = _project(tmp_path / "clash", {"capabilities/mine.yaml": HAND_WRITTEN.replace(
        "code: weather", "code: list_pets").replace("name: weather", "name: list_pets")})
    refused = run_capc("import", "openapi", str(PETSTORE), "--all", "-o", OUT, cwd=clash,
                       extra_env={"CAPC_CACHE_DIR": str(tmp_path / "cache")})
    assert refused.returncode == 1 and not (clash / OUT).exists(), refused.stderr
    assert _entries(project) == [".checks", ".entries", ".files", ".tree"]  # elsewhere's
