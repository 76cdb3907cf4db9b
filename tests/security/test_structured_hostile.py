"""Hostile nested parameters (SPEC §10): careless or hostile YAML is a located error or
bounded, never a hang or a traceback; hostile model arguments are refused or encoded
safely, in time linear in their size (measured n against 8n in a child process)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from compiler.runtime.api.encoding import form_body, query_string
from compiler.runtime.errors import ToolCallRefused
from tests.support.paths import REPO_ROOT
from tests.support.structured import compile_problems

HEAD = """\
apiVersion: capc/v1
kind: Capability
code: hostile
name: Hostile
type: api
options:
  description: d
  method: POST
  url: https://api.example.com/v1
"""


def test_a_10000_item_enum_is_a_located_schema_error(tmp_path: Path) -> None:
    values = ", ".join(f"v{index}" for index in range(10_000))
    problems = compile_problems(tmp_path, HEAD + f"  body:\n    kind: {{enum: [{values}]}}\n")
    assert any(problem.startswith("schema-") and "1000" in problem for problem in problems), \
        problems


def test_a_200_level_nesting_is_a_located_error(tmp_path: Path) -> None:
    entry = "{type: string}"
    for _ in range(200):
        entry = f"{{type: array, items: {entry}}}"
    problems = compile_problems(tmp_path, HEAD + f"  body:\n    deep: {entry}\n")
    assert problems and all("Traceback" not in problem for problem in problems)
    assert any(problem.startswith(("yaml-too-deep", "api-parameter-depth"))
               for problem in problems), problems


def test_an_anchor_reused_at_every_level_is_refused_or_bounded(tmp_path: Path) -> None:
    text = HEAD + (
        "  body:\n"
        "    a: &a {type: object, properties: {x: {type: string}, y: {type: string}}}\n"
        "    b: &b {type: object, properties: {p: *a, q: *a, r: *a}}\n"
        "    c: &c {type: object, properties: {p: *b, q: *b, r: *b}}\n"
        "    d: {type: object, properties: {p: *c, q: *c, r: *c}}\n")
    problems = compile_problems(tmp_path, text)
    assert all("Traceback" not in problem for problem in problems)


def test_a_backtracking_pattern_with_a_near_miss_default_does_not_hang(tmp_path: Path) -> None:
    text = HEAD + '  body:\n    word: {type: string, pattern: "^(a+)+$", default: "' + \
        "a" * 5000 + 'b"}\n'
    problems = compile_problems(tmp_path, text)
    assert any(problem.startswith("api-default-type") and "pattern" in problem
               for problem in problems), problems


@pytest.mark.parametrize("key", ["a[b", "]", "x][y", "[]"])
def test_a_model_chosen_key_with_a_bracket_is_refused(key: str) -> None:
    with pytest.raises(ToolCallRefused, match="bracket"):
        form_body({"metadata": {key: "v"}})
    with pytest.raises(ToolCallRefused, match="bracket"):
        query_string([("filter", {"nested": {key: "v"}}, "deep_object")])


@pytest.mark.parametrize("text", ["a&b=c", "x%26y", "line\nbreak", "#frag", "+ ", "é/?"])
def test_reserved_characters_never_add_a_key_at_any_depth(text: str) -> None:
    body = form_body({"m": {text: {"deep": [text, {text: text}]}}}).decode()
    assert body.count("=") == 2 and body.count("&") == 1
    query = query_string([("f", {text: [text]}, "deep_object"), ("t", [text, text], "comma"),
                          ("r", [text], "brackets")])
    assert query.count("&") == 2 and query.count("=") == 3


_TIMING = """
import json, statistics, sys, time
from compiler.runtime.api.encoding import form_body, query_string
from compiler.runtime.tools.argument_models import build_argument_model

schema = {"type": "object", "additionalProperties": False, "properties": {
    "items": {"type": "array", "items": {"type": "object", "additionalProperties": False,
              "properties": {"k": {"type": "string"}, "n": {"type": "integer"}}}},
    "meta": {"type": "object", "additionalProperties": {"type": "string"}}}}
model = build_argument_model("hostile", schema)

def work(n):
    arguments = {"items": [{"k": "&=%[x\\n" * 3, "n": i} for i in range(n)],
                 "meta": {f"key&={i}%\\n": "v&=" for i in range(n)}}
    start = time.perf_counter()
    validated = model.model.model_validate(arguments)
    plain = model.arguments({name: getattr(validated, name)
                             for name in type(validated).model_fields})
    form_body(plain)
    query_string([("meta", plain["meta"], "deep_object"),
                  ("all", {"items": plain["items"]}, "json")])
    return time.perf_counter() - start

work(200)
small = statistics.median(work(2000) for _ in range(3))
large = statistics.median(work(16000) for _ in range(3))
print(json.dumps({"ratio": large / small}))
"""


def test_hostile_arguments_cost_time_linear_in_their_size() -> None:
    result = subprocess.run([sys.executable, "-c", _TIMING], cwd=REPO_ROOT, capture_output=True,
                            text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    ratio = json.loads(result.stdout)["ratio"]
    # 8x the input: linear is about 8; quadratic would be about 64.
    assert ratio < 24, ratio
