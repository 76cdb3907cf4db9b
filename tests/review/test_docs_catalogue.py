"""``capc docs``: the Markdown catalogue of a compiled manifest."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from compiler.build import build
from compiler.manifest import dump_manifest
from compiler.review.docs import cell, code, render_catalogue
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT


@pytest.fixture(scope="module")
def example_manifest(repo_root_module: Path) -> dict:
    result = build([str(repo_root_module / "capabilities")], cwd=repo_root_module)
    assert result.manifest is not None, result.diagnostics
    return result.manifest


@pytest.fixture(scope="module")
def repo_root_module() -> Path:
    return REPO_ROOT


def test_catalogue_lists_every_capability_with_its_type(example_manifest: dict) -> None:
    page = render_catalogue(example_manifest)
    assert page.startswith("# Capability catalogue\n")
    for capability in example_manifest["capabilities"]:
        assert f"[`{capability['code']}`](#capability-{capability['code']})" in page
        assert f"<a id=\"capability-{capability['code']}\"></a>" in page


def test_api_tools_get_a_parameter_table_hosts_and_settings(example_manifest: dict) -> None:
    page = render_catalogue(example_manifest)
    section = page[page.index('<a id="capability-get_chat_messages">'):]
    section = section[: section.index("\n## ")]
    assert "- **Hosts:** `api.example.com`" in section
    assert "- **Required settings:** `API_TOKEN`" in section
    assert "`GET https://api.example.com/v1/chats/{chat_id}/messages`" in section
    assert "| `chat_id` | string | yes | — | path | The id of the chat to read |" in section
    assert "| `limit` | integer | no | `20` | query | Max messages to return |" in section
    upload = page[page.index('<a id="capability-attach_file">'):]
    assert "| `file` | integer (document id) | yes | — | file |" in upload


def test_mcp_servers_say_which_providers_get_them(example_manifest: dict) -> None:
    manifest = json.loads(json.dumps(example_manifest))
    wiki = next(c for c in manifest["capabilities"] if c["code"] == "deepwiki")
    page = render_catalogue(manifest)
    assert "| anthropic | yes (MCP connector) |" in page
    wiki["mcp"]["require_approval"] = "always"
    gated = render_catalogue(manifest)
    section = gated[gated.index('<a id="capability-deepwiki">'):]
    assert "| anthropic | no: [require_approval] require_approval is 'always'" in section
    assert "| openai | yes (Responses API MCP tool) |" in section
    wiki["mcp"]["require_approval"] = "never"
    wiki["mcp"]["headers"] = {"X-Api-Key": "${WIKI_KEY}"}
    dropped = render_catalogue(manifest)
    section = dropped[dropped.index('<a id="capability-deepwiki">'):]
    assert ("| anthropic | yes (MCP connector), without some headers: [authentication] "
            "header(s) X-Api-Key cannot be sent") in section


def test_internal_capabilities_list_plugin_tools_when_the_snapshot_has_them(
    example_manifest: dict,
) -> None:
    manifest = dict(example_manifest)
    manifest["plugins"] = {"crm": {"tools": [
        {"name": "crm_search_contacts", "description": "Search contacts | by name"}]}}
    page = render_catalogue(manifest)
    section = page[page.index('<a id="capability-crm">'):]
    assert "| `crm_search_contacts` | Search contacts \\| by name |" in section


def test_catalogue_is_deterministic_and_escapes_markdown(example_manifest: dict) -> None:
    assert render_catalogue(example_manifest) == render_catalogue(
        json.loads(json.dumps(example_manifest)))
    assert cell("a | b\n<script>") == "a \\| b<br>&lt;script>"
    assert code("x`y") == "`` x`y ``"
    assert code({"page_type": "canvas"}) == '`{"page_type": "canvas"}`'


def test_cli_writes_the_catalogue(tmp_path: Path, example_manifest: dict, in_dir) -> None:
    (tmp_path / "manifest.json").write_bytes(dump_manifest(example_manifest))
    in_dir(tmp_path)
    result = run_capc("docs", "-m", "manifest.json", "-o", "docs/catalogue.md", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    written = (tmp_path / "docs" / "catalogue.md").read_text()
    assert written == render_catalogue(json.loads((tmp_path / "manifest.json").read_text()))
    missing = run_capc("docs", "-m", "nowhere.json", cwd=tmp_path)
    assert missing.returncode != 0
