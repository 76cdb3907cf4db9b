"""A reload costs time linear in the manifest: n vs 8n capabilities, in a child process.

Whoever can write the volume controls the file, so a reload must not be quadratic in
anything the file holds (tests/support/complexity.py times it with a time limit).
"""

from __future__ import annotations

import atexit
import json
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from compiler.runtime import ToolRegistry, watch_manifest
from tests.support.complexity import assert_linear
from tests.support.runtime import api_capability, manifest_document


def _version(count: int, tag: str) -> bytes:
    capabilities = [api_capability(f"tool_{number}", f"https://api.example.com/{number}/{{q}}",
                                   properties={"q": {"type": "string"}},
                                   arguments={"q": {"bindings": ["path"], "type": "string"}},
                                   description=f"tool {number} {tag}")
                    for number in range(count)]
    return (json.dumps(manifest_document(capabilities), indent=2) + "\n").encode()


def reload_of(count: int) -> Callable[[], object]:
    """Workload: one reload of a ``count``-capability manifest by a started watcher."""
    folder = tempfile.mkdtemp(prefix="capc-reload-scaling-")
    atexit.register(shutil.rmtree, folder, True)  # the child process ends after timing
    path = Path(folder) / "manifest.json"
    versions = [_version(count, "a"), _version(count, "b")]
    path.write_bytes(versions[0])
    # Started in its own thread and left running: the child process ends after timing.
    watcher = watch_manifest(path, registry=ToolRegistry(), interval=3600, events=False)
    watcher.__enter__()
    turn = [0]

    def reload() -> object:
        turn[0] += 1
        path.write_bytes(versions[turn[0] % 2])
        outcome = watcher.check_now_sync()
        assert outcome == "accepted", outcome
        return outcome

    return reload


def test_a_reload_scales_linearly_with_the_manifest() -> None:
    assert_linear("tests.runtime.fleet.test_reload_scaling:reload_of", 200)
