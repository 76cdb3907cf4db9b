"""Compile a YAML api capability for real and call its tool against a loopback server.

The nested-parameter tests (SPEC §10) go through the whole path a user's tool takes:
``capc``'s pipeline compiles the YAML (checks, normalization, the manifest bytes), the
runtime loads that manifest, and the tool sends a real request to 127.0.0.1.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compiler.build import build
from compiler.compile_result import CompileOptions
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.manifest.format import dump_manifest


def compile_yaml(tmp_path: Path, text: str, base_url: str = "https://api.example.com"
                 ) -> dict[str, Any]:
    """The manifest of one YAML tree (``BASE`` in ``text`` becomes ``base_url``)."""
    tree = tmp_path / "capabilities"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "tools.yaml").write_text(text.replace("BASE", base_url), encoding="utf-8")
    result = build([str(tree)], options=CompileOptions(allow_private_networks=True),
                   cwd=tmp_path, use_cache=False)
    assert result.manifest is not None, [str(d) for d in result.diagnostics]
    manifest: dict[str, Any] = json.loads(dump_manifest(result.manifest))
    return manifest


def compile_problems(tmp_path: Path, text: str) -> list[str]:
    """``code: message`` of every diagnostic of one YAML tree."""
    tree = tmp_path / "capabilities"
    tree.mkdir(parents=True, exist_ok=True)
    (tree / "tools.yaml").write_text(text, encoding="utf-8")
    result = build([str(tree)], cwd=tmp_path, use_cache=False)
    return [f"{d.code}: {d.message}" for d in result.diagnostics]


def manifest_file(tmp_path: Path, text: str, base_url: str) -> Path:
    """The compiled manifest of ``text``, written to ``tmp_path``."""
    path = tmp_path / "manifest.json"
    path.write_bytes(dump_manifest(compile_yaml(tmp_path, text, base_url)))
    return path


def context() -> RuntimeContext:
    """A context with one setting (``TOKEN``)."""
    return RuntimeContext(user_id=1, settings=StaticSettings({"TOKEN": "token-5f4e3d2c1b0a"}))


async def call_tool(path: Path, code: str, arguments: dict[str, Any]) -> str:
    """The text one call of capability ``code``'s tool answers (async)."""
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=True)
    async with manifest:
        toolset = await manifest.resolve([code], context())
        assert len(toolset.tools) == 1, toolset.skipped
        return str(await toolset.tools[0].ainvoke(arguments))
