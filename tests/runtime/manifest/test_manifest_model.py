"""The one manifest model: round trips, shapes refused as ``structure``, deep nesting.

Any digest-valid manifest whose entries have a wrong shape must be refused by the load
with a ManifestError naming ``structure`` and the entry, on the strict (json module) and
the fast (orjson, lazy entries) paths alike, and never with another exception; whatever
the load accepts must build every entry.
"""

from __future__ import annotations

import copy
import hashlib
import json
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from compiler.runtime import ManifestError
from compiler.runtime.manifest import read as manifest_file
from compiler.runtime.manifest.fast_read import fast_verified_document
from compiler.runtime.manifest.format import dump_manifest
from compiler.runtime.manifest.model import (
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_METHOD,
    DEFAULT_TIMEOUT,
    manifest_json,
    parse_manifest_document,
)
from tests.support.paths import CASES, REPO_ROOT
from tests.support.runtime import json_paths

GOLDEN = sorted(CASES.glob("*/*/expected-manifest.json"))


def _body(path: Path) -> dict[str, Any]:
    document = json.loads(path.read_bytes())
    document.pop("digest")
    return document


@pytest.mark.parametrize("path", GOLDEN, ids=lambda path: path.parent.name)
def test_every_golden_manifest_is_its_model_written_back(path: Path) -> None:
    body = _body(path)
    assert manifest_json(parse_manifest_document(body)) == body
    assert dump_manifest(manifest_json(parse_manifest_document(body))) == path.read_bytes()


def test_request_defaults_agree_with_the_capability_schema() -> None:
    schema = json.loads((REPO_ROOT / "compiler/schema/json/capability-v1.json").read_text())
    found: dict[str, Any] = {}

    def walk(node: Any) -> None:
        if isinstance(node, dict):
            for key in ("method", "timeout", "max_response_bytes"):
                if isinstance(node.get(key), dict) and "default" in node[key]:
                    found[key] = node[key]["default"]
            for value in node.values():
                walk(value)
        elif isinstance(node, list):
            for value in node:
                walk(value)

    walk(schema)
    assert found == {"method": DEFAULT_METHOD, "timeout": DEFAULT_TIMEOUT,
                     "max_response_bytes": DEFAULT_MAX_RESPONSE_BYTES}


def _write(path: Path, body: dict[str, Any], *, strict: bool) -> Path:
    """``body`` sealed (digest recomputed); ``strict``: spaced so only the json module
    path can read it."""
    raw = dump_manifest(body)
    if strict:
        raw = json.dumps(json.loads(raw), indent=1).encode()
    path.write_bytes(raw)
    if strict:
        assert fast_verified_document(raw) is None
    return path


def _outcome(path: Path) -> tuple[str, Any]:
    """Data (every entry built) or the ManifestError's check and text; anything else
    propagates and fails the test."""
    try:
        data = manifest_file.read_manifest(path)
    except ManifestError as error:
        return "error", (error.check, str(error).replace(str(path), "MANIFEST"))
    return "data", {code: data.capabilities[code] for code in data.capabilities}


@pytest.mark.parametrize("strict", [False, True], ids=["fast", "strict"])
def test_an_mcp_block_that_is_a_list_is_a_structure_error(tmp_path: Path, strict: bool
                                                          ) -> None:
    body = _body(GOLDEN[0])
    body["capabilities"] = [{"code": "srv", "name": "S", "type": "mcp", "mcp": ["x"],
                             "source": {"path": "s.yaml", "line": 1}}]
    with pytest.raises(ManifestError) as caught:
        manifest_file.read_manifest(_write(tmp_path / "m.json", body, strict=strict))
    assert caught.value.check == "structure"
    assert "capabilities[0] (srv): mcp must be an object" in str(caught.value)


def _entries() -> list[dict[str, Any]]:
    found: dict[str, dict[str, Any]] = {}
    for path in GOLDEN:
        for entry in json.loads(path.read_bytes())["capabilities"]:
            found.setdefault(f"{entry['type']}{len(found) % 4}", entry)
    return list(found.values())


ENTRIES = _entries()
_json = st.recursive(
    st.none() | st.booleans() | st.integers(-3, 3) | st.floats(-2, 2) | st.text(max_size=4)
    | st.sampled_from(["GET", "path", "query", "file", "api", "mcp", "internal"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["bindings", "type", "name", "path", "line", "codes", "x"]), inner,
        max_size=3),
    max_leaves=6)


@settings(max_examples=300, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_any_wrong_shape_is_a_structure_error_on_bothjson_paths(tmp_path: Path, data: Any
                                                            ) -> None:
    entry = copy.deepcopy(data.draw(st.sampled_from(ENTRIES)))
    for _ in range(data.draw(st.integers(1, 3))):
        paths = json_paths(entry)
        where = data.draw(st.sampled_from(paths))
        parent = entry
        for key in where[:-1]:
            parent = parent[key]
        if data.draw(st.booleans()) and isinstance(parent, dict):
            del parent[where[-1]]
        else:
            parent[where[-1]] = data.draw(_json)
    body = _body(GOLDEN[0])
    body["capabilities"] = [entry]
    fast = _outcome(_write(tmp_path / "fast.json", body, strict=False))
    strict = _outcome(_write(tmp_path / "strict.json", body, strict=True))
    assert fast == strict
    if fast[0] == "error":
        check, message = fast[1]
        assert check == "structure", message
        assert message.startswith("MANIFEST: manifest refused (structure): capabilities[0] ("), \
            message


@pytest.mark.parametrize("depth", [200, 900, 3000, 100_000])
@pytest.mark.parametrize("where", ["metadata", "plugins"])
def test_deeply_nested_json_is_a_clean_manifest_error(tmp_path: Path, depth: int, where: str
                                                      ) -> None:
    body = _body(GOLDEN[0])
    marker = "__deep__"
    if where == "metadata":
        body["capabilities"][0]["metadata"] = {"x": marker}
    else:
        body["plugins"] = {"x": marker}
    deep = "[" * depth + "]" * depth
    canonical = json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    canonical = canonical.replace(json.dumps(marker), deep)
    sealed = {**body, "digest": "sha256:" + hashlib.sha256(canonical.encode()).hexdigest()}
    text = json.dumps(sealed, sort_keys=True, indent=2).replace(json.dumps(marker), deep)
    path = tmp_path / "deep.json"
    path.write_text(text + "\n")
    try:
        data = manifest_file.read_manifest(path)
    except ManifestError as error:
        assert error.check in ("json", "structure")
        assert "nested too deeply" in str(error)
        return
    for code in data.capabilities:  # accepted: every entry can be built
        assert data.capabilities[code].code == code
