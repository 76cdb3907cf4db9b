"""How the request a tool sends differs from the recorded one, field by field.

Each difference names the case field it is about (``url``, ``headers``, ``body``...) so
the report points at the line to look at, and says what changed in that field: a query
parameter renamed, a header's value, the JSON path of a body value. Values are shown
short; everything here is linear in the sizes compared.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qsl, urlsplit

from compiler.tooltests.cases import Headers, RecordedRequest

SHOWN_CHARACTERS = 80
# Differences reported per compared value: the first ones say what to fix.
MAX_DIFFERENCES = 5


@dataclass(frozen=True, slots=True)
class Difference:
    """One difference: the case field (path under the exchange's ``request``) and what."""

    field: tuple[str, ...]
    message: str


def shown(value: Any) -> str:
    """A value as a report shows it: JSON-quoted, cut to a few dozen characters."""
    text = value if isinstance(value, str) else json.dumps(value, ensure_ascii=False)
    quoted = json.dumps(text, ensure_ascii=False)
    return quoted if len(quoted) <= SHOWN_CHARACTERS else quoted[:SHOWN_CHARACTERS - 4] + '..."'


def request_differences(expected: RecordedRequest, got: RecordedRequest) -> list[Difference]:
    """Every difference between the recorded request and the one the tool sent."""
    found: list[Difference] = []
    if expected.method != got.method:
        found.append(Difference(("method",), f"method: expected {expected.method}, "
                                             f"the tool sent {got.method}"))
    if expected.url != got.url:
        found += _url_differences(expected.url, got.url)
    found += _header_differences(expected.headers, got.headers)
    if expected.body != got.body:
        found += _body_differences(expected, got)
    return found


def _url_differences(expected: str, got: str) -> list[Difference]:
    before, after = urlsplit(expected), urlsplit(got)
    found = []
    if (before.scheme, before.netloc) != (after.scheme, after.netloc):
        found.append(Difference(("url",), f"url origin: expected {shown(before.netloc)}, "
                                          f"the tool sent {shown(after.netloc)}"))
    if before.path != after.path:
        found.append(Difference(("url",), f"url path: expected {shown(before.path)}, "
                                          f"the tool sent {shown(after.path)}"))
    if before.query != after.query:
        found += [Difference(("url",), f"url {message}")
                  for message in _pairs_differences(before.query, after.query, "query parameter")]
    if not found:
        found.append(Difference(("url",), f"url: expected {shown(expected)}, "
                                          f"the tool sent {shown(got)}"))
    return found


def _pairs_differences(expected: str, got: str, what: str) -> list[str]:
    """What changed between two ``a=1&b=2`` texts: names added, removed, values changed."""
    before = _grouped(parse_qsl(expected, keep_blank_values=True))
    after = _grouped(parse_qsl(got, keep_blank_values=True))
    found = []
    for name in before:
        if name not in after:
            found.append(f"{what} {shown(name)} is no longer sent "
                         f"(expected {shown(_joined(before[name]))})")
        elif before[name] != after[name]:
            found.append(f"{what} {shown(name)}: expected {shown(_joined(before[name]))}, "
                         f"the tool sent {shown(_joined(after[name]))}")
    found += [f"{what} {shown(name)} is new: the tool sent {shown(_joined(after[name]))}"
              for name in after if name not in before]
    if not found:
        found.append(f"{what}s are the same, in another order or encoding: expected "
                     f"{shown(expected)}, the tool sent {shown(got)}")
    return found[:MAX_DIFFERENCES]


def _grouped(pairs: list[tuple[str, str]]) -> dict[str, list[str]]:
    grouped: dict[str, list[str]] = {}
    for name, value in pairs:
        grouped.setdefault(name, []).append(value)
    return grouped


def _joined(values: list[str]) -> str:
    return values[0] if len(values) == 1 else ", ".join(values)


def _header_differences(expected: Headers, got: Headers) -> list[Difference]:
    before = {name.lower(): (name, value) for name, value in expected}
    after = {name.lower(): (name, value) for name, value in got}
    found = []
    for key, (name, value) in before.items():
        if key not in after:
            found.append(Difference(("headers", name), f"header {name} is no longer sent "
                                                       f"(expected {shown(value)})"))
        elif after[key][1] != value:
            found.append(Difference(("headers", name),
                                    f"header {name}: expected {shown(value)}, "
                                    f"the tool sent {shown(after[key][1])}"))
    found += [Difference(("headers",), f"header {name} is new: the tool sent {shown(value)}")
              for key, (name, value) in after.items() if key not in before]
    return found


def _content_type(request: RecordedRequest) -> str:
    for name, value in request.headers:
        if name.lower() == "content-type":
            return value.split(";", 1)[0].strip().lower()
    return ""


def _body_differences(expected: RecordedRequest, got: RecordedRequest) -> list[Difference]:
    field = ("body",)
    kind = _content_type(got) or _content_type(expected)
    before = expected.body.decode("utf-8", "replace")
    after = got.body.decode("utf-8", "replace")
    if kind == "application/x-www-form-urlencoded":
        return [Difference(field, f"body {message}")
                for message in _pairs_differences(before, after, "form field")]
    if kind.endswith("json") or kind.endswith("+json"):
        try:
            parsed_before, parsed_after = json.loads(before), json.loads(after)
        except (ValueError, RecursionError):
            pass
        else:
            messages = list(_json_differences(parsed_before, parsed_after, "$"))
            if messages:
                return [Difference(field, f"body {message}")
                        for message in messages[:MAX_DIFFERENCES]]
            return [Difference(field, "body: the same JSON value, spelled differently "
                                      f"(expected {shown(before)}, the tool sent {shown(after)})")]
    return [Difference(field, _first_text_difference(before, after))]


def _json_differences(before: Any, after: Any, path: str) -> Iterator[str]:
    """The JSON paths where two values differ (iterative in spirit: bounded by depth 64)."""
    if path.count(".") + path.count("[") > 64:
        yield f"at {path}: values differ"
        return
    if isinstance(before, dict) and isinstance(after, dict):
        for key in before:
            if key not in after:
                yield f"at {path}.{key}: no longer sent (expected {shown(before[key])})"
            else:
                yield from _json_differences(before[key], after[key], f"{path}.{key}")
        for key in after:
            if key not in before:
                yield f"at {path}.{key}: new, the tool sent {shown(after[key])}"
    elif isinstance(before, list) and isinstance(after, list):
        for index, (left, right) in enumerate(zip(before, after, strict=False)):
            yield from _json_differences(left, right, f"{path}[{index}]")
        if len(before) != len(after):
            yield f"at {path}: expected {len(before)} items, the tool sent {len(after)}"
    elif before != after or type(before) is not type(after):
        yield f"at {path}: expected {shown(before)}, the tool sent {shown(after)}"


def _first_text_difference(before: str, after: str) -> str:
    """Where two texts first part, with a little of each from there."""
    limit = min(len(before), len(after))
    at = next((index for index in range(limit) if before[index] != after[index]), limit)
    line = before.count("\n", 0, at) + 1
    return (f"body differs at line {line} of the expected body: expected "
            f"{shown(before[at:at + 40])}, the tool sent {shown(after[at:at + 40])}")
