"""``capc budget``: per profile and provider, what is sent up front and what is deferred.

Reads a compiled manifest through the one manifest reader and prints, for each profile,
its up-front and deferred tools and tokens per provider, the biggest up-front tools and
what deferring them would save. Anthropic figures are estimates and say so (``~``); a
figure with unknown parts is a lower bound and says so (``>=``).
"""

from __future__ import annotations

import html
import json
from collections.abc import Callable
from typing import Any

from compiler.manifest import read_manifest_model
from compiler.profiles.budget import ProfileCost, ProviderCost, profile_costs
from compiler.profiles.tokens import ENCODING_NAME, Counter, EncodingUnavailable, o200k
from compiler.report.escape import escape_control
from compiler.runtime.manifest.fields import thaw

BIGGEST = 5


class UnknownProfile(Exception):
    """``--profile`` names no profile of the manifest."""


def budget_costs(manifest_path: str, profile: str | None) -> list[ProfileCost]:
    """The costs of the manifest's profiles (only ``profile`` when given)."""
    manifest = read_manifest_model(manifest_path)
    profiles = [entry for entry in manifest.profiles if profile in (None, entry.name)]
    if profile is not None and not profiles:
        known = ", ".join(entry.name for entry in manifest.profiles) or "none"
        raise UnknownProfile(f"no profile {profile!r} in {manifest_path} (profiles: {known})")
    count: Counter | None
    try:
        count = o200k()
    except EncodingUnavailable:
        count = None
    return profile_costs(profiles, manifest.capabilities, thaw(manifest.plugins), count)


def over_budget(cost: ProfileCost) -> bool:
    """Whether the profile sends more tokens or tools up front than its budget allows."""
    budget = cost.profile.budget
    return any((budget.tokens is not None and on.upfront_tokens > budget.tokens)
               or (budget.tools is not None and _upfront_count(cost, on) > budget.tools)
               for on in cost.providers)


def _upfront_count(cost: ProfileCost, on: ProviderCost) -> int:
    return len(on.upfront) + on.namespaces + (1 if cost.profile.deferred else 0)


def _tokens(on: ProviderCost, value: int) -> str:
    bound = "" if on.complete else ">="
    return f"{'~' if on.estimate else ''}{bound}{value}"


def _savings(on: ProviderCost) -> tuple[list[dict[str, Any]], int]:
    biggest = on.biggest(BIGGEST)
    return ([{"name": tool.name, "capability": tool.code, "tokens": tool.tokens}
             for tool in biggest], sum(tool.tokens or 0 for tool in biggest))


def as_json(costs: list[ProfileCost]) -> dict[str, Any]:
    """The report as one JSON document."""
    profiles = []
    for cost in costs:
        providers = {}
        for on in cost.providers:
            biggest, saving = _savings(on)
            providers[on.provider] = {
                "estimate": on.estimate, "complete": on.complete,
                "up_front": {"tools": _upfront_count(cost, on), "tokens": on.upfront_tokens},
                "deferred": {"tools": len(on.deferred), "tokens": on.deferred_tokens},
                "biggest": biggest, "deferring_biggest_saves": saving,
                "unknown": [{"capability": item.code, "reason": item.reason}
                            for item in on.unknown],
                "uncountable": [{"name": tool.name, "reason": tool.problem}
                                for tool in on.tools if tool.tokens is None],
            }
        profiles.append({"name": cost.profile.name, "budget": cost.profile.budget.to_json(),
                         "over_budget": over_budget(cost), "providers": providers})
    return {"encoding": ENCODING_NAME, "profiles": profiles}


def render_json(costs: list[ProfileCost]) -> str:
    """``--format json``."""
    return json.dumps(as_json(costs), indent=2, sort_keys=True) + "\n"


def render_text(costs: list[ProfileCost]) -> str:
    """``--format text``: one block per profile."""
    if not costs:
        return "no profiles in this manifest (docs/profiles.md)\n"
    lines: list[str] = []
    for cost in costs:
        budget = cost.profile.budget
        limits = ", ".join(f"{value} {key}" for key, value in budget.to_json().items())
        state = " OVER BUDGET" if over_budget(cost) else ""
        lines.append(f"profile {cost.profile.name} (budget: {limits or 'none'}){state}")
        lines.append(f"  {'provider':<10} {'up-front tools':>14} {'up-front tokens':>16} "
                     f"{'deferred tools':>14} {'deferred tokens':>16}")
        for on in cost.providers:
            lines.append(f"  {on.provider:<10} {_upfront_count(cost, on):>14} "
                         f"{_tokens(on, on.upfront_tokens):>16} {len(on.deferred):>14} "
                         f"{_tokens(on, on.deferred_tokens):>16}")
        for on in cost.providers:
            biggest, saving = _savings(on)
            if biggest:
                shown = ", ".join(f"{tool['name']} {tool['tokens']}" for tool in biggest)
                lines.append(f"  biggest up front on {on.provider}: {shown}; "
                             f"deferring them would save {_tokens(on, saving)} tokens")
        for item in cost.on("openai").unknown:
            lines.append(f"  unknown: {item.code}: {item.reason}")
        lines.append("")
    lines.append("~ estimate (Anthropic publishes no tokenizer); >= lower bound (parts unknown)")
    return "\n".join(escape_control(line) for line in lines) + "\n"


def render_markdown(costs: list[ProfileCost]) -> str:
    """``--format markdown``: one table, for a pull-request summary."""
    if not costs:
        return "### Tool definition budget\n\nNo profiles in this manifest.\n"
    lines = ["### Tool definition budget", "",
             "| profile | provider | up-front tools | up-front tokens | deferred tools | "
             "deferred tokens | budget | biggest up front |",
             "| --- | --- | ---: | ---: | ---: | ---: | --- | --- |"]
    for cost in costs:
        limits = ", ".join(f"{value} {key}" for key, value in cost.profile.budget.to_json().items())
        state = " **over**" if over_budget(cost) else ""
        for on in cost.providers:
            biggest, _ = _savings(on)
            shown = ", ".join(f"{tool['name']} ({tool['tokens']})" for tool in biggest[:3])
            lines.append(
                f"| {_cell(cost.profile.name)} | {on.provider} | {_upfront_count(cost, on)} | "
                f"{_tokens(on, on.upfront_tokens)} | {len(on.deferred)} | "
                f"{_tokens(on, on.deferred_tokens)} | {_cell(limits or 'none')}{state} | "
                f"{_cell(shown)} |")
    lines += ["", "~ estimate (Anthropic publishes no tokenizer); >= lower bound (parts "
              "unknown, e.g. an unpinned MCP server)", ""]
    return "\n".join(lines)


def _cell(value: str) -> str:
    return html.escape(escape_control(value), quote=False).replace("|", "&#124;")


RENDERERS: dict[str, Callable[[list[ProfileCost]], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}
