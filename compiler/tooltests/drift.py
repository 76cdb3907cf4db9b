"""What changed between a recorded reply and a fresh one: the contract, not the values.

A weather service answers 13 degrees today and 12 yesterday: that is no news. A field that
disappeared, changed type or appeared, another status, another content type, another
pagination shape (``Link`` relations, a cursor field), more or fewer requests per call: that
is what a team must see before its agents do. Shapes are JSON paths with list items folded
into ``[]`` (``$.items[].id``), collected in one bounded walk of each body.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from typing import Any

from compiler.tooltests.cases import Headers, RecordedResponse, ToolCase
from compiler.tooltests.differences import Difference, request_differences

# The most paths one body contributes, and the deepest one followed: a hostile or huge
# reply costs at most this much to compare.
MAX_PATHS = 5_000
MAX_DEPTH = 64
_LINK_RELATION = re.compile(r'rel="?([^";,]+)"?', re.IGNORECASE)


def _type_name(value: Any) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "boolean"
    if isinstance(value, int | float):
        return "number"
    if isinstance(value, str):
        return "string"
    return "array" if isinstance(value, list) else "object"


def json_shape(value: Any) -> dict[str, str]:
    """JSON path -> type of every value, list items folded into ``[]`` (bounded walk).

    An empty list contributes its own path only, so a page with no items does not read
    as every item field removed.
    """
    shape: dict[str, str] = {}
    stack: list[tuple[str, Any, int]] = [("$", value, 0)]
    while stack and len(shape) < MAX_PATHS:
        path, item, depth = stack.pop()
        kind = _type_name(item)
        previous = shape.get(path)
        if previous is None or previous == "null":
            shape[path] = kind
        elif kind != "null" and kind not in previous.split("|"):
            shape[path] = f"{previous}|{kind}"  # items of one list that differ in type
        if depth >= MAX_DEPTH:
            continue
        if isinstance(item, dict):
            stack += [(f"{path}.{key}", child, depth + 1) for key, child in item.items()]
        elif isinstance(item, list):
            stack += [(f"{path}[]", child, depth + 1) for child in item[:100]]
    return shape


def _media_type(headers: Headers) -> str:
    for name, value in headers:
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip().lower()
    return ""


def _link_relations(headers: Headers) -> frozenset[str]:
    return frozenset(relation.lower() for name, value in headers if name.lower() == "link"
                     for relation in _LINK_RELATION.findall(value))


def _parsed(response: RecordedResponse) -> Any:
    try:
        return json.loads(response.body)
    except (ValueError, RecursionError):
        return _NOT_JSON


_NOT_JSON = object()


def response_drift(before: RecordedResponse, after: RecordedResponse) -> Iterator[Difference]:
    """How the fresh reply differs in contract from the recorded one."""
    if before.status != after.status:
        yield Difference(("status",), f"status {before.status} is now {after.status}")
    if _media_type(before.headers) != _media_type(after.headers):
        yield Difference(("headers",), f"content type {_media_type(before.headers) or '(none)'}"
                                       f" is now {_media_type(after.headers) or '(none)'}")
    old_links, new_links = _link_relations(before.headers), _link_relations(after.headers)
    if old_links != new_links:
        yield Difference(("headers",), "pagination: Link relations "
                                       f"{sorted(old_links) or '(none)'} are now "
                                       f"{sorted(new_links) or '(none)'}")
    old, new = _parsed(before), _parsed(after)
    if (old is _NOT_JSON) != (new is _NOT_JSON):
        said = "is no longer JSON" if new is _NOT_JSON else "is now JSON"
        yield Difference(("body",), f"the body {said}")
        return
    if old is _NOT_JSON:
        return
    yield from _shape_drift(json_shape(old), json_shape(new))


def _shape_drift(before: dict[str, str], after: dict[str, str]) -> Iterator[Difference]:
    removed = [path for path in before if path not in after and _parent_in(path, after)]
    added = [path for path in after if path not in before and _parent_in(path, before)]
    retyped = [path for path in before if path in after and before[path] != after[path]
               and "null" not in (before[path], after[path])]
    nulled = [path for path in before if path in after and before[path] != after[path]
              and after[path] == "null"]
    for path in sorted(removed)[:10]:
        yield Difference(("body",), f"field {path} ({before[path]}) was removed")
    for path in sorted(added)[:10]:
        yield Difference(("body",), f"field {path} ({after[path]}) was added")
    for path in sorted(retyped)[:10]:
        yield Difference(("body",), f"field {path} changed type: {before[path]} is now "
                                    f"{after[path]}")
    for path in sorted(nulled)[:10]:
        yield Difference(("body",), f"field {path} ({before[path]}) is now null")


def _parent_in(path: str, shape: dict[str, str]) -> bool:
    """True when the field's parent exists in ``shape`` as an object or non-empty list, so
    a missing child is a real change and not the echo of an empty list or a null parent."""
    parent = path[: max(path.rfind("."), path.rfind("[]"))] if path != "$" else ""
    if not parent:
        return True
    return parent in shape and shape[parent] not in ("null", "array")


def case_drift(recorded: ToolCase, fresh: ToolCase) -> list[tuple[tuple[str | int, ...], str]]:
    """(case field, message) for every contract change from ``recorded`` to ``fresh``."""
    found: list[tuple[tuple[str | int, ...], str]] = []
    if len(recorded.exchanges) != len(fresh.exchanges):
        found.append((("exchanges",), f"the call now makes {len(fresh.exchanges)} request(s); "
                                      f"it made {len(recorded.exchanges)} (a redirect or a "
                                      "retry appeared or went away)"))
    for index, (old, new) in enumerate(zip(recorded.exchanges, fresh.exchanges, strict=False)):
        for difference in request_differences(old.request, new.request):
            found.append((("exchanges", index, "request", *difference.field),
                          f"request {index + 1}: {difference.message}"))
        for difference in response_drift(old.response, new.response):
            found.append((("exchanges", index, "response", *difference.field),
                          f"reply {index + 1}: {difference.message}"))
    return found
