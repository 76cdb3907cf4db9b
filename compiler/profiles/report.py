"""``capc budget``: per profile and provider, what is sent up front and what is deferred.

Reads a compiled manifest through the one manifest reader and prints, for each profile,
its up-front and deferred tools and tokens per provider, the biggest up-front tools and
what deferring them would save. Anthropic figures are estimates and say so (``~``); a
figure with unknown parts is a lower bound and says so (``>=``). Without the o200k
encoding (``capc[budget]``) the report says so first and its token figures are upper
bounds (``<=``): tool counts stay exact, and a token budget a bound does not prove met is
reported unverified (exit 1), never passed.
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from compiler.manifest import read_manifest_model
from compiler.profiles.budget import ProfileCost, ProviderCost, ToolCost, profile_costs
from compiler.profiles.tokens import (
    ENCODING_NAME,
    Counter,
    EncodingUnavailable,
    o200k,
    utf8_upper_bound,
)
from compiler.report.escape import escape_control
from compiler.runtime.manifest.fields import thaw

BIGGEST = 5


class UnknownProfile(Exception):
    """``--profile`` names no profile of the manifest."""


@dataclass(frozen=True, slots=True)
class BudgetReport:
    """The costs of some profiles, and how they were counted.

    ``missing`` is set when the o200k encoding cannot be used (not installed, or its
    digest is wrong): the token figures are then upper bounds, a token being at least one
    byte, and a token budget they do not prove met is *unverified*, never passed.
    """

    costs: tuple[ProfileCost, ...]
    missing: str | None = None

    @property
    def exact(self) -> bool:
        """Whether the token figures are counts (else upper bounds)."""
        return self.missing is None

    def over_budget(self, cost: ProfileCost) -> bool:
        """Whether ``cost``'s profile is over its budget, as far as the figures prove."""
        budget = cost.profile.budget
        return any((self.exact and budget.tokens is not None
                    and on.upfront_tokens > budget.tokens)
                   or (budget.tools is not None
                       and cost.upfront_entries(on.provider) > budget.tools)
                   for on in cost.providers)

    def unverified(self, cost: ProfileCost) -> bool:
        """Whether an upper bound exceeds the token budget, so only a count can tell."""
        budget = cost.profile.budget.tokens
        return not self.exact and budget is not None and any(
            on.upfront_tokens > budget for on in cost.providers)

    @property
    def failed(self) -> bool:
        """Exit 1: a profile over its budget, or one whose token budget is unverified."""
        return any(self.over_budget(cost) or self.unverified(cost) for cost in self.costs)

    def state(self, cost: ProfileCost) -> str:
        """``over``, ``unverified`` or ``within``."""
        if self.over_budget(cost):
            return "over"
        return "unverified" if self.unverified(cost) else "within"

    def figure(self, on: ProviderCost, value: int) -> str:
        """A token figure with its marks: ``~`` estimate, ``>=`` lower bound (parts
        unknown), ``<=`` upper bound (no encoding), ``+?`` plus parts unknown."""
        estimate = "~" if on.estimate else ""
        if self.exact:
            return f"{estimate}{'' if on.complete else '>='}{value}"
        return f"{estimate}<={value}{'' if on.complete else '+?'}"


def budget_report(manifest_path: str, profile: str | None) -> BudgetReport:
    """The costs of the manifest's profiles (only ``profile`` when given)."""
    manifest = read_manifest_model(manifest_path)
    profiles = [entry for entry in manifest.profiles if profile in (None, entry.name)]
    if profile is not None and not profiles:
        known = ", ".join(entry.name for entry in manifest.profiles) or "none"
        raise UnknownProfile(f"no profile {profile!r} in {manifest_path} (profiles: {known})")
    count: Counter
    missing = None
    try:
        count = o200k()
    except EncodingUnavailable as error:
        # Still show what is known: tools exactly, tokens as upper bounds, said as such.
        count, missing = utf8_upper_bound, (f"{error}; the token figures are upper "
                                           "bounds (a token is at least one byte)")
    costs = profile_costs(profiles, manifest.capabilities, thaw(manifest.plugins), count,
                          manifest.overrides)
    return BudgetReport(tuple(costs), missing)


def _upfront_count(cost: ProfileCost, on: ProviderCost) -> str:
    """The up-front tool count, ``>=`` when capabilities of unknown tools may add to it."""
    count = cost.upfront_entries(on.provider)
    return str(count) if cost.entries_complete(on.provider) else f">={count}"


def _savings(cost: ProfileCost, on: ProviderCost) -> tuple[list[dict[str, Any]], int]:
    """The biggest up-front tools, and what deferring them saves: less the search tool
    their deferral adds when the profile defers nothing yet."""
    biggest = on.biggest(BIGGEST)
    return ([{"name": tool.name, "capability": tool.code, "tokens": tool.tokens}
             for tool in biggest], on.saving(biggest, bool(cost.profile.deferred)))


def _tool_json(tool: ToolCost) -> dict[str, Any]:
    """One tool of a profile on one provider: every tool is listed, in profile order."""
    return {"name": tool.name, "capability": tool.code, "deferred": tool.deferred,
            "tokens": tool.tokens, "saving_if_deferred": None if tool.deferred or tool.tokens
            is None else tool.saving, "problem": tool.problem}


def as_json(report: BudgetReport) -> dict[str, Any]:
    """The report as one JSON document."""
    profiles = []
    for cost in report.costs:
        providers = {}
        for on in cost.providers:
            biggest, saving = _savings(cost, on)
            providers[on.provider] = {
                "estimate": on.estimate, "complete": on.complete,
                "up_front": {"tools": cost.upfront_entries(on.provider),
                             "tools_complete": cost.entries_complete(on.provider),
                             "tokens": on.upfront_tokens},
                "deferred": {"tools": len(on.deferred), "tokens": on.deferred_tokens},
                "biggest": biggest, "deferring_biggest_saves": saving,
                "tools": [_tool_json(tool) for tool in on.tools],
                "unknown": [{"capability": item.code, "reason": item.reason}
                            for item in on.unknown],
                "uncountable": [{"name": tool.name, "reason": tool.problem}
                                for tool in on.tools if tool.tokens is None],
            }
        profiles.append({"name": cost.profile.name, "budget": cost.profile.budget.to_json(),
                         "over_budget": report.over_budget(cost),
                         "budget_state": report.state(cost), "providers": providers})
    return {"encoding": ENCODING_NAME, "tokens": "exact" if report.exact else "upper_bound",
            "note": report.missing, "profiles": profiles}


def render_json(report: BudgetReport) -> str:
    """``--format json``."""
    return json.dumps(as_json(report), indent=2, sort_keys=True) + "\n"


_STATES = {"over": " OVER BUDGET", "unverified": " BUDGET UNVERIFIED", "within": ""}
_CELL_STATES = {"over": " **over**", "unverified": " **unverified**", "within": ""}


def _legend(report: BudgetReport) -> str:
    legend = ("~ estimate (Anthropic publishes no tokenizer); >= lower bound (parts unknown: "
              "tokens, and tools when a capability's tools are unknown)")
    if not report.exact:
        legend += "; <= upper bound (no o200k encoding: a token is at least one byte); " \
                  "+? plus parts unknown"
    return legend


def render_text(report: BudgetReport) -> str:
    """``--format text``: one block per profile (without the encoding, a first line says
    that the token figures are upper bounds and how to get counts)."""
    if not report.costs:
        return "no profiles in this manifest (docs/profiles.md)\n"
    lines: list[str] = [] if report.exact else [f"capc budget: {report.missing}", ""]
    for cost in report.costs:
        budget = cost.profile.budget
        limits = ", ".join(f"{value} {key}" for key, value in budget.to_json().items())
        state = _STATES[report.state(cost)]
        lines.append(f"profile {cost.profile.name} (budget: {limits or 'none'}){state}")
        lines.append(f"  {'provider':<10} {'up-front tools':>14} {'up-front tokens':>16} "
                     f"{'deferred tools':>14} {'deferred tokens':>16}")
        for on in cost.providers:
            lines.append(f"  {on.provider:<10} {_upfront_count(cost, on):>14} "
                         f"{report.figure(on, on.upfront_tokens):>16} {len(on.deferred):>14} "
                         f"{report.figure(on, on.deferred_tokens):>16}")
        for on in cost.providers:
            biggest, saving = _savings(cost, on)
            if biggest:
                shown = ", ".join(f"{tool['name']} {_bare(report, tool['tokens'])}"
                                  for tool in biggest)
                lines.append(f"  biggest up front on {on.provider}: {shown}; "
                             f"deferring them would save {report.figure(on, saving)} tokens")
        for item in cost.on("openai").unknown:
            lines.append(f"  unknown: {item.code}: {item.reason}")
        for name, code, reason in _uncountable(cost):
            lines.append(f"  not counted: {_named(name, code)}: {reason}")
        lines.append("")
    lines.append(_legend(report))
    return "\n".join(escape_control(line) for line in lines) + "\n"


def render_markdown(report: BudgetReport) -> str:
    """``--format markdown``: one table, for a pull-request summary."""
    if not report.costs:
        return "### Tool definition budget\n\nNo profiles in this manifest.\n"
    lines = ["### Tool definition budget", ""]
    if not report.exact:
        lines += [f"**{_cell(report.missing or '')}**", ""]
    lines += ["| profile | provider | up-front tools | up-front tokens | deferred tools | "
              "deferred tokens | budget | biggest up front |",
              "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for cost in report.costs:
        limits = ", ".join(f"{value} {key}" for key, value in cost.profile.budget.to_json().items())
        state = _CELL_STATES[report.state(cost)]
        for on in cost.providers:
            biggest, _ = _savings(cost, on)
            shown = ", ".join(f"{tool['name']} ({_bare(report, tool['tokens'])})"
                              for tool in biggest[:3])
            lines.append(
                f"| {_cell(cost.profile.name)} | {on.provider} | {_upfront_count(cost, on)} | "
                f"{report.figure(on, on.upfront_tokens)} | {len(on.deferred)} | "
                f"{report.figure(on, on.deferred_tokens)} | {_cell(limits or 'none')}{state} | "
                f"{_cell(shown)} |")
    # What the ``>=`` figures leave out, and why: a reviewer must see it, not only JSON.
    left_out = [f"- {_cell(cost.profile.name)}: {_cell(_named(name, code))} not counted: "
                f"{_cell(reason)}" for cost in report.costs
                for name, code, reason in _uncountable(cost)]
    left_out += [f"- {_cell(cost.profile.name)}: {_cell(item.code)} unknown: "
                 f"{_cell(item.reason)}" for cost in report.costs
                 for item in cost.on("openai").unknown]
    if left_out:
        lines += ["", *left_out]
    lines += ["", _legend(report), ""]
    return "\n".join(lines)


def _uncountable(cost: ProfileCost) -> list[tuple[str, str, str]]:
    """(name, capability, why) of each tool whose definition was not counted; the reason
    is the definition's, the same on every provider, so it is listed once."""
    return [(tool.name, tool.code, tool.problem or "not counted")
            for tool in cost.on("openai").tools if tool.tokens is None]


def _named(name: str, code: str) -> str:
    return name if name == code else f"{name} ({code})"


def _bare(report: BudgetReport, tokens: int) -> str:
    """One tool's figure: a count, or without the encoding an upper bound."""
    return str(tokens) if report.exact else f"<={tokens}"


def _cell(value: str) -> str:
    return html.escape(escape_control(value), quote=False).replace("|", "&#124;")


RENDERERS: dict[str, Callable[[BudgetReport], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
