"""The optional extra stays optional: the runtime, a load and a compile (lock or not) import
neither ``mcp`` nor ``langchain_mcp_adapters``; ``approve`` is a service, not a condition."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from compiler.runtime import RuntimeContext
from tests.support.paths import REPO_ROOT

PROBE = """
import sys
from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.pins.lockfile import read_lock
from compiler.runtime import load_manifest
from compiler.manifest import dump_manifest
import compiler.runtime.toolset, compiler.runtime.mcp.providers
pins, _ = read_lock("capc.lock")
result = build(["capabilities"], options=CompileOptions(pins=pins), use_cache=False)
open("m.json", "wb").write(dump_manifest(result.manifest))
load_manifest("m.json")
print(sorted(m for m in sys.modules if m.split(".")[0] in ("mcp", "langchain_mcp_adapters")))
"""


def test_nothing_but_lock_and_client_tools_import_the_mcp_sdk(tmp_path: Path) -> None:
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "d.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: d\nname: D\ntype: mcp\noptions:\n"
        "  server_label: d\n  server_url: https://mcp.example.com/mcp\n")
    (tmp_path / "capc.lock").write_text('{"lock_version": 1, "servers": {"d": {'
                                        '"server_url": "https://mcp.example.com/mcp", '
                                        '"tools": []}}}\n')
    result = subprocess.run([sys.executable, "-c", PROBE], cwd=tmp_path, capture_output=True,
                            text=True, timeout=120, env={"PYTHONPATH": str(REPO_ROOT)})
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_approve_is_not_a_condition_attribute() -> None:
    async def approve(tool_name: str, args: dict[str, object]) -> bool:
        return True

    ctx = RuntimeContext(user_id=1, approve=approve)
    assert ctx.approve is approve
    assert ctx.condition_attribute("approve") is None
    assert "approve" not in repr(ctx)
