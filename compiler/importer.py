"""``capc import``: a JSON export of the reference's capabilities table → capc/v1 YAML files.

One file per row, named after the capability code, commented with where it came from.
Rows are upgraded by the same function the compiler uses for legacy documents
(:func:`compiler.legacy.upgrade_legacy_row`), so an imported file and a legacy row in the
tree mean the same thing. Nothing is written unless every row imports cleanly.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compiler.diagnostics import Diagnostic, Location
from compiler.legacy import (
    DB_ONLY_COLUMNS,
    LegacyRowError,
    dump_block_yaml,
    upgrade_legacy_row,
)

# The columns a capc/v1 Capability keeps, in the order an imported file lists them.
CAPABILITY_KEYS: tuple[str, ...] = (
    "code",
    "name",
    "description",
    "type",
    "options",
    "is_default",
    "ordering",
    "access_type",
    "when",
)
_PLACEHOLDER = re.compile(r"\$\{([^}]*)\}")


@dataclass(frozen=True, slots=True)
class ImportedFile:
    """One capability file ``capc import`` would write: its name and full text."""

    filename: str
    text: str


@dataclass(frozen=True, slots=True)
class ImportResult:
    """The files a rows export turns into, and what was found on the way."""

    files: tuple[ImportedFile, ...]
    diagnostics: tuple[Diagnostic, ...]


def _row_positions(text: str) -> list[tuple[int, int]]:
    """The 1-based line and column of each row in the export, for locating diagnostics."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return []
    if isinstance(node, yaml.MappingNode):
        node = next((v for k, v in node.value if k.value == "capabilities"), None)
    if not isinstance(node, yaml.SequenceNode):
        return []
    return [(item.start_mark.line + 1, item.start_mark.column + 1) for item in node.value]


def parse_rows(text: str) -> list[Any]:
    """The rows of an export: a JSON list, or an object holding it under ``capabilities``."""
    data = json.loads(text)
    if isinstance(data, Mapping) and isinstance(data.get("capabilities"), list):
        data = data["capabilities"]
    if not isinstance(data, list):
        raise ValueError("expected a JSON list of capability rows")
    return data


def _normalise_row(row: Mapping[str, Any]) -> dict[str, Any]:
    """Database spellings of capc values: 0/1 booleans, numeric strings, null columns."""
    normalised: dict[str, Any] = {}
    for key, value in row.items():
        if value is None and key not in ("options",):
            continue
        if key == "is_default" and value in (0, 1) and not isinstance(value, bool):
            value = bool(value)
        if key == "ordering" and isinstance(value, str) and value.strip().lstrip("-").isdigit():
            value = int(value)
        normalised[key] = value
    return normalised


def _row_label(index: int, row: Any) -> str:
    """How diagnostics name a row: its position, and its database id when it has one."""
    identity = f" (id {row['id']})" if isinstance(row, Mapping) and "id" in row else ""
    return f"row {index + 1}{identity}"


def _header(row: Mapping[str, Any], export_name: str, dropped: Sequence[str]) -> list[str]:
    identity = f" (row id {row['id']})" if "id" in row else ""
    lines = [f"# Imported by `capc import` from {export_name}{identity}."]
    if dropped:
        lines.append(f"# Database-only columns dropped: {', '.join(dropped)}.")
    code = row.get("code")
    if isinstance(code, str) and "," in code:
        lines.append(f"# The row's code {code!r} lists several registry codes: they are in")
        lines.append("# options.codes, and the code joins them with '_'.")
    return lines


def _settings_comment(document: Mapping[str, Any]) -> list[str]:
    names = sorted(set(_PLACEHOLDER.findall(json.dumps(document.get("options") or {}))))
    if not names:
        return []
    return [f"# Needs user settings: {', '.join(names)}."]


def render_capability(document: Mapping[str, Any], comments: Sequence[str]) -> str:
    """A capc/v1 Capability as commented block YAML in the canonical key order."""
    ordered: dict[str, Any] = {"apiVersion": document["apiVersion"], "kind": document["kind"]}
    for key in CAPABILITY_KEYS:
        if key in document:
            ordered[key] = document[key]
    body = dump_block_yaml(ordered)
    return "".join(line + "\n" for line in comments) + body


def schema_reference(out_dir: str, schema: str = "schemas/capability-v1.json") -> str | None:
    """The ``$schema`` path an editor needs from ``out_dir``, when the schema is in this tree."""
    if not os.path.isfile(schema):
        return None
    return Path(os.path.relpath(schema, out_dir)).as_posix()


def import_rows(text: str, export_path: str, schema_ref: str | None = None) -> ImportResult:
    """Turn the text of a rows export into capability files; pure, writes nothing.

    With ``schema_ref``, each file starts with a ``yaml-language-server`` line so editors
    complete and validate it against the Capability schema.
    """
    try:
        rows = parse_rows(text)
    except (json.JSONDecodeError, ValueError) as error:
        line = getattr(error, "lineno", 1)
        column = getattr(error, "colno", 1)
        message = f"not a capabilities export: {getattr(error, 'msg', error)}"
        location = Location(export_path, line, column)
        return ImportResult((), (Diagnostic.error(location, "import", message),))
    positions = _row_positions(text)
    export_name = os.path.basename(export_path)
    files: list[ImportedFile] = []
    diagnostics: list[Diagnostic] = []
    owners: dict[str, str] = {}
    for index, row in enumerate(rows):
        location = Location(export_path, *(positions[index] if index < len(positions) else (1, 1)))
        label = _row_label(index, row)
        if not isinstance(row, Mapping):
            diagnostics.append(Diagnostic.error(location, "import", f"{label} is not an object"))
            continue
        missing = [key for key in ("name", "code", "type") if row.get(key) in (None, "")]
        if missing:
            message = f"{label} lacks {', '.join(missing)}, which every capability needs"
            diagnostics.append(Diagnostic.error(location, "import", message))
            continue
        normalised = _normalise_row(row)
        dropped = [key for key in row if key in DB_ONLY_COLUMNS]
        unknown = [k for k in normalised if k not in CAPABILITY_KEYS and k not in DB_ONLY_COLUMNS]
        if unknown:
            message = f"{label}: dropped columns capc does not know: {', '.join(sorted(unknown))}"
            diagnostics.append(Diagnostic.warning(location, "import-unknown-column", message))
        kept = {key: value for key, value in normalised.items() if key not in unknown}
        try:
            document = upgrade_legacy_row(kept)
        except LegacyRowError as error:
            message = f"{label}: {error.message}"
            diagnostics.append(Diagnostic.error(location, "legacy-row", message))
            continue
        code = str(document["code"])
        if code in owners:
            message = f"{label}: code {code!r} is already used by {owners[code]}; codes are unique"
            diagnostics.append(Diagnostic.error(location, "import-duplicate-code", message))
            continue
        owners[code] = label
        comments = _header(row, export_name, dropped) + _settings_comment(document)
        if schema_ref:
            comments.insert(0, f"# yaml-language-server: $schema={schema_ref}")
        files.append(ImportedFile(f"{code}.yaml", render_capability(document, comments)))
    return ImportResult(tuple(files), tuple(diagnostics))


def write_imported(
    result: ImportResult, out_dir: str, *, force: bool = False
) -> tuple[list[str], list[Diagnostic]]:
    """Write the files into ``out_dir``; refuse to overwrite any unless ``force``."""
    directory = Path(out_dir)
    targets = [directory / imported.filename for imported in result.files]
    existing = [target for target in targets if target.exists()]
    if existing and not force:
        return [], [
            Diagnostic.error(
                Location(target.as_posix()), "import-exists", "exists; pass --force to overwrite"
            )
            for target in existing
        ]
    written: list[str] = []
    try:
        directory.mkdir(parents=True, exist_ok=True)
        for target, imported in zip(targets, result.files, strict=True):
            target.write_text(imported.text, encoding="utf-8")
            written.append(target.as_posix())
    except OSError as error:
        return written, [Diagnostic.error(Location(out_dir), "io", f"cannot write: {error}")]
    return written, []

