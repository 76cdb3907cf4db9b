"""Fleet test support: a ConfigMap volume laid out as the kubelet does, and leak counts.

The kubelet writes each version of a ConfigMap into a new hidden timestamped directory,
points a temporary symlink at it, renames that over ``..data`` (the atomic step) and
removes the old directory. Each key is a symlink ``KEY -> ..data/KEY``. Only ``..data``
ever changes in the watched directory, which is why a per-file watcher misses updates.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import threading
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.support.runtime import api_capability, internal_capability, manifest_document
from tests.support.signing import KeyPair

MANIFEST = "manifest.json"


def manifest_bytes(version: int, base_url: str = "http://127.0.0.1:9") -> bytes:
    """A sealed manifest whose content (and digest) differ per ``version``."""
    capabilities = [
        internal_capability("base"),
        api_capability("lookup", f"{base_url}/v{version}/items/{{item}}",
                       properties={"item": {"type": "string"}},
                       arguments={"item": {"bindings": ["path"], "type": "string"}},
                       required=["item"],
                       description=f"Look an item up (version {version})"),
    ]
    document = manifest_document(capabilities)
    return (json.dumps(document, sort_keys=True, indent=2) + "\n").encode()


def digest_of(raw: bytes) -> str:
    """The digest recorded in manifest bytes."""
    return str(json.loads(raw)["digest"])


def signature_bytes(raw: bytes, key: KeyPair, signed_at: str | None = None) -> bytes:
    """The ``.sig`` file signing manifest ``raw`` with ``key`` (at ``signed_at``: v2)."""
    document = key.signature_document(digest_of(raw), signed_at=signed_at)
    return (json.dumps(document, sort_keys=True) + "\n").encode()


@dataclass
class ConfigMapVolume:
    """A directory updated exactly as a ConfigMap volume is."""

    root: Path
    generation: int = 0

    @property
    def manifest(self) -> Path:
        return self.root / MANIFEST

    def publish(self, files: dict[str, bytes]) -> Path:
        """Write a new version of every key and swap ``..data`` to it; returns its folder."""
        self.generation += 1
        folder = self.root / f"..2026_12_03_09_00_00.{self.generation:06d}"
        folder.mkdir()
        for name, content in files.items():
            (folder / name).write_bytes(content)
        data = self.root / "..data"
        previous = data.resolve() if data.is_symlink() else None
        temporary = self.root / "..data_tmp"
        temporary.symlink_to(folder.name)
        os.rename(temporary, data)  # the atomic step
        for name in files:
            link = self.root / name
            if not link.is_symlink():
                link.symlink_to(Path("..data") / name)
        if previous is not None and previous != folder:
            shutil.rmtree(previous)
        return folder


def open_descriptors() -> int:
    """File descriptors this process holds now."""
    return len(os.listdir("/proc/self/fd"))


def capc_threads() -> list[str]:
    """Names of live threads capc starts (watch worker, watch loop, sync portal)."""
    return sorted(thread.name for thread in threading.enumerate()
                  if thread.name.startswith("capc"))


def other_tasks() -> set[asyncio.Task[Any]]:
    """The running loop's tasks except the current one."""
    return asyncio.all_tasks() - {asyncio.current_task()}  # type: ignore[operator]
