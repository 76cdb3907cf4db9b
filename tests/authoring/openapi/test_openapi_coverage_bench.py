"""bench/openapi_coverage.py: the share of a document's operations that become strict-clean
tools, with the rest counted by the class of their reason, and the markdown table the
closing note and docs/openapi.md show."""

from __future__ import annotations

import collections
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from bench.openapi_coverage import Coverage, main, markdown, measure, reason_class
from tests.support.doc_blocks import code_blocks
from tests.support.paths import REPO_ROOT

PAGE = REPO_ROOT / "docs" / "openapi.md"

DOCUMENT = """\
openapi: 3.0.3
info: {title: Coverage, version: "1"}
servers: [{url: "http://api.example.com"}]
components:
  securitySchemes:
    key: {type: apiKey, in: header, name: X-Api-Key}
paths:
  /items:
    get:
      operationId: listItems
      summary: List the items.
      responses: {"200": {description: ok}}
    head:
      operationId: headItems
      responses: {"200": {description: ok}}
  /secret:
    get:
      operationId: getSecret
      summary: Read the secret.
      security: [{key: []}]
      responses: {"200": {description: ok}}
"""


def test_a_document_is_counted_clean_skipped_and_not_clean(tmp_path: Path) -> None:
    document = tmp_path / "doc.yaml"
    document.write_text(DOCUMENT, encoding="utf-8")
    coverage = measure("cov", document)
    assert (coverage.operations, coverage.clean) == (3, 1)
    assert coverage.skipped == {"an api tool sends GET, POST, PUT, PATCH, DELETE, not HEAD": 1}
    # The credential goes over plain http: a --strict warning in the tool's own file.
    assert coverage.unclean == {"plain-http-secret": 1}


def test_reasons_are_classed_without_their_names() -> None:
    assert reason_class("required header parameter 'X-Trace-7' cannot be sent") == \
        reason_class("required header parameter \"Other\" cannot be sent") == \
        "required header parameter … cannot be sent"
    assert reason_class("GET /a/{id} and 12 more") == "… and N more"


def test_the_markdown_table_has_a_row_per_document_a_total_and_the_classes() -> None:
    first = Coverage("one", 10, 8, skipped=collections.Counter({"cookie | parameter": 2}))
    second = Coverage("two", 5, 3, unclean=collections.Counter({"plain-http-secret": 1}),
                      skipped=collections.Counter({"cookie | parameter": 1}))
    refused = Coverage("bad", refused="not OpenAPI")
    lines = markdown([first, second, refused]).splitlines()
    assert lines[2] == "| one | 10 | 8 | 80.0% | 2 | 0 | 2 cookie \\| parameter |"
    assert lines[3] == ("| two | 5 | 3 | 60.0% | 1 | 1 | 1 cookie \\| parameter; "
                        "1 compiled with plain-http-secret |")
    assert lines[4] == "| bad | 0 | 0 | 0.0% | 0 | 0 | refused: not OpenAPI |"
    assert lines[5] == "| **all** | 15 | 11 | 73.3% | 3 | 1 | |"
    assert lines[-2:] == ["| cookie \\| parameter | 3 | 2 |",
                          "| compiled with plain-http-secret | 1 | 1 |"]


def test_only_names_a_default_document(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["--only", "no-such-document"])
    assert "no such document: no-such-document" in capsys.readouterr().err


def test_the_coverage_command_in_the_docs_prints_the_table() -> None:
    """docs/openapi.md's reproduction command, run as written from the repository."""
    block = next(block for block in code_blocks(PAGE)
                 if block.lang == "sh" and "bench.openapi_coverage" in block.text)
    argv = shlex.split(block.text.strip())
    assert argv[:3] == ["python", "-m", "bench.openapi_coverage"]
    done = subprocess.run([sys.executable, *argv[1:]], cwd=REPO_ROOT, capture_output=True,
                          text=True, timeout=600)
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("| document | operations | strict-clean tools | share |")
    assert "| circleci | 22 | 22 | 100.0% | 0 | 0 | – |" in lines
    assert any(line.startswith("| **all** |") for line in lines)


def test_the_directory_sweep_measures_a_document_in_a_bounded_child(tmp_path: Path) -> None:
    from bench.openapi_sweep import Swept, sweep_markdown, sweep_one

    swept = sweep_one("1forge.com.json", timeout=300, memory_mib=3072)
    assert (swept.verdict, swept.operations, swept.clean) == ("ok", 2, 2), swept
    # A child that cannot finish within its bound is stopped and said to hang.
    stopped = sweep_one("1forge.com.json", timeout=0, memory_mib=3072)
    assert stopped.verdict == "hang", stopped
    table = sweep_markdown([swept, Swept("x.json", "crash", detail="Traceback ...")])
    assert "| ok | 1 |" in table and "| crash | 1 |" in table
    assert "operations: 2; strict-clean tools: 2 (100.0%)" in table
