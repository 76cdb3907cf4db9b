"""``--check``: what regenerating would change, per operation, security-relevant first.

The committed files and the regenerated ones are compared as data (comments and
provenance apart), field path by field path. A change is security-relevant when it lets
the model do more or sends data elsewhere, as ``capc diff`` counts it: a new host or
method, a new operation, a new required argument, a removed or widened restriction
(``enum``, ``max_*``, ``maximum``, ``pattern``), an open map where there was none, new
headers or file uploads.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import yaml

from compiler.authoring.openapi.existing import GeneratedFiles

_WIDENING_LIMITS = ("max_length", "max_items", "maximum")
_NARROWING_LIMITS = ("min_length", "min_items", "minimum")


@dataclass(frozen=True, slots=True)
class Change:
    """One change of one operation's file."""

    code: str
    what: str
    security: bool


@dataclass(frozen=True, slots=True)
class DriftReport:
    """Whether any file would change, and the lines that say how."""

    changed: bool
    lines: tuple[str, ...]
    changes: tuple[Change, ...] = ()
    provenance_only: tuple[str, ...] = ()

    def as_json(self) -> str:
        """``--format json``: every change as an object, security-relevant first."""
        return json.dumps({"changed": self.changed,
                           "changes": [{"code": c.code, "change": c.what,
                                        "security": c.security} for c in self.changes],
                           "provenance_only": list(self.provenance_only)}, indent=2)


def drift_report(existing: GeneratedFiles, files: Mapping[str, str], out_dir: str,
                 allow_private: bool = False) -> DriftReport:
    """Compare the committed generated files of ``out_dir`` with ``files`` (name → text)."""
    del allow_private  # the regenerated files were checked when they were generated
    old = {Path(path).name: text for path, text in existing.texts.items()}
    changes: list[Change] = []
    provenance_only: list[str] = []
    for name in sorted(set(old) | set(files)):
        code = name.removesuffix(".yaml")
        if name not in old:
            changes.append(Change(code, "new operation (not in the committed files)", True))
        elif name not in files:
            changes.append(Change(code, "operation gone from the document (or no longer "
                                        "selected): its file would be removed", False))
        elif old[name] != files[name]:
            found = compare_capabilities(code, _data(old[name]), _data(files[name]))
            if found:
                changes += found
            else:
                provenance_only.append(code)
    changes.sort(key=lambda c: (not c.security, c.code, c.what))
    lines = [f"{'SECURITY ' if c.security else ''}{c.code}: {c.what}" for c in changes]
    if provenance_only:
        more = " ..." if len(provenance_only) > 10 else ""
        lines.append(f"{len(provenance_only)} files differ only in their provenance or "
                     f"comments (the document changed elsewhere): "
                     f"{', '.join(provenance_only[:10])}{more}")
    changed = bool(changes or provenance_only)
    summary = (f"{out_dir}: {len(changes)} changes ({sum(c.security for c in changes)} "
               "security-relevant); re-run without --check to regenerate"
               if changed else f"{out_dir}: up to date with the document")
    return DriftReport(changed, (*lines, summary), tuple(changes), tuple(provenance_only))


def _data(text: str) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def compare_capabilities(code: str, old: Mapping[str, Any], new: Mapping[str, Any]
                         ) -> list[Change]:
    """The changes between two versions of one generated capability (origin ignored)."""
    changes: list[Change] = []
    old_options, new_options = old.get("options") or {}, new.get("options") or {}
    old_url, new_url = str(old_options.get("url", "")), str(new_options.get("url", ""))
    if urlsplit(old_url).netloc != urlsplit(new_url).netloc:
        changes.append(Change(code, f"new host: {urlsplit(new_url).netloc} (was "
                                    f"{urlsplit(old_url).netloc})", True))
    elif old_url != new_url:
        changes.append(Change(code, f"url: {new_url} (was {old_url})", False))
    if old_options.get("method") != new_options.get("method"):
        changes.append(Change(code, f"method: {new_options.get('method')} (was "
                                    f"{old_options.get('method')})", True))
    for key in ("headers", "files"):
        if old_options.get(key) != new_options.get(key):
            changes.append(Change(code, f"{key} changed: {sorted(new_options.get(key) or {})} "
                                        f"(was {sorted(old_options.get(key) or {})})", True))
    for table in ("path_params", "params", "body", "body_params"):
        changes += _arguments(code, table, old_options.get(table) or {},
                              new_options.get(table) or {})
    for key in ("description", "name"):
        if old_options.get(key) != new_options.get(key):
            changes.append(Change(code, f"tool {key} changed", False))
    return changes


def _arguments(code: str, where: str, old: Mapping[str, Any], new: Mapping[str, Any]
               ) -> list[Change]:
    changes: list[Change] = []
    for name in sorted(set(old) | set(new)):
        path = f"{where}.{name}"
        if name not in old:
            required = isinstance(new[name], Mapping) and new[name].get("required") is True
            changes.append(Change(code, f"new {'required ' if required else ''}argument "
                                        f"{path}", required))
        elif name not in new:
            changes.append(Change(code, f"argument {path} removed", False))
        elif isinstance(old[name], Mapping) and isinstance(new[name], Mapping):
            changes += _entry(code, path, old[name], new[name])
    return changes


def _entry(code: str, path: str, old: Mapping[str, Any], new: Mapping[str, Any]
           ) -> list[Change]:
    changes: list[Change] = []
    if old.get("required") is not True and new.get("required") is True:
        changes.append(Change(code, f"{path} is now required", True))
    if "enum" in old and ("enum" not in new or not set(map(repr, new["enum"])) <=
                          set(map(repr, old["enum"]))):
        changes.append(Change(code, f"{path}: enum restriction removed or widened", True))
    for limit in _WIDENING_LIMITS:
        if limit in old and (limit not in new or _gt(new[limit], old[limit])):
            changes.append(Change(code, f"{path}: {limit} removed or raised", True))
    for limit in _NARROWING_LIMITS:
        if limit in old and (limit not in new or _gt(old[limit], new[limit])):
            changes.append(Change(code, f"{path}: {limit} removed or lowered", True))
    if "pattern" in old and old.get("pattern") != new.get("pattern"):
        changes.append(Change(code, f"{path}: pattern removed or changed", True))
    if "additional_properties" in new and "additional_properties" not in old:
        changes.append(Change(code, f"{path}: now an open map", True))
    if old.get("type") != new.get("type"):
        changes.append(Change(code, f"{path}: type {new.get('type')} (was {old.get('type')})",
                              True))
    for child in ("items", "additional_properties"):
        if isinstance(old.get(child), Mapping) and isinstance(new.get(child), Mapping):
            changes += _entry(code, f"{path}{'[]' if child == 'items' else '{}'}",
                              old[child], new[child])
    changes += _arguments(code, path, old.get("properties") or {}, new.get("properties") or {})
    quiet = {k for k in set(old) | set(new) if old.get(k) != new.get(k)} - {
        "required", "enum", "pattern", "additional_properties", "type", "items",
        "properties", *_WIDENING_LIMITS, *_NARROWING_LIMITS}
    if quiet and not changes:
        changes.append(Change(code, f"{path}: {', '.join(sorted(quiet))} changed", False))
    return changes


def _gt(left: Any, right: Any) -> bool:
    try:
        return bool(left > right)
    except TypeError:
        return True
