"""Capability entries parsed on first access, after a cheap check of every entry at load.

Turning an entry into frozen dataclasses (every schema, template and metadata value
deep-copied into read-only containers) is most of a load's cost, and an agent asks for a
few dozen of thousands. So the load only *checks* each entry, with :func:`check_capability`,
which fails exactly when ``manifest_file``'s builder would and with the same exception and
message (tests/perf/test_manifest_fast_path.py mutates entries at random to hold both to
that), and :class:`LazyCapabilities` builds an entry the first time it is read. A manifest
with a malformed entry is still refused by the load, naming the entry.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import Any, TypeVar

CAPABILITY_TYPES = ("internal", "mcp", "api")
BINDING_KINDS = frozenset({"path", "query", "body", "template", "file"})
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024

Entry = TypeVar("Entry")


class LazyCapabilities(Mapping[str, Entry]):
    """A read-only mapping of code -> entry whose entries are built on first access.

    ``raw`` maps each code to what ``build`` turns into its entry (``manifest_file`` keeps
    each entry's JSON as immutable bytes). What is handed out is the builder's frozen
    entry, built once: two reads of a code return the same object.
    """

    __slots__ = ("_build", "_built", "_raw")

    def __init__(self, raw: dict[str, Any], build: Callable[[Any], Entry]) -> None:
        self._raw = raw
        self._build = build
        self._built: dict[str, Entry] = {}

    def __getitem__(self, code: str) -> Entry:
        entry = self._built.get(code)
        if entry is None:
            # setdefault: if two threads build the same entry, both get the first one.
            entry = self._built.setdefault(code, self._build(self._raw[code]))
        return entry

    def __iter__(self) -> Iterator[str]:
        return iter(self._raw)

    def __len__(self) -> int:
        return len(self._raw)

    def __contains__(self, code: object) -> bool:
        return code in self._raw

    def __repr__(self) -> str:
        return f"LazyCapabilities({len(self._raw)} entries, {len(self._built)} built)"


def check_capability(raw: Any) -> tuple[str, str | None]:
    """``(code, tool original name or None)``; raises as the entry builder would.

    Mirrors ``manifest_file._capability`` step by step, in the same order, without the
    deep copies (freezing a JSON value cannot fail).
    """
    if not isinstance(raw, dict):
        raise TypeError("a capability must be an object")
    kind = required_string(raw, "type")
    if kind not in CAPABILITY_TYPES:
        raise ValueError(f"unknown type {kind!r}")
    source = raw.get("source") or {}
    code = required_string(raw, "code")
    required_string(raw, "name")
    str(source.get("path", "?"))
    int(source.get("line", 0))
    if kind == "internal":
        for item in (raw.get("internal") or {}).get("codes") or ():
            str(item)
        return code, None
    if kind == "mcp":
        _check_mcp(raw["mcp"])
        return code, None
    _check_api(raw["api"])
    return code, _check_tool(raw["tool"])


def _check_mcp(raw: dict[str, Any]) -> None:
    str(raw.get("server_label") or "")
    str(raw.get("server_url") or "")
    raw.get("require_approval")
    for key, value in (raw.get("headers") or {}).items():
        str(key), str(value)
    raw.get("allowed_tools")
    raw.get("extra")
    tuple(raw.get("placeholders") or ())


def _check_api(raw: dict[str, Any]) -> None:
    for name, spec in (raw.get("arguments") or {}).items():
        bindings = tuple(spec["bindings"])
        unknown = set(bindings) - BINDING_KINDS
        if unknown or not bindings:
            raise ValueError(f"argument {name!r}: bad bindings {list(bindings)!r}")
        str(spec.get("type", "string"))
        bool(spec.get("multiple", False))
    required_string(raw, "method").upper()
    required_string(raw, "url")
    for key, value in (raw.get("headers") or {}).items():
        str(key), str(value)
    raw.get("body_template")
    float(raw.get("timeout") or DEFAULT_TIMEOUT)
    int(raw.get("max_response_bytes") or DEFAULT_MAX_RESPONSE_BYTES)
    tuple(raw.get("placeholders") or ())


def _check_tool(raw: dict[str, Any]) -> str:
    schema = raw["input_schema"]
    if not isinstance(schema, dict):
        raise TypeError("tool.input_schema must be an object")
    name = required_string(raw, "name")
    original_name = str(raw.get("original_name") or name)
    str(raw.get("description") or "")
    raw.get("output_schema")
    return original_name


def required_string(raw: dict[str, Any], key: str) -> str:
    """``raw[key]``, which must be a non-empty string (KeyError, TypeError otherwise)."""
    value = raw[key]
    if not isinstance(value, str) or not value:
        raise TypeError(f"{key} must be a non-empty string")
    return value
