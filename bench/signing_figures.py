"""Figure 4b/4c: ``load_manifest`` verifying an Ed25519 signature vs the same load without.

Both sides load the same file in the same process, alternately; the signed side also
parses the trusted key, reads ``MANIFEST.sig`` and checks the signature. ``cryptography``
is imported once before measuring, as an agent that verifies imports it once at boot.
"""

from __future__ import annotations

from pathlib import Path

from bench.timing import Figure, median_pair, ratio_figure, timed
from compiler.runtime import ToolRegistry, load_manifest
from compiler.runtime.manifest.format import compute_digest
from compiler.runtime.manifest.read import read_verified_document
from compiler.runtime.manifest.signature import signature_path_for
from compiler.signing import create_key_file, load_signing_key

GOAL_RATIO = 1.10


def sign_for_bench(manifest_path: Path, key_file: Path) -> str:
    """Sign ``manifest_path`` with a new key at ``key_file``; the public key text."""
    public_key = create_key_file(key_file)
    key = load_signing_key(str(key_file), {})
    assert key is not None
    digest = compute_digest(read_verified_document(manifest_path))
    signature_path_for(manifest_path).write_bytes(key.sign(digest).to_bytes())
    return public_key.text


def signature_figure(number: str, manifest_path: Path, files: int, runs: int) -> Figure:
    """load_manifest(trusted_keys=[key]) vs load_manifest() on a ``files``-file manifest."""
    key_file = manifest_path.with_name(manifest_path.name + ".key.pem")
    key_file.unlink(missing_ok=True)
    public_key = sign_for_bench(manifest_path, key_file)
    load_manifest(manifest_path, registry=ToolRegistry(), trusted_keys=[public_key])  # warm

    def unsigned() -> float:
        return timed(lambda: load_manifest(manifest_path, registry=ToolRegistry()))

    def signed() -> float:
        return timed(lambda: load_manifest(manifest_path, registry=ToolRegistry(),
                                           trusted_keys=[public_key]))

    seconds, floor = median_pair(signed, unsigned, max(runs, 7))
    return ratio_figure(number, f"load_manifest with signature check vs without ({files} files)",
                        seconds, floor, goal_ratio=GOAL_RATIO,
                        reason="verifying one Ed25519 signature should cost microseconds")
