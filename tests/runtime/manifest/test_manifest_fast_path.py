"""The fast manifest reading (orjson, lazy entries) agrees with the strict one, always.

``read_manifest`` takes the fast path only when ``manifest_fast`` proves it reads what the
json module would; these tests hold it to that on the golden manifests, generated
documents, tampered, duplicated, re-spaced and float-bearing files, and check that the
lazy entries fail at load exactly where the eager parse does.
"""

from __future__ import annotations

import copy
import gc
import hashlib
import json
import random
import struct
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.errors import ManifestError
from compiler.runtime.manifest import read as manifest_file
from compiler.runtime.manifest.entries import LazyCapabilities
from compiler.runtime.manifest.fast_read import fast_verified_document, has_small_float
from compiler.runtime.manifest.format import dump_manifest
from compiler.runtime.manifest.model import check_capability, parse_capability
from tests.support.paths import CASES

pytestmark = pytest.mark.fastpath

orjson = pytest.importorskip("orjson")  # the fast path exists only with it (`fast` extra)

CASES = CASES
GOLDEN = sorted(CASES.glob("*/*/expected-manifest.json"))


def strict_read(path: Path) -> manifest_file.ManifestData:
    """Today's reading: the json module, every entry parsed at load."""
    raw = path.read_bytes()
    document = manifest_file._strictly_verified_document(str(path), raw)
    try:
        return manifest_file._parse(str(path), document)
    except (KeyError, TypeError, ValueError) as error:
        raise ManifestError(str(path), "structure", str(error)) from error


def outcome(read: Any, path: Path) -> tuple[str, Any]:
    """What a reader makes of ``path``: its data as plain values, or its error."""
    try:
        data = read(path)
    except ManifestError as error:
        return "error", (error.check, str(error))
    return "data", (data.manifest_version, data.digest, dict(data.compiler),
                    {code: data.capabilities[code] for code in data.capabilities},
                    data.overrides, dict(data.plugins), data.api_tool_names)


def seal_with(body: dict[str, Any], canonical: bytes) -> dict[str, Any]:
    return {**body, "digest": "sha256:" + hashlib.sha256(canonical).hexdigest()}


def orjson_indented(document: dict[str, Any]) -> bytes:
    return orjson.dumps(document, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS
                        | orjson.OPT_APPEND_NEWLINE)


def test_there_are_golden_manifests() -> None:
    assert len(GOLDEN) >= 5


@pytest.mark.parametrize("path", GOLDEN, ids=lambda path: path.parent.name)
def test_golden_manifests_read_the_same_both_ways(path: Path) -> None:
    document = fast_verified_document(path.read_bytes())
    assert document is not None, "a manifest capc wrote must take the fast path"
    assert document == json.loads(path.read_bytes())
    assert outcome(manifest_file.read_manifest, path) == outcome(strict_read, path)
    assert isinstance(manifest_file.read_manifest(path).capabilities, LazyCapabilities)


_scalars = (st.none() | st.booleans() | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.sampled_from([1e16, 1e-7, 1e-5, 0.00001, 5e-324, -0.0, 0.1, 2.5e22])
            | st.text(max_size=10))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=20)


@settings(max_examples=250, deadline=None)
@given(metadata=_values, writer=st.sampled_from(["capc", "orjson-digest", "compact"]))
def test_generated_manifests_read_the_same_both_ways(
    tmp_path_factory: pytest.TempPathFactory, metadata: Any, writer: str
) -> None:
    body = {"manifest_version": 1, "compiler": {"name": "capc"}, "plugins": {},
            "overrides": [], "capabilities": [{
                "code": "c", "name": "C", "type": "internal", "metadata": {"x": metadata},
                "source": {"path": "c.yaml", "line": 1}, "internal": {"codes": ["c"]}}]}
    if writer == "capc":
        raw = dump_manifest(body)
    elif writer == "orjson-digest":  # a digest over orjson's spelling of the floats
        try:
            raw = orjson_indented(seal_with(body, orjson.dumps(body, option=orjson.OPT_SORT_KEYS)))
        except orjson.JSONEncodeError:  # integers past 64 bits
            raw = dump_manifest(body)
    else:
        raw = json.dumps(json.loads(dump_manifest(body))).encode()
    path = tmp_path_factory.mktemp("generated") / "manifest.json"
    path.write_bytes(raw)
    assert outcome(manifest_file.read_manifest, path) == outcome(strict_read, path)


def test_a_tampered_manifest_is_refused_with_the_strict_message(tmp_path: Path) -> None:
    document, path = json.loads(GOLDEN[0].read_bytes()), tmp_path / "manifest.json"
    raw = dump_manifest({key: value for key, value in document.items() if key != "digest"})
    tampered = raw.replace(b'"line": ', b'"line": 9', 1)  # one byte more, digest kept
    assert tampered != raw
    path.write_bytes(tampered)
    assert fast_verified_document(tampered) is None
    found = outcome(manifest_file.read_manifest, path)
    assert found == outcome(strict_read, path) and found[1][0] == "digest"


def test_duplicate_keys_never_take_the_fast_path(tmp_path: Path) -> None:
    body = {"manifest_version": 1, "capabilities": [], "overrides": [], "plugins": {}}
    sealed = seal_with(body, json.dumps(body, sort_keys=True, separators=(",", ":")).encode())
    raw = orjson_indented(sealed)
    # The same key twice, the digest still that of the document json.loads would keep.
    doubled = raw.replace(b'  "capabilities": [],\n', b'  "capabilities": [],\n'
                          b'  "capabilities": [],\n', 1)
    assert doubled != raw
    path = tmp_path / "manifest.json"
    path.write_bytes(doubled)
    assert fast_verified_document(doubled) is None
    found = outcome(manifest_file.read_manifest, path)
    assert found == outcome(strict_read, path)
    assert found[1][0] == "json" and "duplicate key" in found[1][1]


@pytest.mark.parametrize("respace", [
    lambda raw: json.dumps(json.loads(raw)).encode(),                  # compact
    lambda raw: json.dumps(json.loads(raw), indent=4).encode(),        # other indent
    lambda raw: raw.rstrip(b"\n"),                                     # no final newline
    lambda raw: raw.replace(b"\n", b"\r\n"),                           # CRLF
    lambda raw: json.dumps(json.loads(raw), indent=2, sort_keys=True).encode(),  # ASCII escapes
])
def test_non_canonical_spacing_takes_the_strict_path_and_reads_the_same(
    tmp_path: Path, respace: Any
) -> None:
    path = tmp_path / "manifest.json"
    original = GOLDEN[0].read_bytes()
    path.write_bytes(respace(original))
    if path.read_bytes() != original:
        assert fast_verified_document(path.read_bytes()) is None
    assert outcome(manifest_file.read_manifest, path) == outcome(strict_read, path)


def test_a_tiny_float_under_an_orjson_digest_is_refused_like_the_strict_path(
    tmp_path: Path,
) -> None:
    body = {"manifest_version": 1, "capabilities": [], "overrides": [],
            "plugins": {}, "compiler": {"threshold": 1e-05}}
    raw = orjson_indented(seal_with(body, orjson.dumps(body, option=orjson.OPT_SORT_KEYS)))
    assert b"0.00001" in raw
    path = tmp_path / "manifest.json"
    path.write_bytes(raw)
    assert fast_verified_document(raw) is None
    found = outcome(manifest_file.read_manifest, path)
    assert found == outcome(strict_read, path) and found[1][0] == "digest"


def _floats() -> list[float]:
    found = [m * 10.0 ** e for e in range(-325, 309) for m in (1.0, 1.5, 9.999999999999999)
             if m * 10.0 ** e != float("inf")]
    generator = random.Random(7)
    for _ in range(60_000):
        found.append(struct.unpack("d", struct.pack("Q", generator.getrandbits(64)))[0])
        found.append(generator.uniform(-1e-3, 1e-3) * 10.0 ** generator.randint(-20, 0))
    return [value for value in found if value == value and abs(value) != float("inf")]


def test_every_float_the_two_writers_spell_differently_is_detected() -> None:
    differing = 0
    for value in _floats():
        if orjson.dumps(value) != json.dumps(value).encode():
            differing += 1
            assert has_small_float(orjson.dumps({"a": value})), value
            assert has_small_float(orjson.dumps({"a": [1, value, 2]})), value
    assert differing > 1000  # the sweep does reach the floats that differ


def test_text_that_looks_like_a_small_float_is_only_a_false_alarm() -> None:
    assert not has_small_float(orjson.dumps({"a": "re-run 1e-5 0.00001", "b": 12}))
    assert not has_small_float(orjson.dumps({"a": 0.0001, "b": 1e16, "c": -3.5}))
    assert has_small_float(orjson.dumps({"a": "x", "b": -0.00002}))


MUTANTS: list[Any] = [None, 0, 1, -1, 1.5, "", "x", "text", True, [], [1], ["path"],
                      {}, {"a": 1}, {"bindings": ["query"]}, {"bindings": "query"},
                      {"bindings": [["x"]]}, {"codes": 5}, "12", "abc"]


def _paths(node: Any, prefix: tuple[Any, ...] = ()) -> list[tuple[Any, ...]]:
    found = [prefix] if prefix else []
    if isinstance(node, dict) and len(prefix) < 3:
        for key, value in node.items():
            found += _paths(value, (*prefix, key))
    return found


def _capabilities() -> list[dict[str, Any]]:
    entries: dict[str, dict[str, Any]] = {}
    for path in GOLDEN:
        for entry in json.loads(path.read_bytes()).get("capabilities") or []:
            entries.setdefault(entry["type"] + str(len(entries) % 3), entry)
    return list(entries.values())


def _failure(action: Any) -> tuple[str, str] | None:
    try:
        action()
    except Exception as error:
        return type(error).__name__, str(error)
    return None


def _mutated(entry: dict[str, Any], path: tuple[Any, ...], mutant: Any) -> dict[str, Any]:
    """A copy of ``entry`` with the value at ``path`` replaced (``_DELETE``: removed)."""
    changed = copy.deepcopy(entry)
    parent = changed
    for key in path[:-1]:
        parent = parent[key]
    if mutant is _DELETE:
        del parent[path[-1]]
    else:
        parent[path[-1]] = copy.deepcopy(mutant)
    return changed


_DELETE = object()


def _same_failure(entry: Any) -> bool:
    checked = _failure(lambda: check_capability(entry))
    return checked == _failure(lambda: parse_capability(entry))


def test_the_load_time_check_fails_exactly_where_the_builder_does() -> None:
    entries = _capabilities()
    assert {entry["type"] for entry in entries} == {"api", "internal", "mcp"}
    cases = [_mutated(entry, path, mutant) for entry in entries for path in _paths(entry)
             for mutant in [*MUTANTS, _DELETE]]
    generator = random.Random(11)
    for _ in range(1500):  # two changes at once: which failure is reported first
        entry = generator.choice(cases)
        paths = [path for path in _paths(entry) if path]
        if paths:
            cases.append(_mutated(entry, generator.choice(paths), generator.choice(MUTANTS)))
    assert [entry for entry in [*cases, *MUTANTS] if not _same_failure(entry)] == []
    assert sum(_failure(lambda e=entry: check_capability(e)) is not None
               for entry in cases) > 1000


def test_a_malformed_entry_fails_the_fast_load_naming_it(tmp_path: Path) -> None:
    document = json.loads(GOLDEN[0].read_bytes())
    body = {key: value for key, value in document.items() if key != "digest"}
    body["capabilities"] = [*body["capabilities"], {"code": "zz", "type": "api", "name": "Z"}]
    path = tmp_path / "manifest.json"
    path.write_bytes(dump_manifest(body))
    assert fast_verified_document(path.read_bytes()) is not None
    found = outcome(manifest_file.read_manifest, path)
    assert found == outcome(strict_read, path)
    assert found[1][0] == "structure" and "(zz)" in found[1][1]


def test_lazy_entries_are_built_once_and_cannot_be_replaced() -> None:
    data = manifest_file.read_manifest(GOLDEN[0])
    capabilities = data.capabilities
    code = next(iter(capabilities))
    assert capabilities[code] is capabilities[code]
    assert code in capabilities and "no-such-code" not in capabilities
    assert capabilities.get("no-such-code") is None
    with pytest.raises(TypeError):
        capabilities[code] = capabilities[code]  # type: ignore[index]
    with pytest.raises(AttributeError):
        capabilities._extra = {}  # type: ignore[attr-defined]


@pytest.mark.parametrize("enabled", [True, False])
def test_the_collector_is_left_as_it_was(tmp_path: Path, enabled: bool) -> None:
    broken = tmp_path / "broken.json"
    broken.write_bytes(GOLDEN[0].read_bytes().replace(b'"line": ', b'"line": 7', 1))
    previous = gc.isenabled()
    try:
        gc.enable() if enabled else gc.disable()
        manifest_file.read_manifest(GOLDEN[0])
        assert gc.isenabled() is enabled
        with pytest.raises(ManifestError):
            manifest_file.read_manifest(broken)
        assert gc.isenabled() is enabled
    finally:
        gc.enable() if previous else gc.disable()
