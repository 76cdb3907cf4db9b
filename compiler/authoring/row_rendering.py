"""How ``capc import`` writes a row: a commented capc/v1 Capability in block YAML.

The keys in the canonical order, a header saying where the row came from and the settings
it needs, and every line within yamllint's default length, so an adopter's own lint setup
accepts the generated files.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping, Sequence
from typing import Any

import yaml

from compiler.schema.legacy import dump_block_yaml

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


def file_header(row: Mapping[str, Any], export_name: str, dropped: Sequence[str]) -> list[str]:
    """The comment lines that say where a row's file came from and what was dropped."""
    identity = f" (row id {row['id']})" if "id" in row else ""
    lines = [f"# Imported by `capc import` from {export_name}{identity}."]
    if dropped:
        lines.append(f"# Database-only columns dropped: {', '.join(dropped)}.")
    code = row.get("code")
    if isinstance(code, str) and "," in code:
        lines.append(f"# The row's code {code!r} lists several registry codes: they are in")
        lines.append("# options.codes, and the code joins them with '_'.")
    return lines


def settings_comment(document: Mapping[str, Any]) -> list[str]:
    """The comment line naming the user settings a file's options interpolate."""
    names = sorted(set(_PLACEHOLDER.findall(json.dumps(document.get("options") or {}))))
    if not names:
        return []
    return [f"# Needs user settings: {', '.join(names)}."]


# yamllint's default line length: generated files pass its defaults as well as the
# shipped .yamllint (100 columns), so an adopter's own lint setup accepts them.
LINE_LENGTH = 80


def render_capability(document: Mapping[str, Any], comments: Sequence[str]) -> str:
    """A capc/v1 Capability as commented block YAML in the canonical key order, every
    line within :data:`LINE_LENGTH` columns (a single long word is folded onto its own)."""
    ordered: dict[str, Any] = {"apiVersion": document["apiVersion"], "kind": document["kind"]}
    for key in CAPABILITY_KEYS:
        if key in document:
            ordered[key] = document[key]
    body = dump_block_yaml(ordered, width=LINE_LENGTH - 4)
    wrapped = [part for line in comments for part in _wrap_comment(line)]
    return "".join(line + "\n" for line in wrapped) + _fold_long_words(body)


def _wrap_comment(line: str) -> list[str]:
    import textwrap

    if len(line) <= LINE_LENGTH:
        return [line]
    return textwrap.wrap(line[2:], LINE_LENGTH - 2, initial_indent="# ",
                         subsequent_indent="# ", break_long_words=False,
                         break_on_hyphens=False) or [line]


_PLAIN_KEY_VALUE = re.compile(r"^( *)([A-Za-z0-9_-]+): (\S+)$")


def _fold_long_words(body: str) -> str:
    """``key: <one long word>`` past the line length as ``key: >-`` with the word on the
    next line, which yamllint accepts as unbreakable; kept only when it reads the same."""
    lines = body.splitlines()
    changed = False
    for index, line in enumerate(lines):
        match = _PLAIN_KEY_VALUE.match(line)
        if len(line) > LINE_LENGTH and match:
            indent, key, value = match.groups()
            lines[index] = f"{indent}{key}: >-\n{indent}  {value}"
            changed = True
    if not changed:
        return body
    folded = "\n".join(lines) + "\n"
    return folded if yaml.safe_load(folded) == yaml.safe_load(body) else body
