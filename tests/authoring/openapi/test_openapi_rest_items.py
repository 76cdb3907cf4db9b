"""Issue 30's last items: --security NAME, the validator's reason in openapi-invalid, and
generated files that pass the repository's own .yamllint (GitHub's and Stripe's)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

from compiler.authoring.openapi.import_openapi import OpenApiRequest, run_import
from tests.authoring.openapi.helpers import (
    document,
    generated,
    get,
    hermetic,
    imported,
    messages,
    write,
)
from tests.authoring.openapi.public_corpus import public_corpus
from tests.support.paths import REPO_ROOT

SCHEMES = {"basicAuth": {"type": "http", "scheme": "basic"},
           "bearerAuth": {"type": "http", "scheme": "bearer"}}


def _secured(tmp_path: Path) -> Path:
    return write(tmp_path, document(
        {"/a": {"get": get("listThings")},
         "/b": {"get": get("basicOnly", security=[{"basicAuth": []}])}},
        security=[{"basicAuth": []}, {"bearerAuth": []}],
        components={"securitySchemes": SCHEMES}))


def test_security_chooses_the_scheme_records_it_and_check_reuses_it(tmp_path: Path) -> None:
    spec, out = _secured(tmp_path), tmp_path / "out"
    done = imported(spec, out, security=("bearerAuth",))
    assert done.exit_code == 0, messages(done)
    headers: dict[str, Any] = generated(out, "list_things")["options"]["headers"]
    assert headers["Authorization"].startswith("Bearer ${")
    assert "# Imported with --security bearerAuth" in (out / "list_things.yaml").read_text()
    assert not (out / "basic_only.yaml").exists()  # it accepts basicAuth only: skipped
    assert any(d.code == "openapi-skipped" and "none of --security bearerAuth" in d.message
               for d in done.diagnostics)
    checked = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                        **hermetic(out)))
    assert checked.exit_code == 0, (checked.lines, messages(checked))


def test_an_unknown_security_name_lists_the_schemes(tmp_path: Path) -> None:
    refused = imported(_secured(tmp_path), tmp_path / "out", security=("apiKey",))
    assert refused.exit_code == 2 and not refused.written
    assert "its schemes: basicAuth, bearerAuth" in messages(refused)
    assert [d.code for d in refused.diagnostics] == ["openapi-security"]


def test_openapi_invalid_says_why_bounded_and_visible(tmp_path: Path) -> None:
    pytest.importorskip("openapi_spec_validator")
    bad = document({"/a": {"get": {"operationId": "a", "responses": {
        "200": {"descriptio\u202e\x1b[2J": "x" * 5000}}}}})
    outcome = imported(write(tmp_path, bad), tmp_path / "out")
    [warning] = [d for d in outcome.diagnostics if d.code == "openapi-invalid"]
    assert "required property" in warning.message, warning.message
    assert len(warning.message) < 400
    assert "\x1b" not in warning.message and "\u202e" not in warning.message


@pytest.mark.parametrize("name", ["github", "stripe"])
def test_generated_files_pass_the_repositorys_yamllint(tmp_path: Path, name: str) -> None:
    pytest.importorskip("yamllint")
    corpus = public_corpus(name)
    out = tmp_path / name
    done = imported(corpus.path, out, *corpus.selectors)
    assert done.exit_code == 0, messages(done)
    linted = subprocess.run([sys.executable, "-m", "yamllint", "--strict", "-f", "parsable",
                             "-c", str(REPO_ROOT / ".yamllint"), str(out)],
                            capture_output=True, text=True, timeout=300)
    assert linted.returncode == 0, linted.stdout[:3000]
    for path in out.glob("*.yaml"):  # folded, never cut: the data reads back whole
        assert isinstance(yaml.safe_load(path.read_text()), dict)


def test_long_server_and_scheme_records_stay_within_the_lint_and_check_reads_them(
        tmp_path: Path) -> None:
    pytest.importorskip("yamllint")
    long_scheme = "bearer" + "Auth" * 20  # 86 characters, no space: one comment word
    spec = write(tmp_path, document(
        {"/a": {"get": get("listThings")}}, security=[{long_scheme: []}],
        components={"securitySchemes": {long_scheme: SCHEMES["bearerAuth"]}}))
    server = "https://api.example.com/" + "/".join(["segment"] * 14)  # 135 characters
    out = tmp_path / "out"
    done = imported(spec, out, server=server, security=(long_scheme,))
    assert done.exit_code == 0, messages(done)
    text = (out / "list_things.yaml").read_text()
    assert f"\n# {server}\n" in text and f"\n# {long_scheme}\n" in text
    linted = subprocess.run([sys.executable, "-m", "yamllint", "--strict", "-f", "parsable",
                             "-c", str(REPO_ROOT / ".yamllint"), str(out)],
                            capture_output=True, text=True, timeout=300)
    assert linted.returncode == 0, linted.stdout[:3000]
    checked = run_import(OpenApiRequest(spec=str(spec), output_dir=str(out), check=True,
                                        **hermetic(out)))
    assert checked.exit_code == 0, (checked.lines, messages(checked))
    assert any("up to date" in line for line in checked.lines), checked.lines
