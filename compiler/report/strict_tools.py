"""``capc validate --format json``: the diagnostics, and per api tool whether each
provider's strict tool calling can take its schema, and why not (SPEC §10)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from compiler.diagnostics import Diagnostic
from compiler.runtime.tools.strict import PROVIDERS, strict_problems


def tool_strictness(manifest: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per api tool of ``manifest`` (none when the tree did not compile)."""
    tools = []
    for capability in (manifest or {}).get("capabilities", []):
        tool = capability.get("tool")
        if capability.get("type") != "api" or not isinstance(tool, Mapping):
            continue
        problems = strict_problems(tool.get("input_schema") or {})
        tools.append({
            "tool": tool.get("name"),
            "capability": capability.get("code"),
            "source": capability.get("source"),
            "strict": bool(tool.get("strict", False)),
            "providers": {provider: {
                "strict_compatible": not any(p.provider == provider for p in problems),
                "problems": [str(p) for p in problems if p.provider == provider],
            } for provider in PROVIDERS},
        })
    return tools


def report_validation(diagnostics: tuple[Diagnostic, ...], manifest: Mapping[str, Any] | None,
                      stream: TextIO) -> None:
    """Write ``{"diagnostics": [...], "tools": [...]}`` as one JSON document."""
    document = {"diagnostics": [d.as_dict() for d in diagnostics],
                "tools": tool_strictness(manifest)}
    json.dump(document, stream, indent=2, ensure_ascii=False)
    stream.write("\n")
