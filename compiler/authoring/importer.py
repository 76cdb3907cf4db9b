"""``capc import``: a JSON export of the reference's capabilities table → capc/v1 YAML files.

One file per row, named after the capability code and put in the folder of its type
(`api/`, `internal/`, `mcp/`, as the shipped tree), commented with where it came from.
Rows are upgraded by the same function the compiler uses for legacy documents
(:func:`compiler.schema.legacy.upgrade_legacy_row`), so an imported file and a legacy row in the
tree mean the same thing. Every generated file is compiled by the real pipeline before
anything is written, and nothing is written unless every row imports cleanly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import yaml

from compiler.authoring.import_secrets import LiftedSecret, lift_secrets
from compiler.authoring.row_rendering import (
    CAPABILITY_KEYS,
    LINE_LENGTH,
    file_header,
    render_capability,
    settings_comment,
)
from compiler.authoring.row_selection import IndexedRow, without_soft_delete_columns
from compiler.compile_result import CompileOptions
from compiler.diagnostics import Code, Diagnostic, Location, Severity
from compiler.schema.kinds import LEGACY_ROW
from compiler.schema.legacy import (
    CODE_PATTERN,
    DB_ONLY_COLUMNS,
    LegacyRowError,
    upgrade_legacy_row,
)
from compiler.source.documents import IO

IMPORT = Code("import", "a row cannot be imported")
IMPORT_DUPLICATE_CODE = Code("import-duplicate-code", "two imported rows have the same code")
IMPORT_EXISTS = Code("import-exists", "an import would overwrite an existing file")
IMPORT_INVALID_CODE = Code(
    "import-invalid-code", "an imported row's code is not a valid capability code")
IMPORT_PATH = Code("import-path", "an import would write outside its output folder")
IMPORT_UNKNOWN_COLUMN = Code(
    "import-unknown-column", "an imported row has a column capc does not read", Severity.WARNING)
CODES = (
    IMPORT, IMPORT_DUPLICATE_CODE, IMPORT_EXISTS, IMPORT_INVALID_CODE, IMPORT_PATH,
    IMPORT_UNKNOWN_COLUMN,
)


@dataclass(frozen=True, slots=True)
class ImportedFile:
    """One capability file ``capc import`` would write: its name, full text, and the
    folder of the output it goes in (``api``, ``internal``, ``mcp``: the shipped layout)."""

    filename: str
    text: str
    folder: str = ""

    @property
    def relative_path(self) -> str:
        """Where the file goes, relative to the output folder."""
        return f"{self.folder}/{self.filename}" if self.folder else self.filename


@dataclass(frozen=True, slots=True)
class ImportResult:
    """The files a rows export turns into, and what was found on the way.

    ``secrets``: the settings that replace literal credentials of the rows; ``skipped``:
    under ``skip_invalid``, why each invalid row was left out (errors, located at it).
    """

    files: tuple[ImportedFile, ...]
    diagnostics: tuple[Diagnostic, ...]
    secrets: tuple[LiftedSecret, ...] = ()
    skipped: tuple[Diagnostic, ...] = ()


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


def row_label(index: int, row: Any) -> str:
    """How diagnostics name a row: its position, and its database id when it has one."""
    identity = f" (id {row['id']})" if isinstance(row, Mapping) and "id" in row else ""
    return f"row {index + 1}{identity}"


def import_rows(text: str, export_path: str, schema_ref: str | None = None,
                options: CompileOptions | None = None) -> ImportResult:
    """Turn the text of a rows export into capability files; pure, writes nothing.

    With ``schema_ref`` (relative to the output folder), each file starts with a
    ``yaml-language-server`` line so editors complete and validate it against the
    Capability schema. Every file is compiled (with
    ``options``) before it is returned; what the compiler rejects comes back as errors
    located at its row.
    """
    rows, problem = read_export(text, export_path)
    if problem is not None:
        return ImportResult((), (problem,))
    indexed = [IndexedRow(index, row) for index, row in enumerate(rows)]
    return import_selected(indexed, row_positions(text), export_path, schema_ref, options)


def read_export(text: str, export_path: str) -> tuple[list[Any], Diagnostic | None]:
    """The rows of an export, or the located reason it is not one."""
    try:
        return parse_rows(text), None
    except (json.JSONDecodeError, ValueError) as error:
        line = getattr(error, "lineno", 1)
        column = getattr(error, "colno", 1)
        message = f"not a capabilities export: {getattr(error, 'msg', error)}"
        return [], Diagnostic.error(Location(export_path, line, column), IMPORT, message)
    except RecursionError:
        return [], Diagnostic.error(Location(export_path), IMPORT, _TOO_DEEP)


def row_positions(text: str) -> list[tuple[int, int]]:
    """Each row's line and column in the export text (empty when it cannot be told)."""
    try:
        return _row_positions(text)
    except RecursionError:  # the JSON parser coped, PyYAML's composer did not
        return []


def import_selected(rows: Sequence[IndexedRow], positions: Sequence[tuple[int, int]],
                    export_path: str, schema_ref: str | None = None,
                    options: CompileOptions | None = None, *, skip_invalid: bool = False,
                    ) -> ImportResult:
    """:func:`import_rows` for chosen rows of an export (one group, no deleted rows).

    With ``skip_invalid``, a row with errors is left out (its errors go to ``skipped``)
    and the others are compiled again without it; otherwise its errors stop the import.
    """
    start = Location(export_path)
    export_name = os.path.basename(export_path)
    files: list[ImportedFile] = []
    diagnostics: list[Diagnostic] = []
    skipped: list[Diagnostic] = []
    secrets: dict[str, tuple[LiftedSecret, ...]] = {}
    owners: dict[str, str] = {}
    rows_of: dict[str, tuple[Location, str]] = {}
    for item in rows:
        index, row = item.index, item.row
        location = Location(export_path, *(positions[index] if index < len(positions) else (1, 1)))
        label = row_label(index, row)
        try:
            imported, problems, lifted = _import_row(row, label, location, export_name, owners)
        except RecursionError:
            too_deep = Diagnostic.error(location, IMPORT, f"{label}: {_TOO_DEEP}")
            imported, problems, lifted = None, [too_deep], ()
        if skip_invalid and any(problem.is_error for problem in problems):
            skipped += [problem for problem in problems if problem.is_error]
            diagnostics += [problem for problem in problems if not problem.is_error]
            continue
        diagnostics += problems
        if imported is None:
            continue
        if schema_ref:
            # One folder deeper than the output (api/, internal/, mcp/).
            reference = schema_ref if os.path.isabs(schema_ref) else f"../{schema_ref}"
            modeline = f"# yaml-language-server: $schema={reference}\n"
            if len(modeline) > LINE_LENGTH + 1:  # a deep tree: the path cannot be broken
                modeline = "# yamllint disable-line rule:line-length\n" + modeline
            imported = ImportedFile(imported.filename, modeline + imported.text,
                                    imported.folder)
        files.append(imported)
        rows_of[imported.filename] = (location, label)
        secrets[imported.filename] = lifted
    while True:
        found = _compile_problems(files, rows_of, start, options)
        failing = {name for name, _ in found if name is not None}
        if not skip_invalid or not failing:
            diagnostics += [problem for _, problem in found]
            break
        # Leave the failing rows out and compile the rest again: a row can fail only
        # together with another one (a clashing tool name), so once is not always enough.
        skipped += [problem for name, problem in found if name is not None]
        files = [imported for imported in files if imported.filename not in failing]
    kept = tuple(s for imported in files for s in secrets[imported.filename])
    return ImportResult(tuple(files), tuple(diagnostics), kept, tuple(skipped))


_TOO_DEEP = "the export is nested too deeply to import"


def _import_row(
    row: Any, label: str, location: Location, export_name: str, owners: dict[str, str]
) -> tuple[ImportedFile | None, list[Diagnostic], tuple[LiftedSecret, ...]]:
    """One row's file (None when the row cannot be imported), what was found in it, and
    the settings that replace the literal credentials it held."""
    if not isinstance(row, Mapping):
        return None, [Diagnostic.error(location, IMPORT, f"{label} is not an object")], ()
    missing = [key for key in ("name", "code", "type") if row.get(key) in (None, "")]
    if missing:
        message = f"{label} lacks {', '.join(missing)}, which every capability needs"
        return None, [Diagnostic.error(location, IMPORT, message)], ()
    diagnostics: list[Diagnostic] = []
    normalised = _normalise_row(without_soft_delete_columns(row))
    dropped = [key for key in row if key in DB_ONLY_COLUMNS]
    unknown = [k for k in normalised if k not in CAPABILITY_KEYS and k not in DB_ONLY_COLUMNS]
    if unknown:
        message = f"{label}: dropped columns capc does not know: {', '.join(sorted(unknown))}"
        diagnostics.append(Diagnostic.warning(location, IMPORT_UNKNOWN_COLUMN, message))
    kept = {key: value for key, value in normalised.items() if key not in unknown}
    try:
        document = upgrade_legacy_row(kept)
    except LegacyRowError as error:
        diagnostics.append(Diagnostic.error(location, LEGACY_ROW, f"{label}: {error.message}"))
        return None, diagnostics, ()
    code = document["code"]
    # The code names the file: anything but a plain identifier could leave the folder.
    if not isinstance(code, str) or not CODE_PATTERN.fullmatch(code):
        message = f"{label}: code {code!r} is invalid; a code must match {CODE_PATTERN.pattern}"
        diagnostics.append(Diagnostic.error(location, IMPORT_INVALID_CODE, message))
        return None, diagnostics, ()
    if code in owners:
        message = f"{label}: code {code!r} is already used by {owners[code]}; codes are unique"
        diagnostics.append(Diagnostic.error(location, IMPORT_DUPLICATE_CODE, message))
        return None, diagnostics, ()
    owners[code] = label
    lifted: tuple[LiftedSecret, ...] = ()
    if isinstance(document.get("options"), Mapping):
        document["options"], lifted = lift_secrets(code, str(document.get("type")),
                                                   document["options"])
    comments = file_header(row, export_name, dropped) + settings_comment(document)
    folder = document["type"] if document.get("type") in ("api", "internal", "mcp") else ""
    return (ImportedFile(f"{code}.yaml", render_capability(document, comments), folder),
            diagnostics, lifted)


def _compile_problems(
    files: Sequence[ImportedFile], rows_of: Mapping[str, tuple[Location, str]], start: Location,
    options: CompileOptions | None = None,
) -> list[tuple[str | None, Diagnostic]]:
    """The errors the real compiler finds in the generated files, located at their rows,
    each with the generated file it is in (None: not one file's fault).

    ``capc validate`` on the written folder must not reject what ``capc import`` wrote:
    the files alone, in memory, through the one compile entry point (the tree they join
    is checked after, by :func:`compiler.authoring.import_tree.plan_import`).
    """
    from compiler.compile_result import TreeOverlay
    from compiler.tree_compile import CompileRequest, compile_tree

    found: list[Diagnostic] = []
    if not files:
        return []
    overlay = TreeOverlay.of({imported.filename: imported.text.encode("utf-8")
                              for imported in files})
    alone = CompileRequest(sources=tuple(overlay.files), use_cache=False)
    try:
        found += compile_tree(alone, overlay, options=options or CompileOptions()).diagnostics
    except RecursionError:
        return [(None, Diagnostic.error(start, IMPORT, _TOO_DEEP))]
    located: list[tuple[str | None, Diagnostic]] = []
    for problem in found:
        if not problem.is_error:
            continue
        if problem.path not in rows_of:
            located.append((None, problem))
            continue
        location, label = rows_of[problem.path]
        message = (f"{label}: {problem.message} (in the generated {problem.path}, "
                   f"line {problem.line})")
        located.append((problem.path, replace(problem, path=location.path, line=location.line,
                                              col=location.col, message=message)))
    return located


def write_imported(
    result: ImportResult, out_dir: str, *, force: bool = False
) -> tuple[list[str], list[Diagnostic]]:
    """Write the files into ``out_dir``; refuse to overwrite any unless ``force``."""
    directory = Path(out_dir)
    targets = [directory / imported.relative_path for imported in result.files]
    # Belt and braces: import_rows only names files after valid codes, but nothing a
    # caller passes in may put a file outside ``out_dir``.
    root = directory.resolve()
    escaping = [t for t in targets if root not in (t.resolve().parent, t.resolve().parent.parent)]
    if escaping:
        return [], [
            Diagnostic.error(Location(target.as_posix()), IMPORT_PATH, f"outside {out_dir}")
            for target in escaping
        ]
    existing = [target for target in targets if target.exists()]
    if existing and not force:
        return [], [
            Diagnostic.error(
                Location(target.as_posix()), IMPORT_EXISTS, "exists; pass --force to overwrite"
            )
            for target in existing
        ]
    written: list[str] = []
    try:
        for target, imported in zip(targets, result.files, strict=True):
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text(imported.text, encoding="utf-8")
            written.append(target.as_posix())
    except OSError as error:
        return written, [Diagnostic.error(Location(out_dir), IO, f"cannot write: {error}")]
    return written, []

