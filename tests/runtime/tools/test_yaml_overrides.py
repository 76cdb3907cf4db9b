"""YAML overrides end to end: compiled into the manifest, enforced by the loaded tool."""

from __future__ import annotations

from pathlib import Path

from compiler.build import build
from compiler.manifest import dump_manifest
from compiler.pipeline import CompileOptions
from compiler.runtime import RuntimeContext, ToolRegistry, load_manifest
from tests.support.runtime import RecordingServer

TOOL = """apiVersion: capc/v1
kind: Capability
code: report
name: Report
type: api
options:
  description: File a report
  method: POST
  url: {url}/reports
  body:
    title: {{type: string, description: Report title, required: true}}
    category: {{type: string, description: Free-text category}}
"""
CONSTRAIN = """apiVersion: capc/v1
kind: ToolOverride
tool: report
description: "step 1"
---
apiVersion: capc/v1
kind: ToolOverride
tool: report
description_append: " | step 2"
input_schema_patch:
  properties:
    category: {enum: [bug, idea]}
"""


async def test_a_patched_enum_refuses_a_bad_argument_before_any_request(
    server: RecordingServer, tmp_path: Path
) -> None:
    source = tmp_path / "capabilities"
    source.mkdir()
    (source / "a-report.yaml").write_text(TOOL.format(url=server.base_url))
    (source / "b-constrain.yaml").write_text(CONSTRAIN)
    result = build([str(source)], options=CompileOptions(allow_private_networks=True),
                   use_cache=False)
    assert result.manifest is not None, result.diagnostics
    manifest_path = tmp_path / "manifest.json"
    manifest_path.write_bytes(dump_manifest(result.manifest))

    manifest = load_manifest(manifest_path, registry=ToolRegistry(),
                             allow_private_networks=True)
    async with manifest:
        toolset = await manifest.resolve(["report"], RuntimeContext(user_id=1, group_id=1))
        (tool,) = toolset.tools
        refused = await tool.ainvoke({"title": "t", "category": "rant"})
        assert server.received == []
        accepted = await tool.ainvoke({"title": "t", "category": "bug"})
    assert tool.description == "step 1 | step 2"
    assert refused.startswith("Error: invalid arguments") and "'bug' or 'idea'" in refused
    assert not accepted.startswith("Error")
    assert len(server.received) == 1
    assert server.last().body == b'{"category":"bug","title":"t"}'
