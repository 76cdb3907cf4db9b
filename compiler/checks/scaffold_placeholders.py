"""What ``capc new`` leaves for the author to fill in: a warning while it is still there, so
a fresh scaffold compiles (to try it) but ``--strict`` (CI) refuses to ship it."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any
from urllib.parse import urlsplit

from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.source.documents import SourceDocument

SCAFFOLD_PLACEHOLDER = Code(
    "scaffold-placeholder", "a scaffold's TODO text is still in place", Severity.WARNING)
CODES = (SCAFFOLD_PLACEHOLDER,)

# The host of every URL the scaffold writes: reserved (RFC 2606), so it can never be the
# real endpoint, and used nowhere else, so only a scaffold's own URL is flagged.
PLACEHOLDER_HOST = "todo.example.com"
# The scaffold's descriptions start with it; a description starting with it is unfinished.
TODO_MARK = "TODO"
URL_KEYS = ("url", "server_url")
_TEXT_KEYS = ("description", "name")
_WATCHED_KEYS = frozenset((*_TEXT_KEYS, *URL_KEYS))
# What the YAML loader makes besides dicts and lists (strings are looked at one by one).
_SCALAR_TYPES = frozenset({str, int, float, bool, type(None)})


def check_scaffold_placeholders(document: SourceDocument) -> list[Diagnostic]:
    """A warning for each description still starting ``TODO`` and each URL still on the
    scaffold's placeholder host."""
    found: list[Diagnostic] = []
    if not _may_hold_placeholder(document.data):
        return found
    for path, value in _texts(document.data, ()):
        key = path[-1]
        if key in _TEXT_KEYS and value.lstrip().startswith(TODO_MARK):
            found.append(Diagnostic.warning(
                document.location(path), SCAFFOLD_PLACEHOLDER,
                f"{_dotted(path)} is still the scaffold's TODO text: say what it is for "
                "(the model reads descriptions to decide what to call)"))
        elif path[:1] == ("options",) and key in URL_KEYS and _host(value) == PLACEHOLDER_HOST:
            found.append(Diagnostic.warning(
                document.location(path), SCAFFOLD_PLACEHOLDER,
                f"{_dotted(path)} is still the scaffold's placeholder {PLACEHOLDER_HOST}: "
                "put the real endpoint here"))
    return found


def _may_hold_placeholder(data: Any) -> bool:
    """False when no text of ``data`` can be a finding: a cheap first pass over the decoded
    values (so YAML escapes and folding are already undone), without building paths.

    It tests a superset of what :func:`check_scaffold_placeholders` reports (a URL key
    anywhere, not only under ``options``; any value of a type the loader does not make), so
    skipping the located pass on False loses nothing; that pass runs only for the rare
    document that may hold a finding. Exact type checks: this runs on every document.
    Proven equal by
    tests/checks/test_placeholder_first_pass.py::test_first_pass_never_skips_a_finding.
    """
    pending = [data]
    while pending:
        node = pending.pop()
        kind = type(node)
        if kind is dict:
            for key, value in node.items():
                kind = type(value)
                if kind is str:
                    if key not in _WATCHED_KEYS:  # most texts: one set lookup
                        continue
                    if key in _TEXT_KEYS:
                        if TODO_MARK in value:
                            return True
                    elif _may_name_placeholder_host(value):
                        return True
                elif kind is dict or kind is list:
                    pending.append(value)
                elif kind not in _SCALAR_TYPES:
                    return True
        elif kind is list:
            pending += node
        elif kind not in _SCALAR_TYPES:
            return True
    return False


def _may_name_placeholder_host(url: str) -> bool:
    """True unless ``url``'s host certainly is not the placeholder host, without parsing it.

    ``urlsplit`` drops tabs and line breaks anywhere in a URL and the host is a lowercased
    run of what is left, so the host is the placeholder only if that text contains it.
    """
    text = url.lower()
    if "\t" in text or "\r" in text or "\n" in text:
        text = text.replace("\t", "").replace("\r", "").replace("\n", "")
    return PLACEHOLDER_HOST in text and _host(url) == PLACEHOLDER_HOST


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
