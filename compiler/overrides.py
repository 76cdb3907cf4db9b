"""``kind: ToolOverride`` at compile time: compose, apply to api tools, validate, keep the rest.

Order is the documented one: sorted source path, then document order (the order the
pipeline hands documents in). Entries are frozen: each override yields a new tool entry
from the previous one. Overrides of tools the tree does not define (plugin tools) are kept
for boot as PendingOverride entries.
"""

from __future__ import annotations

import re
from collections.abc import Collection, Mapping
from typing import Any

from compiler.checks.output_schema import check_override_output_schema
from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.runtime.descriptors import (
    CONSUMER_ONLY_FIELD,
    PATCH_FIELDS,
    ToolDescriptor,
    ToolOverride,
    apply_override,
)
from compiler.runtime.manifest.fields import freeze, json_copy
from compiler.runtime.manifest.model import (
    ApiToolEntry,
    AppliedOverride,
    CapabilityEntry,
    PendingOverride,
    SourceLocation,
)
from compiler.runtime.manifest.parameters import added_fields
from compiler.runtime.records import record

# argument_schemas, not argument_models: a compile never builds a model (four dataclasses).
from compiler.runtime.tools.argument_schemas import unsupported_schema_features
from compiler.source.documents import SourceDocument

INVALID_PATTERN = Code("invalid-pattern", "an override's pattern is not a valid regex")
OVERRIDE_CONSUMER_ONLY_BOUND = Code(
    "override-consumer-only-bound", "a consumer-only field names a parameter the executor reads")
OVERRIDE_CONSUMER_ONLY_UNKNOWN = Code(
    "override-consumer-only-unknown",
    "a consumer-only field names no parameter of the patched input")
OVERRIDE_EMPTY = Code("override-empty", "an override changes nothing")
OVERRIDE_INVALID_SCHEMA = Code(
    "override-invalid-schema", "the patched input schema is not a valid JSON Schema")
OVERRIDE_REMOVES_REQUIRED = Code(
    "override-removes-required", "an override removes an argument the executor needs")
OVERRIDE_UNBOUND_PARAMETER = Code(
    "override-unbound-parameter", "a parameter is not consumed by the executor", Severity.WARNING)
OVERRIDE_UNKNOWN_TOOL = Code(
    "override-unknown-tool", "an override names no known tool", Severity.WARNING)
OVERRIDE_UNSUPPORTED_SCHEMA = Code(
    "override-unsupported-schema", "the patched input schema cannot become an argument model")
UNSAFE_PATTERN = Code("unsafe-pattern", "a pattern could backtrack catastrophically")
CODES = (
    INVALID_PATTERN, OVERRIDE_CONSUMER_ONLY_BOUND, OVERRIDE_CONSUMER_ONLY_UNKNOWN,
    OVERRIDE_EMPTY, OVERRIDE_INVALID_SCHEMA, OVERRIDE_REMOVES_REQUIRED,
    OVERRIDE_UNBOUND_PARAMETER, OVERRIDE_UNKNOWN_TOOL, OVERRIDE_UNSUPPORTED_SCHEMA,
    UNSAFE_PATTERN,
)

# Python's re backtracks: a repeated group whose body can split one input many ways —
# ``(a+)+``, ``(\w+\s?)*``, ``(a|aa)*`` — takes exponential time on a near-miss, and
# override patterns are checked at every tool call. Such patterns are refused.
_ATOM = re.compile(r"(\\.|\[(?:[^\]\\]|\\.)*\]|[^\\])([+*?]|\{\d*,?\d*\})?\??")
_QUANTIFIED_GROUP = re.compile(r"\((?:\?:)?((?:[^()\\]|\\.)*)\)(?:[+*]|\{\d*,\d*\})")
MAX_PATTERN_LENGTH = 256


@record(frozen=True, slots=True)
class OverrideResult:
    """The api tools after the overrides (by original name), the pending overrides (for
    boot) and what composing found."""

    tools: dict[str, ApiToolEntry]
    pending: list[PendingOverride]
    diagnostics: list[Diagnostic]

    def applied_to(self, capabilities: list[CapabilityEntry]) -> list[CapabilityEntry]:
        """``capabilities`` with each api tool replaced by its overridden entry."""
        # ``tools`` holds every api tool, most of them untouched (the very same entry):
        # those capabilities are kept as they are rather than copied.
        return [entry.with_tool(tool)
                if entry.tool is not None and (tool := self.tools.get(
                    entry.tool.original_name, entry.tool)) is not entry.tool else entry
                for entry in capabilities]


def override_of(document: SourceDocument) -> ToolOverride | None:
    """The ToolOverride a document declares, or None when it sets no patch field."""
    patch = {key: json_copy(document.data[key]) for key in PATCH_FIELDS
             if key in document.data}
    if not patch:
        return None
    if CONSUMER_ONLY_FIELD in document.data:
        patch[CONSUMER_ONLY_FIELD] = tuple(document.data[CONSUMER_ONLY_FIELD])
    return ToolOverride.from_patch(document.data["tool"], patch,
                                   source=f"{document.path}:{document.first_line}")


def apply_tree_overrides(
    documents: list[SourceDocument],
    tools: Mapping[str, tuple[ApiToolEntry, Collection[str]]],
    plugin_tools: Collection[str] = (),
    unresolved: Collection[str] = (),
) -> OverrideResult:
    """Apply overrides to ``tools`` (original name → (tool entry, the executor's argument
    names)); the result holds the new entries, the inputs are left as they were.

    ``plugin_tools`` are tool names known from installed plugins: overrides of those are
    kept for boot without a warning. ``unresolved`` are names a failed document may
    define: no warning either, it would only repeat that document's error.
    """
    current = {name: tool for name, (tool, _) in tools.items()}
    # Per tool, the parameters overrides so far declared read by consumers only.
    declared: dict[str, frozenset[str]] = {}
    pending: list[PendingOverride] = []
    found: list[Diagnostic] = []
    for document in documents:
        override = override_of(document)
        if override is None:
            found.append(Diagnostic.error(
                document.location(("tool",), key=True), OVERRIDE_EMPTY,
                "this override sets nothing: give at least one of " + ", ".join(PATCH_FIELDS)))
            continue
        tool = current.get(override.tool)
        if tool is None:
            pending.append(PendingOverride(
                tool=override.tool, source=_source(document), patch=freeze(override.as_patch()),
                lines=freeze({field: document.location((field,)).line
                              for field in override.fields()})))
            if override.output_schema is not None:
                found += check_override_output_schema(document, "output_schema",
                                                      override.output_schema)
            if override.tool not in plugin_tools and override.tool not in unresolved:
                found.append(_unknown_tool(document, override.tool, [*tools, *plugin_tools]))
            continue
        before = tool.descriptor(declared.get(override.tool, frozenset()))
        after = apply_override(before, override, owned=True)  # ``before`` is a fresh copy
        declared[override.tool] = after.consumer_only
        found += _validate(document, before, after, tools[override.tool][1])
        found += _output_problems(document, before, after)
        found += consumer_only_problems(document, override, after, tools[override.tool][1])
        found += _nested_unbound(document, after, tools[override.tool])
        current[override.tool] = _recorded(document, tool, after, override)
    return OverrideResult(current, pending, found)


def _source(document: SourceDocument) -> SourceLocation:
    return SourceLocation(document.path, document.first_line)


def _unknown_tool(document: SourceDocument, name: str, known: list[str]) -> Diagnostic:
    import difflib  # only an error's "did you mean" needs it
    close = difflib.get_close_matches(name, known, n=1, cutoff=0.6)
    hint = f"; did you mean {close[0]!r}?" if close else ""
    return Diagnostic.warning(
        document.location(("tool",)), OVERRIDE_UNKNOWN_TOOL,
        f"no tool {name!r} is defined in this tree or by a known plugin{hint} "
        "(kept for boot: applied if a plugin registers it, else logged and skipped)")


def _recorded(
    document: SourceDocument, tool: ApiToolEntry, after: ToolDescriptor, override: ToolOverride
) -> ApiToolEntry:
    """``tool`` with ``after``'s descriptor, the provenance of the fields ``override`` set
    and the override appended to those applied."""
    fields = override.fields()
    # The fields' new locations, then one new provenance (``replace`` per field is slow).
    moved: dict[str, SourceLocation] = {}
    for field_name in fields:
        touched = field_name.removesuffix("_append").removesuffix("_patch")
        location = SourceLocation(document.path, document.location((field_name,)).line)
        moved[touched] = location
        if touched == "namespace":
            moved["name"] = location
    provenance = tool.provenance.moved(moved)
    applied = AppliedOverride(document.path, document.first_line, tuple(fields))
    return tool.patched(name=after.name, description=after.description,
                        input_schema=freeze(after.input_schema),
                        output_schema=freeze(after.output_schema),
                        namespace=after.namespace, provenance=provenance,
                        overrides=(*tool.overrides, applied))


def _output_problems(document: SourceDocument, before: ToolDescriptor,
                     after: ToolDescriptor) -> list[Diagnostic]:
    """An output schema the override changed, checked as an api capability's (SPEC §16)."""
    if after.output_schema is None or before.output_schema == after.output_schema:
        return []
    key = "output_schema_patch" if "output_schema_patch" in document.data else "output_schema"
    return check_override_output_schema(document, key, after.output_schema)


def _validate(
    document: SourceDocument, before: ToolDescriptor, after: ToolDescriptor,
    arguments: Collection[str],
) -> list[Diagnostic]:
    path = ("input_schema_patch",) if "input_schema_patch" in document.data else ("input_schema",)
    if before.input_schema == after.input_schema:
        return []
    at = document.location(path)
    schema = after.input_schema
    invalid = invalid_schema(at, schema)
    if invalid:
        return invalid
    problems = unsupported_schema_features(schema)
    if problems:
        return [Diagnostic.error(at, OVERRIDE_UNSUPPORTED_SCHEMA,
                                 f"the patched input schema cannot become an argument model: {p}")
                for p in problems]
    found: list[Diagnostic] = []
    properties = schema.get("properties", {})
    required = set(schema.get("required", []))
    def at_property(name: str, *rest: str) -> Any:
        return document.location((*path, "properties", name, *rest))

    for name in properties:
        if name not in arguments and name not in after.consumer_only:
            found.append(Diagnostic.warning(
                at_property(name), OVERRIDE_UNBOUND_PARAMETER,
                f"parameter {name!r} is not consumed by the executor (no path, query, body, "
                "template or file binding): the model may send it, and it is dropped; if "
                f"consumers of the tool call read it, declare it: {CONSUMER_ONLY_FIELD}: "
                f"[{name}]"))
    for name in before.input_schema.get("required", []):
        still = name in properties and (name in required or "default" in properties[name])
        if name in arguments and not still:
            found.append(Diagnostic.error(
                at, OVERRIDE_REMOVES_REQUIRED,
                f"the executor needs argument {name!r}, which this override removes or makes "
                "optional without a default"))
    for name, prop in properties.items():
        found += check_pattern(at_property(name, "pattern"), name, prop.get("pattern"))
    return found


def consumer_only_problems(
    document: SourceDocument, override: ToolOverride, after: ToolDescriptor,
    arguments: Collection[str],
) -> list[Diagnostic]:
    """Errors for a ``consumer_only`` name the patched schema lacks or the executor consumes.

    Either would make the declaration false: the model would never send the first, and
    the second would be taken from the executor it feeds.
    """
    found: list[Diagnostic] = []
    properties = after.input_schema.get("properties") or {}
    for index, name in enumerate(override.consumer_only):
        at = document.location((CONSUMER_ONLY_FIELD, index))
        if name not in properties:
            found.append(Diagnostic.error(
                at, OVERRIDE_CONSUMER_ONLY_UNKNOWN,
                f"{CONSUMER_ONLY_FIELD} names {name!r}, which is not a parameter of the "
                "patched input schema: add it to the schema or remove it from the list"))
        elif name in arguments:
            found.append(Diagnostic.error(
                at, OVERRIDE_CONSUMER_ONLY_BOUND,
                f"the executor consumes {name!r}, so it is not read by consumers only: remove "
                f"it from {CONSUMER_ONLY_FIELD}"))
    return found


def _nested_unbound(document: SourceDocument, after: ToolDescriptor,
                    compiled: tuple[ApiToolEntry, Collection[str]]) -> list[Diagnostic]:
    """A nested field an override shows the model inside an argument the source declared
    without it: the executor drops it before the request (SPEC §2.2, nested; §10)."""
    tool, arguments = compiled
    path = ("input_schema_patch",) if "input_schema_patch" in document.data else ("input_schema",)
    shown = after.input_schema.get("properties", {})
    accepted = tool.input_schema.get("properties", {})
    found = []
    for name in arguments:
        if name in shown and name in accepted:
            for field in added_fields(shown[name], accepted[name], name):
                found.append(Diagnostic.warning(
                    document.location((*path, "properties", name)), OVERRIDE_UNBOUND_PARAMETER,
                    f"field {field!r} is not in the source's declaration of {name!r}: the model "
                    "may send it, and it is dropped before the request"))
    return found


def _ambiguous_repetition(pattern: str) -> bool:
    """A repeated group made only of repeatable or optional atoms (``(\\w+\\s?)*``)."""
    for match in _QUANTIFIED_GROUP.finditer(pattern):
        atoms = _ATOM.findall(match.group(1))
        repeated = any(_repeats(quantifier) for _, quantifier in atoms)
        required = [atom for atom, q in atoms if not q and atom != "|"]
        if repeated and not required:
            return True
    return False


def _repeats(quantifier: str) -> bool:
    return quantifier in ("+", "*") or (quantifier.startswith("{") and "," in quantifier)


def _overlapping_alternation(pattern: str) -> bool:
    """A repeated group whose alternatives overlap (``(a|aa)*``) backtracks exponentially."""
    for match in _QUANTIFIED_GROUP.finditer(pattern):
        alternatives = _top_level_alternatives(match.group(1))
        for index, first in enumerate(alternatives):
            for second in alternatives[index + 1:]:
                if not first or not second or first.startswith(second) \
                        or second.startswith(first) or _is_class(first) or _is_class(second):
                    return True
    return False


def _top_level_alternatives(group: str) -> list[str]:
    parts, depth, current, escaped = [], 0, "", False
    for character in group:
        if escaped:
            current, escaped = current + character, False
            continue
        if character == "\\":
            current, escaped = current + character, True
            continue
        depth += character in "(["
        depth -= character in ")]"
        if character == "|" and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += character
    return [*parts, current] if parts else []


def _is_class(alternative: str) -> bool:
    # A character class or escape class may overlap any literal: stay conservative.
    return alternative.startswith(("[", "\\w", "\\d", "\\s", "\\S", "\\W", "\\D", "."))


def invalid_schema(at: Any, schema: dict[str, Any]) -> list[Diagnostic]:
    """An error at ``at`` when the patched input ``schema`` is not a valid JSON Schema."""
    import jsonschema  # here: most trees patch no input schema, and it costs 70 ms to import

    try:
        jsonschema.Draft202012Validator.check_schema(schema)
    except jsonschema.SchemaError as error:
        return [Diagnostic.error(at, OVERRIDE_INVALID_SCHEMA,
                                 f"the patched input schema is not a valid JSON Schema: "
                                 f"{error.message}")]
    return []


def check_pattern(at: Any, name: str, pattern: Any) -> list[Diagnostic]:
    """Errors for a ``pattern`` of property ``name`` that is invalid or may backtrack."""
    if not isinstance(pattern, str):
        return []
    if len(pattern) > MAX_PATTERN_LENGTH or _ambiguous_repetition(pattern) \
            or _overlapping_alternation(pattern):
        return [Diagnostic.error(at, UNSAFE_PATTERN,
                                 f"pattern of {name!r} could backtrack catastrophically (a "
                                 "repeated group that can match the same text in several ways, "
                                 f"or longer than {MAX_PATTERN_LENGTH}); simplify it")]
    try:
        re.compile(pattern)
    except re.error as error:
        return [Diagnostic.error(at, INVALID_PATTERN, f"pattern of {name!r}: {error}")]
    return []
