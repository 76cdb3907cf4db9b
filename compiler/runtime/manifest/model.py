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
from dataclasses import field
from types import MappingProxyType
from typing import Any

from compiler.runtime.descriptors import ToolOverride

# Re-exported: the api entries, their request defaults and the naming of a tool's original
# name live in api_entries; importers keep reading them from the model.
from compiler.runtime.manifest.api_entries import API_METHODS as API_METHODS
from compiler.runtime.manifest.api_entries import BINDING_KINDS as BINDING_KINDS
from compiler.runtime.manifest.api_entries import DEFAULT_ARGUMENT_TYPE as DEFAULT_ARGUMENT_TYPE
from compiler.runtime.manifest.api_entries import (
    DEFAULT_MAX_RESPONSE_BYTES as DEFAULT_MAX_RESPONSE_BYTES,
)
from compiler.runtime.manifest.api_entries import DEFAULT_METHOD as DEFAULT_METHOD
from compiler.runtime.manifest.api_entries import DEFAULT_TIMEOUT as DEFAULT_TIMEOUT
from compiler.runtime.manifest.api_entries import IDEMPOTENT_METHODS as IDEMPOTENT_METHODS
from compiler.runtime.manifest.api_entries import PROVENANCE_FIELDS as PROVENANCE_FIELDS
from compiler.runtime.manifest.api_entries import QUERY_STYLES as QUERY_STYLES
from compiler.runtime.manifest.api_entries import ApiEndpoint as ApiEndpoint
from compiler.runtime.manifest.api_entries import ApiToolEntry as ApiToolEntry
from compiler.runtime.manifest.api_entries import ArgumentBinding as ArgumentBinding
from compiler.runtime.manifest.api_entries import ToolProvenance as ToolProvenance
from compiler.runtime.manifest.api_entries import original_name as original_name
from compiler.runtime.manifest.api_entries import tool_name as tool_name
from compiler.runtime.manifest.api_entries import tool_name_path as tool_name_path
from compiler.runtime.manifest.fields import (
    BUILD,
    CHECK,
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
    required_string,
    string_map,
    string_or,
    strings,
    thaw,
)

# Re-exported: entries record where they came from; the classes live in provenance.
from compiler.runtime.manifest.origins import AppliedOverride as AppliedOverride
from compiler.runtime.manifest.origins import SourceLocation as SourceLocation
from compiler.runtime.manifest.pinned import PinnedToolEntry, parse_pins
from compiler.runtime.manifest.profile_entries import ProfileEntry, parse_profiles, profiles_json
from compiler.runtime.records import record

CAPABILITY_TYPES = ("internal", "mcp", "api")
# Not a manifest field: the loader's bound on one uploaded document (load_manifest option).
DEFAULT_MAX_UPLOAD_BYTES = 25 * 1024 * 1024


def internal_codes(code: str, codes: Iterable[str] | None) -> tuple[str, ...]:
    """The registry codes an internal capability activates: ``codes``, else its own code."""
    given = tuple(codes or ())
    return given or (code,)


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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


@record(frozen=True, slots=True)
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
