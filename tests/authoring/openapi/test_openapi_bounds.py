"""Bounded import work (issue 30, item 4): a node costs what it renders, text is cut
before it is cleaned, and a ``$ref`` to a FIFO is refused unread.

Work is counted, never timed: each child process counts the calls and characters the
importer spends (the time limit on the child is only a hang guard).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from compiler.authoring.openapi.schemas import MAX_OPERATION_CHARACTERS, REF_DEPTHS
from tests.authoring.openapi.helpers import document, get, imported, messages, write
from tests.support.paths import REPO_ROOT

HANG_GUARD = 300  # seconds; far above what the bounded work takes on a loaded machine

CHILD = textwrap.dedent("""
    import json, sys, tempfile
    from pathlib import Path
    import compiler.authoring.openapi.schema_scalars as schemas
    import compiler.authoring.openapi.document_text as text
    from compiler.authoring.openapi.document import read_document_file
    from compiler.authoring.openapi.generate import ImportSettings, generate
    from compiler.authoring.openapi.operations import list_operations
    from compiler.authoring.openapi.problems import ImportRefused

    counted = {"enum values": 0, "characters cleaned": 0}
    fits = schemas._fits

    def counting_fits(value, kind):
        counted["enum values"] += 1
        return fits(value, kind)

    class CountingPattern:
        def __init__(self, pattern):
            self.pattern = pattern

        def sub(self, replacement, string):
            counted["characters cleaned"] += len(string)
            return self.pattern.sub(replacement, string)

        def search(self, string):
            return self.pattern.search(string)

    schemas._fits = counting_fits
    text.CONTROL_CHARACTERS = CountingPattern(text.CONTROL_CHARACTERS)

    def fan_out(operations):
        # 1,000 schema nodes per operation (under the node bound), each repeating a 36 KB
        # enum: a 40 KB document that renders to 36 MB per operation.
        enum = [f"value-number-{i:05d}-of-the-enum" for i in range(1000)]
        schemas_ = {"E": {"type": "string", "enum": enum}}
        previous = "E"
        for level in range(3):
            schemas_[f"L{level}"] = {"type": "object", "properties": {
                f"p{i}": {"$ref": f"#/components/schemas/{previous}"} for i in range(10)}}
            previous = f"L{level}"
        paths = {f"/t{i}": {"post": {
            "operationId": f"op{i}", "responses": {"200": {"description": "ok"}},
            "requestBody": {"content": {"application/json": {"schema": {
                "$ref": f"#/components/schemas/{previous}"}}}}}} for i in range(operations)}
        return json.dumps({"openapi": "3.0.3", "info": {"title": "B", "version": "1"},
                           "servers": [{"url": "https://api.example.com"}], "paths": paths,
                           "components": {"schemas": schemas_}})

    def aliased(operations):
        # One 8 MB description, shared by every operation through a YAML alias.
        lines = ["openapi: 3.0.3", "info: {title: A, version: '1'}",
                 "servers: [{url: 'https://api.example.com'}]",
                 "x-text: &big " + "word " * 1_600_000, "paths:"]
        for i in range(operations):
            lines += [f"  /p{i}:", "    get:", f"      operationId: op{i}",
                      "      description: *big", "      summary: *big",
                      "      responses: {'200': {description: ok}}"]
        return "\\n".join(lines) + "\\n"

    kind, operations = sys.argv[1], int(sys.argv[2])
    folder = Path(tempfile.mkdtemp())
    path = folder / ("api.json" if kind == "fan-out" else "api.yaml")
    path.write_text((fan_out if kind == "fan-out" else aliased)(operations))
    root = read_document_file(path, path.name)
    try:
        made = len(generate(root, list_operations(root), ImportSettings()).tools)
    except ImportRefused:
        made = 0
    print(json.dumps({**counted, "tools": made}))
""")


def _work(kind: str, operations: int) -> dict[str, int]:
    done = subprocess.run([sys.executable, "-c", CHILD, kind, str(operations)],
                          cwd=REPO_ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    counted: dict[str, int] = json.loads(done.stdout)
    return counted


def test_a_fan_out_of_references_costs_what_each_operation_may_render() -> None:
    small, large = _work("fan-out", 2), _work("fan-out", 16)
    # Each operation stops once its entries would hold more than a file capc reads (an
    # enum value costs at least 4 characters), so 8x the operations is at most 8x the work.
    # A fan-out is walked again with references followed less deep (schemas.REF_DEPTHS):
    # at most one try more per depth, each bounded the same.
    per_operation = (MAX_OPERATION_CHARACTERS // 4 + 1000) * (1 + len(REF_DEPTHS))
    assert small["enum values"] <= 2 * per_operation, small
    assert large["enum values"] <= 16 * per_operation, large
    assert large["enum values"] <= 8 * small["enum values"] * 1.25, (small, large)


def test_an_aliased_description_is_cut_before_it_is_cleaned() -> None:
    small, large = _work("aliased", 5), _work("aliased", 40)
    assert small["tools"] == 5 and large["tools"] == 40
    # Linear in what is kept (a tool description is at most 1,024 characters), not in the
    # 8 MB each operation refers to.
    assert large["characters cleaned"] <= 40 * 64 * 1024, large
    assert large["characters cleaned"] <= 8 * small["characters cleaned"] * 1.25


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="FIFOs are a POSIX thing")
def test_a_ref_to_a_fifo_is_refused_at_once_never_read(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe.yaml")
    spec = write(tmp_path, document({"/a": {"get": get("a", parameters=[
        {"$ref": "pipe.yaml#/components/parameters/P"}])}}))
    # In a child: a blocking open of the FIFO would hang this test, not fail it.
    done = subprocess.run(
        [sys.executable, "-c", textwrap.dedent(f"""
            from tests.authoring.openapi.helpers import imported, messages
            from pathlib import Path
            outcome = imported(Path({str(spec)!r}), Path({str(tmp_path / "out")!r}))
            print(outcome.exit_code)
            print(messages(outcome))
        """)], cwd=REPO_ROOT, capture_output=True, text=True, timeout=HANG_GUARD)
    assert done.returncode == 0, done.stderr
    code, shown = done.stdout.split("\n", 1)
    assert code == "1", done.stdout
    assert "api.yaml:" in shown and "openapi-ref-file" in shown, shown
    assert "not a regular file" in shown, shown
    assert not (tmp_path / "out").exists()


def test_a_ref_to_a_folder_is_refused_located(tmp_path: Path) -> None:
    spec = write(tmp_path, document({"/a": {"get": get("a", parameters=[
        {"$ref": "folder.yaml#/x"}])}}))
    (tmp_path / "folder.yaml").mkdir()
    outcome = imported(spec, tmp_path / "out")
    assert outcome.exit_code == 1
    assert "openapi-ref-file" in messages(outcome) and "not a regular file" in messages(outcome)
