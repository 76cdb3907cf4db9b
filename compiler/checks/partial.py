"""The part of a schema-invalid document that can still be checked.

A schema error in one field must not hide the semantic errors of the others (a wrong
``options.headers`` must not hide an SSRF ``options.url``). The checks assume
schema-valid input, so rather than making each one defensive about every shape, the
document loses exactly the parts the schema refused, and is checked only when what
remains is schema-valid: the checks never see a shape they were not written for.
"""

from __future__ import annotations

import copy
from typing import Any

from compiler.schema.validation import validator_for
from compiler.source.documents import SourceDocument

Path = tuple[str | int, ...]
# Each round removes what the schema refused; removing can expose a new refusal (a
# section left empty), so a few rounds, then give up.
MAX_ROUNDS = 4


def checkable_remainder(document: SourceDocument, kind: str) -> SourceDocument | None:
    """``document`` without the parts its schema refused, or None when nothing checkable
    remains (a required field was the problem, or the document is not a mapping)."""
    data = copy.deepcopy(document.data)
    validator = validator_for(kind)
    for _ in range(MAX_ROUNDS):
        errors = list(validator.iter_errors(data))
        if not errors:
            return document.with_data(data)
        for error in errors:
            targets = _refused_parts(error)
            if targets is None or not all(_remove(data, target) for target in targets):
                return None
    return None


def _refused_parts(error: Any) -> list[Path] | None:
    """The paths of the nodes to drop for ``error`` (None: dropping cannot fix it)."""
    path: Path = tuple(error.absolute_path)
    if error.validator == "required":
        return None  # a field is missing: the checks of this kind all need it
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        allowed = error.schema.get("properties", {})
        return [(*path, key) for key in error.instance if key not in allowed] or None
    # A list item cannot be dropped without shifting the others' locations: drop the list.
    while path and isinstance(path[-1], int):
        path = path[:-1]
    return [path] if len(path) >= 2 else None  # a top-level key: its kind's checks need it


def _remove(data: Any, path: Path) -> bool:
    """Delete the node at ``path``: True when it is gone (or already was), False when its
    parent is not a mapping (nothing can be dropped there)."""
    node = data
    for part in path[:-1]:
        if _has(node, part):
            node = node[part]
        else:
            return True  # an ancestor already went: nothing left to drop
    if isinstance(node, dict) and path[-1] in node:
        del node[path[-1]]
        return True
    return isinstance(node, dict)


def _has(node: Any, part: str | int) -> bool:
    if isinstance(node, dict):
        return part in node
    return isinstance(node, list) and isinstance(part, int) and part < len(node)
