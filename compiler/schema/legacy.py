"""Legacy DB rows and the chain of apiVersion migrations.

The reference system stored capabilities as database rows (``name``, ``code``, ``type``,
``options``, ...). Such a document, without ``apiVersion``/``kind``, is still accepted: it
is upgraded by the migration chain below, one function per version step, so a future
``capc/v2`` is one more :class:`Migration` at the end of :data:`MIGRATIONS`.

Decision on comma-separated internal codes: a row ``code: "base,rag"`` becomes
``code: base_rag`` (the parts joined with ``_``) plus ``options.codes: [base, rag]``. Keeping
only the first part would collide with the plain ``base`` row the same table usually holds;
the joined code is unique whenever the parts are, and it reads as what it activates.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping
from typing import Any

import yaml

from compiler import __version__
from compiler.runtime.records import record

LEGACY = "legacy"
"""The pseudo-version of a document in the reference's DB-row shape."""

CURRENT_API_VERSION = "capc/v1"

LEGACY_ROW_KEYS = frozenset({"name", "code", "type"})

# Columns a database export carries that mean nothing in a source tree: identity,
# ownership and audit columns. They are dropped, never an error.
DB_ONLY_COLUMNS: tuple[str, ...] = (
    "id",
    "group_id",
    "user_id",
    "created_at",
    "updated_at",
    "deleted_at",
    "created_by",
    "updated_by",
)

CODE_PATTERN = re.compile(r"^[a-z][a-z0-9_]{0,63}$")
_API_VERSION_PATTERN = re.compile(r"^capc/v(\d+)$")


class LegacyRowError(ValueError):
    """A legacy row that cannot be upgraded; ``key`` names the offending top-level key."""

    def __init__(self, message: str, key: str | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.key = key


@record(frozen=True, slots=True)
class Migration:
    """One version step: ``upgrade`` turns a ``source`` document into a ``target`` one."""

    source: str
    target: str
    upgrade: Callable[[Mapping[str, Any]], dict[str, Any]]


def is_legacy_row(document: Mapping[str, Any]) -> bool:
    """True for the reference's DB-row shape: no apiVersion/kind, but name, code and type."""
    if not isinstance(document, Mapping):
        return False
    if "apiVersion" in document or "kind" in document:
        return False
    return document.keys() >= LEGACY_ROW_KEYS


def split_internal_codes(code: str) -> list[str]:
    """The registry codes of a comma-separated internal code (``"base, rag"`` → two codes)."""
    return [part.strip() for part in code.split(",") if part.strip()]


def _parse_options(options: Any) -> dict[str, Any] | None:
    """The row's ``options`` as a mapping: a JSON string is parsed; null or "" is absent."""
    if options is None or (isinstance(options, str) and not options.strip()):
        return None
    if isinstance(options, str):
        try:
            options = json.loads(options)
        except json.JSONDecodeError as error:
            raise LegacyRowError(
                f"options is a string but not valid JSON ({error.msg} at column {error.colno})",
                "options",
            ) from None
        if options is None:
            return None
    if not isinstance(options, Mapping):
        raise LegacyRowError(
            f"options must be an object, got {type(options).__name__}", "options"
        )
    return dict(options)


def _upgrade_code(
    code: Any, kind: Any, options: dict[str, Any] | None
) -> tuple[str, dict[str, Any] | None]:
    """Rewrite a comma-separated internal code into one code plus ``options.codes``."""
    if not isinstance(code, str) or "," not in code:
        return code, options
    parts = split_internal_codes(code)
    if kind != "internal":
        raise LegacyRowError(
            f"code {code!r} lists several codes, which only type 'internal' supports", "code"
        )
    invalid = [part for part in parts if not CODE_PATTERN.fullmatch(part)]
    if invalid or not parts:
        raise LegacyRowError(
            f"code {code!r} holds invalid registry codes {invalid}; each must match "
            f"{CODE_PATTERN.pattern}",
            "code",
        )
    joined = "_".join(parts)
    if not CODE_PATTERN.fullmatch(joined):
        raise LegacyRowError(
            f"code {code!r} joins to {joined!r}, longer than 64 characters; "
            "give the row a short code and list the parts in options.codes",
            "code",
        )
    upgraded = dict(options or {})
    existing = upgraded.get("codes")
    if existing is not None and list(existing) != parts:
        raise LegacyRowError(
            f"code {code!r} disagrees with options.codes {existing!r}", "code"
        )
    upgraded["codes"] = parts
    return joined, upgraded


def upgrade_legacy_row(document: Mapping[str, Any]) -> dict[str, Any]:
    """The capc/v1 Capability for a legacy row: apiVersion and kind first, then its keys.

    DB-only columns are dropped, a JSON-string ``options`` is parsed, ``options: null`` is
    dropped and a comma-separated internal code is split (see the module docstring).
    """
    if not is_legacy_row(document):
        raise LegacyRowError("not a legacy row: it needs name, code and type, and no apiVersion")
    options = _parse_options(document.get("options"))
    code, options = _upgrade_code(document["code"], document["type"], options)
    upgraded: dict[str, Any] = {"apiVersion": CURRENT_API_VERSION, "kind": "Capability"}
    for key, value in document.items():
        if key in DB_ONLY_COLUMNS:
            continue
        if key == "code":
            upgraded[key] = code
        elif key == "options":
            if options is not None:
                upgraded[key] = options
        else:
            upgraded[key] = value
    if options is not None and "options" not in upgraded:
        upgraded["options"] = options
    return upgraded


class _CapabilityDumper(yaml.SafeDumper):
    """Block YAML that reads like a hand-written file: multi-line text as ``|`` blocks,
    short scalar lists (codes, enums, allowed tools) on one line, never anchors."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _represent_str(dumper: yaml.SafeDumper, value: str) -> yaml.Node:
    style = "|" if "\n" in value.strip("\n") and not value.endswith((" ", "\t")) else None
    return dumper.represent_scalar("tag:yaml.org,2002:str", value, style=style)


def _represent_list(dumper: yaml.SafeDumper, value: list[Any]) -> yaml.Node:
    flat = all(isinstance(item, str | int | float | bool) for item in value)
    short = sum(len(str(item)) + 2 for item in value) <= 60
    flow = flat and short and all("\n" not in str(item) for item in value)
    return dumper.represent_sequence("tag:yaml.org,2002:seq", value, flow_style=flow)


_CapabilityDumper.add_representer(str, _represent_str)
_CapabilityDumper.add_representer(list, _represent_list)


def dump_block_yaml(mapping: Mapping[str, Any], indent: int = 0, width: int = 100) -> str:
    """``mapping`` as block YAML in its own key order, every line indented by ``indent``
    (``width``: where PyYAML folds long text)."""
    dumped = yaml.dump(
        dict(mapping),
        Dumper=_CapabilityDumper,
        sort_keys=False,
        default_flow_style=False,
        allow_unicode=True,
        width=width,
    )
    return "".join(" " * indent + line for line in dumped.splitlines(keepends=True))


MIGRATIONS: tuple[Migration, ...] = (
    Migration(source=LEGACY, target="capc/v1", upgrade=upgrade_legacy_row),
)
"""Every version step in order; each step's target is the next step's source."""


def document_version(document: Mapping[str, Any]) -> str | None:
    """The version a document is written in: its apiVersion, ``legacy``, or None if unknown."""
    if is_legacy_row(document):
        return LEGACY
    version = document.get("apiVersion") if isinstance(document, Mapping) else None
    return version if isinstance(version, str) else None


def migrate_document(document: Mapping[str, Any]) -> tuple[dict[str, Any], tuple[str, ...]]:
    """Apply every step from the document's version to the current one.

    Returns the upgraded document and the versions it passed through (empty when it was
    already current or its version is unknown: the schema reports those).
    """
    version = document_version(document)
    upgraded = dict(document)
    steps: list[str] = []
    for migration in MIGRATIONS:
        if version == migration.source:
            upgraded = migration.upgrade(upgraded)
            steps.append(migration.source)
            version = migration.target
    return upgraded, tuple(steps)


def api_version_number(api_version: str) -> int | None:
    """The N of ``capc/vN``, or None for anything else."""
    match = _API_VERSION_PATTERN.match(api_version)
    return int(match.group(1)) if match else None


def newer_version_message(api_version: Any) -> str | None:
    """A refusal for a document written for a newer capc than this one, else None."""
    if not isinstance(api_version, str):
        return None
    number = api_version_number(api_version)
    current = api_version_number(CURRENT_API_VERSION)
    if number is None or current is None or number <= current:
        return None
    return (
        f"this document needs a capc that supports apiVersion {api_version}; "
        f"capc {__version__} supports up to {CURRENT_API_VERSION}: upgrade capc"
    )
