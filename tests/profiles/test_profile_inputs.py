"""Issue 24 "Bad input", case by case, through ``capc validate``: each is one located
error (or a bounded result), never a hang or a traceback; and ``capc diff`` per profile in
every format."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.support.capc import run_capc
from tests.support.trees import CRM, WEATHER, compile_tree, write_tree

pytestmark = pytest.mark.independent

HEAD = "apiVersion: capc/v1\nkind: Profile\n"
CASES = {
    "budget-zero": (HEAD + "name: a-bot\ncapabilities: [get_weather]\nbudget: {tokens: 0}\n",
                    "5:18", "schema-minimum"),
    "budget-negative": (HEAD + "name: a-bot\ncapabilities: [get_weather]\n"
                        "budget: {tools: -3}\n", "5:17", "schema-minimum"),
    "budget-boolean": (HEAD + "name: a-bot\ncapabilities: [get_weather]\n"
                       "budget: {tokens: true}\n", "5:18", "schema-type"),
    "named-like-a-code": (HEAD + "name: get_weather\ncapabilities: [get_weather]\n",
                          "3:7", "schema-pattern"),
    "includes-a-profile": (HEAD + "name: a-bot\ncapabilities: [get_weather]\n"
                           "include: [b-bot]\n", "5:1", "schema-unknown-key"),
    "unknown-code": (HEAD + "name: a-bot\ncapabilities: [get_wether]\n", "4:16",
                     "profile-unknown-code"),
    "glob-matching-nothing": (HEAD + "name: a-bot\ncapabilities: [billing_*]\n", "4:16",
                              "profile-empty-glob"),
    "glob-bomb": (HEAD + "name: a-bot\ncapabilities: ['" + "*a" * 30 + "*b']\n", "4:16",
                  "profile-empty-glob"),
    "deferred-outside": (HEAD + "name: a-bot\ncapabilities: [get_weather]\n"
                         "deferred: [crm_*]\n", "5:12", "profile-deferred-outside"),
    "duplicate-name": (HEAD + "name: a-bot\ncapabilities: [get_weather]\n---\n" + HEAD
                       + "name: a-bot\ncapabilities: [crm_search]\n", "8:7",
                       "profile-duplicate-name"),
}


@pytest.mark.parametrize("case", sorted(CASES))
def test_each_bad_profile_is_one_located_error(tmp_path: Path, case: str) -> None:
    text, where, code = CASES[case]
    write_tree(tmp_path, WEATHER, CRM, profiles=text)
    result = run_capc("validate", cwd=tmp_path)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr and "internal error" not in result.stderr
    errors = [line for line in result.stderr.splitlines() if ": error[" in line]
    assert errors == [line for line in errors if line.startswith(
        f"capabilities/profiles.yaml:{where}: error[{code}]")], result.stderr
    assert len(errors) == 1, result.stderr
    if code == "profile-unknown-code":
        assert "did you mean 'get_weather'" in errors[0]


def test_a_profile_of_thousands_of_capabilities_is_bounded(tmp_path: Path) -> None:
    capability = ("apiVersion: capc/v1\nkind: Capability\ncode: tool_{n}\nname: Tool {n}\n"
                  "type: api\noptions:\n  description: Tool number {n}.\n"
                  "  url: https://api.example.com/t{n}\n")
    (tmp_path / "capabilities").mkdir()
    (tmp_path / "capabilities" / "many.yaml").write_text(
        "---\n".join(capability.format(n=n) for n in range(2000)))
    (tmp_path / "capabilities" / "profiles.yaml").write_text(
        HEAD + "name: all-bot\ncapabilities: ['*']\n---\n" + HEAD
        + "name: lazy-bot\ncapabilities: ['*']\ndeferred: ['tool_1*']\n")
    result = run_capc("validate", cwd=tmp_path)
    assert result.returncode == 1
    errors = [line for line in result.stderr.splitlines() if ": error[" in line]
    # Over OpenAI's 128 tools up front: one error per profile, naming tools to defer.
    assert len(errors) == 2 and all("profile-provider-limit" in line for line in errors)
    assert all(len(line) < 2000 for line in errors)


DIFF_PROFILES = HEAD + """name: support-bot
capabilities: [get_weather, crm_search]
"""
DIFF_PROFILES_NEW = HEAD + """name: support-bot
capabilities: [get_weather, crm_search, crm_create]
deferred: [crm_search]
---
""" + HEAD + """name: new-bot
capabilities: [crm_create]
"""


def test_diff_shows_each_profiles_tools_and_tokens_in_every_format(tmp_path: Path) -> None:
    old_root = write_tree(tmp_path / "old", WEATHER, CRM, profiles=DIFF_PROFILES)
    new_root = write_tree(tmp_path / "new", WEATHER, CRM, profiles=DIFF_PROFILES_NEW)
    old, new = compile_tree(old_root), compile_tree(new_root)
    shown = {f: run_capc("diff", str(old), str(new), "--format", f, cwd=tmp_path)
             for f in ("text", "markdown", "json")}
    assert {f: r.returncode for f, r in shown.items()} == dict.fromkeys(shown, 0)
    report = json.loads(shown["json"].stdout)
    entries = {entry["key"]: entry for entry in report["entries"] if entry["kind"] == "profile"}
    assert entries["new-bot"]["status"] == "added"
    fields = {field["path"]: field for field in entries["support-bot"]["fields"]}
    assert fields["tools.crm_create"] == {"path": "tools.crm_create", "new": "offered"}
    assert "tokens_up_front.openai" in fields and "tokens_up_front.anthropic" in fields
    assert fields["tokens_up_front.openai"]["old"] != fields["tokens_up_front.openai"]["new"]
    kinds = {item["kind"] for item in report["security"]}
    assert {"profile-gains-capability", "new-profile"} <= kinds
    for text in (shown["text"].stdout, shown["markdown"].stdout):
        assert "support-bot" in text and "new-bot" in text and "crm_create" in text
        assert "tokens_up_front.openai" in text
