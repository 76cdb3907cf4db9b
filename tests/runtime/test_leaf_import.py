"""`compiler.runtime` is a leaf: importing it pulls in no compile-side module, nor jinja2,
jsonschema or click; and a whole load-and-resolve works where those three cannot be imported.

(httpx itself imports click for its command line when click is installed, so the second
test blocks the three packages instead of looking for them in sys.modules.)"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from tests.support.paths import REPO_ROOT
from tests.support.runtime import api_capability, mcp_capability, write_manifest

FORBIDDEN = ("jinja2", "jsonschema", "click")

PROBE = """
import json, sys
{blocker}
{body}
loaded = sorted(sys.modules)
print(json.dumps(loaded))
"""


BLOCKER = f"""
import importlib.abc
class Blocker(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in {FORBIDDEN!r}:
            raise ImportError("blocked: " + name)
        return None
sys.meta_path.insert(0, Blocker())
"""


def modules_after(body: str, block: bool = False) -> list[str]:
    code = PROBE.format(blocker=BLOCKER if block else "", body=body)
    result = subprocess.run([sys.executable, "-c", code], cwd=REPO_ROOT,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


def offenders(modules: list[str]) -> list[str]:
    bad = [m for m in modules if m.split(".")[0] in FORBIDDEN]
    bad += [m for m in modules if m.startswith("compiler.") and not m.startswith(
        "compiler.runtime")]
    return bad


def test_importing_the_runtime_is_light() -> None:
    modules = modules_after("import compiler.runtime")
    assert offenders(modules) == []
    # The public names load lazily: nothing heavy until they are used.
    assert not [m for m in modules if m.split(".")[0] in ("langchain_core", "httpx", "pydantic")]


def test_resolving_a_manifest_stays_a_leaf(tmp_path: Path) -> None:
    path = write_manifest(tmp_path / "m.json", [
        mcp_capability("deepwiki"),
        api_capability("get_weather", "https://api.weather.com/v1/current",
                       properties={"location": {"type": "string"}},
                       arguments={"location": {"bindings": ["query"], "type": "string"}}),
    ])
    modules = modules_after(f"""
import asyncio
from compiler.runtime import load_manifest, RuntimeContext, ToolRegistry, attach_mcp
from tests.support.paths import REPO_ROOT
async def main():
    async with load_manifest({str(path)!r}, registry=None) as manifest:
        toolset = await manifest.resolve(manifest.codes(), RuntimeContext(chat_id=1))
        assert len(toolset.tools) == 1
        toolset.mcp("openai"); toolset.mcp("anthropic"); toolset.mcp("langchain")
asyncio.run(main())
""", block=True)
    assert offenders(modules) == []
    assert "compiler.runtime.api.tool" in modules
