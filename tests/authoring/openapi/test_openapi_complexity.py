"""Bounded work on hostile documents: time n against 8n in a child process (generous
ratios, a time limit on the child; never a wall-clock threshold on capc itself)."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

from tests.support.paths import REPO_ROOT

CHILD = textwrap.dedent("""
    import json, sys, tempfile, time
    from pathlib import Path
    from compiler.authoring.openapi.document import read_document_file
    from compiler.authoring.openapi.generate import ImportSettings, generate
    from compiler.authoring.openapi.operations import list_operations
    from compiler.authoring.openapi.problems import ImportRefused

    def operations(count):
        shared = {"type": "object", "properties": {
            "name": {"type": "string"}, "tags": {"type": "array", "items": {"type": "string"}},
            "owner": {"$ref": "#/components/schemas/Owner"}}}
        paths = {f"/things/{i}": {"post": {"operationId": f"make{i}",
                 "responses": {"200": {"description": "ok"}},
                 "requestBody": {"content": {"application/json": {"schema": {
                     "$ref": "#/components/schemas/Thing"}}}}}} for i in range(count)}
        return {"openapi": "3.0.3", "info": {"title": "t", "version": "1"},
                "servers": [{"url": "https://api.example.com"}], "paths": paths,
                "components": {"schemas": {"Thing": shared, "Owner": {
                    "type": "object", "properties": {"id": {"type": "integer"}}}}}}

    def bomb(levels):
        schemas = {f"L{levels}": {"type": "string"}}
        for level in range(levels):
            schemas[f"L{level}"] = {"type": "object", "properties": {
                f"p{i}": {"$ref": f"#/components/schemas/L{level + 1}"} for i in range(10)}}
        document = operations(1)
        document["components"]["schemas"] = schemas
        body = document["paths"]["/things/0"]["post"]["requestBody"]
        body["content"]["application/json"]["schema"] = {"$ref": "#/components/schemas/L0"}
        return document

    def timed(document):
        folder = Path(tempfile.mkdtemp())
        path = folder / "api.json"
        path.write_text(json.dumps(document))
        best = float("inf")
        for _ in range(3):
            started = time.perf_counter()
            root = read_document_file(path, "api.json")
            try:
                generate(root, list_operations(root), ImportSettings())
            except ImportRefused:
                pass
            best = min(best, time.perf_counter() - started)
        return best

    kind, small = sys.argv[1], int(sys.argv[2])
    make = operations if kind == "operations" else bomb
    print(json.dumps([timed(make(small)), timed(make(small * 8))]))
""")


def _times(kind: str, small: int) -> tuple[float, float]:
    done = subprocess.run([sys.executable, "-c", CHILD, kind, str(small)], cwd=REPO_ROOT,
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    first, second = json.loads(done.stdout)
    return first, second


def test_import_work_grows_linearly_with_the_operations() -> None:
    small, large = _times("operations", 60)
    assert large / small < 8 * 3, (small, large)  # quadratic would be ~64x


def test_a_deeper_ref_bomb_costs_no_more_than_a_shallow_one() -> None:
    small, large = _times("bomb", 4)  # 10**4 vs 10**32 expanded paths: both hit the bound
    assert large / small < 8, (small, large)
