"""The manifest's bytes are exactly the json module's indent=2, key-sorted, UTF-8 output.

This pins the byte format so that a faster serialiser (docs/performance.md proposes
orjson, used only when it provably writes the same tokens) can never change a manifest.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.manifest.format import canonical_bytes, compute_digest, dump_manifest
from tests.support.paths import CASES

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
