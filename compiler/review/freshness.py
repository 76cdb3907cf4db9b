"""Is a manifest older than the sources it names? ``capc explain`` reads a manifest, not
the tree: when a source changed after the compile, what it explains may no longer be true.

The manifest names its sources (every ``{"path", "line"}`` source location), relative to
the directory it was compiled in: the project root, or the working directory. A source
found in neither (a manifest compiled elsewhere) is not compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

# A manifest names at most one location per field; a bound keeps a hostile file cheap.
MAX_SOURCES = 10_000


def newer_sources(manifest_path: Path, bases: tuple[Path, ...]) -> list[str]:
    """The sources the manifest names that were modified after it was written (sorted)."""
    try:
        written = manifest_path.stat().st_mtime
        data = json.loads(manifest_path.read_bytes())
    except (OSError, ValueError):
        return []  # reading the manifest reports its own problems
    newer: set[str] = set()
    for count, name in enumerate(sorted(set(_source_paths(data)))):
        if count >= MAX_SOURCES:
            break
        for base in bases:
            try:
                modified = (base / name).stat().st_mtime
            except (OSError, ValueError):
                continue
            if modified > written:
                newer.add(name)
            break
    return sorted(newer)


def staleness_warning(manifest_path: str, bases: tuple[Path, ...]) -> str | None:
    """The warning to print when the manifest is older than a source it names, else None."""
    newer = newer_sources(Path(manifest_path), bases)
    if not newer:
        return None
    shown = ", ".join(newer[:3]) + (f" and {len(newer) - 3} more" if len(newer) > 3 else "")
    return (f"capc: warning: {manifest_path} is older than {len(newer)} of the sources it "
            f"names ({shown} changed after it was compiled): what follows may be out of date; "
            "run `capc compile` to refresh it")


def _source_paths(data: Any) -> Iterator[str]:
    """Every ``path`` of a ``{"path": str, "line": int}`` object in the manifest."""
    stack = [data]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            path, line = node.get("path"), node.get("line")
            if isinstance(path, str) and isinstance(line, int) and path and path != "?":
                yield path
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
