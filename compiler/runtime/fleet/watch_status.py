"""What a manifest watcher reports: the manifest it serves and what happened to the others.

The shape follows what Envoy exposes for its dynamic configuration (the version in use,
updates accepted and rejected, the last failure), so an operator alerts on the same
signals: ``reloads_rejected`` rising, ``last_rejection`` set, ``retired_in_use`` growing.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any, Literal

ReloadOutcome = Literal["unchanged", "accepted", "rejected"]
WatchMode = Literal["events", "polling"]


@dataclass(frozen=True, slots=True)
class Rejection:
    """A manifest version the watcher refused, and why."""

    at: datetime
    check: str
    reason: str


@dataclass(frozen=True, slots=True)
class WatchStatus:
    """A watcher's state at one moment (a new value after every change; never mutated).

    ``digest``: the manifest served now; ``loaded_at``: when it was swapped in (UTC,
    for people: the watcher itself measures time with a monotonic clock);
    ``reloads_accepted`` / ``reloads_rejected``: new versions swapped in and refused
    (each bad version counted once, however often it is seen); ``last_rejection``: the
    latest refusal, kept after a later success; ``retired_in_use``: replaced manifests still
    held by a lease or a call, or holding a pool; ``mode``: how changes are noticed;
    ``signed_at``: the served version's signing time, the order a rollback is refused by
    (None without ``trusted_keys`` or for a signature of an earlier capc).
    """

    path: str
    digest: str
    loaded_at: datetime
    reloads_accepted: int = 0
    reloads_rejected: int = 0
    last_rejection: Rejection | None = None
    retired_in_use: int = 0
    mode: WatchMode = "polling"
    signed_at: datetime | None = None

    def to_json(self) -> dict[str, Any]:
        """The status as JSON-ready values, for a health or metrics endpoint."""
        rejection = self.last_rejection
        return {
            "path": self.path,
            "digest": self.digest,
            "loaded_at": self.loaded_at.isoformat(),
            "reloads_accepted": self.reloads_accepted,
            "reloads_rejected": self.reloads_rejected,
            "last_rejection": None if rejection is None else {
                "at": rejection.at.isoformat(), "check": rejection.check,
                "reason": rejection.reason,
            },
            "retired_in_use": self.retired_in_use,
            "mode": self.mode,
            "signed_at": None if self.signed_at is None else self.signed_at.isoformat(),
        }
