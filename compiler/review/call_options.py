"""How an api tool's calls are shaped and retried (SPEC §8), in words, for explain and docs."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any


def describe_call_options(api: Mapping[str, Any]) -> list[str]:
    """One line each for ``response``, ``retry`` and ``max_concurrency``, as set."""
    lines: list[str] = []
    response = api.get("response") or {}
    shaping = []
    if response.get("select") is not None:
        shaping.append(f"select {response['select']}")
    if response.get("max_items") is not None:
        shaping.append(f"lists cut to {response['max_items']} items")
    if response.get("max_chars") is not None:
        shaping.append(f"text cut at {response['max_chars']} characters")
    if shaping:
        lines.append("response: " + "; ".join(shaping) + " (secrets masked first, "
                     "every cut noted)")
    retry = api.get("retry")
    if retry is not None:
        on = ", ".join(str(error) for error in retry.get("on_errors") or [])
        text = (f"retry: up to {retry['attempts']} attempts on {on}; backoff "
                f"{retry['backoff']:g} s (Retry-After honoured), all within the "
                f"{float(api.get('timeout', 30.0)):g} s timeout")
        if retry.get("idempotency_key"):
            text += f"; one {retry['idempotency_key']} key per call"
        lines.append(text)
    if api.get("max_concurrency") is not None:
        lines.append(f"max_concurrency: {api['max_concurrency']} calls in flight per manifest")
    return lines
