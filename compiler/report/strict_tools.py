"""``capc validate --format json``: the diagnostics list (SPEC §4), then one ``info`` entry
per api tool saying whether each provider's strict tool calling can take its schema, and
why not (SPEC §10). Tool entries carry the diagnostic keys, so the output stays one JSON
list a consumer can filter by ``code``."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, TextIO

from compiler.diagnostics import Diagnostic
from compiler.runtime.tools.strict import PROVIDERS, strict_problems

STRICT_CODE = "strict-compatibility"
_PROVIDER_NAMES = {"openai": "OpenAI", "anthropic": "Anthropic"}


def tool_strictness(manifest: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    """One entry per api tool of ``manifest`` (none when the tree did not compile)."""
    entries = []
    for capability in (manifest or {}).get("capabilities", []):
        tool = capability.get("tool")
        if capability.get("type") != "api" or not isinstance(tool, Mapping):
            continue
        problems = strict_problems(tool.get("input_schema") or {})
        providers = {provider: {
            "strict_compatible": not any(p.provider == provider for p in problems),
            "problems": [str(p) for p in problems if p.provider == provider],
        } for provider in PROVIDERS}
        source = capability.get("source") or {}
        entries.append({
            "path": source.get("path"), "line": source.get("line"), "col": 1,
            "severity": "info", "code": STRICT_CODE,
            "message": _summary(str(tool.get("name")), providers),
            "tool": tool.get("name"), "capability": capability.get("code"),
            "strict": bool(tool.get("strict", False)), "providers": providers,
        })
    return entries


def _summary(name: str, providers: Mapping[str, Mapping[str, Any]]) -> str:
    able = [_PROVIDER_NAMES[p] for p, verdict in providers.items() if verdict["strict_compatible"]]
    unable = [f"{_PROVIDER_NAMES[p]} ({'; '.join(verdict['problems'])})"
              for p, verdict in providers.items() if not verdict["strict_compatible"]]
    said = f"tool {name}: strict tool calling possible with {' and '.join(able) or 'no provider'}"
    return said + (f"; not with {', '.join(unable)}" if unable else "")


def report_validation(diagnostics: tuple[Diagnostic, ...], manifest: Mapping[str, Any] | None,
                      stream: TextIO) -> None:
    """Write the diagnostics and the tool entries as one JSON list."""
    entries = [d.as_dict() for d in diagnostics] + tool_strictness(manifest)
    json.dump(entries, stream, indent=2, ensure_ascii=False)
    stream.write("\n")
