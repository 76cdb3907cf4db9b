"""The manifest's bytes are exactly the json module's indent=2, key-sorted, UTF-8 output.

This pins the byte format so that a faster serialiser (docs/performance.md proposes
orjson, used only when it provably writes the same tokens) can never change a manifest.
"""

from __future__ import annotations

import enum
import hashlib
import json
import math
import uuid
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.manifest import format as format_module
from compiler.runtime.manifest.format import (
    canonical_bytes,
    compute_digest,
    dump_manifest,
    is_plain_json,
)
from tests.support.paths import CASES

pytestmark = pytest.mark.fastpath

CASES = CASES

_scalars = (st.none() | st.booleans()
            | st.integers(min_value=-(2**70), max_value=2**70)
            | st.floats(allow_nan=False, allow_infinity=False)
            | st.sampled_from([1e16, 1e-7, 5e-324, -0.0, 1.0, 0.1, 123456789.0, 2.5e22])
            | st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=12))
_values = st.recursive(_scalars, lambda inner: st.lists(inner, max_size=4)
                       | st.dictionaries(st.text(max_size=6), inner, max_size=4), max_leaves=25)


def reference_bytes(manifest: dict[str, Any]) -> bytes:
    """The format docs/manifest.md defines, written with the json module alone."""
    body = json.dumps(manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")
    sealed = {**manifest, "digest": "sha256:" + hashlib.sha256(body).hexdigest()}
    text = json.dumps(sealed, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.text(max_size=8).filter(lambda key: key != "digest"), _values,
                       max_size=6))
def test_dump_matches_the_reference_bytes_for_any_json_value(manifest: dict[str, Any]
                                                             ) -> None:
    assert dump_manifest(manifest) == reference_bytes(manifest)
    assert canonical_bytes({**manifest, "digest": "x"}) == canonical_bytes(manifest)


def test_every_golden_manifest_round_trips_to_the_same_bytes() -> None:
    manifests = sorted(CASES.glob("*/*/expected-manifest.json"))
    assert manifests
    for path in manifests:
        recorded = path.read_bytes()
        manifest = json.loads(recorded)
        assert manifest.pop("digest") == compute_digest(manifest)
        assert dump_manifest(manifest) == recorded == reference_bytes(manifest)


class _Colour(enum.Enum):
    RED = "red"


class _Level(enum.IntEnum):
    HIGH = 3


class _Text(str):
    pass


# Values the json module writes or refuses in its own way: orjson must never decide them.
_hostile = st.sampled_from([
    float("nan"), float("inf"), float("-inf"), 2**64, -(2**63) - 1, 2**70, 10**30,
    "\ud800", "a\udfffb", _Colour.RED, _Level.HIGH, _Text("sub"), uuid.UUID(int=7),
    (1, "two", None), (), 1e-5, -2.5e-7, 0.0001, 1e16, "\x00\x1f\x7f\u2028\u2029\"\\",
])
_hostile_values = st.recursive(
    _scalars | _hostile,
    lambda inner: st.lists(inner, max_size=4) | st.tuples(inner, inner)
    | st.dictionaries(st.text(max_size=6) | st.integers(0, 3), inner, max_size=4),
    max_leaves=25)


def _outcome(write: Callable[[], bytes]) -> bytes | str:
    try:
        return write()
    except (ValueError, TypeError) as error:  # UnicodeEncodeError is a ValueError
        return type(error).__name__


@settings(max_examples=400, deadline=None)
@given(st.dictionaries(st.text(max_size=8).filter(lambda key: key != "digest"),
                       _hostile_values, max_size=5))
def test_canonical_bytes_are_the_json_modules_or_fail_as_it_does(
        manifest: dict[str, Any]) -> None:
    reference = _outcome(lambda: json.dumps(
        manifest, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
        allow_nan=False).encode("utf-8"))
    assert _outcome(lambda: canonical_bytes(manifest)) == reference
    assert _outcome(lambda: dump_manifest(manifest)) == _outcome(
        lambda: reference_bytes(manifest))


def test_plain_json_takes_the_orjson_path(monkeypatch: pytest.MonkeyPatch) -> None:
    # Otherwise the comparisons above would hold trivially, with the json module alone.
    manifest = {"capabilities": [{"code": "a", "n": 1.5, "x": None, "t": (1, 2)}], "é": "ü"}
    expected = canonical_bytes(manifest)
    indented = dump_manifest(manifest)

    def refused(*arguments: object, **options: object) -> str:
        raise AssertionError("the json module was used")

    monkeypatch.setattr(format_module.json, "dumps", refused)
    assert canonical_bytes(manifest) == expected
    assert dump_manifest(manifest) == indented
    with pytest.raises(AssertionError):
        canonical_bytes({"a": float("nan")})  # not plain: the json module decides
    with pytest.raises(AssertionError):
        canonical_bytes({"a": 1e-7})  # orjson would spell it 1e-7, json 1e-07


def test_nesting_past_orjsons_limit_is_written_by_the_json_module() -> None:
    nested: Any = "leaf"
    for _ in range(300):
        nested = [nested]
    manifest = {"deep": nested}
    assert dump_manifest(manifest) == reference_bytes(manifest)


def test_the_plain_json_walk_refuses_every_non_json_leaf() -> None:
    assert is_plain_json({"a": [1, 2.5, "x", None, True, {"b": ()}]})
    for leaf in (float("nan"), float("inf"), _Colour.RED, _Level.HIGH, _Text("s"),
                 uuid.UUID(int=1), b"bytes", {1, 2}):
        assert not is_plain_json({"a": [{"b": leaf}]}), leaf
    assert not is_plain_json({1: "non-string key"})


def _random_floats(count: int) -> list[float]:
    """Finite floats from random bit patterns (every exponent) and around 1e-4."""
    import random
    import struct

    generator = random.Random(20)
    found = [struct.unpack("<d", generator.getrandbits(64).to_bytes(8, "little"))[0]
             for _ in range(count)]
    near = [1e-4 * (1 + generator.uniform(-1e-3, 1e-3)) for _ in range(count // 10)]
    steps = [math.nextafter(1e-4, 0.0), 1e-4, math.nextafter(1e-4, 1.0), 5e-324, -0.0, 0.0]
    return [value for value in found + near + steps if math.isfinite(value)]


def test_a_float_the_walk_accepts_is_written_alike_by_both_writers() -> None:
    # The walk's float rule stands in for scanning orjson's bytes: every float it lets
    # through must be spelled by orjson exactly as by the json module, signs included.
    import orjson

    accepted = 0
    for value in _random_floats(200_000):
        for signed in (value, -value):
            if format_module._spelled_alike(signed):
                accepted += 1
                assert orjson.dumps(signed) == json.dumps(signed).encode(), signed
            else:
                assert signed != 0 and abs(signed) < 1e-4, signed
    assert accepted > 100_000
    for refused in (float("nan"), float("inf"), float("-inf"), 1e-5, -9.99e-5):
        assert not format_module._spelled_alike(refused)


def test_floats_at_the_boundary_take_the_path_that_spells_them_right(
        monkeypatch: pytest.MonkeyPatch) -> None:
    below = math.nextafter(1e-4, 0.0)
    assert dump_manifest({"a": below}) == reference_bytes({"a": below})
    assert dump_manifest({"a": 1e-4}) == reference_bytes({"a": 1e-4})

    def refused(*arguments: object, **options: object) -> str:
        raise AssertionError("the json module was used")

    monkeypatch.setattr(format_module.json, "dumps", refused)
    canonical_bytes({"a": [1e-4, -1e-4, 0.0, -0.0, 2.5e300]})  # orjson writes them
    with pytest.raises(AssertionError):
        canonical_bytes({"a": [1.0, {"b": -below}]})
