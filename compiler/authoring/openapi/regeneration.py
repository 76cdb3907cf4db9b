"""``--check``: what regenerating would change, per operation, security-relevant first.

The committed files and the regenerated ones are compared as data (comments and
provenance apart), field path by field path. Each change is named by a kind and ranked by
the one ranking ``capc diff`` uses too (:func:`compiler.review.ranking.rank_change`), and
the URL, header and setting comparisons are that module's: plain http, a new host, a new
placeholder or credential header, a new operation, a new argument or a removed or widened
restriction (``enum``, ``max_*``, ``maximum``, ``pattern``, an open map) is
security-relevant; a removed argument or another URL on the same host is a contract
change; descriptions and names are other changes.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compiler.authoring.openapi.existing import GeneratedFiles
from compiler.authoring.openapi.sinks import INTERPOLATED_OPTIONS
from compiler.review.ranking import (
    Rank,
    endpoint_changes,
    header_changes,
    rank_change,
    scheme_host,
    setting_changes,
    worst,
)

_WIDENING_LIMITS = ("max_length", "max_items", "maximum")
_NARROWING_LIMITS = ("min_length", "min_items", "minimum")
_WIDENED = "input-schema-widened"


@dataclass(frozen=True, slots=True)
class Change:
    """One change of one operation's file, by kind (:data:`CHANGE_RANKS` names them)."""

    code: str
    what: str
    kind: str

    @property
    def rank(self) -> Rank:
        """How much the change matters: the ranking ``capc diff`` uses."""
        return rank_change(self.kind)

    @property
    def security(self) -> bool:
        """Whether the change is security-relevant."""
        return self.rank is Rank.SECURITY


@dataclass(frozen=True, slots=True)
class DriftReport:
    """Whether any file would change, and the lines that say how."""

    changed: bool
    lines: tuple[str, ...]
    changes: tuple[Change, ...] = ()
    provenance_only: tuple[str, ...] = ()

    @property
    def rank(self) -> Rank | None:
        """The most serious change's rank (None: nothing but provenance changed)."""
        return worst(change.kind for change in self.changes)

    def as_json(self) -> str:
        """``--format json``: every change as an object, security-relevant first."""
        return json.dumps({"changed": self.changed,
                           "changes": [{"code": c.code, "change": c.what,
                                        "security": c.security, "kind": c.kind,
                                        "rank": c.rank.value} for c in self.changes],
                           "provenance_only": list(self.provenance_only)}, indent=2)


def drift_report(existing: GeneratedFiles, files: Mapping[str, bytes], out_dir: str,
                 allow_private: bool = False) -> DriftReport:
    """Compare the committed generated files of ``out_dir`` with ``files`` (name → the
    regenerated file's bytes)."""
    del allow_private  # the regenerated files were checked when they were generated
    old = {Path(path).name: text for path, text in existing.texts.items()}
    old_data = {name: _data(text) for name, text in old.items()}
    known_hosts = {endpoint[1] for data in old_data.values()
                   if (endpoint := scheme_host(_options(data).get("url")))}
    changes: list[Change] = []
    provenance_only: list[str] = []
    for name in sorted(set(old) | set(files)):
        code = name.removesuffix(".yaml")
        if name not in old:
            changes.append(Change(code, "new operation (not in the committed files)",
                                  "new-operation"))
            new_url = _options(_data(files[name])).get("url")
            changes += [Change(code, what, kind) for kind, what in
                        endpoint_changes(None, new_url, known_hosts) if kind != "url-changed"]
        elif name not in files:
            changes.append(Change(code, "operation gone from the document (or no longer "
                                        "selected): its file would be removed",
                                  "operation-removed"))
        elif old[name] != (new := files[name].decode("utf-8")):
            found = compare_capabilities(code, old_data[name], _data(new), known_hosts)
            if found:
                changes += found
            else:
                provenance_only.append(code)
    ranks = list(Rank)
    changes.sort(key=lambda c: (ranks.index(c.rank), c.code, c.what))
    lines = [f"{'SECURITY ' if c.security else ''}{c.code}: {c.what}" for c in changes]
    if provenance_only:
        more = " ..." if len(provenance_only) > 10 else ""
        lines.append(f"{len(provenance_only)} files differ only in their provenance or "
                     f"comments (the document changed elsewhere): "
                     f"{', '.join(provenance_only[:10])}{more}")
    lines += _older_importer(old_data)
    changed = bool(changes or provenance_only)
    summary = (f"{out_dir}: {len(changes)} changes ({sum(c.security for c in changes)} "
               "security-relevant); re-run without --check to regenerate"
               if changed else f"{out_dir}: up to date with the document")
    return DriftReport(changed, (*lines, summary), tuple(changes), tuple(provenance_only))


def _older_importer(old_data: Mapping[str, Mapping[str, Any]]) -> list[str]:
    """A line naming the importer versions of committed files another version generated
    (their differences come from capc, not from the document)."""
    from compiler.authoring.openapi.generate import IMPORTER_VERSION

    versions = sorted({str(origin.get("importer")) for data in old_data.values()
                       if isinstance(origin := (data.get("origin") or {}).get("openapi"),
                                     Mapping) and origin.get("importer") != IMPORTER_VERSION})
    if not versions:
        return []
    return [f"generated by {', '.join(versions)[:80]}, not by this capc's importer "
            f"({IMPORTER_VERSION}): some differences come from the importer, not from "
            "the document"]


def _data(text: str | bytes) -> dict[str, Any]:
    try:
        loaded = yaml.safe_load(text)
    except yaml.YAMLError:
        return {}
    return loaded if isinstance(loaded, dict) else {}


def _options(data: Mapping[str, Any]) -> Mapping[str, Any]:
    options = data.get("options")
    return options if isinstance(options, Mapping) else {}


def compare_capabilities(code: str, old: Mapping[str, Any], new: Mapping[str, Any],
                         known_hosts: frozenset[str] | set[str] = frozenset()) -> list[Change]:
    """The changes between two versions of one generated capability (origin ignored);
    ``known_hosts``: the hosts the committed files talk to."""
    old_options, new_options = _options(old), _options(new)
    found = list(endpoint_changes(old_options.get("url"), new_options.get("url"),
                                  known_hosts))
    if old_options.get("method") != new_options.get("method"):
        found.append(("method-changed", f"method: {new_options.get('method')} (was "
                                        f"{old_options.get('method')})"))
    found += header_changes(old_options.get("headers"), new_options.get("headers"))
    found += setting_changes({part: old_options.get(part) for part in INTERPOLATED_OPTIONS},
                             {part: new_options.get(part) for part in INTERPOLATED_OPTIONS})
    old_files, new_files = old_options.get("files") or {}, new_options.get("files") or {}
    if old_files != new_files:
        kind = "new-file-upload" if set(new_files) - set(old_files) else "argument-changed"
        found.append((kind, f"files changed: {sorted(new_files)} (was {sorted(old_files)})"))
    changes = [Change(code, what, kind) for kind, what in found]
    for table in ("path_params", "params", "body", "body_params"):
        changes += _arguments(code, table, old_options.get(table) or {},
                              new_options.get(table) or {})
    for key in ("description", "name"):
        if old_options.get(key) != new_options.get(key):
            changes.append(Change(code, f"tool {key} changed", "description-changed"))
    return changes


def _arguments(code: str, where: str, old: Mapping[str, Any], new: Mapping[str, Any]
               ) -> list[Change]:
    changes: list[Change] = []
    for name in sorted(set(old) | set(new)):
        path = f"{where}.{name}"
        if name not in old:
            required = isinstance(new[name], Mapping) and new[name].get("required") is True
            changes.append(Change(code, f"new {'required ' if required else ''}argument "
                                        f"{path}", _WIDENED))
        elif name not in new:
            changes.append(Change(code, f"argument {path} removed", "argument-removed"))
        elif isinstance(old[name], Mapping) and isinstance(new[name], Mapping):
            changes += _entry(code, path, old[name], new[name])
    return changes


def _entry(code: str, path: str, old: Mapping[str, Any], new: Mapping[str, Any]
           ) -> list[Change]:
    changes: list[Change] = []
    if old.get("required") is not True and new.get("required") is True:
        changes.append(Change(code, f"{path} is now required", "argument-changed"))
    if "enum" in old and ("enum" not in new or not set(map(repr, new["enum"])) <=
                          set(map(repr, old["enum"]))):
        changes.append(Change(code, f"{path}: enum restriction removed or widened", _WIDENED))
    for limit in _WIDENING_LIMITS:
        if limit in old and (limit not in new or _gt(new[limit], old[limit])):
            changes.append(Change(code, f"{path}: {limit} removed or raised", _WIDENED))
    for limit in _NARROWING_LIMITS:
        if limit in old and (limit not in new or _gt(old[limit], new[limit])):
            changes.append(Change(code, f"{path}: {limit} removed or lowered", _WIDENED))
    if "pattern" in old and old.get("pattern") != new.get("pattern"):
        changes.append(Change(code, f"{path}: pattern removed or changed", _WIDENED))
    if "additional_properties" in new and "additional_properties" not in old:
        changes.append(Change(code, f"{path}: now an open map", _WIDENED))
    if old.get("type") != new.get("type"):
        changes.append(Change(code, f"{path}: type {new.get('type')} (was {old.get('type')})",
                              _WIDENED))
    for child in ("items", "additional_properties"):
        if isinstance(old.get(child), Mapping) and isinstance(new.get(child), Mapping):
            changes += _entry(code, f"{path}{'[]' if child == 'items' else '{}'}",
                              old[child], new[child])
    changes += _arguments(code, path, old.get("properties") or {}, new.get("properties") or {})
    quiet = {k for k in set(old) | set(new) if old.get(k) != new.get(k)} - {
        "required", "enum", "pattern", "additional_properties", "type", "items",
        "properties", *_WIDENING_LIMITS, *_NARROWING_LIMITS}
    if quiet and not changes:
        kind = "description-changed" if quiet <= {"description"} else "argument-changed"
        changes.append(Change(code, f"{path}: {', '.join(sorted(quiet))} changed", kind))
    return changes


def _gt(left: Any, right: Any) -> bool:
    try:
        return bool(left > right)
    except TypeError:
        return True
