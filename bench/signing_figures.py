"""Figures 4b-4d: ``load_manifest`` verifying an Ed25519 signature vs the same load without.

4b (the benchmark's large manifest) has a goal, 4c (100 files) and 4d (the check alone,
against the 100-file load) are informative: they show the fixed cost.

Both sides load the same file in the same process, alternately; the signed side also
parses the trusted key, reads ``MANIFEST.sig`` and checks the signature. ``cryptography``
is imported once before measuring, as an agent that verifies imports it once at boot.
The ratio is the median of the per-pair ratios (each signed load against the unsigned
load just before it), which a neighbour's load on a shared machine disturbs least.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from pathlib import Path

from bench.timing import Figure, timed
from compiler.runtime import ToolRegistry, load_manifest
from compiler.runtime.manifest.format import compute_digest
from compiler.runtime.manifest.read import read_verified_document
from compiler.runtime.manifest.signature import signature_path_for, verify_manifest_origin
from compiler.signing import create_key_file, load_signing_key

GOAL_RATIO = 1.10
MIN_PAIRS = 15


def sign_for_bench(manifest_path: Path) -> str:
    """Sign ``manifest_path`` with a new key (written beside it); the public key text."""
    key_file = manifest_path.with_name(manifest_path.name + ".key.pem")
    key_file.unlink(missing_ok=True)
    public_key = create_key_file(key_file)
    key = load_signing_key(str(key_file), {})
    assert key is not None
    digest = compute_digest(read_verified_document(manifest_path))
    signature_path_for(manifest_path).write_bytes(key.sign(digest).to_bytes())
    return public_key.text


def signature_figures(manifests: list[tuple[str, Path, int]], runs: int) -> list[Figure]:
    """Per ``(number, manifest, files)``: signed vs unsigned load; then the check alone.

    The goal holds for the first (large) manifest only: the check costs a fixed fraction
    of a millisecond (one Ed25519 verification), a visible share of a tiny manifest's load.
    """
    figures = []
    pairs = max(runs * 3, MIN_PAIRS)
    for index, (number, manifest_path, files) in enumerate(manifests):
        public_key = sign_for_bench(manifest_path)
        load_manifest(manifest_path, registry=ToolRegistry(), trusted_keys=[public_key])

        def unsigned(path: Path = manifest_path) -> float:
            return timed(lambda: load_manifest(path, registry=ToolRegistry()))

        def signed(path: Path = manifest_path, key: str = public_key) -> float:
            return timed(lambda: load_manifest(path, registry=ToolRegistry(), trusted_keys=[key]))

        figures.append(_pair_figure(
            number, f"load_manifest with signature check vs without ({files} files)",
            signed, unsigned, pairs, goal_ratio=GOAL_RATIO if index == 0 else None))
    number, manifest_path, files = manifests[-1]
    public_key = sign_for_bench(manifest_path)
    digest = read_verified_document(manifest_path)["digest"]

    def check_alone() -> float:
        return timed(lambda: verify_manifest_origin(
            str(manifest_path), digest, trusted_keys=[public_key], expected_digest=None,
            signature_path=None))

    def unsigned_small() -> float:
        return timed(lambda: load_manifest(manifest_path, registry=ToolRegistry()))

    figures.append(_pair_figure(
        "4d", f"the signature check alone vs load_manifest without ({files} files)",
        check_alone, unsigned_small, pairs, goal_ratio=None))
    return figures


def _pair_figure(number: str, title: str, measure: Callable[[], float],
                 baseline: Callable[[], float], pairs: int, *, goal_ratio: float | None
                 ) -> Figure:
    measured_times: list[float] = []
    baseline_times: list[float] = []
    ratios: list[float] = []
    for _ in range(pairs):
        base = baseline()
        value = measure()
        baseline_times.append(base)
        measured_times.append(value)
        ratios.append(value / base if base > 0 else float("inf"))
    ratio = statistics.median(ratios)
    met = None if goal_ratio is None else ratio <= goal_ratio
    return Figure(number, title, statistics.median(measured_times),
                  statistics.median(baseline_times), "s", ratio,
                  f"<= {goal_ratio:g}x" if goal_ratio is not None else "-", met,
                  "verifying one Ed25519 signature should cost microseconds" if met is False
                  else "")
