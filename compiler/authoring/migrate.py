"""``capc migrate``: rewrite legacy rows to the current apiVersion, in place.

The rewrite is textual, so comments, key order, quoting and document boundaries survive:
the YAML node marks say where each legacy document starts and where its keys are, and
only those spots are edited. Every rewritten file is parsed back and compared with
:func:`compiler.schema.legacy.upgrade_legacy_row` of the original before it is written, so the
in-place edit and the in-memory upgrade the compiler performs can never disagree.
"""

from __future__ import annotations

import difflib
import os
import re
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from compiler.diagnostics import Code, Diagnostic, Location, Severity
from compiler.manifest import write_atomically
from compiler.schema.kinds import LEGACY_ROW
from compiler.schema.legacy import (
    DB_ONLY_COLUMNS,
    LegacyRowError,
    dump_block_yaml,
    is_legacy_row,
    upgrade_legacy_row,
)
from compiler.source.discovery import discover
from compiler.source.documents import IO

MIGRATE_LAYOUT = Code("migrate-layout", "a legacy file does not have the layout migrate reads")
MIGRATE_TEMPLATE = Code(
    "migrate-template", "a templated file is left for a hand migration", Severity.WARNING)
MIGRATE_UNSAFE = Code("migrate-unsafe", "a rewrite would change the file's meaning")
YAML = Code("yaml", "a legacy file is not valid YAML")
CODES = (MIGRATE_LAYOUT, MIGRATE_TEMPLATE, MIGRATE_UNSAFE, YAML)


@dataclass(frozen=True, slots=True)
class Edit:
    """Replace ``text[start:end]`` with ``replacement`` (an insertion when start == end)."""

    start: int
    end: int
    replacement: str


@dataclass(frozen=True, slots=True)
class MigratedText:
    """One file's rewrite: the new text, how many documents changed, and any findings."""

    text: str
    migrated_documents: int
    diagnostics: tuple[Diagnostic, ...]


@dataclass(frozen=True, slots=True)
class MigrationReport:
    """The outcome of ``capc migrate`` over a set of files."""

    changed_paths: tuple[str, ...]
    migrated_documents: int
    diff: str
    diagnostics: tuple[Diagnostic, ...]


def _yaml_scalar(value: Any) -> str:
    """``value`` as a one-line YAML flow value, quoted only where YAML needs it."""
    dumped = yaml.safe_dump(value, default_flow_style=True, allow_unicode=True, width=1 << 20)
    return dumped.removesuffix("\n...\n").strip()


def _content_end(node: yaml.Node) -> yaml.Mark:
    """Where a node's own text ends (a block collection ends at its last child's end)."""
    if isinstance(node, yaml.MappingNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1][1])
    if isinstance(node, yaml.SequenceNode) and not node.flow_style and node.value:
        return _content_end(node.value[-1])
    return node.end_mark


def _line_start(text: str, index: int) -> int:
    return text.rfind("\n", 0, index) + 1


def _line_end_after(text: str, mark: yaml.Mark) -> int:
    """The index just past the line holding the end of a node (or the mark, at a line start)."""
    if mark.column == 0 and mark.index > 0:
        return mark.index
    newline = text.find("\n", mark.index)
    return len(text) if newline < 0 else newline + 1


def _insertion_at(text: str, index: int, lines: str) -> Edit:
    """Insert whole ``lines`` at ``index``, adding the newline a file without one lacks."""
    prefix = "\n" if index > 0 and text[index - 1] != "\n" else ""
    return Edit(index, index, prefix + lines)


def _document_edits(
    text: str, node: yaml.MappingNode, upgraded: Mapping[str, Any]
) -> list[Edit]:
    """The edits that turn one legacy document's text into ``upgraded``."""
    first_key_start = node.value[0][0].start_mark.index
    edits = [Edit(first_key_start, first_key_start, "apiVersion: capc/v1\nkind: Capability\n")]
    new_options = upgraded.get("options")
    saw_options = False
    for key_node, value_node in node.value:
        key = key_node.value
        key_line = _line_start(text, key_node.start_mark.index)
        value_end = _line_end_after(text, _content_end(value_node))
        if key in DB_ONLY_COLUMNS or (key == "options" and new_options is None):
            edits.append(Edit(key_line, value_end, ""))
        elif key == "code" and upgraded["code"] != value_node.value:
            edits.append(
                Edit(
                    value_node.start_mark.index,
                    value_node.end_mark.index,
                    _yaml_scalar(upgraded["code"]),
                )
            )
        elif key == "options":
            saw_options = True
            edits.extend(_options_edits(text, key_node, value_node, new_options or {}))
    if new_options is not None and not saw_options:
        last_end = _line_end_after(text, _content_end(node.value[-1][1]))
        edits.append(_insertion_at(text, last_end, "options:\n" + dump_block_yaml(new_options, 2)))
    return edits


def _options_edits(
    text: str, key_node: yaml.Node, value_node: yaml.Node, new_options: Mapping[str, Any]
) -> list[Edit]:
    """Edits for ``options``: add ``codes`` to a block mapping, else rewrite the value."""
    if isinstance(value_node, yaml.MappingNode) and not value_node.flow_style and value_node.value:
        keys = [key.value for key, _ in value_node.value]
        if "codes" in keys or "codes" not in new_options:
            return []
        indent = value_node.value[0][0].start_mark.column
        end = _line_end_after(text, _content_end(value_node))
        line = " " * indent + f"codes: {_yaml_scalar(list(new_options['codes']))}\n"
        return [_insertion_at(text, end, line)]
    # A JSON string or a flow mapping: replace it with block YAML of the parsed value.
    replacement = ": {}" if not new_options else ":\n" + dump_block_yaml(
        new_options, key_node.start_mark.column + 2
    ).removesuffix("\n")
    return [Edit(key_node.end_mark.index, value_node.end_mark.index, replacement)]


def _apply(text: str, edits: Iterable[Edit]) -> str:
    # From the end backwards, so earlier offsets stay valid; at one offset a deletion is
    # applied before the insertion that must end up in front of what follows it.
    for edit in sorted(edits, key=lambda edit: (edit.start, edit.end), reverse=True):
        text = text[: edit.start] + edit.replacement + text[edit.end :]
    return text


def _duplicate_key(node: yaml.MappingNode) -> yaml.Node | None:
    seen: set[Any] = set()
    for key_node, _ in node.value:
        key: yaml.Node = key_node
        if key.value in seen:
            return key
        seen.add(key.value)
    return None


def _location(path: str, mark: yaml.Mark | None) -> Location:
    if mark is None:
        return Location(path)
    return Location(path, mark.line + 1, mark.column + 1)


def _key_location(path: str, node: yaml.MappingNode, key: str | None) -> Location:
    for key_node, _ in node.value:
        if key_node.value == key:
            return _location(path, key_node.start_mark)
    return _location(path, node.start_mark)


def migrate_text(path: str, text: str) -> MigratedText:
    """Rewrite every legacy document of one YAML text; other documents stay byte-identical."""
    newline = "\r\n" if "\r\n" in text else "\n"
    work = text.replace("\r\n", "\n")
    try:
        nodes = list(yaml.compose_all(work, Loader=yaml.SafeLoader))
        values = list(yaml.load_all(work, Loader=yaml.SafeLoader))
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        message = f"cannot migrate: the file is not valid YAML ({getattr(error, 'problem', error)})"
        return MigratedText(text, 0, (Diagnostic.error(_location(path, mark), YAML, message),))
    edits: list[Edit] = []
    expected: list[Any] = []
    diagnostics: list[Diagnostic] = []
    migrated = 0
    for node, value in zip(nodes, values, strict=True):
        if not isinstance(node, yaml.MappingNode) or not is_legacy_row(value):
            expected.append(value)
            continue
        problem = _layout_problem(work, node)
        if problem is not None:
            message, mark = problem
            diagnostics.append(
                Diagnostic.error(_location(path, mark), MIGRATE_LAYOUT, message)
            )
            return MigratedText(text, 0, tuple(diagnostics))
        try:
            upgraded = upgrade_legacy_row(value)
        except LegacyRowError as error:
            location = _key_location(path, node, error.key)
            diagnostics.append(Diagnostic.error(location, LEGACY_ROW, error.message))
            return MigratedText(text, 0, tuple(diagnostics))
        if node.flow_style:
            edits.append(_flow_document_edit(work, node, upgraded))
        else:
            edits.extend(_document_edits(work, node, upgraded))
        expected.append(upgraded)
        migrated += 1
    if not migrated:
        return MigratedText(text, 0, ())
    rewritten = _apply(work, edits)
    if list(yaml.load_all(rewritten, Loader=yaml.SafeLoader)) != expected:
        message = "cannot rewrite this file in place without changing its meaning; migrate by hand"
        return MigratedText(
            text, 0, (Diagnostic.error(Location(path), MIGRATE_UNSAFE, message),)
        )
    return MigratedText(rewritten.replace("\n", newline), migrated, ())


def _flow_document_edit(
    text: str, node: yaml.MappingNode, upgraded: Mapping[str, Any]
) -> Edit:
    """A row written as a flow mapping (JSON pasted from the database) becomes block YAML."""
    block = dump_block_yaml(upgraded).removesuffix("\n")
    start = node.start_mark.index
    if node.start_mark.column == 0:
        return Edit(start, node.end_mark.index, block)
    # After `--- ` on the same line a block mapping cannot start: move it to its own line.
    while start > 0 and text[start - 1] in " \t":
        start -= 1
    return Edit(start, node.end_mark.index, "\n" + block)


def _layout_problem(text: str, node: yaml.MappingNode) -> tuple[str, yaml.Mark] | None:
    """Why a legacy document cannot be edited in place and where, or None when it can."""
    if node.flow_style:
        span = text[node.start_mark.index : node.end_mark.index]
        if re.search(r"(^|\s)#", span):
            message = "this flow-style row has comments inside it, which a rewrite would lose"
            return message, node.start_mark
    elif node.start_mark.column != 0:
        message = "an indented legacy row cannot be migrated in place; start its keys at column 1"
        return message, node.start_mark
    duplicate = _duplicate_key(node)
    if duplicate is not None:
        return f"duplicate key {duplicate.value!r}; fix it before migrating", duplicate.start_mark
    return None


def _rewrite(path: str, text: str) -> None:
    """Replace ``path`` with ``text`` atomically, keeping its permissions and line endings."""
    write_atomically(Path(path), text.encode("utf-8"), mode=os.stat(path).st_mode & 0o7777)


def migrate_files(sources: Sequence[str], *, dry_run: bool = False) -> MigrationReport:
    """Migrate every legacy document under ``sources``; with ``dry_run`` only build the diff.

    Only files actually rewritten (or, with ``dry_run``, that would be) are counted; a file
    that cannot be written is an error and does not count.
    """
    files = discover(list(sources))
    diagnostics: list[Diagnostic] = []
    changed: list[str] = []
    diff_parts: list[str] = []
    documents = 0
    for source in files:
        path = Path(source.disk_path).as_posix()
        try:
            with open(path, encoding="utf-8", newline="") as stream:
                original = stream.read()
        except (OSError, UnicodeDecodeError) as error:
            diagnostics.append(Diagnostic.error(Location(path), IO, f"cannot read: {error}"))
            continue
        if source.is_template:
            # Jinja, not YAML, until rendered with variables we do not have: say so
            # rather than report "no problems" while validate --vars warns about the row.
            diagnostics.extend(template_legacy_rows(path, original))
            continue
        result = migrate_text(path, original)
        diagnostics.extend(result.diagnostics)
        if result.text == original:
            continue
        if not dry_run:
            try:
                _rewrite(path, result.text)
            except OSError as error:
                reason = error.strerror or type(error).__name__
                diagnostics.append(
                    Diagnostic.error(Location(path), IO, f"cannot write: {reason}")
                )
                continue
        diff_parts.extend(
            difflib.unified_diff(
                original.splitlines(keepends=True),
                result.text.splitlines(keepends=True),
                fromfile=f"a/{path}",
                tofile=f"b/{path}",
            )
        )
        changed.append(path)
        documents += result.migrated_documents
    return MigrationReport(tuple(changed), documents, "".join(diff_parts), tuple(diagnostics))


_DOCUMENT_SEPARATOR = re.compile(r"^---(?:[ \t].*)?$", re.MULTILINE)
_TOP_LEVEL_KEY = re.compile(r"^[\"']?(apiVersion|kind|name|code|type)[\"']?[ \t]*:", re.MULTILINE)


def template_legacy_rows(path: str, text: str) -> list[Diagnostic]:
    """Warnings for template documents that look like legacy rows (a text check).

    A document whose top-level keys include ``name``, ``code`` and ``type`` but neither
    ``apiVersion`` nor ``kind`` is a legacy row once rendered; ``capc migrate`` cannot
    rewrite Jinja text safely, so it asks for a migration by hand.
    """
    found: list[Diagnostic] = []
    starts = [0, *(separator.end() for separator in _DOCUMENT_SEPARATOR.finditer(text))]
    ends = [separator.start() for separator in _DOCUMENT_SEPARATOR.finditer(text)] + [len(text)]
    for start, end in zip(starts, ends, strict=True):
        keys = {m.group(1): m.start() for m in _TOP_LEVEL_KEY.finditer(text, start, end)}
        if keys.keys() >= {"name", "code", "type"} and not keys.keys() & {"apiVersion", "kind"}:
            line = text.count("\n", 0, min(keys.values())) + 1
            message = ("legacy row in a template: capc migrate does not rewrite templates; "
                       "migrate it by hand (add apiVersion: capc/v1 and kind: Capability)")
            found.append(Diagnostic.warning(Location(path, line, 1), MIGRATE_TEMPLATE, message))
    return found
