"""Rollback protection for the manifest watcher (SPEC §13): which of two releases is older.

The order is the signing time a v2 signature carries (``signed_at``, signed together with
the digest), never a field of the manifest, so the manifest bytes stay deterministic and
whoever cannot sign cannot make an old release look new. The rules:

- a version signed *before* the one being served is refused (``check == "rollback"``);
- a version whose signature carries no time (an earlier capc's) is accepted only while
  the version served carries none either: once an ordered version is served, an unordered
  one could be any old release;
- without ``trusted_keys`` nothing is verified, so nothing is ordered: every valid
  version is accepted, as before;
- ``allow_rollback=True`` accepts an older version (logged at WARNING); from then on the
  served version's own time is the order.

Trusted keys are read here once, when the watch starts: replacing a key file afterwards
changes nothing until the process restarts (a new trust decision is a rollout).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable
from datetime import datetime
from typing import TYPE_CHECKING

from compiler.runtime.errors import ManifestError

if TYPE_CHECKING:
    from compiler.runtime.manifest.signature import PublicKey

logger = logging.getLogger("compiler.runtime.fleet.watch")  # the watcher's own log

ROLLBACK_CHECK = "rollback"
ALLOW_HINT = "watch_manifest(..., allow_rollback=True) accepts an older version"


def read_trusted_keys(shown: str, keys: Iterable[str | os.PathLike[str] | PublicKey]
                      ) -> tuple[PublicKey, ...]:
    """Every trusted key, read now (files included); ManifestError naming ``trusted_keys``."""
    # Imported here: a watcher without keys never loads the signature code.
    from compiler.runtime.manifest.signature import PublicKeyError, parse_trusted_keys

    try:
        return parse_trusted_keys(keys)
    except PublicKeyError as error:
        raise ManifestError(shown, "trusted_keys", str(error)) from None


def rollback_reason(served: datetime | None, candidate: datetime | None) -> str | None:
    """Why a version signed at ``candidate`` is older than the one served (None: it is not).

    ``served`` / ``candidate``: the signing times of the served and the new version's
    signatures, None for a signature without one (or nothing served yet).
    """
    if served is None:
        return None
    if candidate is None:
        return (f"rollback refused: this version's signature carries no signing time (an "
                f"earlier capc signed it), so it cannot be shown newer than the version "
                f"served, signed at {_spelled(served)}; {ALLOW_HINT}")
    if candidate < served:
        return (f"rollback refused: this version was signed at {_spelled(candidate)}, "
                f"before the version served, signed at {_spelled(served)}; {ALLOW_HINT}")
    return None


def order_problem(shown: str, served: datetime | None, candidate: datetime | None,
                  allow_rollback: bool) -> str | None:
    """The rollback refusal of a verified version (None: accept it; a rollback the
    operator allowed is accepted and logged at WARNING)."""
    reason = rollback_reason(served, candidate)
    if reason is None or not allow_rollback:
        return reason
    logger.warning("manifest %s: accepting an older version (allow_rollback): %s", shown,
                   reason.removeprefix("rollback refused: ").split("; ")[0])
    return None


def _spelled(moment: datetime) -> str:
    from compiler.runtime.manifest.signature import format_signed_at

    return format_signed_at(moment)
