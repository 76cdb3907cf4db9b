"""Where a server's manifest comes from: loaded once, or kept current by ``watch_manifest``.

Every request holds the manifest it started with (a lease), so a reload in the middle of
calls finishes them on the old manifest and the next request sees the new one. The status
document is built here from what the loader or the watcher knows; it holds digests,
names, counts and the last rejection's reason, never a setting or a header.
"""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator, Awaitable, Callable, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

if TYPE_CHECKING:
    from compiler.runtime.fleet.watch import ManifestWatcher
    from compiler.runtime.loader import Manifest


class ManifestSource(Protocol):
    """The manifest a server answers from, and what it can say about its reloads."""

    def lease(self) -> contextlib.AbstractAsyncContextManager[Manifest]:
        """Hold the current manifest for one request."""
        ...

    def status(self) -> dict[str, Any]:
        """The reload part of the status document."""
        ...

    async def aclose(self) -> None:
        """Release what the source holds (pools, the watch)."""
        ...


class FixedManifest:
    """A manifest loaded once and served until the process ends."""

    def __init__(self, manifest: Manifest, *, owned: bool) -> None:
        self._manifest = manifest
        self._owned = owned
        self._loaded_at = datetime.now(UTC)

    @property
    def manifest(self) -> Manifest:
        """The manifest served."""
        return self._manifest

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Manifest]:
        """The manifest, for one request."""
        yield self._manifest

    def status(self) -> dict[str, Any]:
        """Digest and load time; a fixed manifest never reloads."""
        return {"digest": self._manifest.digest, "loaded_at": self._loaded_at.isoformat(),
                "watching": False, "reloads_accepted": 0, "reloads_rejected": 0,
                "last_rejection": None}

    async def aclose(self) -> None:
        """Close the manifest's pools when this source loaded it."""
        if self._owned:
            await self._manifest.aclose()


class WatchedManifest:
    """The manifest a ``ManifestWatcher`` keeps current (started by the server)."""

    def __init__(self, watcher: ManifestWatcher) -> None:
        self._watcher = watcher

    @contextlib.asynccontextmanager
    async def lease(self) -> AsyncIterator[Manifest]:
        """The current manifest, held for one request (a reload does not close it)."""
        async with self._watcher.lease() as manifest:
            yield manifest

    def status(self) -> dict[str, Any]:
        """The watcher's status: digest, reloads accepted and rejected, last rejection."""
        status = self._watcher.status.to_json()
        # Where the file lives is the operator's business, not a client's: its name only.
        path = str(status.pop("path", ""))
        rejection = status.get("last_rejection")
        if path and isinstance(rejection, dict):
            rejection["reason"] = str(rejection["reason"]).replace(path, Path(path).name)
        return {**status, "watching": True}

    async def aclose(self) -> None:
        """Stop watching and close every manifest the watcher loaded."""
        await self._watcher.aclose()


def watched_source(path: str, *, trusted_keys: Sequence[str] | None,
                   expected_digest: str | None, registry: Any,
                   allow_private_networks: bool, interval: float,
                   on_change: Callable[[Manifest], Awaitable[None]]) -> tuple[WatchedManifest,
                                                                             ManifestWatcher]:
    """A watched source of ``path`` and its (not yet started) watcher."""
    from compiler.runtime.fleet.watch import watch_manifest

    watcher = watch_manifest(path, trusted_keys=trusted_keys, expected_digest=expected_digest,
                             registry=registry, allow_private_networks=allow_private_networks,
                             interval=interval, on_change=on_change)
    return WatchedManifest(watcher), watcher
