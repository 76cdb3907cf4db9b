"""The tool naming rule of an api capability, below both the checks and normalisation.

An api capability's tool is named by ``options.name`` and, without one, by its code. The
checks (``checks/api.py``: the name's pattern, ``checks/names.py``: duplicates) and
normalisation (``normalize.py``: the manifest's tool entry) read the name and the place it
is written from here, so the compile's lower layers never import ``checks/``
(tests/unit/test_import_graph.py).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["TOOL_NAME_PATTERN", "tool_name", "tool_name_path"]

# What every provider accepts as a function name.
TOOL_NAME_PATTERN = re.compile(r"^[a-zA-Z0-9_-]{1,64}$")


def tool_name(data: Mapping[str, Any]) -> str:
    """The tool name an api capability exposes: ``options.name``, default its code."""
    options = data.get("options") or {}
    return str(options.get("name") or data.get("code", ""))


def tool_name_path(options: Mapping[str, Any]) -> tuple[str, ...]:
    """Where the tool name of an api capability with these ``options`` is written."""
    return ("options", "name") if "name" in options else ("code",)
