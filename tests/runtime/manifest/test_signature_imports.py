"""``cryptography`` and ``mcp`` load only when used: not by ``import compiler.runtime``, not
by a ``load_manifest`` without keys (SPEC §6, §7), each checked in a fresh interpreter."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO_ROOT
from tests.support.runtime import api_capability, mcp_capability, write_manifest
from tests.support.signing import new_key, sign_file

OPTIONAL = ("cryptography", "mcp")


def loaded_packages(body: str) -> set[str]:
    code = f"import json, sys\n{body}\nprint(json.dumps(sorted(sys.modules)))\n"
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return {name.split(".")[0] for name in json.loads(result.stdout)}


def manifest(tmp_path: Path) -> Path:
    return write_manifest(tmp_path / "m.json", [
        mcp_capability("deepwiki"),
        api_capability("get_weather", "https://api.weather.com/v1/current",
                       properties={"location": {"type": "string"}},
                       arguments={"location": {"bindings": ["query"], "type": "string"}}),
    ])


def test_importing_the_runtime_loads_neither() -> None:
    assert loaded_packages("import compiler.runtime").isdisjoint(OPTIONAL)


def test_an_unsigned_load_and_resolve_loads_neither(tmp_path: Path) -> None:
    path = manifest(tmp_path)
    packages = loaded_packages(f"""
import asyncio
from compiler.runtime import load_manifest, RuntimeContext, ToolRegistry
async def main():
    async with load_manifest({str(path)!r}, registry=ToolRegistry(),
                             expected_digest=None, trusted_keys=None) as manifest:
        toolset = await manifest.resolve(manifest.codes(), RuntimeContext(chat_id=1))
        assert len(toolset.tools) == 1
        for provider in ("openai", "anthropic", "langchain"):
            toolset.mcp(provider)
        assert toolset.mcp("langchain").connections
asyncio.run(main())
""")
    assert packages.isdisjoint(OPTIONAL)
    assert "langchain_core" in packages  # the probe really built tools


def test_a_pinned_digest_needs_no_cryptography(tmp_path: Path) -> None:
    path = manifest(tmp_path)
    digest = json.loads(path.read_text())["digest"]
    packages = loaded_packages(f"""
from compiler.runtime import load_manifest, ToolRegistry
load_manifest({str(path)!r}, registry=ToolRegistry(), expected_digest={digest!r})
""")
    assert packages.isdisjoint(OPTIONAL)


def test_verifying_a_signature_does_load_cryptography(tmp_path: Path) -> None:
    # The counterpart that shows the probe can see the import at all.
    path = manifest(tmp_path)
    key = new_key()
    sign_file(path, key)
    packages = loaded_packages(f"""
from compiler.runtime import load_manifest, ToolRegistry
load_manifest({str(path)!r}, registry=ToolRegistry(), trusted_keys=[{key.public_text!r}])
""")
    assert "cryptography" in packages and "mcp" not in packages
