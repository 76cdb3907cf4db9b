"""Following a budget error's advice brings the profile within budget (issue 24).

Deferring the first capability of a profile adds the provider's search tool (one more
entry, and its tokens) and on OpenAI keeps each deferred function's line: advice that
ignores either is advice that still fails. Each case compiles a tree, defers what the
error names, compiles again and checks that the error for that figure is gone, or that
the message said deferring cannot meet the budget. ``capc budget``'s "deferring them
would save" figure is checked the same way: against the profile costed again.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from compiler.build import build
from compiler.manifest import manifest_model
from compiler.profiles.budget import profile_costs
from compiler.profiles.report import BudgetReport, as_json
from compiler.profiles.tokens import o200k

pytest.importorskip("toktok")

WORDS = "Look up the record and report what it says about the customer account"


def _tools(count: int) -> str:
    """``count`` api tools whose descriptions grow, so the biggest are well defined."""
    return "---\n".join(
        f"apiVersion: capc/v1\nkind: Capability\ncode: tool_{index}\nname: Tool {index}\n"
        f"type: api\noptions:\n  description: {' '.join([WORDS] * (index + 1))}.\n"
        f"  url: https://api.example.com/t{index}\n  params:\n"
        f"    q: {{type: string, description: Search text, required: true}}\n"
        for index in range(count))


def _compile(tmp_path: Path, budget: str, deferred: list[str]) -> Any:
    root = tmp_path / "capabilities"
    root.mkdir(exist_ok=True)
    profile = ("apiVersion: capc/v1\nkind: Profile\nname: lean-bot\ncapabilities: [tool_*]\n"
               f"deferred: [{', '.join(deferred)}]\nbudget: {budget}\n")
    (root / "a.yaml").write_text("---\n".join([_tools(5), profile]))
    return build([str(root)], cwd=tmp_path, use_cache=False)


def _over(result: Any, figure: str) -> list[str]:
    """The profile-over-budget messages about ``figure`` (``tools`` or a provider)."""
    mark = "tools up front, over" if figure == "tools" else f"up front to {figure}"
    return [d.message for d in result.diagnostics
            if d.code == "profile-over-budget" and mark in d.message]


def _advised(message: str) -> list[str]:
    advice = message.split("defer or trim ", 1)[1].split(";", 1)[0]
    return [part.strip().split(" ", 1)[0] for part in advice.split(",")]


# Five tools up front cost 317 tokens on OpenAI, ~746 on Anthropic: every budget here is
# exceeded, some by one tool or a few tokens, some beyond what deferring can save.
BUDGETS = [("{tools: 4}", "tools"), ("{tools: 3}", "tools"), ("{tools: 2}", "tools"),
           ("{tools: 1}", "tools"), ("{tokens: 700}", "anthropic"),
           ("{tokens: 500}", "anthropic"),
           *[(f"{{tokens: {tokens}}}", provider) for tokens in (310, 250, 200, 120)
             for provider in ("openai", "anthropic")]]


@pytest.mark.parametrize("already", [[], ["tool_0"]], ids=["nothing-deferred", "one-deferred"])
@pytest.mark.parametrize(("budget", "figure"), BUDGETS)
def test_deferring_what_the_error_names_meets_the_budget(
    tmp_path: Path, budget: str, figure: str, already: list[str]
) -> None:
    (message,) = _over(_compile(tmp_path, budget, already), figure)
    advised = _advised(message)
    assert advised and set(advised).isdisjoint(already), message
    after = _over(_compile(tmp_path, budget, sorted({*already, *advised})), figure)
    if after:
        assert "deferring cannot meet" in message, (message, after)
    elif "short" in message or "over even then" in message:
        raise AssertionError(f"said it falls short, yet deferring met it: {message}")
    saved = re.search(r"deferring them saves (\d+) tokens", message)
    if saved:  # the figure is what deferring saved on that provider
        before_cost = _cost(tmp_path, already)
        after_cost = _cost(tmp_path, sorted({*already, *advised}))
        assert int(saved.group(1)) == (before_cost.on(figure).upfront_tokens
                                       - after_cost.on(figure).upfront_tokens)


def test_some_advice_says_deferring_cannot_meet_the_budget(tmp_path: Path) -> None:
    """A budget below what stays up front once everything is deferred: said, not hidden."""
    (message,) = _over(_compile(tmp_path, "{tokens: 20}", []), "anthropic")
    assert "deferring cannot meet this budget" in message


def _cost(tmp_path: Path, deferred: list[str]) -> Any:
    result = _compile(tmp_path, "{tools: 100}", deferred)
    assert result.manifest is not None, result.diagnostics
    parsed = manifest_model(result.manifest)
    (cost,) = profile_costs(parsed.profiles, parsed.capabilities, {}, o200k())
    return cost


@pytest.mark.parametrize("already", [[], ["tool_0"]], ids=["nothing-deferred", "one-deferred"])
def test_the_reports_saving_is_what_deferring_the_biggest_saves(
    tmp_path: Path, already: list[str]
) -> None:
    before = _cost(tmp_path, already)
    report = as_json(BudgetReport((before,)))["profiles"][0]["providers"]
    for provider, shown in report.items():
        biggest = [tool["capability"] for tool in shown["biggest"]]
        after = _cost(tmp_path, sorted({*already, *biggest}))
        assert shown["deferring_biggest_saves"] == (
            before.on(provider).upfront_tokens - after.on(provider).upfront_tokens), provider


def _advised_codes(message: str) -> list[str]:
    """The capabilities an advice names: ``name (code)`` for a tool named otherwise."""
    advice = message.split("defer or trim ", 1)[1].split(";", 1)[0]
    codes = []
    for part in advice.split(","):
        found = re.fullmatch(r"\s*(\w+)(?: \((\w+)\))?\s*", part)
        assert found, message
        codes.append(found.group(2) if found.group(2) and not found.group(2).isdigit()
                     else found.group(1))
    return codes


@pytest.mark.parametrize("budget", ["{tools: 3}", "{tools: 2}"])
def test_advice_holds_for_plugin_tools_that_form_a_namespace(tmp_path: Path,
                                                             budget: str) -> None:
    """Deferring a two-tool internal capability hides two functions and adds its own
    namespace entry (and the search tool): only costing the profile again sees both."""
    from tests.support.capc import run_capc

    def compile_with(deferred: list[str]) -> str:
        root = tmp_path / "capabilities"
        root.mkdir(exist_ok=True)
        (root / "a.yaml").write_text("---\n".join([
            _tools(2), "apiVersion: capc/v1\nkind: Capability\ncode: memory\nname: Memory\n"
            "type: internal\ndescription: Facts the agent keeps about the user.\n",
            "apiVersion: capc/v1\nkind: Profile\nname: lean-bot\n"
            f"capabilities: [tool_*, memory]\ndeferred: [{', '.join(deferred)}]\n"
            f"budget: {budget}\n"]))
        return run_capc("compile", "--plugins", cwd=tmp_path).stderr

    first = [line for line in compile_with([]).splitlines() if "profile-over-budget" in line]
    assert len(first) == 1, first
    advised = _advised_codes(first[0])
    second = compile_with(sorted(set(advised)))
    if "profile-over-budget" in second:
        assert "deferring cannot meet" in first[0], (first, second)
