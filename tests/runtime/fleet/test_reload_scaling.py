"""A reload costs time linear in the manifest: n vs 8n capabilities, in a child process.

Whoever can write the volume controls the file, so a reload must not be quadratic in
anything it holds. The ratio is generous (linear is about 8, quadratic 64); the child has
a time limit so a pathological case fails instead of hanging the suite.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CHILD = r"""
import asyncio, json, statistics, sys, time
from pathlib import Path
from compiler.runtime import ToolRegistry, watch_manifest
from tests.support.runtime import api_capability, manifest_document

def version(count, tag):
    capabilities = [api_capability(f"tool_{number}", f"https://api.example.com/{number}/{{q}}",
                                   properties={"q": {"type": "string"}},
                                   arguments={"q": {"bindings": ["path"], "type": "string"}},
                                   description=f"tool {number} {tag}")
                    for number in range(count)]
    return (json.dumps(manifest_document(capabilities), indent=2) + "\n").encode()

async def reload_seconds(folder, count):
    path = folder / f"m{count}.json"
    versions = [version(count, "a"), version(count, "b")]
    path.write_bytes(versions[0])
    times = []
    async with watch_manifest(path, registry=ToolRegistry(), interval=3600,
                              events=False) as watcher:
        for number in range(5):
            path.write_bytes(versions[(number + 1) % 2])
            start = time.perf_counter()
            assert await watcher.check_now() == "accepted"
            times.append(time.perf_counter() - start)
    return statistics.median(times)

async def main():
    folder = Path(sys.argv[1])
    await reload_seconds(folder, 50)  # warm up imports and the worker
    small = await reload_seconds(folder, 200)
    large = await reload_seconds(folder, 1600)
    print(large / small)

asyncio.run(main())
"""


def test_a_reload_scales_linearly_with_the_manifest(tmp_path: Path) -> None:
    done = subprocess.run([sys.executable, "-c", CHILD, str(tmp_path)], capture_output=True,
                          text=True, timeout=600, cwd=Path(__file__).parents[3], check=True)
    ratio = float(done.stdout.strip())
    assert ratio < 24, f"8x the capabilities took {ratio:.1f}x the time"
