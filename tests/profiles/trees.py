"""The capabilities the profile tests compile: the documentation's weather and CRM tools,
as YAML documents, and one way to compile them."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from compiler.build import build

WEATHER = """\
apiVersion: capc/v1
kind: Capability
code: get_weather
name: Weather
type: api
options:
  description: Current weather for a city.
  url: https://api.example.com/weather
  params:
    city: {type: string, description: The city name, required: true}
"""

CRM = """\
apiVersion: capc/v1
kind: Capability
code: crm_search
name: CRM search
type: api
options:
  description: Search contacts in the CRM by name, e-mail address or company.
  url: https://crm.example.com/search
  params:
    q: {type: string, description: Search text, required: true}
---
apiVersion: capc/v1
kind: Capability
code: crm_create
name: CRM create
type: api
options:
  description: Create a contact in the CRM.
  method: POST
  url: https://crm.example.com/contacts
  body:
    name: {type: string, description: Full name, required: true}
"""


def compile_tree(tmp_path: Path, *documents: str) -> Any:
    """Compile ``documents`` as one file of ``tmp_path/capabilities`` (no cache)."""
    root = tmp_path / "capabilities"
    root.mkdir(exist_ok=True)
    (root / "a.yaml").write_text("---\n".join(documents))
    return build([str(root)], cwd=tmp_path, use_cache=False)
