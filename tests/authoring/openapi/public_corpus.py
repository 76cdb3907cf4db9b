"""GitHub's, Stripe's and Kubernetes' published API documents, as test data.

No wheel on the package index ships them; the sdist of ``openapi-spec-validator`` 0.9.0
does, as its benchmark data (``tests/bench/specs/``: GitHub v3 REST API 1.1.4, Stripe API
2026-01-28.clover, Kubernetes' Swagger 2.0 document). ``make test`` fetches that sdist
with pip when it installs the development tools (``$(VENV)/share/capc-corpus/``); the
tests read the documents out of the archive, with no network.
"""

from __future__ import annotations

import hashlib
import os
import sys
import tarfile
import tempfile
from pathlib import Path

from tests.authoring.openapi.corpus import CorpusDocument

SDIST = "openapi_spec_validator-0.9.0.tar.gz"
SDIST_SHA256 = "6d648cff6490ebb799dcfe273792f2941c050158854c721f086599d845da78b8"
MEMBERS = {"github": "github.yaml", "stripe": "stripe.yaml", "kubernetes": "kubernetes.yaml"}
# Kubernetes' document names no server (it is the cluster's own API): the import is told one.
KUBERNETES_SERVER = "https://kubernetes.example.com"

# What CI imports (bounded time, ~60 operations each, chosen by tag, id or path so the
# selection does not move with the document's order), for the shapes each is known for:
SUBSETS = {
    # oneOf/allOf bodies, labels as arrays of strings or objects, many header parameters,
    # a path and a body argument of one name (issues), arrays of objects (git trees).
    "github": ("tag:issues", "tag:git"),
    # form-encoded bodies with deep anyOf, expandable fields (expand[]), empty GET bodies.
    "stripe": ("* /v1/customers*", "* /v1/payment_intents*"),
    # Swagger 2.0 with x-kubernetes extensions, DeleteOptions bodies sharing dryRun with
    # the query, free-form PATCH bodies, proxy operations declaring HEAD and OPTIONS.
    "kubernetes": ("tag:batch_v1", "tag:policy_v1", "connectCoreV1*NamespacedPodProxy*"),
}


def sdist_path() -> Path:
    """Where ``make`` put the sdist (``CAPC_CORPUS_DIR`` overrides)."""
    folder = os.environ.get("CAPC_CORPUS_DIR") or str(Path(sys.prefix) / "share" / "capc-corpus")
    path = Path(folder) / SDIST
    if not path.is_file():
        raise AssertionError(
            f"{path} is missing: `make test` fetches it; by hand: {sys.executable} -m pip "
            f"download --no-deps --no-binary :all: -d {folder} openapi-spec-validator==0.9.0")
    return path


def public_document(name: str) -> Path:
    """The document ``name`` extracted once per machine (the archive's sha256 checked)."""
    archive = sdist_path()
    digest = hashlib.sha256(archive.read_bytes()).hexdigest()
    assert digest == SDIST_SHA256, f"{archive}: sha256 {digest}, not the pinned sdist"
    folder = Path(tempfile.gettempdir()) / f"capc-public-corpus-{digest[:12]}"
    target = folder / MEMBERS[name]
    if not target.is_file():
        folder.mkdir(parents=True, exist_ok=True)
        with tarfile.open(archive) as tar:
            member = tar.extractfile(f"openapi_spec_validator-0.9.0/tests/bench/specs/"
                                     f"{MEMBERS[name]}")
            assert member is not None
            partial = target.with_suffix(f".{os.getpid()}.part")
            partial.write_bytes(member.read())
            partial.replace(target)  # another run reading it sees all of it or nothing
    return target


def public_corpus(name: str, full: bool = False) -> CorpusDocument:
    """The CI subset of ``name`` (or, with ``full``, every operation)."""
    return CorpusDocument(name, public_document(name), () if full else SUBSETS[name],
                          KUBERNETES_SERVER if name == "kubernetes" else None)
