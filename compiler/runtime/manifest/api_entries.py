"""The api entries of the manifest: the request (``ApiEndpoint``, its ``ArgumentBinding``s)
and the tool the model sees (``ApiToolEntry``, its ``ToolProvenance``), with the request
defaults they fill in.

Part of the manifest model (``compiler.runtime.manifest.model``, which re-exports these
names and describes the parse/``to_json`` contract every entry class keeps).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import field
from types import MappingProxyType
from typing import Any

from compiler.runtime.descriptors import ToolDescriptor
from compiler.runtime.manifest.fields import (
    BUILD,
    LISTS,
    OBJECTS,
    EntryShapeError,
    JsonObject,
    ParseMode,
    json_object,
    object_or_empty,
    optional_string,
    positive_integer,
    positive_number,
    required_string,
    string_map,
    string_or,
    strings,
    thaw,
)
from compiler.runtime.manifest.origins import AppliedOverride, SourceLocation
from compiler.runtime.manifest.parameters import (
    ARRAY_STYLES,
    OBJECT_STYLES,
    PARAMETER_SECTIONS,
)
from compiler.runtime.records import record

BINDING_KINDS = frozenset(section.binding for section in PARAMETER_SECTIONS)
QUERY_STYLES = frozenset((*ARRAY_STYLES, *OBJECT_STYLES))
DEFAULT_METHOD = "GET"
# The methods an api capability sends (the capability schema's options.method enum, and
# what `capc import openapi` can turn into a tool): one list, a test holds them together.
API_METHODS = ("GET", "POST", "PUT", "PATCH", "DELETE")
# Methods a retry may repeat without an idempotency key (RFC 9110 section 9.2.2). Here, not
# in runtime.api.retry, so the compile side reads it without importing asyncio.
IDEMPOTENT_METHODS = frozenset({"GET", "HEAD", "OPTIONS", "PUT", "DELETE"})
DEFAULT_TIMEOUT = 30.0
DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024
DEFAULT_ARGUMENT_TYPE = "string"
PROVENANCE_FIELDS = ("name", "description", "input_schema", "output_schema", "namespace")


def _binding_kinds(bindings: Iterable[Any]) -> bool:
    try:  # every kind is a string, so a superset check is also the type check
        return BINDING_KINDS.issuperset(bindings)
    except TypeError:  # an unhashable item
        return False


# -- entries --------------------------------------------------------------------------------

_PROVENANCE_WHERE = {name: f"provenance.{name}" for name in PROVENANCE_FIELDS}


def _optional_location(raw: Any, field_name: str, mode: ParseMode) -> SourceLocation | None:
    if raw is None:
        return None
    return SourceLocation.parse(raw, _PROVENANCE_WHERE[field_name], mode)


@record(frozen=True, slots=True)
class ArgumentBinding:
    """Where one argument goes in the request (``multiple``: file arguments only;
    ``style``: how an array or object travels in the query, SPEC §10, else None)."""

    name: str
    bindings: tuple[str, ...]
    type: str = DEFAULT_ARGUMENT_TYPE
    multiple: bool = False
    style: str | None = None
    # Arrays and objects: the structure the executor accepts (parameters.accepted_shape);
    # nested keys outside it are dropped before a request, whatever an override shows.
    accepts: Mapping[str, Any] | None = None
    # The exact name sent in the query, header or body when it is not ``name`` (``$filter``,
    # ``api-version``, ``X-Request-Id``); None: the argument's own name.
    wire: str | None = None

    @classmethod
    def parse(cls, name: str, raw: Any, mode: ParseMode = BUILD) -> ArgumentBinding:
        """The binding of argument ``name``."""
        if not isinstance(raw, OBJECTS):
            raise EntryShapeError(f"argument {name!r} must be an object")
        bindings = raw.get("bindings")
        if bindings.__class__ not in LISTS or not bindings or not _binding_kinds(bindings):
            raise EntryShapeError(f"argument {name!r}: bad bindings {bindings!r}")
        kind = raw.get("type", DEFAULT_ARGUMENT_TYPE)
        if kind.__class__ is not str:
            raise EntryShapeError(f"argument {name!r}: type must be a string")
        multiple = raw.get("multiple", False)
        if multiple.__class__ is not bool:
            raise EntryShapeError(f"argument {name!r}: multiple must be a boolean")
        style = raw.get("style")
        if style is not None and (style.__class__ is not str or style not in QUERY_STYLES):
            raise EntryShapeError(f"argument {name!r}: unknown style {style!r}")
        accepts = raw.get("accepts")
        if accepts is not None and not isinstance(accepts, OBJECTS):
            raise EntryShapeError(f"argument {name!r}: accepts must be an object")
        wire = raw.get("wire")
        if wire is not None and (wire.__class__ is not str or not wire):
            raise EntryShapeError(f"argument {name!r}: wire must be a non-empty string")
        return mode.make(cls, name, tuple(bindings), kind, multiple, style,
                         mode.freeze(accepts), wire)

    def to_json(self) -> JsonObject:
        """``{"bindings", "type"}``, plus ``multiple`` for a file argument and ``style``
        for a query array or object (absent otherwise, so older manifests keep their bytes)."""
        written: JsonObject = {"bindings": list(self.bindings), "type": self.type}
        if "file" in self.bindings:
            written["multiple"] = self.multiple
        if self.style is not None:
            written["style"] = self.style
        if self.accepts is not None:
            written["accepts"] = thaw(self.accepts)
        if self.wire is not None:
            written["wire"] = self.wire
        return written

    @property
    def sent_as(self) -> str:
        """The name the value travels under: the wire name, else the argument's."""
        return self.name if self.wire is None else self.wire


@record(frozen=True, slots=True)
class ApiEndpoint:
    """The ``api`` block of a capability: the executor's request recipe."""

    url: str
    method: str = DEFAULT_METHOD
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    body_template: Any = None
    timeout: float = DEFAULT_TIMEOUT
    max_response_bytes: int = DEFAULT_MAX_RESPONSE_BYTES
    arguments: Mapping[str, ArgumentBinding] = field(
        default_factory=lambda: MappingProxyType({}))
    placeholders: tuple[str, ...] = ()
    # SPEC §8, each None unless the source sets it (and then in the JSON); the runtime's
    # compiler.runtime.api.shaping / .retry read them.
    response: Mapping[str, Any] | None = None
    retry: Mapping[str, Any] | None = None
    max_concurrency: int | None = None

    def bound(self, kind: str) -> list[str]:
        """The argument names with binding ``kind``, in declaration order."""
        return [name for name, argument in self.arguments.items() if kind in argument.bindings]

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> ApiEndpoint:
        """The endpoint of an ``api`` JSON block."""
        raw = json_object(raw, "api")
        arguments = {name: ArgumentBinding.parse(name, spec, mode)
                     for name, spec in object_or_empty(raw, "arguments").items()}
        template = raw.get("body_template")
        if template is not None and not isinstance(template, (str, *LISTS, *OBJECTS)):
            raise EntryShapeError("body_template must be an object, a list, a string or null")
        method = string_or(raw, "method", DEFAULT_METHOD).upper()
        return mode.make(
            cls,
            required_string(raw, "url"),
            method,
            string_map(raw, "headers", mode),
            mode.freeze(template),
            positive_number(raw, "timeout", DEFAULT_TIMEOUT),
            positive_integer(raw, "max_response_bytes", DEFAULT_MAX_RESPONSE_BYTES),
            MappingProxyType(arguments),
            strings(raw, "placeholders"),
            _optional_block(raw, "response", mode),
            _optional_block(raw, "retry", mode),
            _optional_positive_integer(raw, "max_concurrency"),
        )

    def to_json(self) -> JsonObject:
        """The ``api`` JSON block (``response``, ``retry``, ``max_concurrency`` when set)."""
        written: JsonObject = {}
        if self.response is not None:
            written["response"] = thaw(self.response)
        if self.retry is not None:
            written["retry"] = thaw(self.retry)
        if self.max_concurrency is not None:
            written["max_concurrency"] = self.max_concurrency
        return written | {
            "method": self.method,
            "url": self.url,
            "headers": dict(self.headers),
            "body_template": thaw(self.body_template),
            "timeout": self.timeout,
            "max_response_bytes": self.max_response_bytes,
            "arguments": {name: argument.to_json() for name, argument in self.arguments.items()},
            "placeholders": list(self.placeholders),
        }


def _optional_block(raw: Mapping[str, Any], key: str, mode: ParseMode) -> Any:
    value = raw.get(key)
    if value is None:
        return None
    return mode.freeze(json_object(value, key))


def _optional_positive_integer(raw: Mapping[str, Any], key: str) -> int | None:
    return None if raw.get(key) is None else positive_integer(raw, key, 1)


@record(frozen=True, slots=True)
class ToolProvenance:
    """Where each descriptor field of an api tool last came from (None: nowhere)."""

    name: SourceLocation | None = None
    description: SourceLocation | None = None
    input_schema: SourceLocation | None = None
    output_schema: SourceLocation | None = None
    namespace: SourceLocation | None = None

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> ToolProvenance:
        """The provenance object of a tool (absent fields: None)."""
        raw = object_or_empty({"provenance": raw}, "provenance")
        return mode.make(cls, *[_optional_location(raw.get(name), name, mode)
                                for name in PROVENANCE_FIELDS])

    def of(self, field_name: str) -> SourceLocation | None:
        """The location of one descriptor field."""
        location: SourceLocation | None = getattr(self, field_name)
        return location

    def moved(self, locations: Mapping[str, SourceLocation]) -> ToolProvenance:
        """This provenance with the fields named in ``locations`` moved there
        (``dataclasses.replace`` without its per-call introspection)."""
        return ToolProvenance(*[locations.get(name, self.of(name))
                                for name in PROVENANCE_FIELDS])

    def to_json(self) -> JsonObject:
        """``{FIELD: {"path", "line"} | null}`` for every descriptor field."""
        # Spelled out (the fields of PROVENANCE_FIELDS, in order; a test compares them):
        # every api tool writes one, and a getattr per field is most of its cost.
        return {"name": _location_json(self.name),
                "description": _location_json(self.description),
                "input_schema": _location_json(self.input_schema),
                "output_schema": _location_json(self.output_schema),
                "namespace": _location_json(self.namespace)}


def _location_json(location: SourceLocation | None) -> JsonObject | None:
    return None if location is None else location.to_json()


@record(frozen=True, slots=True)
class ApiToolEntry:
    """The ``tool`` block of an api capability: its final descriptor and provenance."""

    name: str
    original_name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Any = None
    namespace: str | None = None
    provenance: ToolProvenance = ToolProvenance()
    overrides: tuple[AppliedOverride, ...] = ()
    # options.strict (SPEC §10): the provider is asked for strict tool calling.
    strict: bool = False

    def descriptor(self, consumer_only: frozenset[str] = frozenset()) -> ToolDescriptor:
        """A mutable ToolDescriptor copy, for overrides to patch (``consumer_only``: the
        parameters earlier overrides declared read by consumers only)."""
        return ToolDescriptor(
            name=self.name,
            description=self.description,
            input_schema=thaw(self.input_schema),
            output_schema=thaw(self.output_schema),
            original_name=self.original_name,
            consumer_only=consumer_only,
        )

    def patched(self, *, name: str, description: str, input_schema: Mapping[str, Any],
                output_schema: Any, namespace: str | None, provenance: ToolProvenance,
                overrides: tuple[AppliedOverride, ...]) -> ApiToolEntry:
        """This tool after one more override (``original_name`` and ``strict`` kept):
        ``dataclasses.replace`` without its per-call introspection."""
        return ApiToolEntry(name, self.original_name, description, input_schema,
                            output_schema, namespace, provenance, overrides, self.strict)

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> ApiToolEntry:
        """The entry of a ``tool`` JSON block."""
        raw = json_object(raw, "tool")
        if "input_schema" not in raw:
            raise EntryShapeError("missing key 'input_schema'")
        schema = json_object(raw["input_schema"], "tool.input_schema")
        output = raw.get("output_schema")
        if output is not None:
            json_object(output, "tool.output_schema")
        name = required_string(raw, "name")
        overrides = raw.get("overrides")
        if overrides is not None and not isinstance(overrides, LISTS):
            raise EntryShapeError("tool.overrides must be a list")
        strict = raw.get("strict", False)
        if strict.__class__ is not bool:
            raise EntryShapeError("tool.strict must be a boolean")
        return mode.make(
            cls,
            name,
            original_name(raw),
            string_or(raw, "description", ""),
            mode.freeze(schema),
            mode.freeze(output),
            optional_string(raw, "namespace"),
            ToolProvenance.parse(raw.get("provenance"), mode),
            tuple(AppliedOverride.parse(item, mode) for item in overrides or ()),
            strict,
        )

    def to_json(self) -> JsonObject:
        """The ``tool`` JSON block (``strict`` only when true)."""
        written: JsonObject = {"strict": True} if self.strict else {}
        return written | {
            "name": self.name,
            "original_name": self.original_name,
            "description": self.description,
            "input_schema": thaw(self.input_schema),
            "output_schema": thaw(self.output_schema),
            "namespace": self.namespace,
            "provenance": self.provenance.to_json(),
            "overrides": [override.to_json() for override in self.overrides],
        }


def original_name(tool: Mapping[str, Any]) -> str:
    """The name overrides target: ``original_name``, else the tool's ``name``."""
    return string_or(tool, "original_name", "") or required_string(tool, "name")


# The tool naming rule of an api capability's source (SPEC §10): ``options.name``, else its
# code. Here, below both, so normalisation (the manifest's tool entry) and the checks (the
# name's pattern, duplicates) read one rule and the compile's lower layers never import
# ``checks/`` (tests/unit/test_import_graph.py).
def tool_name(data: Mapping[str, Any]) -> str:
    """The tool name an api capability exposes: ``options.name``, default its code."""
    options = data.get("options") or {}
    return str(options.get("name") or data.get("code", ""))


def tool_name_path(options: Mapping[str, Any]) -> tuple[str, ...]:
    """Where the tool name of an api capability with these ``options`` is written."""
    return ("options", "name") if "name" in options else ("code",)
