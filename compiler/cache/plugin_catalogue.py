"""The plugin catalogue of the last compile, reused while nothing discovery read changed.

With ``plugins = true`` (or registrations) every compile starts a discovery child that
imports the plugins (compiler/plugins.py). On the 2,000-file bench tree that child costs
more CPU than a whole cached compile, and a no-change re-compile paid it every time, so
the cache could not keep a project with plugins under a quarter of a cold compile.

The child reports what it read (compiler/cache/read_recorder.py); the catalogue is stored
with the signature of each of those paths, in an authenticated cache entry (the same
HMAC, bounded read and compiler fingerprint as compile results: compiler/cache/store.py).
The entry's key covers everything else the child is given: the interpreter, the
working directory, the whole environment (hashed: no value is stored) and the plugin
settings. It is served only when every recorded path has its stored signature; anything
else (a path changed, added or gone, an entry of another key) discovers again and
replaces it. A path modified in the two seconds before discovery ended could change
again within the same time stamp, so such a catalogue is not stored; nor is one whose
discovery reported a failure (a plugin that raised, hung or died) or read through a bare
descriptor: the next run tries again.

:func:`discover_reusing` sits beside :func:`compiler.plugins.discover_catalogue`;
tests/cache/test_plugin_catalogue.py proves a reused catalogue equal to a fresh one after
each kind of change (a plugin's code, its metadata, a new shadowing module, the
environment, a registration module).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any

from compiler.cache.cache_keys import machine_key
from compiler.cache.read_recorder import RACY_NS, Signature, signature
from compiler.cache.store import CompileCache

if TYPE_CHECKING:
    from compiler.plugins import PluginSettings

ENTRY_KIND = "plugins"
# A path modified less than RACY_NS before discovery ended keeps its catalogue from being
# stored (compiler/cache/read_recorder.py says why).

def discover_reusing(settings: PluginSettings, directory: Path, cwd: Path | None = None
                     ) -> dict[str, Any]:
    """``discover_catalogue`` with ``settings``, answered from the cache in ``directory``
    while nothing the last discovery read has changed (the module docstring)."""
    from compiler.plugins import discover_catalogue

    key = _request_key(settings, cwd)
    store = CompileCache(directory, key[:32], machine_key(cwd))
    stored = _stored_catalogue(store, key)
    if stored is not None:
        return stored
    reads: list[dict[str, Any]] = []
    catalogue = discover_catalogue(settings.timeout, registrations=settings.registrations,
                                   entry_points=settings.entry_points, reads=reads)
    if len(reads) == 1 and not reads[0].get("untracked") and not catalogue["failures"]:
        paths = [str(path) for path in (*reads[0]["files"], *reads[0]["folders"])]
        signed = [(path, signature(path)) for path in paths]
        if not _racy(signed, time.time_ns()):
            store.write_entry(ENTRY_KIND, (key, signed, json.dumps(catalogue)))
    return catalogue


def _racy(signed: list[tuple[str, Signature]], now_ns: int) -> bool:
    """Whether a path was modified too recently for its signature to tell a later change
    apart (a rewrite of the same size within one tick of the file system's clock): such
    a discovery is not stored, and the next compile discovers again."""
    recent = now_ns - RACY_NS
    return any(known is not None and known[3] > recent for _, known in signed)


def _stored_catalogue(store: CompileCache, key: str) -> dict[str, Any] | None:
    """The stored catalogue when its key is ``key`` and every path it read is unchanged."""
    found = store.read_entry(ENTRY_KIND)
    if found is None:
        return None
    try:
        stored_key, signed, text = found[0]
        if stored_key != key:
            return None
        for path, known in signed:
            if signature(path) != (None if known is None else tuple(known)):
                return None
        catalogue = json.loads(text)
    except (TypeError, ValueError):
        return None
    return catalogue if isinstance(catalogue, dict) else None


def _request_key(settings: PluginSettings, cwd: Path | None) -> str:
    """A hash of everything the discovery child is given besides the files it reads."""
    from compiler.plugins import ENTRY_POINT_GROUP

    given = [sys.executable, sys.version, os.path.realpath(cwd or Path.cwd()),
             sorted(os.environ.items()), ENTRY_POINT_GROUP, settings.timeout,
             list(settings.registrations.specs), settings.registrations.root,
             settings.entry_points]
    text = json.dumps(given, ensure_ascii=False)
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()
