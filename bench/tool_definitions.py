"""Tool definitions to count, for figure 12a: varied generated ones and real ones.

Generated definitions vary as a real tree's do: names, descriptions of 6 to 40 words,
0 to 12 properties drawn partly from parameters many tools share (``page``, ``per_page``,
``owner``: real APIs repeat them with the same description) and partly made up per tool,
enums, nested objects and arrays of objects. Real ones are GitHub's REST API document
imported with ``capc import openapi --all`` and compiled: the first 1,000 tools of its
manifest. Both are frozen exactly as a manifest holds them (read-only proxies and tuples),
since that is what ``capc budget`` and the compile check count.
"""

from __future__ import annotations

import os
import random
import subprocess
import sys
from pathlib import Path
from typing import Any

from compiler.profiles.definitions import capability_tools
from compiler.profiles.tokens import Definition
from compiler.runtime.manifest.fields import freeze

REPOSITORY = Path(__file__).resolve().parent.parent

_WORDS = (
    "account", "active", "address", "after", "all", "amount", "archived", "assigned",
    "attachment", "author", "balance", "before", "billing", "branch", "by", "cancel",
    "card", "channel", "charge", "check", "comment", "commit", "company", "contact",
    "created", "currency", "customer", "date", "default", "delete", "deployment",
    "description", "draft", "email", "event", "every", "file", "filter", "for", "from",
    "group", "identifier", "in", "invoice", "issue", "item", "label", "last", "limit",
    "list", "member", "message", "milestone", "name", "new", "note", "of", "only", "open",
    "order", "organization", "owner", "page", "payment", "pending", "permission", "project",
    "pull", "query", "reaction", "release", "repository", "request", "result", "return",
    "review", "role", "run", "search", "secret", "shipment", "since", "sort", "state",
    "status", "subscription", "tag", "team", "the", "ticket", "time", "to", "token",
    "total", "type", "update", "updated", "user", "visibility", "webhook", "when", "with",
    "workflow",
)
_VERBS = ("get", "list", "create", "update", "delete", "search", "archive", "sync",
          "export", "merge", "assign", "review")
_TYPES = ("string", "string", "string", "integer", "boolean", "number")
# Parameters many tools of one API share, each always with the same description.
_SHARED: tuple[tuple[str, dict[str, Any]], ...] = (
    ("page", {"type": "integer", "description": "Page number of the results to fetch."}),
    ("per_page", {"type": "integer",
                  "description": "The number of results per page (max 100)."}),
    ("owner", {"type": "string", "description": "The account owner of the repository. "
               "The name is not case sensitive."}),
    ("repo", {"type": "string", "description": "The name of the repository without the "
              ".git extension. The name is not case sensitive."}),
    ("direction", {"type": "string", "description": "The direction to sort the results by.",
                   "enum": ["asc", "desc"]}),
    ("since", {"type": "string", "description": "Only show results that were last updated "
               "after the given time, as an ISO 8601 timestamp."}),
    ("cursor", {"type": "string", "description": "A cursor from a previous response."}),
    ("expand", {"type": "array", "description": "Fields of the response to expand.",
                "items": {"type": "string"}}),
)


def _sentence(rng: random.Random, low: int, high: int) -> str:
    words = [rng.choice(_WORDS) for _ in range(rng.randint(low, high))]
    return " ".join(words).capitalize() + rng.choice((".", ".", ""))


def _property(rng: random.Random, depth: int) -> dict[str, Any]:
    roll = rng.random()
    if roll < 0.12 and depth < 2:  # a nested object
        return {"type": "object", "description": _sentence(rng, 3, 12),
                "properties": _properties(rng, 1, 5, depth + 1)}
    if roll < 0.2 and depth < 2:  # an array of objects
        return {"type": "array", "description": _sentence(rng, 3, 12), "items": {
            "type": "object", "properties": _properties(rng, 1, 4, depth + 1)}}
    spec: dict[str, Any] = {"type": rng.choice(_TYPES)}
    if rng.random() < 0.85:
        spec["description"] = _sentence(rng, 2, 25)
    if spec["type"] == "string" and rng.random() < 0.15:
        spec["enum"] = rng.sample(_WORDS, rng.randint(2, 6))
    return spec


def _properties(rng: random.Random, low: int, high: int, depth: int) -> dict[str, Any]:
    properties: dict[str, Any] = {}
    for _ in range(rng.randint(low, high)):
        if depth == 0 and rng.random() < 0.35:
            name, spec = rng.choice(_SHARED)
            properties[name] = spec
        else:
            properties[f"{rng.choice(_WORDS)}_{rng.choice(_WORDS)}"] = _property(rng, depth)
    return properties


def varied_definitions(count: int, seed: int = 24) -> list[Definition]:
    """``count`` varied, realistic definitions (same count and seed: same definitions)."""
    rng = random.Random(seed)
    definitions = []
    for index in range(count):
        properties = _properties(rng, 0, 12, 0)
        required = [name for name in properties if rng.random() < 0.3]
        schema = {"type": "object", "properties": properties, "required": required}
        name = f"{rng.choice(_VERBS)}_{rng.choice(_WORDS)}_{rng.choice(_WORDS)}_{index}"
        definitions.append(Definition(name, _sentence(rng, 6, 40), freeze(schema)))
    return definitions


def github_definitions(work: Path, count: int) -> list[Definition] | None:
    """The first ``count`` tools of GitHub's REST API imported and compiled by capc, or
    None when the public corpus is not on this machine (``make test`` fetches it)."""
    from compiler.manifest import read_manifest_model

    try:
        from tests.authoring.openapi.public_corpus import public_document

        document = public_document("github")
    except (AssertionError, ImportError, OSError):
        return None
    project = work / "github"
    project.mkdir(parents=True, exist_ok=True)
    (project / "pyproject.toml").write_text('[tool.capc]\nroots = ["capabilities"]\n')
    env = {**os.environ, "PYTHONPATH": str(REPOSITORY), "CAPC_NO_CACHE": "1"}
    capc = [sys.executable, "-m", "compiler"]
    for step in (["import", "openapi", str(document), "--all", "-o", "capabilities/api"],
                 ["compile", "-o", "manifest.json"]):
        subprocess.run([*capc, *step], cwd=project, env=env, check=True,
                       capture_output=True, timeout=600)
    manifest = read_manifest_model(str(project / "manifest.json"))
    found = [definition for entry in manifest.capabilities
             for definition in capability_tools(entry, {}).definitions]
    return found[:count]
