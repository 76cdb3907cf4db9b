"""The import's files held compressed and its compile check in batches: the verdict, the
diagnostics and the files written are one compile's, and batches are taken only when the
tree holds nothing but the imported files."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from compiler.authoring.openapi import generated_tree
from compiler.authoring.openapi.generated_tree import HeldFiles, _batches
from compiler.compile_result import CompileOptions
from compiler.tree_compile import CompileRequest
from tests.authoring.openapi.helpers import PETSTORE, document, get, imported, write


def _secured_on_http(operations: int) -> dict[str, Any]:
    """Operations on a plain-http server sending a bearer token: each tool is an error
    under strict (a credential over http), a warning otherwise."""
    data = document({f"/items{i}": {"get": get(f"listItems{i}")} for i in range(operations)},
                    security=[{"token": []}],
                    components={"securitySchemes": {"token": {"type": "http",
                                                              "scheme": "bearer"}}})
    data["servers"] = [{"url": "http://items.example.com/v1"}]
    return data


def _outcome(spec: Path, out: Path, **options: Any) -> tuple[Any, ...]:
    result = imported(spec, out, **options)
    files = {path.name: path.read_bytes() for path in sorted(out.glob("*.yaml"))}
    return (result.exit_code, result.lines, result.diagnostics, files)


def _counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """How many files each compile of the import's check was given."""
    sizes: list[int] = []
    compile_tree = generated_tree.compile_tree

    def counting(request: CompileRequest, overlay: Any = None, **kwargs: Any) -> Any:
        sizes.append(len(overlay.files))
        return compile_tree(request, overlay, **kwargs)

    monkeypatch.setattr(generated_tree, "compile_tree", counting)
    return sizes


@pytest.mark.parametrize(("name", "strict"), [("petstore", False), ("http", True),
                                              ("http", False)])
def test_batches_give_one_compiles_verdict(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          name: str, strict: bool) -> None:
    spec = PETSTORE if name == "petstore" else write(tmp_path / "doc", _secured_on_http(5))
    whole = _outcome(spec, tmp_path / "one" / "api", strict=strict)
    sizes = _counted(monkeypatch)
    monkeypatch.setattr(generated_tree, "BATCH_BYTES", 1)  # every file its own batch
    batched = _outcome(spec, tmp_path / "many" / "api", strict=strict)
    assert len(sizes) > 1 and set(sizes) == {1}, sizes
    one, many = (tmp_path / "one" / "api").as_posix(), (tmp_path / "many" / "api").as_posix()
    assert repr(batched).replace(many, one) == repr(whole)
    assert whole[0] == (1 if strict else 0)
    if strict:
        assert not (tmp_path / "many" / "api").exists()  # refused: nothing written


def test_a_tree_with_other_files_is_compiled_once(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    """Another source in the tree (here a capability holding a generated tool's code):
    one compile over everything, and its verdict (the duplicate)."""
    tree = tmp_path / "tree"
    (tree / "hand.yaml").parent.mkdir(parents=True)
    (tree / "hand.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: list_items0\nname: Mine\ntype: api\n"
        "options:\n  name: mine\n  description: Mine\n  method: GET\n"
        "  url: https://mine.example.com/\n")
    spec = write(tmp_path / "doc", _secured_on_http(3))
    sizes = _counted(monkeypatch)
    monkeypatch.setattr(generated_tree, "BATCH_BYTES", 1)
    result = imported(spec, tree / "api", tree=CompileRequest(sources=(str(tree),),
                                                              use_cache=False))
    assert sizes == [3]
    assert result.exit_code == 1
    assert "duplicate-code" in {d.code for d in result.diagnostics}
    assert not (tree / "api").exists()


@pytest.mark.parametrize("options", [CompileOptions(pins={"tools": {}}),
                                     CompileOptions(plugin_tools=frozenset({"x"})),
                                     CompileOptions(plugins_snapshot={"x": {}})],
                         ids=["pins", "plugin-tools", "plugins"])
def test_pins_or_plugins_keep_one_compile(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                          options: CompileOptions) -> None:
    files = HeldFiles()
    for index in range(3):
        files.add(f"t{index}.yaml", b"x: 1\n")
    monkeypatch.setattr(generated_tree, "BATCH_BYTES", 1)
    out = (tmp_path / "api").as_posix()
    request = CompileRequest(sources=(out,), use_cache=False)
    assert len(_batches(files, out, request, CompileOptions())) == 3
    assert len(_batches(files, out, request, options)) == 1


def test_small_imports_are_one_batch(tmp_path: Path) -> None:
    files = HeldFiles()
    for index in range(3):
        files.add(f"t{index}.yaml", b"x" * 1000)
    out = (tmp_path / "api").as_posix()
    assert _batches(files, out, CompileRequest(sources=(out,)), CompileOptions()) == [
        ["t0.yaml", "t1.yaml", "t2.yaml"]]


def test_held_files_give_back_their_bytes() -> None:
    files = HeldFiles()
    text = ("name: é\n" * 1000).encode("utf-8")
    files.add("a.yaml", text)
    files.add("b.yaml", b"")
    assert dict(files) == {"a.yaml": text, "b.yaml": b""}
    assert (files.size("a.yaml"), files.size("b.yaml"), len(files)) == (len(text), 0, 2)


def test_files_are_written_with_the_umask_read_once_before_the_writers(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Reading the umask sets it to 0 for a moment: read in each of the writer threads,
    one thread could see another's 0 (its file world-writable, the umask left at 0)."""
    import os
    import threading

    files = HeldFiles()
    for index in range(40):
        files.add(f"tool_{index}.yaml", f"code: tool_{index}\n".encode())
    readers: list[str] = []
    umask = os.umask

    def recording(value: int) -> int:
        readers.append(threading.current_thread().name)
        return umask(value)

    monkeypatch.setattr(os, "umask", recording)
    previous = umask(0o027)
    try:
        written = generated_tree.write_files(files, str(tmp_path / "out"))
        assert umask(0o027) == 0o027  # left as it was
    finally:
        umask(previous)
    assert len(written) == 40
    assert set(readers) == {threading.main_thread().name} and len(readers) == 2
    assert {oct(os.stat(path).st_mode & 0o777) for path in written} == {oct(0o640)}


def test_an_import_leaves_no_cycles_for_the_paused_collector(tmp_path: Path) -> None:
    """The import runs with the cyclic collector paused (it only allocates): what it
    leaves unreachable must be freed by reference counting, or a document of 11,000
    operations would grow without bound meanwhile. The collector is left as found."""
    import gc

    from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
    from tests.authoring.openapi.helpers import hermetic
    from tests.authoring.openapi.public_corpus import public_corpus

    corpus = public_corpus("stripe")
    gc.collect()
    assert gc.isenabled()
    outcome = run_import(OpenApiRequest(
        spec=str(corpus.path), output_dir=str(tmp_path / "api"), selectors=corpus.selectors,
        **hermetic(tmp_path / "api")))
    assert outcome.exit_code == 0 and gc.isenabled()
    assert gc.collect() < 50  # 0 for the CI subsets of Stripe, GitHub and Kubernetes today
