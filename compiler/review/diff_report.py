"""Render a :class:`~compiler.review.diff.ManifestDiff` as text, Markdown or JSON (`capc diff`).

Every format starts with the same summary line, then the ranked security findings, then
the per-entry changes. Markdown is made for a pull-request comment: the findings stay
visible, the field-by-field details sit in a collapsed block.
"""

from __future__ import annotations

import html
import io
import json
import os
import subprocess
import tarfile
import tempfile
from collections.abc import Callable, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any

from compiler.errors import InputOutputError, UsageError
from compiler.manifest import read_manifest_model
from compiler.project import DEFAULT_LOCK
from compiler.report.escape import escape_control
from compiler.report.text import format_diagnostic
from compiler.review.diff import ABSENT, EntryChange, ManifestDiff, diff_manifests
from compiler.review.ranking import Rank, rank_change
from compiler.review.schema_widening import shown_path

MAX_VALUE_CHARS = 160
_STATUS_SIGNS = {"added": "+", "removed": "-", "changed": "~"}
_KIND_NOUNS = {"capability": "capabilities", "override": "overrides", "plugin": "plugins",
               "pin": "pinned MCP servers", "profile": "profiles",
               "tool-test": "tool test cases"}


def _plural(count: int, noun: str) -> str:
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def summary_line(diff: ManifestDiff) -> str:
    """One line: counts per kind and status, then the number of security findings."""
    if not diff.has_changes:
        return "capc diff: no differences"
    tool_counts = {
        "added": len(diff.tools.added),
        "removed": len(diff.tools.removed),
        "changed": len(diff.tools.changed),
    }
    groups = []
    for kind, noun in _KIND_NOUNS.items():
        counts = {status: diff.count(kind, status) for status in ("added", "removed", "changed")}
        shown = [f"{count} {status}" for status, count in counts.items() if count]
        if shown:
            groups.append(f"{noun} {', '.join(shown)}")
        if kind == "capability" and any(tool_counts.values()):
            shown = [f"{count} {status}" for status, count in tool_counts.items() if count]
            groups.append(f"tools {', '.join(shown)}")
    contract = sum(rank_change(finding.kind) is Rank.CONTRACT for finding in diff.security)
    findings = _plural(len(diff.security) - contract, "security-relevant change")
    if contract:
        findings += f", {_plural(contract, 'contract change')}"
    return f"capc diff: {'; '.join(groups)}; {findings}"


def format_value(value: Any) -> str:
    """A field value as compact JSON (``(absent)`` for a missing field), cut at a bound."""
    if value is ABSENT:
        return "(absent)"
    text = json.dumps(value, ensure_ascii=False, sort_keys=True)
    return text if len(text) <= MAX_VALUE_CHARS else text[: MAX_VALUE_CHARS - 1] + "…"


def render_text(diff: ManifestDiff) -> str:
    """Plain text for a terminal or a CI log."""
    line = escape_control  # each line is one line: names and values cannot add their own
    lines = [line(summary_line(diff))]
    if diff.security:
        lines.append("security-relevant changes, most serious first:")
        lines += [line(f"  [{f.rank}] {f.kind} {f.entry}: {f.message}") for f in diff.security]
    for entry in diff.entries:
        label = f" ({entry.label})" if entry.label else ""
        sign = _STATUS_SIGNS[entry.status]
        lines.append(line(f"{sign} {entry.kind} {entry.key}{label} {entry.status}"))
        lines += [
            line(f"    {shown_path(c.path)}: {format_value(c.old)} → {format_value(c.new)}")
            for c in entry.fields
        ]
    return "\n".join(lines) + "\n"


def _cell(value: str) -> str:
    # HTML code rather than backticks: values may hold backticks, and `|` would end a cell.
    value = escape_control(value)
    return "<code>" + html.escape(value, quote=False).replace("|", "&#124;") + "</code>"


def _markdown_entry(entry: EntryChange) -> list[str]:
    label = f" ({html.escape(escape_control(entry.label), quote=False)})" if entry.label else ""
    heading = f"**{_STATUS_SIGNS[entry.status]} {entry.kind} {_cell(entry.key)}**{label}"
    if not entry.fields:
        return [f"{heading} {entry.status}", ""]
    lines = [heading, "", "| field | old | new |", "| --- | --- | --- |"]
    lines += [
        f"| {_cell(shown_path(c.path))} | {_cell(format_value(c.old))} | "
        f"{_cell(format_value(c.new))} |"
        for c in entry.fields
    ]
    return [*lines, ""]


def render_markdown(diff: ManifestDiff) -> str:
    """Markdown for a pull-request comment: summary, findings table, collapsed details."""
    lines = [f"### {html.escape(escape_control(summary_line(diff)), quote=False)}", ""]
    if diff.security:
        lines += ["**Security-relevant changes** (most serious first)", ""]
        lines += ["| rank | change | capability | detail |", "| --- | --- | --- | --- |"]
        lines += [
            f"| {f.rank} | {f.kind} | {_cell(f.entry)} | "
            f"{html.escape(escape_control(f.message), quote=False)} |"
            for f in diff.security
        ]
        lines.append("")
    if diff.entries:
        lines += [f"<details><summary>{len(diff.entries)} changed entries</summary>", ""]
        for entry in diff.entries:
            lines += _markdown_entry(entry)
        lines += ["</details>", ""]
    return "\n".join(lines)


def render_json(diff: ManifestDiff) -> str:
    """Machine-readable: summary counts, findings and entries (absent values left out)."""

    def change(c: Any) -> dict[str, Any]:
        shown = {"path": c.path}
        if c.old is not ABSENT:
            shown["old"] = c.old
        if c.new is not ABSENT:
            shown["new"] = c.new
        return shown

    document = {
        "summary": summary_line(diff),
        "has_changes": diff.has_changes,
        "tools": {
            "added": list(diff.tools.added),
            "removed": list(diff.tools.removed),
            "changed": list(diff.tools.changed),
        },
        "security": [
            {"rank": f.rank, "kind": f.kind, "entry": f.entry, "message": f.message}
            for f in diff.security
        ],
        "entries": [
            {
                "kind": e.kind,
                "key": e.key,
                "status": e.status,
                "label": e.label,
                "fields": [change(c) for c in e.fields],
            }
            for e in diff.entries
        ],
    }
    return json.dumps(document, ensure_ascii=False, indent=2, sort_keys=True) + "\n"


RENDERERS: dict[str, Callable[[ManifestDiff], str]] = {
    "text": render_text,
    "markdown": render_markdown,
    "json": render_json,
}


def diff_files(old_path: str, new_path: str) -> ManifestDiff:
    """Read and verify both manifests and compare them.

    Through the one reader (:func:`compiler.manifest.read_manifest_model`): a manifest
    that cannot be read exits 2, one refused by a check exits 1.
    """
    return diff_manifests(read_manifest_model(old_path), read_manifest_model(new_path))


def _git(arguments: Sequence[str], cwd: Path) -> bytes:
    try:
        completed = subprocess.run(
            ["git", *arguments], cwd=cwd, capture_output=True, check=False, timeout=120
        )
    except (OSError, subprocess.TimeoutExpired) as error:
        raise InputOutputError(f"cannot run git: {error}") from None
    if completed.returncode != 0:
        message = completed.stderr.decode("utf-8", "replace").strip().splitlines()
        raise UsageError(f"git {' '.join(arguments)}: {message[-1] if message else 'failed'}")
    return completed.stdout


def manifest_at_revision(
    revision: str, sources: Sequence[str], variable_files: Sequence[str] = ()
) -> Mapping[str, Any]:
    """Compile ``sources`` as they are at git ``revision`` ("" for the working tree).

    The revision's files are read with ``git archive`` into a temporary folder: nothing
    in the repository (index, worktrees, refs) changes. A source missing at ``revision``
    (the tree was added or removed in between) compiles as nothing: everything in it
    shows as added or removed.
    """
    from compiler.tree_compile import CompileRequest, compile_tree

    if not revision:
        present = [source for source in sources if os.path.exists(source)]
        if not present:
            return _empty_manifest()
        options = _lock_options(None if not Path(LOCK_FILE).is_file()
                                else Path(LOCK_FILE).read_text(encoding="utf-8"), LOCK_FILE)
        request = CompileRequest(tuple(present), tuple(variable_files))
        return _built(compile_tree(request, options=options), "the working tree")
    cwd = Path.cwd()
    prefix = _git(["rev-parse", "--show-prefix"], cwd).decode().strip()
    top = Path(_git(["rev-parse", "--show-toplevel"], cwd).decode().strip())
    try:
        _git(["rev-parse", "--verify", "--quiet", f"{revision}^{{commit}}"], top)
    except UsageError:
        raise UsageError(f"--git: {revision!r} is not a revision of this repository") from None
    present = [source for source in sources
               if _exists_at(revision, (Path(prefix) / source).as_posix(), top)]
    if not present:
        return _empty_manifest()
    sources = present
    paths = [(Path(prefix) / source).as_posix() for source in sources]
    archive = _git(["archive", "--format=tar", revision, "--", *paths], top)
    options = _lock_options(_file_at(revision, f"{prefix}{LOCK_FILE}", top),
                            f"{revision}:{LOCK_FILE}")
    with tempfile.TemporaryDirectory(prefix="capc-diff-") as folder:
        _extract(archive, folder, revision)
        checkout = Path(folder) / prefix
        roots = tuple(str(checkout / source) for source in sources)
        request = CompileRequest(roots, tuple(variable_files))
        return _built(compile_tree(request, options=options, base=checkout), revision)


LOCK_FILE = DEFAULT_LOCK


def _file_at(revision: str, path: str, top: Path) -> str | None:
    """The text of ``path`` at ``revision``, or None when the revision has no such file."""
    try:
        completed = subprocess.run(["git", "show", f"{revision}:{path}"], cwd=top,
                                   capture_output=True, check=False, timeout=120)
    except (OSError, subprocess.TimeoutExpired):
        return None
    return completed.stdout.decode("utf-8") if completed.returncode == 0 else None


def _lock_options(text: str | None, label: str) -> Any:
    """Compile options carrying the lock of one side (so pins show in the diff), and the
    networks [tool.capc] allows (so an internal API compiles on both sides as in CI): the
    project's options, not strict, no plugins (a diff compares trees, it does not judge
    them)."""
    from compiler.pins.lockfile import parse_lock
    from compiler.tree_compile import CompileRequest, compile_options_for

    networks = compile_options_for(CompileRequest(strict=False, use_plugins=False,
                                                  use_lock=False))
    if text is None:
        return networks
    try:
        return replace(networks, pins=parse_lock(json.loads(text)), lock_path=label)
    except (ValueError, KeyError, TypeError) as error:
        raise UsageError(f"{label}: not a valid capc lock ({error})") from None


def _extract(archive: bytes, folder: str, revision: str) -> None:
    """Unpack ``git archive`` output; a link out of the tree or a special file is a clean
    usage error naming the path (tarfile's data filter refuses them, with a traceback)."""
    try:
        with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
            tar.extractall(folder, filter="data")
    except tarfile.FilterError as error:
        member = getattr(error, "tarinfo", None)
        name = escape_control(member.name) if member is not None else "a file"
        raise UsageError(f"{revision}: {name} is a symlink leading out of the tree, or a "
                         "special file: refused (capc reads only files inside the tree)"
                         ) from None
    except tarfile.TarError as error:
        raise InputOutputError(f"{revision}: cannot unpack git archive: {error}") from None


def _exists_at(revision: str, path: str, top: Path) -> bool:
    """Whether ``path`` (relative to the top of the repository) exists at ``revision``."""
    listed = _git(["ls-tree", "--name-only", revision, "--", path.rstrip("/") or "."], top)
    return bool(listed.strip())


def _empty_manifest() -> Mapping[str, Any]:
    from compiler.pipeline import compile_documents

    manifest = compile_documents([]).manifest
    assert manifest is not None  # nothing to check, nothing wrong
    return dict(manifest)


def _built(result: Any, label: str) -> Mapping[str, Any]:
    if result.manifest is None:
        errors = [d for d in result.diagnostics if d.is_error]
        first = f"; the first: {format_diagnostic(errors[0])}" if errors else ""
        raise UsageError(f"{label}: the sources do not compile ({len(errors)} errors{first}); "
                         "run `capc validate` there first")
    return dict(result.manifest)


def diff_revisions(
    revisions: str, sources: Sequence[str], *, variable_files: Sequence[str] = (),
) -> ManifestDiff:
    """``capc diff --git REV1..REV2``: compile the tree at both revisions and compare."""
    old_revision, separator, new_revision = revisions.partition("..")
    if not separator or not old_revision:
        raise UsageError(f"--git wants REV1..REV2 (REV2 empty for the working tree), "
                         f"got {revisions!r}")
    old = manifest_at_revision(old_revision, sources, variable_files)
    new = manifest_at_revision(new_revision, sources, variable_files)
    return diff_manifests(old, new)
