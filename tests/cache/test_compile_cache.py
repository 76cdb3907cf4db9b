"""The compile cache never changes a result: cached compiles give the same manifest bytes and
the same diagnostics as uncached ones, for good and bad trees; a changed file, option,
variable, compiler or schema misses; corrupt or foreign entries are ignored."""

from __future__ import annotations

import marshal
import shutil
import subprocess
from pathlib import Path

import pytest

from bench.corpus import write_corpus
from compiler.build import build
from compiler.cache import fingerprint as fingerprint_module
from compiler.cache import store as cache_module
from compiler.cache.fingerprint import compiler_fingerprint, package_fingerprint
from compiler.cache.store import CompileCache, entry_selector
from compiler.pipeline import CompileOptions, CompileResult
from compiler.runtime.manifest.format import dump_manifest
from tests.support.capc import run_capc_process, start_capc_process
from tests.support.paths import CASES

pytestmark = pytest.mark.fastpath

CASES = CASES
ALL_CASES = sorted(p.parent for p in CASES.glob("*/*/src") if p.is_dir())


def observable(result: CompileResult) -> tuple[bytes | None, list[dict[str, object]]]:
    """Everything a user can see of a compile: the manifest bytes and every diagnostic."""
    content = None
    if result.manifest is not None:
        try:
            content = dump_manifest(result.manifest)
        except ValueError:  # not JSON (a NaN the checks let through): compare what there is
            content = repr(result.manifest).encode()
    return content, [d.as_dict() for d in result.diagnostics]


def options_for(case: Path) -> CompileOptions:
    flags = (case / "flags").read_text().split() if (case / "flags").exists() else []
    return CompileOptions(strict="--strict" in flags,
                          allow_private_networks="--allow-private-networks" in flags)


def entry_files(cache_dir: Path, suffix: str) -> list[Path]:
    return sorted(cache_dir.glob(f"*.{suffix}"))


@pytest.mark.parametrize("case", ALL_CASES, ids=lambda p: f"{p.parent.name}-{p.name}")
def test_cached_compiles_match_the_uncached_one_for_every_golden_case(
    case: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(case)
    options = options_for(case)
    cache_dir = tmp_path / "cache"
    uncached = observable(build(["src"], options=options, use_cache=False))
    cold = observable(build(["src"], options=options, cache_dir=cache_dir))
    warm = observable(build(["src"], options=options, cache_dir=cache_dir))
    for tree_entry in entry_files(cache_dir, "tree"):
        tree_entry.unlink()  # now only the per-file entries can hit
    per_file = observable(build(["src"], options=options, cache_dir=cache_dir))
    assert cold == uncached
    assert warm == uncached
    assert per_file == uncached
    assert entry_files(cache_dir, "tree"), "the compile result was not cached"


def test_a_large_tree_is_served_whole_from_the_cache(tmp_path: Path,
                                                    monkeypatch: pytest.MonkeyPatch) -> None:
    corpus = write_corpus(tmp_path / "capabilities", 80, seed=7)
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    uncached = observable(build(["capabilities"], use_cache=False))
    build(["capabilities"], cache_dir=cache_dir)
    [tree_entry] = entry_files(cache_dir, "tree")
    before = tree_entry.stat().st_mtime_ns
    assert observable(build(["capabilities"], cache_dir=cache_dir)) == uncached
    assert tree_entry.stat().st_mtime_ns == before, "a hit must not rewrite the entry"
    assert uncached[0] is not None and len(corpus.files) == 80


def test_editing_a_file_invalidates_its_entry(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    source = tmp_path / "src"
    shutil.copytree(CASES / "good" / "multi-document" / "src", source)
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    build(["src"], cache_dir=cache_dir)
    edited = sorted(source.rglob("*.yaml"))[0]
    text = edited.read_text()
    assert "\nname: " in text
    edited.write_text(text.replace("\nname: ", "\nname: Renamed ", 1))
    cached = observable(build(["src"], cache_dir=cache_dir))
    assert cached == observable(build(["src"], use_cache=False))
    assert cached[0] is not None and b'"Renamed ' in cached[0]
    # Breaking the file shows the error at once, not the remembered good result.
    edited.write_text(text + "\nname: [unclosed\n")
    broken = build(["src"], cache_dir=cache_dir)
    assert broken.manifest is None
    assert observable(broken) == observable(build(["src"], use_cache=False))


def test_options_and_template_variables_are_part_of_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "cap.yaml.j2").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: templated\nname: {{ title }}\n"
        "type: api\noptions:\n  description: Look up\n  url: http://10.0.0.1/v1\n")
    variables = tmp_path / "vars.yaml"
    variables.write_text("title: First\n")
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    allow = CompileOptions(allow_private_networks=True)
    first = build(["src"], [str(variables)], allow, cache_dir=cache_dir)
    assert first.manifest is not None and first.manifest["capabilities"][0]["name"] == "First"
    variables.write_text("title: Second\n")
    second = build(["src"], [str(variables)], allow, cache_dir=cache_dir)
    assert second.manifest is not None and second.manifest["capabilities"][0]["name"] == "Second"
    refused = build(["src"], [str(variables)], CompileOptions(), cache_dir=cache_dir)
    assert refused.manifest is None, "a private host is an error without the flag"
    assert observable(refused) == observable(
        build(["src"], [str(variables)], CompileOptions(), use_cache=False))


@pytest.mark.parametrize("sequence", [
    ["m: {1: one}", 'm: {"1": one}'],         # json.dumps would spell both keys "1"
    ["m: {true: one}", 'm: {"true": one}'],
    ["m: {1: one, b: two}"],                  # mixed key types cannot be sorted
    ["m: {a: 1, b: 2}", "m: {b: 2, a: 1}"],   # order is visible to a template loop
])
def test_template_variables_keep_their_types_and_order_in_the_key(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, sequence: list[str]
) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "cap.yaml.j2").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: t\ntype: internal\n"
        "name: \"{{ m[1] if 1 in m else m.get('1', '') }}{% for k in m %}{{ k }}{% endfor %}\"\n")
    variables = tmp_path / "vars.yaml"
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    for text in sequence:
        variables.write_text(text + "\n")
        cached = build(["src"], [str(variables)], cache_dir=cache_dir)
        assert observable(cached) == observable(
            build(["src"], [str(variables)], use_cache=False)), text


def test_an_entry_of_another_compiler_is_never_served(tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CASES / "good" / "composition" / "src", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    expected = observable(build(["src"], cache_dir=cache_dir))
    store = CompileCache.for_tree(cache_dir, ["src"], CompileOptions())
    for entry in [*entry_files(cache_dir, "tree"), *entry_files(cache_dir, "files")]:
        kind = entry.suffix[1:]
        sealed = entry.read_bytes()
        selector = entry_selector(sealed)
        assert selector is not None
        parts = store.unseal(kind, sealed, selector)
        assert parts is not None
        entry_format, fingerprint, payload = marshal.loads(parts[0])
        tail = bytes(parts[1])
        assert fingerprint == compiler_fingerprint()
        if entry.suffix == ".tree":  # a forged result: served only if the check were missing
            payload, tail = (payload[0], {"forged": True}, []), b""
        entry.write_bytes(store.seal(kind, marshal.dumps(
            (entry_format, "an older compiler", payload)), tail, selector))
    assert observable(build(["src"], cache_dir=cache_dir)) == expected


@pytest.mark.parametrize("garbage", [b"", b"\x00\x01garbage", b"\xe3" * 64])
def test_corrupt_entries_are_ignored_and_replaced(tmp_path: Path, garbage: bytes,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CASES / "good" / "api-bindings" / "src", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    cache_dir = tmp_path / "cache"
    expected = observable(build(["src"], cache_dir=cache_dir))
    entries = [*entry_files(cache_dir, "tree"), *entry_files(cache_dir, "files")]
    assert len(entries) == 2
    for entry in entries:
        entry.write_bytes(garbage)
    assert observable(build(["src"], cache_dir=cache_dir)) == expected
    assert all(entry.read_bytes() != garbage for entry in entries), "entries are rewritten"


def test_no_cache_variable_and_unwritable_directory(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    shutil.copytree(CASES / "good" / "api-bindings" / "src", tmp_path / "src")
    monkeypatch.chdir(tmp_path)
    expected = observable(build(["src"], use_cache=False))
    monkeypatch.setenv("CAPC_NO_CACHE", "1")
    monkeypatch.setenv("CAPC_CACHE_DIR", str(tmp_path / "env-cache"))
    assert observable(build(["src"])) == expected
    assert not (tmp_path / "env-cache").exists()
    monkeypatch.setenv("CAPC_NO_CACHE", "0")
    assert observable(build(["src"])) == expected
    assert entry_files(tmp_path / "env-cache", "tree")
    blocker = tmp_path / "a-file"
    blocker.write_text("not a folder")
    assert observable(build(["src"], cache_dir=blocker / "cache")) == expected


def test_concurrent_compiles_share_one_cache_safely(tmp_path: Path) -> None:
    write_corpus(tmp_path / "capabilities", 40, seed=3)
    environment = {"CAPC_CACHE_DIR": str(tmp_path / "cache"), "PATH": "/usr/bin:/bin",
                   "XDG_CACHE_HOME": str(tmp_path / "user-cache")}
    processes = [
        start_capc_process("compile", "capabilities", "-o", f"out{number}.json",
                           cwd=tmp_path, env=environment,
                           stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        for number in range(4)
    ]
    for process in processes:
        _, stderr = process.communicate(timeout=120)
        assert process.returncode == 0, stderr
    outputs = {(tmp_path / f"out{number}.json").read_bytes() for number in range(4)}
    assert len(outputs) == 1
    assert not list((tmp_path / "cache").glob(".*")), "no temporary file is left behind"
    again = run_capc_process("compile", "capabilities", "-o", "again.json", cwd=tmp_path,
                             env=environment, text=False)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.json").read_bytes() in outputs


def test_the_fingerprint_follows_every_source_and_schema_file(tmp_path: Path) -> None:
    package = tmp_path / "compiler"
    shutil.copytree(Path(cache_module.__file__).parent.parent, package,
                    ignore=shutil.ignore_patterns("__pycache__"))
    original = package_fingerprint(package)
    schema = package / "schema" / "json" / "capability-v1.json"
    schema.write_text(schema.read_text().replace('"title"', '"title" ', 1))
    after_schema = package_fingerprint(package)
    check = package / "checks" / "api.py"
    check.write_text(check.read_text() + "\n# changed\n")
    after_check = package_fingerprint(package)
    assert len({original, after_schema, after_check}) == 3
    assert package_fingerprint(package) == after_check, "the same files, the same fingerprint"


def test_trees_compiled_in_turn_keep_separate_entries(tmp_path: Path) -> None:
    options = CompileOptions()
    one = CompileCache.for_tree(tmp_path, ["a"], options)
    two = CompileCache.for_tree(tmp_path, ["b"], options)
    strict = CompileCache.for_tree(tmp_path, ["a"], CompileOptions(strict=True))
    assert len({one.tree_identity, two.tree_identity, strict.tree_identity}) == 3


def test_the_compiler_fingerprint_covers_the_whole_package() -> None:
    import compiler

    root = Path(compiler.__file__).resolve().parent
    compiler_fingerprint.cache_clear()
    whole = compiler_fingerprint()
    with pytest.MonkeyPatch.context() as patched:
        seen: list[Path] = []
        patched.setattr(fingerprint_module, "package_fingerprint",
                        lambda package: seen.append(package) or "x")
        compiler_fingerprint.cache_clear()
        compiler_fingerprint()
    compiler_fingerprint.cache_clear()
    assert seen == [root], "every module of the compiler, not only the cache's folder"
    assert compiler_fingerprint() == whole
