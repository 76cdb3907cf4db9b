"""``capc diff``: compiled manifests before and after one edit, each security kind ranked."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from compiler.build import build
from compiler.manifest import dump_manifest
from compiler.review.diff import SECURITY_RANKS, diff_manifests, field_changes
from compiler.review.diff_report import render_json, render_markdown, render_text
from tests.support.capc import run_capc

WEATHER = """\
apiVersion: capc/v1
kind: Capability
code: get_weather
name: Weather API
type: api
options:
  description: Get current weather for a city
  url: https://api.weather.com/v1/current
  params:
    location: {type: string, description: City name, required: true}
  headers:
    Authorization: Bearer ${WEATHER_API_KEY}
"""
WIKI = """\
apiVersion: capc/v1
kind: Capability
code: deepwiki
name: DeepWiki
type: mcp
options:
  server_label: deepwiki
  server_url: https://mcp.deepwiki.com/mcp
  require_approval: always
  allowed_tools: [ask_question]
"""
BASE = """\
apiVersion: capc/v1
kind: Capability
code: base
name: Base Tools
type: internal
"""
TREE = {"weather.yaml": WEATHER, "wiki.yaml": WIKI, "base.yaml": BASE}


def compile_tree(root: Path, files: dict[str, str]) -> dict:
    """Compile ``files`` in ``root`` (cwd-relative paths, like the CLI)."""
    caps = root / "capabilities"
    caps.mkdir(parents=True, exist_ok=True)
    for old in caps.iterdir():
        old.unlink()
    for name, text in files.items():
        (caps / name).write_text(text)
    result = build(["capabilities"])
    assert result.manifest is not None, result.diagnostics
    return result.manifest


@pytest.fixture
def base_manifest(tmp_path: Path, in_dir) -> dict:
    in_dir(tmp_path)
    return compile_tree(tmp_path, TREE)


def edited(tmp_path: Path, name: str, old: str, new: str) -> dict:
    files = dict(TREE)
    assert old in files[name]
    files[name] = files[name].replace(old, new)
    return compile_tree(tmp_path, files)


EDITS = [
    ("new-host", "weather.yaml", "api.weather.com", "weather.example.net",
     "talks to a new host weather.example.net (was api.weather.com)"),
    ("plain-http", "weather.yaml", "https://api", "http://api",
     "sends to api.weather.com over plain http (was https)"),
    ("allowed-tools-widened", "wiki.yaml", "[ask_question]", "[ask_question, read_wiki_contents]",
     'allowed_tools gains ["read_wiki_contents"]'),
    ("allow-list-removed", "wiki.yaml", "  allowed_tools: [ask_question]\n", "",
     "allowed_tools removed: every tool of the server is now available"),
    ("approval-relaxed", "wiki.yaml", "always", "never",
     'require_approval relaxed from "always" to "never"'),
    ("new-file-upload", "weather.yaml", "  headers:\n",
     "  method: POST\n  files:\n    photo: {description: A photo, required: false}\n  headers:\n",
     'uploads chat documents (argument "photo")'),
    ("new-placeholder", "weather.yaml", "Bearer ${WEATHER_API_KEY}",
     "Bearer ${WEATHER_API_KEY}\n    X-Tenant: ${TENANT_ID}",
     "now needs the secret setting ${TENANT_ID}"),
    ("method-changed", "weather.yaml", "  headers:\n", "  method: DELETE\n  headers:\n",
     "method changed from GET to DELETE"),
]


@pytest.mark.parametrize(("kind", "name", "old", "new", "message"), EDITS,
                         ids=[edit[0] for edit in EDITS])
def test_each_security_relevant_change_is_called_out(
    tmp_path: Path, base_manifest: dict, kind: str, name: str, old: str, new: str, message: str
) -> None:
    after = edited(tmp_path, name, old, new)
    diff = diff_manifests(base_manifest, after)
    kinds = [finding.kind for finding in diff.security]
    assert kind in kinds
    finding = diff.security[kinds.index(kind)]
    assert finding.message == message
    assert finding.rank == SECURITY_RANKS[kind]
    text = render_text(diff)
    assert text.splitlines()[0].startswith("capc diff: capabilities 1 changed")
    assert f"[{finding.rank}] {kind} {finding.entry}: {message}" in text
    markdown = render_markdown(diff)
    assert markdown.startswith("### capc diff:")
    assert f"| {finding.rank} | {kind} | <code>{finding.entry}</code> |" in markdown
    assert markdown.index("Security-relevant") < markdown.index("<details>")
    assert {"kind": kind, "entry": finding.entry, "rank": finding.rank,
            "message": message} in json.loads(render_json(diff))["security"]


def test_a_per_tool_approval_filter_that_exempts_more_tools_is_relaxed(
    tmp_path: Path, base_manifest: dict
) -> None:
    before = edited(tmp_path, "wiki.yaml", "always", "{never: {tool_names: [ask_question]}}")
    after = edited(tmp_path, "wiki.yaml", "always",
                   "{never: {tool_names: [ask_question, read_wiki_contents]}}")
    findings = [(f.kind, f.message) for f in diff_manifests(before, after).security]
    assert ("approval-relaxed",
            "require_approval no longer gates tool(s) read_wiki_contents") in findings
    tightened = [f.kind for f in diff_manifests(after, before).security]
    assert "approval-relaxed" not in tightened


def test_findings_are_ranked_most_serious_first(tmp_path: Path, base_manifest: dict) -> None:
    files = dict(TREE)
    files["wiki.yaml"] = WIKI.replace("always", "never").replace(
        "  allowed_tools: [ask_question]\n", "")
    files["weather.yaml"] = WEATHER.replace("https://api.weather.com", "http://evil.example")
    diff = diff_manifests(base_manifest, compile_tree(tmp_path, files))
    assert [f.kind for f in diff.security] == [
        "allow-list-removed", "approval-relaxed", "plain-http", "new-host"]


def test_added_capabilities_bring_their_hosts_secrets_and_uploads(
    tmp_path: Path, base_manifest: dict
) -> None:
    files = dict(TREE)
    files["attach.yaml"] = WEATHER.replace("get_weather", "attach_file").replace(
        "api.weather.com/v1/current", "files.example.com/v1/{chat_id}").replace(
        "  headers:\n", "  method: POST\n  files:\n    file: {description: Doc, required: true}\n"
        "  headers:\n").replace("WEATHER_API_KEY", "FILES_TOKEN")
    diff = diff_manifests(base_manifest, compile_tree(tmp_path, files))
    assert diff.count("capability", "added") == 1 and diff.tools.added == ("attach_file",)
    assert sorted(f.kind for f in diff.security) == [
        "new-file-upload", "new-host", "new-placeholder"]
    assert render_text(diff).splitlines()[0] == (
        "capc diff: capabilities 1 added; tools 1 added; 3 security-relevant changes")


def test_defaults_spelled_out_and_moved_lines_are_not_differences(
    tmp_path: Path, base_manifest: dict
) -> None:
    files = dict(TREE)
    files["weather.yaml"] = "# moved down by a comment\n\n" + WEATHER.replace(
        "  headers:\n", "  method: GET\n  timeout: 30\n  max_response_bytes: 1048576\n  headers:\n")
    files["wiki.yaml"] = "# another comment\n" + WIKI.replace(
        "  allowed_tools", "  headers: {}\n  allowed_tools")
    after = compile_tree(tmp_path, files)
    assert dump_manifest(after) != dump_manifest(base_manifest)  # source lines moved
    diff = diff_manifests(base_manifest, after)
    assert not diff.has_changes, render_text(diff)
    assert render_text(diff) == "capc diff: no differences\n"


def test_a_manifest_missing_default_keys_equals_one_that_has_them(base_manifest: dict) -> None:
    sparse = json.loads(json.dumps(base_manifest))
    for capability in sparse["capabilities"]:
        for section, keys in (("api", ("timeout", "max_response_bytes", "body_template")),
                              ("mcp", ("extra", "headers"))):
            for key in keys:
                capability.get(section, {}).pop(key, None)
    assert not diff_manifests(base_manifest, sparse).has_changes


def test_description_changes_show_old_and_new(tmp_path: Path, base_manifest: dict) -> None:
    after = edited(tmp_path, "weather.yaml", "for a city", "for any city")
    diff = diff_manifests(base_manifest, after)
    assert diff.security == ()
    assert diff.tools.changed == ("get_weather",)
    text = render_text(diff)
    assert ('    tool.description: "Get current weather for a city" → '
            '"Get current weather for any city"') in text
    assert text.splitlines()[0] == (
        "capc diff: capabilities 1 changed; tools 1 changed; 0 security-relevant changes")


def _write(path: Path, manifest: dict) -> str:
    path.write_bytes(dump_manifest(manifest))
    return str(path)


def test_cli_exit_codes(tmp_path: Path, base_manifest: dict) -> None:
    old = _write(tmp_path / "old.json", base_manifest)
    same = _write(tmp_path / "same.json", base_manifest)
    harmless = _write(tmp_path / "harmless.json",
                      edited(tmp_path, "weather.yaml", "for a city", "for any city"))
    risky = _write(tmp_path / "risky.json", edited(tmp_path, "wiki.yaml", "always", "never"))
    assert run_capc("diff", old, same, "--exit-code", cwd=tmp_path).returncode == 0
    assert run_capc("diff", old, harmless, cwd=tmp_path).returncode == 0
    assert run_capc("diff", old, harmless, "--exit-code", cwd=tmp_path).returncode == 1
    assert run_capc("diff", old, harmless, "--fail-on", "security", cwd=tmp_path).returncode == 0
    failed = run_capc("diff", old, risky, "--fail-on", "security", "--format",
                                 "markdown", cwd=tmp_path)
    assert failed.returncode == 1
    assert failed.stdout.startswith("### capc diff: capabilities 1 changed; 1 security")
    assert json.loads(run_capc("diff", old, risky, "--format", "json", cwd=tmp_path).stdout)[
        "has_changes"] is True


def test_a_tampered_manifest_is_refused(tmp_path: Path, base_manifest: dict) -> None:
    from compiler.errors import ManifestError
    from compiler.review.diff_report import diff_files

    old = _write(tmp_path / "old.json", base_manifest)
    tampered = json.loads(Path(old).read_text())
    tampered["capabilities"][0]["name"] = "Changed by hand"
    (tmp_path / "bad.json").write_text(json.dumps(tampered))
    with pytest.raises(ManifestError, match="digest"):
        diff_files(old, str(tmp_path / "bad.json"))


def _git(cwd: Path, *arguments: str) -> None:
    subprocess.run(["git", *arguments], cwd=cwd, check=True, capture_output=True,
                   env={"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@example.com",
                        "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@example.com",
                        "HOME": str(cwd), "PATH": "/usr/bin:/bin"})


def test_git_revisions_are_compiled_and_compared(tmp_path: Path, base_manifest: dict) -> None:
    _git(tmp_path, "init", "-q", "-b", "main")
    _git(tmp_path, "add", "capabilities")
    _git(tmp_path, "commit", "-q", "-m", "first")
    (tmp_path / "capabilities" / "wiki.yaml").write_text(WIKI.replace("always", "never"))
    _git(tmp_path, "commit", "-q", "-am", "relax")
    (tmp_path / "capabilities" / "weather.yaml").write_text(WEATHER.replace("https", "http"))
    committed = run_capc("diff", "--git", "HEAD~1..HEAD", "--fail-on", "security", cwd=tmp_path)
    assert committed.returncode == 1, committed.stderr
    assert "approval-relaxed deepwiki" in committed.stdout
    assert "plain-http" not in committed.stdout
    working = run_capc("diff", "--git", "HEAD..", "capabilities", cwd=tmp_path)
    assert working.returncode == 0, working.stderr
    assert "plain-http get_weather" in working.stdout
    bad = run_capc("diff", "--git", "HEAD", cwd=tmp_path)
    assert bad.returncode != 0


def test_plugin_snapshot_and_pending_override_changes_are_listed(base_manifest: dict) -> None:
    old = json.loads(json.dumps(base_manifest))
    new = json.loads(json.dumps(base_manifest))
    old["plugins"] = {"crm": {"version": "0.1.0", "tools": ["crm_search_contacts"]}}
    new["plugins"] = {"crm": {"version": "0.2.0", "tools": ["crm_search_contacts"]}}
    new["overrides"] = [{"tool": "memory__remember", "source": {"path": "o.yaml", "line": 1},
                         "patch": {"description": "Remember things"}}]
    diff = diff_manifests(old, new)
    text = render_text(diff)
    assert text.splitlines()[0] == (
        "capc diff: overrides 1 added; plugins 1 changed; 0 security-relevant changes")
    assert '    version: "0.1.0" → "0.2.0"' in text
    assert "+ override memory__remember added" in text


def test_a_value_that_changes_shape_is_one_change() -> None:
    added = field_changes({"api": {"headers": {}}}, {"api": {"headers": {"X-Token": "${T}"}}})
    assert [(c.path, c.old, c.new) for c in added] == [
        ("api.headers", {}, {"X-Token": "${T}"})]
    reshaped = field_changes({"mcp": {"require_approval": "always"}},
                             {"mcp": {"require_approval": {"never": {"tool_names": ["a"]}}}})
    assert [(c.path, c.old, c.new) for c in reshaped] == [
        ("mcp.require_approval", "always", {"never.tool_names": ["a"]})]


_WIKI = """\
apiVersion: capc/v1
kind: Capability
code: wiki
name: Wiki
type: mcp
options:
  server_label: wiki
  server_url: https://mcp.example.com/mcp
  require_approval: never
"""


def _compiled_wiki(root: Path, options: str) -> Path:
    from tests.support.capc import run_capc

    (root / "capabilities").mkdir(parents=True)
    (root / "capabilities" / "wiki.yaml").write_text(_WIKI + options)
    assert run_capc("compile", "-o", "m.json", cwd=root).returncode == 0
    return root / "m.json"


def test_diff_shows_unpinned_reasons_and_no_python_reprs(tmp_path: Path) -> None:
    from tests.support.capc import run_capc

    old = _compiled_wiki(tmp_path / "old", "  allowed_tools: [read]\n")
    new = _compiled_wiki(tmp_path / "new", "  allowed_tools: [read, write]\n"
                                           "  unpinned: the vendor rotates tools weekly\n")
    for output_format in ("text", "markdown"):
        shown = run_capc("diff", str(old), str(new), "--format", output_format, cwd=tmp_path)
        assert shown.returncode == 0, shown.stderr
        assert "unpinned: the vendor rotates tools weekly" in shown.stdout
        assert 'allowed_tools gains ["write"]' in shown.stdout
        assert "['write']" not in shown.stdout
