"""What ``capc new`` leaves for the author to fill in: a warning while it is still there, so
a fresh scaffold compiles (to try it) but ``--strict`` (CI) refuses to ship it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from compiler.diagnostics import Diagnostic
from compiler.source.documents import SourceDocument

# The host of every URL the scaffold writes: reserved (RFC 2606), so it can never be the
# real endpoint, and used nowhere else, so only a scaffold's own URL is flagged.
PLACEHOLDER_HOST = "todo.example.com"
# The scaffold's descriptions start with it; a description starting with it is unfinished.
TODO_MARK = "TODO"
URL_KEYS = ("url", "server_url")


def check_scaffold_placeholders(document: SourceDocument) -> list[Diagnostic]:
    """A warning for each description still starting ``TODO`` and each URL still on the
    scaffold's placeholder host."""
    found: list[Diagnostic] = []
    for path, value in _texts(document.data, ()):
        key = path[-1]
        if key in ("description", "name") and value.lstrip().startswith(TODO_MARK):
            found.append(Diagnostic.warning(
                document.location(path), "scaffold-placeholder",
                f"{_dotted(path)} is still the scaffold's TODO text: say what it is for "
                "(the model reads descriptions to decide what to call)"))
        elif path[:1] == ("options",) and key in URL_KEYS and _host(value) == PLACEHOLDER_HOST:
            found.append(Diagnostic.warning(
                document.location(path), "scaffold-placeholder",
                f"{_dotted(path)} is still the scaffold's placeholder {PLACEHOLDER_HOST}: "
                "put the real endpoint here"))
    return found


def _texts(data: Any, path: tuple[str | int, ...]) -> Iterator[tuple[tuple[str | int, ...], str]]:
    """Every string value under a mapping key, with its path (lists are walked too)."""
    if isinstance(data, dict):
        for key, value in data.items():
            if isinstance(value, str) and isinstance(key, str):
                yield (*path, key), value
            else:
                yield from _texts(value, (*path, key))
    elif isinstance(data, list):
        for index, value in enumerate(data):
            yield from _texts(value, (*path, index))


def _host(url: str) -> str:
    try:
        return (urlsplit(url).hostname or "").lower()
    except ValueError:
        return ""  # an unparseable URL is check_url's to report


def _dotted(path: tuple[str | int, ...]) -> str:
    return ".".join(str(part) for part in path)
