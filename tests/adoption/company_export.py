"""A company's capabilities table as ``capc import`` meets it: two tenants sharing codes,
soft-deleted rows of every kind, literal credentials, an internal API on 10.20.x.x."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

# Secrets the export holds in the clear; no file or output may ever contain them.
BEARER = "sk-live-9f8e7d6c5b4a3f2e1d0c9b8a7f6e5d4c"
API_KEY = "k3y-0f1e2d3c4b5a69788796a5b4c3d2e1f0"
APPID = "3f2a9c7d1e5b4a6f8c0d2e4f6a8b0c1d"
SECRETS = (BEARER, API_KEY, APPID)


def _api(row_id: int, group: int, code: str, url: str, **extra: Any) -> dict[str, Any]:
    options = {"description": f"{code.replace('_', ' ')} for the agent", "url": url,
               **extra.pop("options", {})}
    return {"id": row_id, "group_id": group, "name": code.replace("_", " ").title(),
            "code": code, "type": "api", "description": f"The {code} API",
            "options": json.dumps(options), "is_default": 0, "ordering": row_id,
            "access_type": "user", "created_at": "2025-01-01T00:00:00Z", "updated_at": None,
            "deleted_at": None, "is_active": 1, **extra}


def rows() -> list[dict[str, Any]]:
    """The export: group 7 and group 9 both define ``get_weather`` and ``inventory``."""
    return [
        _api(1, 7, "get_weather", f"https://api.openweathermap.org/data/2.5/weather?appid={APPID}",
             options={"params": {"q": {"type": "string", "description": "City",
                                       "required": True}}}),
        _api(2, 7, "inventory", "https://10.20.4.2/api/items",
             options={"headers": {"Authorization": f"Bearer {BEARER}"}}),
        _api(3, 7, "old_search", "https://search.example.com/v1", deleted_at="2025-06-01"),
        _api(4, 9, "get_weather", "https://api.openweathermap.org/data/2.5/weather",
             options={"headers": {"X-Api-Key": API_KEY}}),
        _api(5, 9, "inventory", "https://10.20.9.9/api/items"),
        _api(6, 9, "legacy_crm", "https://crm.example.com/api", is_active=0),
        _api(7, 9, "beta_tool", "https://beta.example.com/api", enabled="false"),
        {"id": 8, "group_id": 9, "name": "Wiki", "code": "wiki", "type": "mcp",
         "description": "Internal wiki", "options": json.dumps({
             "server_label": "wiki", "server_url": "https://10.20.7.7/mcp",
             "require_approval": "never"}),
         "is_default": False, "ordering": 8, "deleted_at": None},
    ]


def write_export(folder: Path, data: list[dict[str, Any]] | None = None) -> Path:
    """The export as the database tool writes it, one row per line."""
    path = folder / "capabilities-export.json"
    lines = ",\n".join("  " + json.dumps(row) for row in (rows() if data is None else data))
    path.write_text(f"[\n{lines}\n]\n", encoding="utf-8")
    return path


def leaked(root: Path, *outputs: str) -> list[str]:
    """Where any secret appears: files under ``root`` (the export aside) or an output."""
    found = []
    for path in root.rglob("*"):
        if path.is_file() and path.name != "capabilities-export.json":
            text = path.read_bytes().decode("utf-8", "replace")
            found += [f"{path}: {secret}" for secret in SECRETS if secret in text]
    for index, output in enumerate(outputs):
        found += [f"output {index}: {secret}" for secret in SECRETS if secret in output]
    return found
