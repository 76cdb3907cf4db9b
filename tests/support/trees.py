"""The one tree builder of the suite: real capc/v1 YAML as a user writes it, compiled by
the real CLI (``write_tree`` + ``compile_tree``) or in-process (``build_documents``).

Every helper writes plain YAML, so the tests exercise the whole pipeline (discovery,
schema, checks, manifest) rather than hand-built manifests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from compiler.build import build
from tests.support.capc import run_capc

WEATHER = """\
apiVersion: capc/v1
kind: Capability
code: get_weather
name: Weather
type: api
options:
  description: Current weather for a city.
  url: {base}/weather
  params:
    city: {{type: string, description: The city name, required: true}}
"""

CRM = """\
apiVersion: capc/v1
kind: Capability
code: crm_search
name: CRM search
type: api
options:
  description: Search contacts in the CRM by name, e-mail address or company.
  url: {base}/crm/search
  params:
    q: {{type: string, description: Search text, required: true}}
---
apiVersion: capc/v1
kind: Capability
code: crm_create
name: CRM create
type: api
options:
  description: Create a contact in the CRM.
  method: POST
  url: {base}/crm/contacts
  body:
    name: {{type: string, description: Full name, required: true}}
    email: {{type: string, description: E-mail address}}
"""

STRICT = """\
apiVersion: capc/v1
kind: Capability
code: order_create
name: Orders
type: api
options:
  description: Create an order.
  method: POST
  url: {base}/orders
  strict: true
  body:
    note: {{type: string, description: A note for the courier}}
    count: {{type: integer, description: How many, required: true}}
    kind: {{type: string, enum: [parcel, letter], description: The kind of shipment}}
"""

DEEPWIKI = """\
apiVersion: capc/v1
kind: Capability
code: deepwiki
name: DeepWiki
type: mcp
options:
  server_label: deepwiki
  server_url: https://mcp.deepwiki.com/mcp
  require_approval: never
"""


def write_tree(root: Path, *documents: str, base: str = "https://api.example.com",
               profiles: str = "") -> Path:
    """A project at ``root`` with ``documents`` (templates of ``{base}``) and profiles."""
    sources = root / "capabilities"
    sources.mkdir(parents=True, exist_ok=True)
    (sources / "tools.yaml").write_text(
        "---\n".join(document.format(base=base) for document in documents))
    if profiles:
        (sources / "profiles.yaml").write_text(profiles)
    return root


def compile_tree(root: Path, *extra: str) -> Path:
    """``capc compile`` in ``root``; the manifest's path (the compile must succeed)."""
    result = run_capc("compile", *extra, cwd=root)
    assert result.returncode == 0, result.stderr
    return root / "build" / "manifest.json"


def budget_json(root: Path, *extra: str) -> dict[str, Any]:
    """``capc budget --format json`` in ``root``, parsed (the command must succeed)."""
    result = run_capc("budget", "--format", "json", *extra, cwd=root)
    assert result.returncode == 0, result.stderr
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def build_documents(tmp_path: Path, *documents: str) -> Any:
    """Compile ``documents`` as one file of ``tmp_path/capabilities`` in-process (no
    cache); the ``CompileResult``."""
    root = tmp_path / "capabilities"
    root.mkdir(exist_ok=True)
    (root / "a.yaml").write_text("---\n".join(documents))
    return build([str(root)], cwd=tmp_path, use_cache=False)
