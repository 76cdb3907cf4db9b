"""docs/responses.md: every YAML block compiles as shown, and the shown output is real."""

from __future__ import annotations

import json
import re
from pathlib import Path

from compiler.runtime.api.shaping import ResponseShaping, shape_response
from compiler.runtime.redaction import Redactor, masked_cut
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT

PAGE = (REPO_ROOT / "docs" / "responses.md").read_text(encoding="utf-8")
BLOCK = re.compile(r"```(\w+)\n(.*?)```", re.S)


def blocks(language: str) -> list[str]:
    return [body for lang, body in BLOCK.findall(PAGE) if lang == language]


def compiled(tmp_path: Path) -> dict:
    for body in blocks("yaml"):
        name = body.splitlines()[0].removeprefix("# ").strip()
        target = tmp_path / name
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(body, encoding="utf-8")
    out = tmp_path / "manifest.json"
    result = run_capc("compile", "capabilities", "-o", str(out), cwd=tmp_path)
    assert result.returncode == 0 and "warning" not in result.stderr, result.stderr
    return {c["code"]: c for c in json.loads(out.read_text())["capabilities"]}


def test_every_yaml_block_compiles_with_its_options(tmp_path: Path) -> None:
    assert len(blocks("yaml")) == 2
    capabilities = compiled(tmp_path)
    assert capabilities["search_docs"]["api"]["response"] == {
        "select": "results[].{title: title, url: url, tags: tags}", "max_items": 2,
        "max_chars": 4000}
    order = capabilities["create_order"]["api"]
    assert order["retry"] == {"attempts": 3, "on_errors": [429, 503, "connect"],
                              "backoff": 0.5, "idempotency_key": "Idempotency-Key"}
    assert order["max_concurrency"] == 4


def test_the_shown_output_is_what_the_model_gets(tmp_path: Path) -> None:
    response = compiled(tmp_path)["search_docs"]["api"]["response"]
    reply = {"total": 3, "took_ms": 12, "results": [
        {"title": "Install", "url": "https://docs.example.com/install", "score": 0.93,
         "tags": ["setup", "cli", "linux"], "body": "…"},
        {"title": "Upgrade", "url": "https://docs.example.com/upgrade", "score": 0.71,
         "tags": ["setup"], "body": "…"},
        {"title": "Remove", "url": "https://docs.example.com/remove", "score": 0.42,
         "tags": [], "body": "…"},
    ]}
    redactor = Redactor()
    text = shape_response(redactor, masked_cut(redactor, json.dumps(reply)),
                          ResponseShaping.from_manifest(response))
    (shown,) = blocks("text")
    assert text == shown.rstrip("\n")
