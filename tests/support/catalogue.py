"""Helpers shared by the plugin-catalogue tests (a module, so tests import it by name)."""

from __future__ import annotations

from pathlib import Path

from tests.support.paths import REPO_ROOT

REPO = REPO_ROOT
PLUGIN_V2 = REPO / "tests" / "plugins" / "capc-test-plugin-v2"


def write(path: Path, text: str) -> Path:
    """Write ``text`` to ``path``, creating folders."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text, encoding="utf-8")
    return path


def capability(code: str, extra: str = "") -> str:
    """An internal capability document."""
    return (f"apiVersion: capc/v1\nkind: Capability\ncode: {code}\nname: {code}\n"
            f"type: internal\n{extra}")
