"""Issue 21 item 14, the messages a newcomer meets: schema errors do not hide the other
errors of a file, unknown ``when:`` attributes warn (and can be declared), a scaffold's
placeholders fail --strict, and ``capc explain`` says when its manifest is older than the
sources it names."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from compiler.pipeline import compile_documents
from compiler.source.documents import parse_source
from tests.support.capc import run_capc

WHEN = """\
apiVersion: capc/v1
kind: Capability
code: a
name: A
type: api
when:
  page_type: canvas
options:
  description: d
  url: https://api.example.com/x
"""


def _codes(text: str) -> list[str]:
    documents, loading = parse_source("a.yaml", text.encode(), {})
    assert not loading
    return [d.code for d in compile_documents(documents).diagnostics]


@pytest.mark.parametrize(("broken", "still_found"), [
    ("  headers: [1, 2]\n  url: http://127.0.0.1/x\n", "url-private-address"),
    ("  timeout: fast\n  url: http://169.254.169.254/x\n", "url-forbidden-address"),
    ("  url: https://api.example.com/{id}\n  params: {id: {type: strin}}\n"
     "  path_params: {id: {type: string}}\n", "api-parameter-conflict"),
    ("  url: https://api.example.com/x\n  bogus: 1\n  retry: {attempts: 3}\n  method: POST\n",
     "api-retry-not-idempotent"),
    ("  url: https://api.example.com/x\n  bogus: 1\n  extra: 2\n  retry: {attempts: 3}\n"
     "  method: POST\n", "api-retry-not-idempotent"),
])
def test_a_schema_error_does_not_hide_the_semantic_errors_of_the_same_file(
        broken: str, still_found: str) -> None:
    text = ("apiVersion: capc/v1\nkind: Capability\ncode: a\nname: A\ntype: api\n"
            "options:\n  description: d\n" + broken)
    codes = _codes(text)
    assert any(code.startswith("schema-") for code in codes), codes
    assert still_found in codes


@pytest.mark.parametrize("options", [
    "options: 3\n", "options: [1]\n", "options:\n  description: d\n",  # url missing
    "options:\n  url: [1]\n  description: d\n", "options:\n  url: {a: 1}\n",
    "options:\n  description: d\n  url: https://a.example.com/\n  params: 7\n  body: [x]\n",
    "options:\n  description: d\n  url: https://a.example.com/\n  response: {select: 5}\n",
    "options:\n  description: d\n  url: https://a.example.com/\n  files: {f: {type: 3}}\n",
])
def test_a_partially_valid_document_never_raises(options: str) -> None:
    for kind in ("api", "mcp", "internal"):
        text = f"apiVersion: capc/v1\nkind: Capability\ncode: a\nname: A\ntype: {kind}\n"
        codes = _codes(text + "when: {page_type: [1]}\n" + options)
        assert any(code.startswith("schema-") for code in codes), codes


def test_unknown_when_attribute_warns_until_the_project_declares_it(tmp_path: Path) -> None:
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "a.yaml").write_text(WHEN.replace("page_type", "tenant_tier"))
    warned = run_capc("validate", "--strict", cwd=tmp_path)
    assert warned.returncode == 1
    assert "unknown-condition-attribute" in warned.stderr
    assert "known: chat_id, group_id, page_type, subchat_direction, user_id" in warned.stderr
    assert "context_attributes" in warned.stderr
    assert run_capc("validate", cwd=tmp_path).returncode == 0  # a warning, not an error
    (tmp_path / "pyproject.toml").write_text(
        '[tool.capc]\ncontext_attributes = ["tenant_tier"]\n')
    declared = run_capc("validate", "--strict", cwd=tmp_path)
    assert declared.returncode == 0, declared.stderr


def test_the_reference_systems_runtime_conditions_are_known(tmp_path: Path) -> None:
    # SPEC §2's own example, and the reference's "subchat direction", need no declaration.
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "a.yaml").write_text(WHEN.replace(
        "  page_type: canvas\n", "  page_type: canvas\n  subchat_direction: outgoing\n"))
    result = run_capc("validate", "--strict", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert "unknown-condition-attribute" not in result.stderr


def test_a_context_attribute_must_be_an_attribute_name(tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.capc]\ncontext_attributes = ["Page-Type"]\n')
    result = run_capc("validate", cwd=tmp_path)
    assert result.returncode == 2 and "'Page-Type' is not an attribute name" in result.stderr


@pytest.mark.parametrize("kind", ["api", "mcp"])
def test_a_fresh_scaffold_compiles_but_fails_strict_until_filled_in(tmp_path: Path,
                                                                   kind: str) -> None:
    assert run_capc("new", kind, "thing", cwd=tmp_path).returncode == 0
    assert run_capc("validate", cwd=tmp_path).returncode == 0
    strict = run_capc("validate", "--strict", cwd=tmp_path)
    assert strict.returncode == 1 and "scaffold-placeholder" in strict.stderr
    written = next((tmp_path / "capabilities").rglob("thing.yaml"))
    text = written.read_text()
    filled = text.replace("TODO: ", "Done: ").replace("todo.example.com", "api.acme.io")
    assert filled != text
    written.write_text(filled)
    result = run_capc("validate", "--strict", cwd=tmp_path)
    assert "scaffold-placeholder" not in result.stderr, result.stderr


def test_explain_warns_when_the_manifest_is_older_than_its_sources(tmp_path: Path) -> None:
    source = tmp_path / "capabilities" / "a.yaml"
    source.parent.mkdir()
    source.write_text(WHEN.replace("when:\n  page_type: canvas\n", ""))
    assert run_capc("compile", cwd=tmp_path).returncode == 0
    manifest = tmp_path / "build" / "manifest.json"
    os.utime(source, (1_000_000, 1_000_000))
    os.utime(manifest, (2_000_000, 2_000_000))
    fresh = run_capc("explain", "a", cwd=tmp_path)
    assert fresh.returncode == 0 and "older than" not in fresh.stderr
    os.utime(source, (3_000_000, 3_000_000))
    stale = run_capc("explain", "a", cwd=tmp_path)
    assert stale.returncode == 0
    assert "build/manifest.json is older than 1 of the sources it names" in stale.stderr
    assert "capabilities/a.yaml" in stale.stderr and "capc compile" in stale.stderr
    assert stale.stdout == fresh.stdout  # the explanation itself still goes to stdout
