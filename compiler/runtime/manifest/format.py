"""The manifest's bytes: canonical form, digest and version (one definition for both sides).

The compiler writes with :func:`dump_manifest`; both sides read with
``compiler.runtime.manifest.read.read_verified_document``. See docs/manifest.md.

The bytes are defined as the json module's output (compact and key-sorted for the digest,
``indent=2`` for the file). orjson writes the same bytes about ten times faster for plain
JSON values, and is used exactly when that is proven (:func:`_orjson_canonical`):

1. every value is of an exact JSON type (dict with str keys, list, tuple, str, int, bool,
   None, finite float; no subclass, so no enum, and no NaN or infinity, which orjson would
   write as ``null`` where the json module refuses them), checked by one walk;
2. orjson accepts it (it refuses integers past 64 bits, unpaired surrogates and nesting
   deeper than 255, where the json module writes the integer or raises);
3. no float is below 1e-4 in magnitude but zero: the only floats the two spell
   differently (orjson ``0.00001`` and ``1e-7``, json ``1e-05`` and ``1e-07``). The walk of
   1 checks each float's value, so the bytes need no second scan (:func:`has_small_float`,
   which scans bytes, is for the reader, which has no values to look at).

Anything else is written by the json module, as before.
tests/runtime/manifest/test_manifest_bytes.py compares both writers over generated JSON
values and hostile ones.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from typing import Any

MANIFEST_VERSION = 1
SUPPORTED_MANIFEST_VERSIONS = frozenset({1})
DIGEST_PREFIX = "sha256:"

_LEAVES = frozenset({str, int, bool, type(None)})
_CONTAINERS = frozenset({dict, list, tuple})
_INFINITY = float("inf")
_INFINITIES = (_INFINITY, -_INFINITY)
_SMALLEST_ALIKE = 1e-4
_NUMBER_BYTES = frozenset(b"0123456789.-+eE")
_BEFORE_NUMBER = frozenset(b":,[")
_AFTER_NUMBER = frozenset(b",]}")
_DIGITS = frozenset(b"0123456789")


def canonical_bytes(manifest: dict[str, Any]) -> bytes:
    """Compact, key-sorted UTF-8 JSON of the manifest without its ``digest``."""
    body = {key: value for key, value in manifest.items() if key != "digest"}
    fast = _orjson_canonical(body)
    return fast if fast is not None else _json_canonical(body)


def compute_digest(manifest: dict[str, Any]) -> str:
    """``sha256:HEX`` over :func:`canonical_bytes`."""
    return DIGEST_PREFIX + hashlib.sha256(canonical_bytes(manifest)).hexdigest()


def dump_manifest(manifest: dict[str, Any]) -> bytes:
    """The file bytes: the manifest with its digest, indented for readable PR diffs."""
    body = {key: value for key, value in manifest.items() if key != "digest"}
    fast = _orjson_canonical(body)
    canonical = fast if fast is not None else _json_canonical(body)
    sealed = {**body, "digest": DIGEST_PREFIX + hashlib.sha256(canonical).hexdigest()}
    if fast is not None:
        # The same proof covers the indented form: orjson's indent=2 layout is the json
        # module's, and the digest added is a plain ASCII string.
        import orjson

        return orjson.dumps(sealed, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2
                            | orjson.OPT_APPEND_NEWLINE)
    text = json.dumps(sealed, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return (text + "\n").encode("utf-8")


def value_bytes(value: Any) -> tuple[bytes, bytes]:
    """The compact and the ``indent=2`` key-sorted bytes of one JSON value, as the json
    module writes them (orjson where the module docstring's proof holds, as in
    :func:`dump_manifest`); the json module's ValueError or TypeError where it refuses.
    Proven equal by tests/cache/test_entry_fragments.py::test_value_bytes_are_the_json_modules."""
    fast = _orjson_canonical(value)
    if fast is not None:
        import orjson

        return fast, orjson.dumps(value, option=orjson.OPT_SORT_KEYS | orjson.OPT_INDENT_2)
    indented = json.dumps(value, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=False)
    return _json_canonical(value), indented.encode("utf-8")


def _json_canonical(body: Any) -> bytes:
    return json.dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False,
                      allow_nan=False).encode("utf-8")


def _orjson_canonical(body: Any) -> bytes | None:
    """orjson's compact, key-sorted bytes of ``body`` when they are provably the json
    module's (the three conditions in the module docstring), else None. Proven equal by
    tests/runtime/manifest/test_manifest_bytes.py::test_dump_matches_the_reference_bytes_for_any_json_value."""
    try:
        import orjson
    except ImportError:
        return None
    if not is_plain_json(body, _spelled_alike):
        return None
    try:
        return orjson.dumps(body, option=orjson.OPT_SORT_KEYS)
    except orjson.JSONEncodeError:
        return None


def is_plain_json(value: Any, float_ok: Callable[[Any], bool] | None = None) -> bool:
    """Whether ``value`` holds exact JSON types only: no subclass, no non-string key, no
    NaN or infinity (and, given ``float_ok``, no float it refuses). One walk with an
    explicit stack (no recursion limit to hit); the loops are written out because this
    walk is most of the fast path's cost."""
    accepts_float = float_ok or _finite
    stack = [value]
    leaves, containers = _LEAVES, _CONTAINERS
    while stack:
        container = stack.pop()
        kind = type(container)
        if kind is dict:
            for key, item in container.items():
                if type(key) is not str:
                    return False
                kind = type(item)
                if kind in leaves:
                    continue
                if kind in containers:
                    stack.append(item)
                elif not accepts_float(item):
                    return False
        elif kind is list or kind is tuple:
            for item in container:
                kind = type(item)
                if kind in leaves:
                    continue
                if kind in containers:
                    stack.append(item)
                elif not accepts_float(item):
                    return False
        elif kind not in leaves and not accepts_float(container):
            return False
    return True


def _finite(value: Any) -> bool:
    return type(value) is float and value == value and value not in _INFINITIES


def _spelled_alike(value: Any) -> bool:
    """A float orjson and the json module write alike: finite, and zero or at least 1e-4
    in magnitude (NaN fails both comparisons, infinity the second)."""
    return type(value) is float and (value == 0.0 or _SMALLEST_ALIKE <= abs(value) < _INFINITY)


def has_small_float(compact: bytes) -> bool:
    """Whether compact JSON may hold a float orjson and the json module write differently.

    Looks at every ``e-`` after a digit and every ``0.0000``; one that is a whole number
    token (after ``:``, ``,`` or ``[`` and before ``,``, ``]`` or ``}``) counts. Text inside
    strings can only cause a false alarm, which costs the json path, never a wrong answer.
    """
    for needle, digit_before in ((b"e-", True), (b"0.0000", False)):
        index = compact.find(needle)
        while index >= 0:
            if (not digit_before or (index > 0 and compact[index - 1] in _DIGITS)) and \
                    _is_number_token(compact, index):
                return True
            index = compact.find(needle, index + 1)
    return False


def _is_number_token(compact: bytes, index: int) -> bool:
    start = index
    while start > 0 and compact[start - 1] in _NUMBER_BYTES:
        start -= 1
    end = index
    while end < len(compact) and compact[end] in _NUMBER_BYTES:
        end += 1
    return (start > 0 and compact[start - 1] in _BEFORE_NUMBER
            and end < len(compact) and compact[end] in _AFTER_NUMBER)
