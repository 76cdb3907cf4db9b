"""``capc compile`` / ``validate`` / ``schema`` / ``explain`` through a real subprocess."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from compiler.runtime.manifest.read import read_verified_document
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
SHIPPED = REPO / "capabilities"


capc = run_capc


def test_shipped_tree_compiles_to_a_verified_manifest(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    result = capc("compile", "capabilities", "-o", str(out))
    assert result.returncode == 0, result.stderr
    manifest = read_verified_document(out)
    codes = {c["code"] for c in manifest["capabilities"]}
    assert {"get_weather", "send_sms", "send_sms_form", "get_chat_messages", "post_message",
            "attach_file", "deepwiki", "ha_remote", "base", "rag", "crm",
            "obviously_manage"} <= codes
    assert str(tmp_path) not in out.read_text() and str(REPO) not in out.read_text()


def test_same_tree_copied_in_reverse_order_elsewhere_gives_identical_bytes(
    tmp_path: Path,
) -> None:
    first = tmp_path / "first.json"
    assert capc("compile", "capabilities", "-o", str(first)).returncode == 0
    again = tmp_path / "again.json"
    assert capc("compile", "capabilities", "-o", str(again)).returncode == 0
    # Copy files in reverse order (different directory-entry order) into another folder,
    # then compile there under another locale and time zone.
    other = tmp_path / "elsewhere"
    files = sorted(p for p in SHIPPED.rglob("*") if p.is_file())
    for path in reversed(files):
        target = other / "capabilities" / path.relative_to(SHIPPED)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    shutil.copyfile(REPO / "pyproject.toml", other / "pyproject.toml")  # same [tool.capc]
    env = {**os.environ, "LC_ALL": "C", "LANG": "C", "TZ": "Pacific/Kiritimati",
           "PYTHONHASHSEED": "12345"}
    third = tmp_path / "third.json"
    result = capc("compile", "capabilities", "-o", str(third), cwd=other, env=env)
    assert result.returncode == 0, result.stderr
    assert first.read_bytes() == again.read_bytes() == third.read_bytes()


def _tree(root: Path, description: str = "d") -> Path:
    source = root / "src"
    source.mkdir(parents=True, exist_ok=True)
    (source / "a.yaml").write_text(
        "apiVersion: capc/v1\nkind: Capability\ncode: a\nname: A\ntype: api\noptions:\n"
        f"  description: {description}\n  url: https://api.example.com/v1\n")
    return source


def test_check_fails_on_stale_or_missing_manifest_and_writes_nothing(tmp_path: Path) -> None:
    _tree(tmp_path)
    out = tmp_path / "build" / "manifest.json"
    missing = capc("compile", "src", "-o", str(out), "--check", cwd=tmp_path)
    assert missing.returncode == 1 and "stale-manifest" in missing.stderr
    assert not out.exists()
    assert capc("compile", "src", "-o", str(out), cwd=tmp_path).returncode == 0
    fresh = capc("compile", "src", "-o", str(out), "--check", cwd=tmp_path)
    assert fresh.returncode == 0, fresh.stderr
    before = out.read_bytes()
    _tree(tmp_path, description="changed")
    stale = capc("compile", "src", "-o", str(out), "--check", cwd=tmp_path)
    assert stale.returncode == 1 and "differs" in stale.stderr
    assert out.read_bytes() == before


def test_failed_compile_leaves_previous_manifest_untouched(tmp_path: Path) -> None:
    source = _tree(tmp_path)
    out = tmp_path / "manifest.json"
    assert capc("compile", "src", "-o", str(out), cwd=tmp_path).returncode == 0
    before = out.read_bytes()
    (source / "b.yaml").write_text("apiVersion: capc/v1\nkind: Capability\ncode: b\n")
    failed = capc("compile", "src", "-o", str(out), cwd=tmp_path)
    assert failed.returncode == 1
    assert "src/b.yaml:1:1: error[schema-required]" in failed.stderr
    assert out.read_bytes() == before
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".manifest")] == []


@pytest.mark.parametrize("output_format", ["github", "json"])
def test_machine_formats(tmp_path: Path, output_format: str) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "a.yaml").write_text("apiVersion: capc/v1\nkind: Capability\ncode: a\n"
                                   "name: A\ntype: internal\nname: B\n")
    summary = tmp_path / "summary.md"
    env = {**os.environ, "GITHUB_STEP_SUMMARY": str(summary)}
    result = capc("validate", "src", "--format", output_format, cwd=tmp_path, env=env)
    assert result.returncode == 1
    if output_format == "json":
        assert json.loads(result.stdout) == [{
            "path": "src/a.yaml", "line": 6, "col": 1, "severity": "error",
            "code": "yaml-duplicate-key", "message": "duplicate key 'name' (first at line 4)"}]
    else:
        assert result.stdout.startswith(
            "::error file=src/a.yaml,line=6,col=1,title=yaml-duplicate-key::duplicate key")
        assert "`src/a.yaml:6:1`" in summary.read_text()


def test_strict_turns_warnings_into_failures(tmp_path: Path) -> None:
    source = tmp_path / "src"
    source.mkdir()
    (source / "o.yaml").write_text("apiVersion: capc/v1\nkind: ToolOverride\n"
                                   "tool: memory__remember\ndescription: x\n")
    assert capc("validate", "src", cwd=tmp_path).returncode == 0
    strict = capc("validate", "src", "--strict", cwd=tmp_path)
    assert strict.returncode == 1
    assert "error[override-unknown-tool]" in strict.stderr


def test_usage_and_io_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    missing = capc("compile", "no-such-dir", cwd=tmp_path)
    assert missing.returncode == 2 and "no such file or directory" in missing.stderr
    bad_flag = capc("compile", "--no-such-flag", cwd=tmp_path)
    assert bad_flag.returncode == 2
    unknown = capc("schema", "Nope", cwd=tmp_path)
    assert unknown.returncode == 2 and "Capability, ToolOverride" in unknown.stderr
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.yaml").write_text("apiVersion: capc/v1\nkind: Capability\n"
                                            "code: a\nname: A\ntype: internal\n")
    (tmp_path / "out").mkdir()
    unwritable = capc("compile", "src", "-o", "out", cwd=tmp_path)
    assert unwritable.returncode == 2 and "Is a directory" in unwritable.stderr
    # The output the user named, not the temporary file beside it (which is gone).
    assert unwritable.stderr.splitlines()[-1] == "capc: out: Is a directory"
    assert not list((tmp_path).glob(".out.*"))
    for result in (missing, bad_flag, unknown, unwritable):
        assert "Traceback" not in result.stderr and "internal error" not in result.stderr


def test_schema_prints_the_shipped_schemas() -> None:
    for kind in ("Capability", "ToolOverride"):
        result = capc("schema", kind)
        assert result.returncode == 0
        schema = json.loads(result.stdout)
        assert schema["properties"]["kind"]["const"] == kind
        assert schema["properties"]["apiVersion"]["const"] == "capc/v1"


def test_schema_all_publishes_every_schema(tmp_path: Path) -> None:
    result = capc("schema", "--all", "-o", str(tmp_path / "published"))
    assert result.returncode == 0, result.stderr
    published = sorted(p.name for p in (tmp_path / "published").iterdir())
    assert published == ["capability-v1.json", "manifest-v1.json", "profile-v1.json",
                         "tool-override-v1.json", "tooltest-v1.json"]
    for name in published:
        text = (tmp_path / "published" / name).read_text()
        assert text == (REPO / "schemas" / name).read_text()
        assert json.loads(text)["$schema"] == "https://json-schema.org/draft/2020-12/schema"


def test_explain_shows_final_descriptor_and_provenance(tmp_path: Path) -> None:
    case = REPO / "tests" / "cases" / "good" / "composition"
    out = tmp_path / "m.json"
    assert capc("compile", "src", "-o", str(out), cwd=case).returncode == 0
    result = capc("explain", "memory__remember", "-m", str(out))
    assert result.returncode == 0, result.stderr
    text = result.stdout
    assert "description:  [from src/c-step2.yaml:4]" in text
    assert '"step 1 | step 2"' in text
    assert "input_schema:  [from src/c-step2.yaml:10]" in text
    assert "name:  [from src/a-tools.yaml:7]" in text
    assert "src/b-step1.yaml:1  sets description" in text
    absent = capc("explain", "nope", "-m", str(out))
    assert absent.returncode == 1 and "no tool 'nope'" in absent.stderr


def test_explain_refuses_a_tampered_manifest(tmp_path: Path) -> None:
    out = tmp_path / "m.json"
    assert capc("compile", "capabilities", "-o", str(out)).returncode == 0
    out.write_text(out.read_text().replace("Get current weather", "Get weather"))
    result = capc("explain", "get_weather", "-m", str(out))
    assert result.returncode == 1 and "manifest refused (digest)" in result.stderr


def test_sources_outside_the_working_directory_give_no_absolute_paths(tmp_path: Path) -> None:
    _tree(tmp_path / "elsewhere")
    here = tmp_path / "here"
    here.mkdir()
    out = here / "m.json"
    result = capc("compile", str(tmp_path / "elsewhere" / "src"), "-o", str(out), cwd=here)
    assert result.returncode == 0, result.stderr
    manifest = json.loads(out.read_text())
    assert manifest["capabilities"][0]["source"] == {"path": "../elsewhere/src/a.yaml",
                                                     "line": 1}
    assert str(tmp_path) not in out.read_text()
