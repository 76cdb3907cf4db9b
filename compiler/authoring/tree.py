"""What the adoption commands (``new``, ``import``, ``migrate``) need to know of the tree they
write into: the codes it already defines, and the JSON Schemas an editor's
``yaml-language-server`` modeline points at.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SCHEMA_FOLDER = "schemas"
CAPABILITY_SCHEMA = "capability-v1.json"


@dataclass(frozen=True, slots=True)
class ExistingCode:
    """A capability code the tree already defines, and the file and line defining it."""

    code: str
    path: str
    line: int


def existing_codes(roots: Sequence[str], cwd: Path | None = None) -> dict[str, ExistingCode]:
    """Every capability code under ``roots`` (those that exist), first definition wins.

    Files that do not load are skipped: a broken file cannot claim a code, and the
    command's own compile reports it.
    """
    from compiler.source.discovery import discover
    from compiler.source.documents import load_files

    present = [root for root in roots if Path(cwd or ".", root).exists()]
    if not present:
        return {}
    documents, _ = load_files(discover(present, cwd))
    found: dict[str, ExistingCode] = {}
    for document in documents:
        for code in codes_of(document.data):
            found.setdefault(code, ExistingCode(code, document.path,
                                                 document.location(("code",)).line))
    return found


def codes_of(data: Any) -> list[str]:
    """The capability codes one loaded document claims (none for overrides)."""
    if not isinstance(data, dict) or data.get("kind", "Capability") != "Capability":
        return []
    code = data.get("code")
    if not isinstance(code, str):
        return []
    # A legacy row's "base,rag" imports as base_rag: both spellings are taken.
    return [code, code.replace(",", "_")] if "," in code else [code]


def project_base() -> Path:
    """The project root (``[tool.capc]``'s pyproject.toml) as a path from the working
    directory: where ``schemas/`` lives, whichever folder a command runs in."""
    from compiler.project import read_project_settings

    return Path(os.path.relpath(read_project_settings().root, Path.cwd()))


def ensure_editor_schemas(base: Path | None = None) -> list[Path]:
    """Write (or refresh) ``schemas/*.json`` under ``base`` (default: the project root) so
    modelines resolve; return the files written. Files already holding this capc's schema
    are left alone."""
    from compiler.schema.kinds import SCHEMA_FILES
    from compiler.schema.validation import schema_text

    folder = (project_base() if base is None else base) / SCHEMA_FOLDER
    written: list[Path] = []
    for (_, kind), file_name in sorted(SCHEMA_FILES.items()):
        target = folder / file_name
        text = schema_text(kind)
        try:
            if target.read_text(encoding="utf-8") == text:
                continue
        except (OSError, UnicodeDecodeError):
            pass
        folder.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        written.append(target)
    return written


def schema_reference_from(file_folder: Path, schema: str = CAPABILITY_SCHEMA,
                          base: Path | None = None) -> str:
    """The path of ``schemas/SCHEMA`` (under ``base``, default the project root) as a
    file in ``file_folder`` refers to it: relative, so it works on every checkout."""
    target = (project_base() if base is None else base) / SCHEMA_FOLDER / schema
    return Path(os.path.relpath(target, file_folder)).as_posix()
