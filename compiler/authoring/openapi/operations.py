"""The operations of a document, and choosing among them (``--operations``, ``--all``).

A path item may be a ``$ref`` (``paths: {/x: {$ref: ...}}``), within the document or to a
file under its folder (:mod:`refs`: confined, bounded): its operations are listed as the
path's, each carrying where its path item really is. A path item's ``$ref`` that cannot be
followed refuses the import where it is written (the path's operations cannot be known).

A selector is an operationId, ``"METHOD /path"`` or ``tag:NAME``, each allowing shell-style
globs (``repos/*``, ``"GET /pets/*"``, ``tag:issue*``). Matching is case-sensitive for ids
and paths (they are case-sensitive in the document) and case-insensitive for methods.
"""

from __future__ import annotations

import difflib
import fnmatch
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from compiler.authoring.openapi.document import DocumentFile
from compiler.authoring.openapi.naming import OperationKey, assign_codes, unsafe_characters
from compiler.authoring.openapi.problems import ImportRefused
from compiler.authoring.openapi.refs import References, Target
from compiler.authoring.openapi.validate import OPENAPI_STRUCTURE
from compiler.diagnostics import Code, Diagnostic

OPENAPI_SELECTOR = Code("openapi-selector", "an --operations selector matches no operation")
OPENAPI_UNSAFE_NAME = Code(
    "openapi-unsafe-name", "a name holds a control, bidi or invisible character")
CODES = (OPENAPI_SELECTOR, OPENAPI_UNSAFE_NAME)

METHODS = ("get", "put", "post", "delete", "options", "head", "patch", "trace")


@dataclass(frozen=True, slots=True)
class Operation:
    """One operation: how it is named, where it is, and its tags and summary."""

    key: OperationKey
    code: str
    tags: tuple[str, ...]
    summary: str
    # Why the operation cannot be imported whatever is selected (a name a reviewer would
    # not read as the model does), located; the import skips it and goes on.
    problem: Diagnostic | None = None
    # Where the path item is when ``paths`` refers to it with a ``$ref`` (None: in place).
    referred: Target | None = field(default=None, compare=False, hash=False)

    @property
    def json_path(self) -> tuple[str, ...]:
        """The path of the operation object in the document, as ``paths`` lists it."""
        return ("paths", self.key.path, self.key.method)

    def item(self, root: DocumentFile) -> Target:
        """The operation's path item (followed through a path item's ``$ref``)."""
        if self.referred is not None:
            return self.referred
        return Target(root, ("paths", self.key.path), root.data["paths"][self.key.path])

    def target(self, root: DocumentFile) -> Target:
        """The operation object, in the file that holds it."""
        item = self.item(root)
        return Target(item.file, (*item.path, self.key.method), item.value[self.key.method])


def list_operations(root: DocumentFile) -> tuple[Operation, ...]:
    """Every operation under ``paths``, in path then method order, each with its code."""
    paths = root.data.get("paths") if isinstance(root.data, Mapping) else None
    if paths is None:
        paths = {}
    if not isinstance(paths, Mapping):
        raise ImportRefused((root.error(("paths",), OPENAPI_STRUCTURE,
                                        "`paths` must be a mapping of path to operations"),))
    found: list[tuple[OperationKey, tuple[str, ...], str, Diagnostic | None]] = []
    referred: dict[str, Target] = {}
    refs = References(root)
    for path, item in paths.items():
        at = Target(root, ("paths", path), item)
        if isinstance(item, Mapping) and "$ref" in item:
            at = referred[str(path)] = refs.follow(at)
            item = at.value
        if not isinstance(item, Mapping):
            continue
        for method in METHODS:
            operation = item.get(method)
            if not isinstance(operation, Mapping):
                continue
            operation_id = operation.get("operationId")
            if not isinstance(operation_id, str) or not operation_id.strip():
                operation_id = None
            problem = None
            for text, what in ((operation_id or "", "operationId"), (path, "path")):
                bad = unsafe_characters(text)
                if bad and problem is None:
                    where = (*at.path, method, "operationId") if what == "operationId" \
                        else ("paths", path)
                    problem = (at.file if what == "operationId" else root).error(
                        where, OPENAPI_UNSAFE_NAME,
                        f"{what} {text!r} holds U+{ord(bad):04X}, a control, bidi or invisible "
                        "character: a reviewer would not read the name the model is given")
            tags = operation.get("tags")
            tag_names = tuple(t for t in tags if isinstance(t, str)) if isinstance(tags, list) \
                else ()
            summary = operation.get("summary")
            found.append((OperationKey(method, path, operation_id), tag_names,
                          summary if isinstance(summary, str) else "", problem))
    codes = assign_codes(key for key, _, _, _ in found)
    return tuple(Operation(key, codes[key], tags, summary, problem, referred.get(key.path))
                 for key, tags, summary, problem in found)


def _matches(selector: str, operation: Operation) -> bool:
    key = operation.key
    if selector.startswith("tag:"):
        pattern = selector[4:]
        return any(fnmatch.fnmatchcase(tag, pattern) for tag in operation.tags)
    method, _, path = selector.partition(" ")
    if path and method.lower() in (*METHODS, "*"):
        return fnmatch.fnmatchcase(key.method, method.lower()) and \
            fnmatch.fnmatchcase(key.path, path.strip())
    return fnmatch.fnmatchcase(key.operation_id or "", selector) or \
        fnmatch.fnmatchcase(operation.code, selector)


def select_operations(operations: Sequence[Operation], selectors: Sequence[str],
                      root: DocumentFile) -> tuple[Operation, ...]:
    """The operations any selector matches (document order); a selector matching nothing
    is an error naming close matches."""
    problems: list[Diagnostic] = []
    chosen: set[OperationKey] = set()
    for selector in selectors:
        hits = [op for op in operations if _matches(selector, op)]
        if not hits:
            problems.append(root.error((), OPENAPI_SELECTOR,
                                       f"--operations {selector!r} matches no operation"
                                       f"{_close(selector, operations)}"))
        chosen.update(op.key for op in hits)
    if problems:
        raise ImportRefused(tuple(problems))
    return tuple(op for op in operations if op.key in chosen)


def _close(selector: str, operations: Sequence[Operation]) -> str:
    names: list[str] = []
    for op in operations:
        names += [op.key.operation_id or op.code, op.key.label, *(f"tag:{t}" for t in op.tags)]
    close = difflib.get_close_matches(selector, sorted(set(names)), n=3, cutoff=0.6)
    return f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""


def operation_object(root: DocumentFile, operation: Operation) -> Mapping[str, Any]:
    """The operation's object in the document."""
    found: Mapping[str, Any] = operation.target(root).value
    return found
