"""Semantic checks of parameter entries (SPEC §10), located at the offending node.

The JSON Schema has checked each entry's keys and value types; what is left needs the
entry's meaning: keywords on the wrong type, defaults and enum values that do not fit the
entry (checked with the entry's own schema, nested), formats, patterns, query styles,
structured values where the wire has room for one string only, the depth bound and, on a
``strict: true`` tool, what a provider's strict mode cannot express.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from compiler.checks.parameter_values import check_pattern, check_values
from compiler.diagnostics import Code, Diagnostic
from compiler.runtime.egress.headers import forbidden_header_problem
from compiler.runtime.manifest.parameters import (
    ARRAY_STYLES,
    BODY,
    FILES,
    FORMATS,
    HEADER,
    KEYWORDS_BY_TYPE,
    MAX_PARAMETER_DEPTH,
    OBJECT_STYLES,
    PARAMETER_SECTIONS,
    QUERY,
    STRUCTURED_TYPES,
    TEMPLATE,
    WIRE_NAME,
    ParameterNode,
    ParameterSection,
    parameter_schema,
    walk_parameter,
)
from compiler.runtime.placeholders import find_slots, parse_template, single_slot
from compiler.source.documents import SourceDocument

API_PARAMETER_DEPTH = Code("api-parameter-depth", "a parameter is nested too deeply")
API_PARAMETER_FORMAT = Code("api-parameter-format", "a parameter names an unknown format")
API_PARAMETER_KEYWORD = Code(
    "api-parameter-keyword", "a schema keyword does not apply to the parameter's type")
API_PARAMETER_SCALAR_ONLY = Code(
    "api-parameter-scalar-only", "a non-scalar parameter fills a slot that takes only scalars")
API_PARAMETER_STYLE = Code(
    "api-parameter-style", "a parameter's serialization style is missing or wrong for its place")
API_PARAMETER_WIRE = Code("api-parameter-wire", "two parameters are sent under the same wire name")
API_STRICT_SCHEMA = Code(
    "api-strict-schema", "a parameter schema is outside what strict tool calling accepts")
CODES = (
    API_PARAMETER_DEPTH, API_PARAMETER_FORMAT, API_PARAMETER_KEYWORD, API_PARAMETER_SCALAR_ONLY,
    API_PARAMETER_STYLE, API_PARAMETER_WIRE, API_STRICT_SCHEMA,
)


# One parameter of an api capability with its entries (walk_parameter's nodes, parents
# first; none when the parameter is not a mapping), walked once for every check that reads
# them: this module's and the credential check of ``checks.urls``. A pair, not an object:
# there is one per parameter of the tree, and the walk is what is being saved.
WalkedParameter = tuple[ParameterSection, list[ParameterNode]]


def walked_parameters(options: Mapping[str, Any]) -> tuple[WalkedParameter, ...]:
    """Every parameter of every section (files too), in PARAMETER_SECTIONS order."""
    return tuple((section, walk_parameter(spec, ("options", section.key, name), name))
                 for section in PARAMETER_SECTIONS
                 for name, spec in (options.get(section.key) or {}).items())


def check_parameters(document: SourceDocument, options: Mapping[str, Any],
                     walked: tuple[WalkedParameter, ...] | None = None) -> list[Diagnostic]:
    """Every problem of every parameter entry of one api capability (``walked``: its
    parameters, when the caller has walked them already)."""
    found: list[Diagnostic] = []
    scalar_sections = _scalar_only_sections(options)
    nodes: dict[str, ParameterNode] = {}
    too_deep = False
    walked = walked_parameters(options) if walked is None else walked
    for section, parameter_nodes in walked:
        if section is FILES or not parameter_nodes:  # not a mapping: the schema's to report
            continue
        for node in parameter_nodes:
            nodes.setdefault(node.field, node)
            if node.depth > MAX_PARAMETER_DEPTH:
                found.append(_error(document, node.path, API_PARAMETER_DEPTH,
                                    f"{node.field} is nested deeper than "
                                    f"{MAX_PARAMETER_DEPTH} levels"))
                too_deep = True
                break
            found += _check_node(document, node, section.key)
        top = parameter_nodes[0]
        found += _check_placement(document, section.key, top.field, top.spec, top.path,
                                  scalar_sections)
    if options.get("strict", False) and not too_deep:
        found += _check_strict(document, options, nodes)
    return found + _check_wire_names(document, options, walked)


def _check_wire_names(document: SourceDocument, options: Mapping[str, Any],
                      walked: tuple[WalkedParameter, ...]) -> list[Diagnostic]:
    """Each value has one name on the wire: two arguments (or two fields of one object)
    sent under one name would lose one of them; a header argument may not be one capc
    writes (``Host``) nor one of the configured ``headers``."""
    found: list[Diagnostic] = []
    configured: set[str] | None = None  # the configured headers' names, once a header needs them
    sent: dict[tuple[str, str], str] = {}
    for section, nodes in walked:
        if not nodes or section is FILES:
            continue
        top = nodes[0]
        wire = top.spec.get(WIRE_NAME)
        name = wire if isinstance(wire, str) else top.field
        key = (section.binding, name.lower() if section is HEADER else name)
        if key in sent and sent[key] != top.field:
            found.append(_error(document, top.path, API_PARAMETER_WIRE,
                                f"{top.field!r} and {sent[key]!r} are both sent as {name!r}"))
        sent.setdefault(key, top.field)
        if section is HEADER:
            problem = forbidden_header_problem(name)
            if configured is None:
                configured = {str(header).lower() for header in (options.get("headers") or {})}
            if problem is None and key[1] in configured:
                problem = f"header {name!r} is also one of the configured headers"
            if problem is not None:
                found.append(_error(document, top.path, API_PARAMETER_WIRE, problem))
        for node in nodes:
            fields = node.spec.get("properties")
            if fields is None or node.depth > MAX_PARAMETER_DEPTH \
                    or not isinstance(fields, Mapping):
                continue
            names: dict[str, str] = {}
            for field, child in fields.items():
                as_sent = child.get(WIRE_NAME, field) if isinstance(child, Mapping) else field
                if as_sent in names:
                    found.append(_error(document, (*node.path, "properties", field),
                                        API_PARAMETER_WIRE,
                                        f"{node.field}.{field} and {node.field}."
                                        f"{names[as_sent]} are both sent as {as_sent!r}"))
                names.setdefault(str(as_sent), field)
    return found


def _scalar_only_sections(options: Mapping[str, Any]) -> dict[str, str]:
    """Sections whose values travel as one string, and why."""
    reasons = {"path_params": "path slots are scalars"}
    if options.get(FILES.key):
        reasons[BODY.key] = "with files, body fields are multipart text fields"
    return reasons


def _check_placement(document: SourceDocument, section: str, name: str, spec: Any,
                     path: tuple[str | int, ...], scalar_sections: Mapping[str, str]
                     ) -> list[Diagnostic]:
    if type(spec) is not dict and not isinstance(spec, Mapping):
        return []
    kind = spec.get("type", "string")
    style = spec.get("style")
    found: list[Diagnostic] = []
    if kind in STRUCTURED_TYPES and section in scalar_sections:
        found.append(_error(document, (*path, "type"), API_PARAMETER_SCALAR_ONLY,
                            f"{name!r} is {_a(kind)}, and {scalar_sections[section]}"))
    if kind in STRUCTURED_TYPES and section == TEMPLATE.key:
        found += _check_template_leaf(document, name, kind, path)
    if section != QUERY.key:
        if style is not None:
            found.append(_error(document, (*path, "style"), API_PARAMETER_STYLE,
                                "style applies only to arrays and objects in params"))
        return found
    items = spec.get("items")
    if kind == "array" and isinstance(items, Mapping) and items.get("type") in STRUCTURED_TYPES:
        found.append(_error(document, (*path, "items", "type"), API_PARAMETER_SCALAR_ONLY,
                            f"an array in the query holds strings, numbers or booleans, not "
                            f"{items['type']}s (use a body, or an object with a style)"))
    if kind == "object" and style is None:
        found.append(_error(document, path, API_PARAMETER_STYLE,
                            f"object {name!r} in params needs a style: deep_object "
                            "(filter[state]=open) or json (the object as compact JSON)"))
    elif kind == "object" and style not in OBJECT_STYLES:
        found.append(_error(document, (*path, "style"), API_PARAMETER_STYLE,
                            f"an object in the query takes style deep_object or json, "
                            f"not {style}"))
    elif kind == "array" and style is not None and style not in ARRAY_STYLES:
        found.append(_error(document, (*path, "style"), API_PARAMETER_STYLE,
                            f"an array in the query takes style {', '.join(ARRAY_STYLES)}, "
                            f"not {style}"))
    elif kind not in STRUCTURED_TYPES and style is not None:
        found.append(_error(document, (*path, "style"), API_PARAMETER_STYLE,
                            f"style applies to arrays and objects, not to {_a(kind)}"))
    return found


def _check_template_leaf(document: SourceDocument, name: str, kind: str,
                         path: tuple[str | int, ...]) -> list[Diagnostic]:
    """An array or object slot must be a whole JSON leaf (``"{slot}"``) of the template."""
    template = document.data["options"].get("body_template")
    if template == "{" + name + "}" and _json_content_type(document.data["options"]):
        return []  # the whole body is the argument's JSON (SPEC §10's native leaf)
    leaves: list[Any] = [template]
    inside_text = isinstance(template, str) and name in find_slots(template)
    while leaves and not inside_text:
        node = leaves.pop()
        if isinstance(node, Mapping):
            leaves += list(node.values())
        elif isinstance(node, list):
            leaves += node
        elif isinstance(node, str) and name in find_slots(node):
            inside_text = single_slot(parse_template(node, [name])) != name
    if not inside_text:
        return []
    return [_error(document, (*path, "type"), API_PARAMETER_SCALAR_ONLY,
                   f"{name!r} is {_a(kind)}: it may fill only a whole JSON leaf "
                   f'"{{{name}}}" of body_template, not part of a text')]


def _json_content_type(options: Mapping[str, Any]) -> bool:
    """Whether the capability's written Content-Type header names a JSON type."""
    from compiler.runtime.api.media_types import SlotEncoding, slot_encoding

    headers = options.get("headers")
    values = [value for key, value in (headers.items() if isinstance(headers, Mapping) else ())
              if isinstance(key, str) and key.lower() == "content-type"]
    return len(values) == 1 and isinstance(values[0], str) and "${" not in values[0] \
        and slot_encoding(values[0]) is SlotEncoding.JSON


def _check_node(document: SourceDocument, node: ParameterNode, section: str
                ) -> list[Diagnostic]:
    spec = node.spec
    kind = spec.get("type", "string")
    allowed = KEYWORDS_BY_TYPE.get(kind, frozenset())
    found = [] if allowed.issuperset(spec) else [  # one C-level test for a clean entry
        _error(document, (*node.path, key), API_PARAMETER_KEYWORD,
               f"{key} does not apply to {_a(kind)} ({node.field})")
        for key in spec if key not in allowed]
    if node.depth > 1 and "style" in spec:
        found.append(_error(document, (*node.path, "style"), API_PARAMETER_STYLE,
                            "style applies only to a parameter of params itself"))
    if node.role in ("items", "values") and "required" in spec:
        found.append(_error(document, (*node.path, "required"), API_PARAMETER_KEYWORD,
                            f"required means nothing in {node.path[-1]} ({node.field})"))
    fmt = spec.get("format")
    if fmt is not None and fmt not in FORMATS.get(kind, ()):
        known = ", ".join(FORMATS.get(kind, ())) or "none"
        found.append(_error(document, (*node.path, "format"), API_PARAMETER_FORMAT,
                            f"unknown format {fmt!r} for {_a(kind)} (known: {known})"))
    if "pattern" in spec or "default" in spec or "enum" in spec:  # nothing to find without
        if "pattern" in spec:
            found += check_pattern(document, node)
        if "default" in spec or "enum" in spec:
            found += check_values(document, node, kind)
    return found


def _check_strict(document: SourceDocument, options: Mapping[str, Any],
                  nodes: Mapping[str, ParameterNode]) -> list[Diagnostic]:
    """What keeps a ``strict: true`` tool's schema from a provider's strict mode, located
    at the entry it is about (the one list ``capc validate --format json`` reports)."""
    from compiler.runtime.tools.strict import strict_problems

    properties = {name: parameter_schema(spec) for section in PARAMETER_SECTIONS
                  if section is not FILES
                  for name, spec in (options.get(section.key) or {}).items()}
    schema = {"type": "object", "properties": properties, "additionalProperties": False}
    reasons: dict[tuple[str, str], list[str]] = {}
    for problem in strict_problems(schema):
        reasons.setdefault((problem.field, problem.reason), []).append(problem.provider)
    found = []
    for (field, reason), providers in reasons.items():
        node = nodes.get(field)
        path = node.path if node is not None else ("options", "strict")
        who = " and ".join("OpenAI" if p == "openai" else "Anthropic" for p in providers)
        where = f" ({field})" if field else ""
        found.append(_error(document, path, API_STRICT_SCHEMA,
                            f"strict: true cannot be honoured by {who}{where}: {reason}"))
    return found


def _error(document: SourceDocument, path: tuple[str | int, ...], code: Code, message: str
           ) -> Diagnostic:
    return Diagnostic.error(document.location(path), code, message)


def _a(kind: str) -> str:
    return f"an {kind}" if kind[:1] in "aeiou" else f"a {kind}"
