"""``capc explain`` and ``capc docs`` see plugin tools through the manifest's snapshot."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest

from tests.support.catalogue import REPO, capability, write


@pytest.fixture
def compiled(tmp_path: Path, run_capc: Callable) -> Path:
    write(tmp_path / "capabilities" / "memory.yaml", capability("memory"))
    for name in ("10-memory-description.yaml", "20-memory-category.yaml"):
        write(tmp_path / "capabilities" / "overrides" / name,
              (REPO / "capabilities" / "overrides" / name).read_text())
    write(tmp_path / "capabilities" / "overrides" / "30-recall.yaml", """\
apiVersion: capc/v1
kind: ToolOverride
tool: memory__recall
namespace: recall
""")
    result = run_capc(tmp_path, "compile", "--plugins", "-o", "m.json")
    assert result.returncode == 0, result.stderr
    return tmp_path / "m.json"


def test_explain_shows_the_plugin_tool_with_boot_overrides_applied(
    compiled: Path, run_capc: Callable
) -> None:
    result = run_capc(compiled.parent, "explain", "memory__remember", "-m", "m.json")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == ("tool memory__remember  (plugin capc-test-plugin 0.1.0, codes memory; "
                        "capabilities memory)")
    assert "name:  [from plugin capc-test-plugin 0.1.0]" in lines
    shipped = (REPO / "capabilities" / "overrides" / "20-memory-category.yaml").read_text()
    line_of = {line.split(":")[0]: number
               for number, line in enumerate(shipped.splitlines(), 1) if not line[:1].isspace()}
    source = "capabilities/overrides/20-memory-category.yaml"
    assert f"description:  [from {source}:{line_of['description_append']}]" in lines
    assert ('  "Store something in memory; tag it with a category. Categories: health, '
            'identity, preferences."') in lines
    # A block mapping is located where its value starts: the line after its key.
    assert f"input_schema:  [from {source}:{line_of['input_schema'] + 1}]" in lines
    assert "  capabilities/overrides/10-memory-description.yaml:6  sets description" in lines
    # Found by its exposed (relabelled) name too, the name an agent's logs show.
    relabelled = run_capc(compiled.parent, "explain", "recall__recall", "-m", "m.json")
    assert relabelled.returncode == 0, relabelled.stderr
    assert relabelled.stdout.startswith("tool recall__recall  (plugin capc-test-plugin 0.1.0")
    assert "namespace:  [from capabilities/overrides/30-recall.yaml:4]" in relabelled.stdout
    unknown = run_capc(compiled.parent, "explain", "memory__forget", "-m", "m.json")
    assert unknown.returncode == 1


def test_docs_list_the_plugin_tools_as_the_agent_sees_them(
    compiled: Path, run_capc: Callable
) -> None:
    result = run_capc(compiled.parent, "docs", "-m", "m.json")
    assert result.returncode == 0, result.stderr
    page = result.stdout
    assert ("| [`memory`](#capability-memory) | memory | internal | `memory__remember`, "
            "`recall__recall` | — |") in page
    assert ("| `memory__remember` | Store something in memory; tag it with a category. "
            "Categories: health, identity, preferences. |") in page
    assert "registered by plugins at boot (compile with a plugin snapshot" not in page
