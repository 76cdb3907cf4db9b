"""``capc budget`` and ``capc compile`` where the o200k encoding is not installed.

Each blocked run is a real ``capc`` process with ``toktok`` made unimportable by a
meta-path blocker installed before capc starts (as a machine without ``capc[budget]``).
Without the encoding, ``capc budget`` says first that exact counts need it, keeps the tool
counts exact, shows token figures as labelled upper bounds (a token is at least one byte)
and exits 1 when a bound does not prove a token budget met; compile passes a budget the
bound proves and refuses, located, one it does not: neither ever passes on a figure that
proves nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import compiler.profiles.budget_check as budget_check
from compiler.build import build
from compiler.profiles.tokens import EncodingUnavailable
from tests.profiles.test_budget_and_diff import PROFILE, tree
from tests.support.capc import run_capc
from tests.support.paths import REPO_ROOT

BLOCKER = """\
import runpy, sys

class Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] == "toktok":
            raise ModuleNotFoundError(f"No module named {name!r} (blocked)", name=name)
        return None

sys.meta_path.insert(0, Blocker())
sys.argv = ["capc", *sys.argv[1:]]
runpy.run_module("compiler", run_name="__main__")
"""
CODES = ["get_weather", "crm_search", "crm_create"]


def blocked_capc(cwd: Path, *args: str) -> subprocess.CompletedProcess[str]:
    env = {"PYTHONPATH": str(REPO_ROOT), "CAPC_NO_CACHE": "1", "PATH": "/usr/bin:/bin"}
    return subprocess.run([sys.executable, "-c", BLOCKER, *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def compiled_tree(root: Path, tokens: int) -> Path:
    tree(root, CODES, PROFILE.format(codes="[get_weather, crm_*]", deferred="[crm_create]",
                                     tokens=tokens))
    result = run_capc("compile", "capabilities", "-o", "build/manifest.json", cwd=root)
    assert result.returncode == 0, result.stderr
    return root


def test_the_blocker_really_blocks_the_encoding(tmp_path: Path) -> None:
    probe = BLOCKER.replace('runpy.run_module("compiler", run_name="__main__")',
                            "from compiler.profiles.tokens import o200k; o200k()")
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True,
                            cwd=REPO_ROOT, timeout=60)
    assert result.returncode == 1 and "capc[budget]" in result.stderr


def test_budget_says_so_and_shows_upper_bounds_it_labels(tmp_path: Path) -> None:
    root = compiled_tree(tmp_path, 100_000)
    exact = json.loads(run_capc("budget", "--format", "json", cwd=root).stdout)
    blocked = blocked_capc(root, "budget", "--format", "json")
    assert blocked.returncode == 0, blocked.stderr  # the bound proves 100,000 tokens met
    assert "pip install" in blocked.stderr or "capc[budget]" in blocked.stderr
    bound = json.loads(blocked.stdout)
    assert (exact["tokens"], bound["tokens"]) == ("exact", "upper_bound")
    assert exact["note"] is None and "capc[budget]" in bound["note"]
    for provider in ("openai", "anthropic"):
        counted = exact["profiles"][0]["providers"][provider]
        bounded = bound["profiles"][0]["providers"][provider]
        for part in ("up_front", "deferred"):
            assert bounded[part]["tools"] == counted[part]["tools"]  # tools stay exact
            assert bounded[part]["tokens"] > counted[part]["tokens"] > 0  # a real bound
        assert bounded["uncountable"] == []  # bounded, not skipped
    text = blocked_capc(root, "budget")
    first = text.stdout.splitlines()[0]
    assert first.startswith("capc budget: ") and "capc[budget]" in first, text.stdout
    assert "upper bound" in first
    up_front = bound["profiles"][0]["providers"]["openai"]["up_front"]
    openai_row = next(line for line in text.stdout.splitlines()
                      if line.strip().startswith("openai"))
    assert openai_row.split()[1:3] == ["3", f"<={up_front['tokens']}"]  # 2 tools + search
    assert ">=" not in openai_row  # the old rendering passed a bound off as a lower one
    markdown = blocked_capc(root, "budget", "--format", "markdown").stdout
    assert "capc[budget]" in markdown
    assert f"| support-bot | openai | 3 | <={up_front['tokens']} |" in markdown


def test_a_budget_the_bound_cannot_prove_is_unverified_not_passed(tmp_path: Path) -> None:
    exact_tokens = _exact_up_front(compiled_tree(tmp_path / "probe", 100_000))
    # Met by the exact count, exceeded by the byte bound: only the encoding can tell.
    root = compiled_tree(tmp_path / "tight", exact_tokens + 1)
    assert run_capc("budget", cwd=root).returncode == 0
    blocked = blocked_capc(root, "budget")
    assert blocked.returncode == 1, blocked.stdout
    assert "profile support-bot (budget: " in blocked.stdout
    assert "BUDGET UNVERIFIED" in blocked.stdout and "OVER BUDGET" not in blocked.stdout
    report = json.loads(blocked_capc(root, "budget", "--format", "json").stdout)
    assert report["profiles"][0]["budget_state"] == "unverified"
    assert report["profiles"][0]["over_budget"] is False


def test_compile_passes_a_proven_budget_and_refuses_a_doubtful_one_located(
    tmp_path: Path,
) -> None:
    proven = compiled_tree(tmp_path / "proven", 100_000)
    result = blocked_capc(proven, "compile", "capabilities", "-o", "blocked.json")
    assert result.returncode == 0, result.stderr
    assert (proven / "blocked.json").read_bytes() == (
        proven / "build" / "manifest.json").read_bytes()
    exact_tokens = _exact_up_front(proven)
    doubtful = compiled_tree(tmp_path / "doubtful", exact_tokens + 1)
    result = blocked_capc(doubtful, "compile", "capabilities", "-o", "blocked.json")
    assert result.returncode == 1 and "Traceback" not in result.stderr
    assert not (doubtful / "blocked.json").exists()  # no partial output
    (line,) = [line for line in result.stderr.splitlines() if "error[" in line]
    assert line.startswith("capabilities/profiles.yaml:6:")
    assert "error[profile-no-tokenizer]" in line and "capc[budget]" in line


def _exact_up_front(root: Path) -> int:
    """The larger exact up-front figure of the two providers (the one a budget must hold)."""
    report = json.loads(run_capc("budget", "--format", "json", cwd=root).stdout)
    providers = report["profiles"][0]["providers"].values()
    return max(provider["up_front"]["tokens"] for provider in providers)


def test_without_the_encoding_a_tool_too_large_to_count_is_still_reported(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    def missing() -> Any:
        raise EncodingUnavailable("exact token counts need the o200k encoding")

    monkeypatch.setattr(budget_check, "o200k", missing)
    properties = "\n".join(f"    p{index}: {{type: string, description: {'d' * 120}}}"
                           for index in range(2000))
    root = tmp_path / "capabilities"
    root.mkdir()
    (root / "a.yaml").write_text(f"""\
apiVersion: capc/v1
kind: Capability
code: huge
name: Huge
type: api
options:
  description: A tool with a huge schema.
  url: https://api.example.com/huge
  params:
{properties}
---
apiVersion: capc/v1
kind: Profile
name: huge-bot
capabilities: [huge]
budget: {{tokens: 100000}}
""")
    result = build([str(root)], cwd=tmp_path, use_cache=False)
    assert result.manifest is None
    assert [d.code for d in result.diagnostics if d.is_error] == ["profile-uncountable-tool"]
