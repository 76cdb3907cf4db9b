"""Selected operations → capability documents (data), each with its provenance and notes.

The pure middle of ``capc import openapi``: a parsed document in, capability data out.
Nothing here reads flags or writes files (:mod:`command` does).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Any
from urllib.parse import quote

from compiler.authoring.openapi.document import (
    OPENAPI_EMPTY,
    OPENAPI_ENCODING,
    OPENAPI_READ,
    OPENAPI_SYNTAX,
    OPENAPI_TOO_DEEP,
    OPENAPI_TOO_LARGE,
    OPENAPI_YAML,
    DocumentFile,
)
from compiler.authoring.openapi.document_text import clean_text, window
from compiler.authoring.openapi.mapping import OperationMapper
from compiler.authoring.openapi.operations import OPENAPI_UNSAFE_NAME, Operation
from compiler.authoring.openapi.problems import ImportRefused, pointer_of
from compiler.authoring.openapi.refs import (
    OPENAPI_REF_ABSOLUTE,
    OPENAPI_REF_FILE,
    OPENAPI_REF_FILES,
    OPENAPI_REF_LOOP,
    OPENAPI_REF_MISSING,
    OPENAPI_REF_OUTSIDE,
    OPENAPI_REF_REMOTE,
    References,
)
from compiler.authoring.openapi.responses import derived_output_schema
from compiler.authoring.openapi.schema_scalars import BINARY_MARK
from compiler.authoring.openapi.schemas import OPENAPI_EXPANSION, Budget, Unexpressible
from compiler.authoring.openapi.security import Setting, credentials_for
from compiler.authoring.openapi.servers import server_url
from compiler.authoring.openapi.sinks import SinkRefused, refuse_foreign_placeholders
from compiler.diagnostics import Diagnostic, Severity
from compiler.runtime.manifest.model import API_METHODS
from compiler.runtime.manifest.parameters import PARAMETER_SECTIONS
from compiler.runtime.placeholders import SETTING_PATTERN

# Bumped whenever the same document would import to different files.
IMPORTER_VERSION = "capc-openapi/2"
MAX_TOOL_DESCRIPTION = 1024
_SLOT = re.compile(r"(?<!\$)\{([^{}]*)\}")
_UNRESERVED = "-._~"
_MAX_TWINS = 8  # paths named per shared request line (a bounded note)
# Refusals that concern one operation (a reference it makes, its names, its schemas'
# size): the operation is skipped with the located reason and the others imported.
OPERATION_PROBLEMS = frozenset({
    OPENAPI_REF_LOOP.id, OPENAPI_REF_MISSING.id, OPENAPI_REF_REMOTE.id, OPENAPI_REF_ABSOLUTE.id,
    OPENAPI_REF_OUTSIDE.id, OPENAPI_REF_FILES.id, OPENAPI_REF_FILE.id, OPENAPI_EXPANSION.id,
    OPENAPI_UNSAFE_NAME.id, OPENAPI_YAML.id, OPENAPI_SYNTAX.id, OPENAPI_TOO_DEEP.id,
    OPENAPI_TOO_LARGE.id, OPENAPI_ENCODING.id, OPENAPI_READ.id, OPENAPI_EMPTY.id})
# What an api capability can send (SPEC §2.1 options.method, the model's one list);
# Kubernetes' proxy operations also declare HEAD and OPTIONS, skipped with the reason.
SENDABLE_METHODS = tuple(method.lower() for method in API_METHODS)


@dataclass(frozen=True, slots=True)
class ImportSettings:
    """What the command line chose: a server to use instead of the document's, whether
    private addresses are allowed, which security schemes are sent."""

    server: str | None = None
    allow_private_networks: bool = False
    # --security: the schemes chosen among the document's (empty: each operation's first).
    security: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class GeneratedTool:
    """One operation as a capability document, what it could not keep, what it needs."""

    operation: Operation
    data: Mapping[str, Any]
    notes: tuple[str, ...]
    settings: tuple[Setting, ...]


@dataclass(frozen=True, slots=True)
class SkippedOperation:
    """An operation that cannot be imported faithfully, and why."""

    operation: Operation
    reason: str


@dataclass(frozen=True, slots=True)
class Generated:
    """Everything one import produced."""

    tools: tuple[GeneratedTool, ...]
    skipped: tuple[SkippedOperation, ...]
    warnings: tuple[Diagnostic, ...]


def document_info(root: DocumentFile) -> tuple[str, str]:
    """``info.title`` and ``info.version`` (empty strings when missing)."""
    info = root.data.get("info") if isinstance(root.data, Mapping) else None
    info = info if isinstance(info, Mapping) else {}
    title, version = info.get("title"), info.get("version")
    return (clean_text(title, 200) if isinstance(title, str) else "",
            clean_text(str(version), 100) if version is not None else "")


def generate(root: DocumentFile, operations: Sequence[Operation],
             settings: ImportSettings,
             progress: Callable[[int, int], None] | None = None,
             finish: Callable[[GeneratedTool], GeneratedTool] | None = None) -> Generated:
    """Map every selected operation; a refusal anywhere (located) stops the whole import.

    ``progress(done, total)`` is told after each operation (the command draws a line).
    ``finish(tool)`` is given each tool as it is made and returns what is kept of it (the
    command renders the file then and keeps the tool without its data: an import of
    thousands of operations never holds them all).
    """
    refs = References(root)
    budget = Budget.for_document(len(root.text))
    title, version = document_info(root)
    tools: list[GeneratedTool] = []
    skipped: list[SkippedOperation] = []
    warnings: list[Diagnostic] = []
    problems: list[Diagnostic] = []
    own: list[Diagnostic] = []  # problems of single operations, each skipped
    twins = _fragment_twins(root)
    for done, operation in enumerate(operations):
        if progress is not None:
            progress(done, len(operations))
        budget.start_operation()
        try:
            if operation.problem is not None:
                raise ImportRefused((operation.problem,))
            made = _one(root, refs, budget, operation, settings, (title, version), warnings,
                        twins)
        except Unexpressible as reason:
            skipped.append(SkippedOperation(operation, str(reason)))
            continue
        except ImportRefused as refused:
            if not all(d.code in OPERATION_PROBLEMS for d in refused.diagnostics):
                problems += refused.diagnostics
                continue
            # One bad operation never refuses the rest: skipped, its problem located.
            own += refused.diagnostics
            warnings += [replace(d, severity=Severity.WARNING) for d in refused.diagnostics]
            skipped.append(SkippedOperation(operation, refused.diagnostics[0].message))
            continue
        tools.append(made if finish is None else finish(made))
    if progress is not None:
        progress(len(operations), len(operations))
    if not tools and own:
        problems += own  # nothing could be imported: the reasons are the refusal
    if problems:
        # One cause (no server, say) repeats for every operation: say it once.
        raise ImportRefused(tuple(dict.fromkeys(problems)))
    return Generated(tuple(tools), tuple(skipped), tuple(warnings))


def _one(root: DocumentFile, refs: References, budget: Budget, operation: Operation,
         settings: ImportSettings, info: tuple[str, str], warnings: list[Diagnostic],
         twins: Mapping[str, list[str]]) -> GeneratedTool:
    key = operation.key
    title, version = info
    if key.method not in SENDABLE_METHODS:
        raise Unexpressible(f"an api tool sends {', '.join(m.upper() for m in SENDABLE_METHODS)}"
                            f", not {key.method.upper()}")
    item = operation.item(root)
    target = operation.target(root)
    credentials = credentials_for(root.data, target.value, title or "api",
                                  settings.security)
    mapper = OperationMapper(refs, budget, credentials, title or "api")
    base, server_warnings, own_server = server_url(root, item, key.method, settings.server,
                                                   settings.allow_private_networks)
    warnings += server_warnings
    if own_server is not None:
        mapper.notes.append(own_server)
    url = base + mapper.url_path(key.path)
    if operation.referred is not None:
        mapper.notes.append(f"path item read from its $ref ({item.pointer[:200]} in "
                            f"{item.file.shown[:200]})")
    mapper.notes.extend(_same_request_line(root, twins, key.path, key.method))
    mapper.parameters(item, target, title or "api")
    content_type = mapper.request_body(target, key.method)
    if credentials.query:
        url += ("&" if "?" in url else "?") + "&".join(
            f"{quote(name, safe=_UNRESERVED)}={_query_value(value)}"
            for name, value in credentials.query.items())
    arguments = mapper.arguments
    missing = sorted(set(_slots(url)) - set(arguments.path_params))
    if missing:
        raise Unexpressible(f"path slot(s) {', '.join(missing)} have no path parameter")
    summary = target.value.get("summary")
    summary = clean_text(summary, 200) if isinstance(summary, str) else ""
    long = target.value.get("description")
    long = window(long, MAX_TOOL_DESCRIPTION) if isinstance(long, str) else ""
    description = clean_text("\n\n".join(t for t in (summary, long) if t.strip()),
                             MAX_TOOL_DESCRIPTION) or key.label
    options: dict[str, Any] = {"name": operation.code, "description": description,
                               "method": key.method.upper(), "url": url}
    for section in PARAMETER_SECTIONS:
        if arguments.tables[section.key]:
            options[section.key] = _without_marks(arguments.tables[section.key])
    if mapper.body_template is not None:
        options["body_template"] = mapper.body_template
    headers = dict(credentials.headers)
    if content_type is not None:
        headers["Content-Type"] = content_type
    if headers:
        options["headers"] = headers
    try:
        refuse_foreign_placeholders(options, (s.name for s in credentials.settings))
    except SinkRefused as refused:
        raise Unexpressible(str(refused)) from None
    output = derived_output_schema(refs, target)
    if output.schema is not None:
        options["output_schema"] = output.schema
    mapper.notes.extend(output.notes)
    if target.value.get("deprecated") is True:
        mapper.notes.append("the document marks this operation deprecated")
    data = {
        "apiVersion": "capc/v1",
        "kind": "Capability",
        "code": operation.code,
        "name": clean_text(summary or key.label, 120),
        "description": clean_text(summary, 200) or key.label,
        "type": "api",
        "options": options,
        "origin": {"openapi": {
            "sha256": root.sha256, "title": title, "version": version,
            "operation": pointer_of(operation.json_path), "importer": IMPORTER_VERSION}},
    }
    notes = (*credentials.notes, *mapper.notes)
    return GeneratedTool(operation, data, tuple(dict.fromkeys(notes)),
                         tuple(credentials.settings))


def _fragment_twins(root: DocumentFile) -> dict[str, list[str]]:
    """Paths by what they send once their ``#fragment`` is dropped (``/items#byId`` and
    ``/items#byName`` both send ``/items``), for the paths that share one; one pass."""
    paths = root.data.get("paths") if isinstance(root.data, Mapping) else None
    by_bare: dict[str, list[str]] = {}
    for path in paths if isinstance(paths, Mapping) else ():
        by_bare.setdefault(str(path).partition("#")[0], []).append(str(path))
    return {bare: found for bare, found in by_bare.items() if len(found) > 1}


def _same_request_line(root: DocumentFile, twins: Mapping[str, list[str]], path: str,
                       method: str) -> list[str]:
    """The note each operation of a shared request line carries: each stays its own tool."""
    others = (other for other in twins.get(path.partition("#")[0], ())[:_MAX_TWINS]
              if other != path and isinstance(root.data["paths"][other], Mapping)
              and isinstance(root.data["paths"][other].get(method), Mapping))
    return [f"{method.upper()} {other[:80]!r} sends the same request line (both are "
            "imported, as two tools)" for other in others]


def _slots(url: str) -> list[str]:
    return _SLOT.findall(url)


def _query_value(value: str) -> str:
    """A fixed query value as the URL carries it: a ``${SETTING}`` placeholder as it is
    (the runtime encodes its value), a document's literal percent-encoded, so no ``{``,
    ``$``, ``&`` or ``#`` of the document is read as a slot, a setting or a new pair."""
    return value if SETTING_PATTERN.fullmatch(value) else quote(value, safe=_UNRESERVED)


def _without_marks(value: Any) -> Any:
    """``value`` without the importer's own marks. A field the document requires and gives
    a default is written optional: the default is sent when the model leaves it out, so
    the request still carries it, and capc's `api-required-default` holds."""
    if isinstance(value, dict):
        defaulted = value.get("required") is True and "default" in value
        return {k: _without_marks(v) for k, v in value.items()
                if k != BINARY_MARK and not (defaulted and k == "required")}
    return value
