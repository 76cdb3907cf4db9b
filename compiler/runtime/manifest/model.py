"""The manifest model: typed, frozen entries, defined once for the compiler and the runtime.

The compiler builds these entries (``compiler.normalize``), composes overrides into new
ones (``compiler.overrides``) and writes them with :func:`manifest_json`; the loader reads
them back with :func:`parse_capability` and ``PendingOverride.parse``; ``capc diff``,
``docs`` and ``explain`` read the same entries. docs/manifest.md describes the JSON.

Each entry class keeps its fields in one place, side by side: the dataclass fields,
``parse`` (JSON -> entry) and ``to_json`` (entry -> JSON). To add a field, add it to those
three in the one class, then to docs/manifest.md and to the published JSON Schema
(compiler/schema/json/manifest-v1.json, ``capc schema Manifest``), whose test fails until
the schema has exactly the keys ``to_json`` writes.

Parsing is strict about shape and lenient about absence: a key that is missing takes its
default (older or hand-written manifests), a key that is present with the wrong JSON type
raises :class:`EntryShapeError`, which the reader reports as a ``structure`` ManifestError
naming the entry. ``parse`` takes a :class:`ParseMode`: the loader's load-time check runs
the very same parse in :data:`CHECK` mode (fields checked, nothing copied or built) and
builds the frozen entry in :data:`BUILD` mode when the entry is first read, so the check
cannot drift from the build.
"""

from __future__ import annotations

from collections.abc import Container, Iterable, Mapping
from dataclasses import dataclass, field
from types import MappingProxyType
from typing import Any

from compiler.runtime.descriptors import ToolDescriptor, ToolOverride
from compiler.runtime.manifest.fields import (
    BUILD,
    CHECK,
    LISTS,
    OBJECTS,
    EntryShapeError,
    JsonObject,
    ParseMode,
    document_list,
    freeze,
    json_object,
    line_number,
    object_or_empty,
    optional_string,
    parsed_entry,
    positive_integer,
    positive_number,
    required_string,
    string_map,
    string_or,
    strings,
    thaw,
)

# Re-exported: entries record where they came from; the classes live in provenance.
from compiler.runtime.manifest.origins import AppliedOverride as AppliedOverride
from compiler.runtime.manifest.origins import SourceLocation as SourceLocation
from compiler.runtime.manifest.parameters import (
    ARRAY_STYLES,
    OBJECT_STYLES,
    PARAMETER_SECTIONS,
)
from compiler.runtime.manifest.pinned import PinnedToolEntry, parse_pins
from compiler.runtime.manifest.profile_entries import ProfileEntry, parse_profiles, profiles_json

CAPABILITY_TYPES = ("internal", "mcp", "api")
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
# Not a manifest field: the loader's bound on one uploaded document (load_manifest option).
DEFAULT_MAX_UPLOAD_BYTES = 25 * 1024 * 1024
DEFAULT_ARGUMENT_TYPE = "string"
PROVENANCE_FIELDS = ("name", "description", "input_schema", "output_schema", "namespace")

def internal_codes(code: str, codes: Iterable[str] | None) -> tuple[str, ...]:
    """The registry codes an internal capability activates: ``codes``, else its own code."""
    given = tuple(codes or ())
    return given or (code,)


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


@dataclass(frozen=True, slots=True)
class McpServerEntry:
    """The ``mcp`` block of a capability, placeholders unresolved."""

    server_label: str
    server_url: str
    require_approval: Any = None
    headers: Mapping[str, str] = field(default_factory=lambda: MappingProxyType({}))
    allowed_tools: Any = None
    extra: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    placeholders: tuple[str, ...] = ()
    # The reviewed listing (capc.lock, compiler.runtime.manifest.pinned), None: unpinned.
    pins: tuple[PinnedToolEntry, ...] | None = None
    # Why the server is deliberately not pinned (options.unpinned), None: no exception.
    unpinned: str | None = None

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> McpServerEntry:
        """The entry of an ``mcp`` JSON block."""
        raw = json_object(raw, "mcp")
        allowed = raw.get("allowed_tools")  # tool names, or OpenAI's filter object
        if allowed is not None and not isinstance(allowed, OBJECTS):
            strings(raw, "allowed_tools")
        approval = raw.get("require_approval")
        if approval is not None and not isinstance(approval, (str, *OBJECTS)):
            raise EntryShapeError("require_approval must be a string, an object or null")
        unpinned = raw.get("unpinned")
        if unpinned is not None and not isinstance(unpinned, str):
            raise EntryShapeError("unpinned must be a string (the reason)")
        return mode.make(
            cls,
            string_or(raw, "server_label", ""),
            string_or(raw, "server_url", ""),
            mode.freeze(approval),
            string_map(raw, "headers", mode),
            mode.freeze(allowed),
            mode.freeze(object_or_empty(raw, "extra")),
            strings(raw, "placeholders"),
            parse_pins(raw.get("pins"), mode),
            unpinned,
        )

    def to_json(self) -> JsonObject:
        """The ``mcp`` JSON block (``pins`` only for a server the lock pins)."""
        written: JsonObject = {
            "server_label": self.server_label,
            "server_url": self.server_url,
            "require_approval": thaw(self.require_approval),
            "headers": dict(self.headers),
            "allowed_tools": thaw(self.allowed_tools),
            "extra": thaw(self.extra),
            "placeholders": list(self.placeholders),
        }
        if self.pins is not None:
            written["pins"] = {"tools": [tool.to_json() for tool in self.pins]}
        if self.unpinned is not None:
            written["unpinned"] = self.unpinned
        return written


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
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


@dataclass(frozen=True, slots=True)
class CapabilityEntry:
    """One capability of the manifest (exactly one of the per-type blocks is set)."""

    code: str
    name: str
    description: str | None
    type: str
    metadata: Mapping[str, Any]
    when: Any
    source: SourceLocation
    internal_codes: tuple[str, ...] = ()
    mcp: McpServerEntry | None = None
    api: ApiEndpoint | None = None
    tool: ApiToolEntry | None = None
    # Where a generated capability came from (``capc import openapi``); None for files
    # written by hand, and then absent from the JSON, so their manifests keep their bytes.
    origin: Mapping[str, Any] | None = None

    def with_tool(self, tool: ApiToolEntry) -> CapabilityEntry:
        """This capability with another tool entry (``dataclasses.replace`` without its
        per-call introspection; an override runs this for each tool it patches)."""
        return CapabilityEntry(self.code, self.name, self.description, self.type,
                               self.metadata, self.when, self.source, self.internal_codes,
                               self.mcp, self.api, tool, self.origin)

    def to_json(self) -> JsonObject:
        """The capability's JSON object (docs/manifest.md, CAPABILITY)."""
        written: JsonObject = {
            "code": self.code,
            "name": self.name,
            "description": self.description,
            "type": self.type,
            "metadata": thaw(self.metadata),
            "when": thaw(self.when),
            "source": self.source.to_json(),
        }
        if self.type == "internal":
            written["internal"] = {"codes": list(internal_codes(self.code, self.internal_codes))}
        if self.mcp is not None:
            written["mcp"] = self.mcp.to_json()
        if self.api is not None:
            written["api"] = self.api.to_json()
        if self.tool is not None:
            written["tool"] = self.tool.to_json()
        if self.origin is not None:
            written["origin"] = thaw(self.origin)
        return written


def parse_capability(raw: Any, mode: ParseMode = BUILD) -> CapabilityEntry:
    """The entry of one capability object; EntryShapeError names what is wrong."""
    raw = json_object(raw, "a capability")
    kind = required_string(raw, "type")
    if kind not in CAPABILITY_TYPES:
        raise EntryShapeError(f"unknown type {kind!r}")
    code = required_string(raw, "code")
    name = required_string(raw, "name")
    description = optional_string(raw, "description")
    metadata = mode.freeze(object_or_empty(raw, "metadata"))
    when = mode.freeze(raw.get("when"))
    source = SourceLocation.parse(raw.get("source"), "source", mode)
    codes: tuple[str, ...] = ()
    mcp = api = tool = None
    if kind == "internal":
        codes = internal_codes(code, strings(object_or_empty(raw, "internal"), "codes"))
    elif kind == "mcp":
        mcp = McpServerEntry.parse(_block(raw, "mcp"), mode)
    else:
        api = ApiEndpoint.parse(_block(raw, "api"), mode)
        tool = ApiToolEntry.parse(_block(raw, "tool"), mode)
    origin = raw.get("origin")
    if origin is not None:
        origin = mode.freeze(json_object(origin, "origin"))
    return mode.make(CapabilityEntry, code, name, description, kind, metadata, when, source,
                     codes, mcp, api, tool, origin)


def check_capability(raw: Any) -> tuple[str, str | None]:
    """``(code, tool original name or None)`` of a capability object, after the whole
    parse has run in CHECK mode (so it fails exactly where :func:`parse_capability` does)."""
    parse_capability(raw, CHECK)
    return raw["code"], original_name(raw["tool"]) if raw["type"] == "api" else None


def _block(raw: Mapping[str, Any], key: str) -> Any:
    if key not in raw:
        raise EntryShapeError(f"missing key {key!r}")
    return raw[key]


@dataclass(frozen=True, slots=True)
class PendingOverride:
    """An override of a tool the tree does not define, applied at boot (plugin tools)."""

    tool: str
    source: SourceLocation
    patch: Mapping[str, Any]
    lines: Mapping[str, int] = field(default_factory=lambda: MappingProxyType({}))

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> PendingOverride:
        """The entry of one ``overrides`` object."""
        raw = json_object(raw, "an override")
        if "patch" not in raw:
            raise EntryShapeError("missing key 'patch'")
        lines = object_or_empty(raw, "lines")
        for key in lines:
            line_number(lines, key)
        return mode.make(cls, required_string(raw, "tool"),
                         SourceLocation.parse(raw.get("source"), "source", mode),
                         mode.freeze(json_object(raw["patch"], "patch")), mode.freeze(lines))

    def tool_override(self) -> ToolOverride:
        """The ToolOverride the loader applies at boot."""
        return ToolOverride.from_patch(self.tool, thaw(self.patch), source=str(self.source))

    def to_json(self) -> JsonObject:
        """The ``overrides`` object."""
        return {"tool": self.tool, "source": self.source.to_json(), "patch": thaw(self.patch),
                "lines": dict(self.lines)}


@dataclass(frozen=True, slots=True)
class ManifestModel:
    """A whole manifest as entries: what the compiler writes and the review tools read."""

    capabilities: tuple[CapabilityEntry, ...]
    overrides: tuple[PendingOverride, ...] = ()
    plugins: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    compiler: Mapping[str, Any] = field(default_factory=lambda: MappingProxyType({}))
    manifest_version: int = 1
    digest: str | None = None
    # SPEC §12 (compiler.runtime.manifest.profile_entries); written only when there are some.
    profiles: tuple[ProfileEntry, ...] = ()
    # SPEC §17: capability code -> {case name -> digest of the case}, so ``capc diff`` shows
    # cases added, removed and changed; written only when the tree has ToolTest cases.
    tool_tests: Mapping[str, Mapping[str, str]] = field(
        default_factory=lambda: MappingProxyType({}))

    def capability(self, code: str) -> CapabilityEntry | None:
        """The capability with ``code``, or None."""
        return next((entry for entry in self.capabilities if entry.code == code), None)


def manifest_json(model: ManifestModel) -> JsonObject:
    """The manifest's JSON document (without the digest, which the writer seals)."""

    return {
        "manifest_version": model.manifest_version,
        "compiler": thaw(model.compiler),
        "capabilities": [entry.to_json() for entry in
                         sorted(model.capabilities, key=lambda entry: entry.code)],
        "overrides": [pending.to_json() for pending in model.overrides],
        "plugins": thaw(model.plugins),
        **profiles_json(model.profiles),
        **({"tool_tests": thaw(model.tool_tests)} if model.tool_tests else {}),
    }


def parse_manifest_document(document: Mapping[str, Any]) -> ManifestModel:
    """The model of a verified manifest document; EntryShapeError names the bad entry."""
    capabilities = []
    codes: set[str] = set()
    for index, raw in enumerate(document_list(document, "capabilities")):
        entry = parsed_entry("capabilities", index, raw, parse_capability)
        if entry.code in codes:  # the loader refuses the same (runtime/manifest/read.py)
            raise EntryShapeError(f"capabilities[{index}]: duplicate code {entry.code!r}")
        codes.add(entry.code)
        capabilities.append(entry)
    overrides = [parsed_entry("overrides", index, raw, PendingOverride.parse)
                 for index, raw in enumerate(document_list(document, "overrides"))]
    version = document.get("manifest_version", 1)
    digest = document.get("digest")
    return ManifestModel(
        capabilities=tuple(capabilities), overrides=tuple(overrides),
        plugins=freeze(object_or_empty(document, "plugins")),
        compiler=freeze(object_or_empty(document, "compiler")),
        manifest_version=version if isinstance(version, int) else 1,
        digest=digest if isinstance(digest, str) else None,
        profiles=manifest_profiles(document, codes),
        tool_tests=_tool_test_digests(document))


def _tool_test_digests(document: Mapping[str, Any]) -> Mapping[str, Mapping[str, str]]:
    """The ``tool_tests`` section: code -> {case name -> digest} (empty when absent)."""
    section = object_or_empty(document, "tool_tests")
    for code in section:
        string_map(section, code, CHECK)
    return freeze(section)  # type: ignore[no-any-return]


def manifest_profiles(document: Mapping[str, Any],
                      codes: Container[str]) -> tuple[ProfileEntry, ...]:
    """The document's profiles, each naming only ``codes`` (the manifest's capabilities),
    every code once: the compiler never writes another, so a manifest that does was edited,
    and a budget or resolve over it would cost or offer what was never reviewed."""
    profiles = parse_profiles(document)
    for index, profile in enumerate(profiles):
        where = f"profiles[{index}] {profile.name!r}"
        seen: set[str] = set()
        for code in profile.capabilities:
            if code not in codes:
                raise EntryShapeError(f"{where}: no capability {code!r} in the manifest")
            if code in seen:
                raise EntryShapeError(f"{where}: capability {code!r} listed twice")
            seen.add(code)
        if len(set(profile.deferred)) != len(profile.deferred):
            raise EntryShapeError(f"{where}: a deferred code is listed twice")
    return profiles
