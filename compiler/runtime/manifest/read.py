"""Read a manifest file: check its version and digest, parse it into frozen entries.

The format is docs/manifest.md. Every JSON container is frozen on the way in (mappings
become read-only proxies, lists tuples), so nothing handed out can change the manifest.
A file orjson can verify (``manifest_fast``) is read that way, and its capability entries
are checked at load but built on first access (``manifest_entries``); any other file goes
through the json module and is parsed entirely at load, as before.
"""

from __future__ import annotations

import gc
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, replace
from pathlib import Path
from types import MappingProxyType
from typing import Any

from compiler.runtime.descriptors import ToolDescriptor, ToolOverride
from compiler.runtime.errors import ManifestError
from compiler.runtime.manifest.entries import (
    BINDING_KINDS,
    CAPABILITY_TYPES,
    DEFAULT_MAX_RESPONSE_BYTES,
    DEFAULT_TIMEOUT,
    LazyCapabilities,
    check_capability,
)
from compiler.runtime.manifest.entries import required_string as _string
from compiler.runtime.manifest.fast import entry_bytes, entry_value, fast_verified_document
from compiler.runtime.manifest.format import SUPPORTED_MANIFEST_VERSIONS, compute_digest


def freeze(value: Any) -> Any:
    """A deep read-only copy of a JSON value."""
    if isinstance(value, Mapping):
        return MappingProxyType({key: freeze(item) for key, item in value.items()})
    if isinstance(value, list | tuple):
        return tuple(freeze(item) for item in value)
    return value


def thaw(value: Any) -> Any:
    """A deep mutable (JSON-shaped) copy of a frozen value."""
    if isinstance(value, Mapping):
        return {key: thaw(item) for key, item in value.items()}
    if isinstance(value, tuple | list):
        return [thaw(item) for item in value]
    return value


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where an entry was written: a POSIX path relative to the compile's directory."""

    path: str
    line: int

    def __str__(self) -> str:
        return f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class McpServerEntry:
    """The ``mcp`` block of a capability, placeholders unresolved."""

    server_label: str
    server_url: str
    require_approval: Any
    headers: Mapping[str, str]
    allowed_tools: Any
    extra: Mapping[str, Any]
    placeholders: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class ArgumentBinding:
    """Where one argument goes in the request."""

    name: str
    bindings: tuple[str, ...]
    type: str
    multiple: bool = False


@dataclass(frozen=True, slots=True)
class ApiEndpoint:
    """The ``api`` block of a capability: the executor's request recipe."""

    method: str
    url: str
    headers: Mapping[str, str]
    body_template: Any
    timeout: float
    max_response_bytes: int
    arguments: Mapping[str, ArgumentBinding]
    placeholders: tuple[str, ...]

    def bound(self, kind: str) -> list[str]:
        """The argument names with binding ``kind``, in declaration order."""
        return [name for name, argument in self.arguments.items() if kind in argument.bindings]


@dataclass(frozen=True, slots=True)
class ApiToolEntry:
    """The ``tool`` block of an api capability: its final descriptor."""

    name: str
    original_name: str
    description: str
    input_schema: Mapping[str, Any]
    output_schema: Any

    def descriptor(self) -> ToolDescriptor:
        """A mutable ToolDescriptor copy, for overrides to patch."""
        return ToolDescriptor(
            name=self.name,
            description=self.description,
            input_schema=thaw(self.input_schema),
            output_schema=thaw(self.output_schema),
            original_name=self.original_name,
        )


@dataclass(frozen=True, slots=True)
class CapabilityEntry:
    """One capability of the manifest."""

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


@dataclass(frozen=True, slots=True)
class ManifestData:
    """A verified manifest, frozen.

    ``api_tool_names``: the original names of the api tools, when the reader knows them
    without building every entry (None: compute them from ``capabilities``).
    """

    path: str
    manifest_version: int
    digest: str
    compiler: Mapping[str, Any]
    capabilities: Mapping[str, CapabilityEntry]
    overrides: tuple[ToolOverride, ...]
    plugins: Mapping[str, Any]
    api_tool_names: frozenset[str] | None = None


def read_manifest(path: str | Path) -> ManifestData:
    """Read and verify the manifest at ``path``; ManifestError names the failed check."""
    shown = str(path)
    raw = _read_bytes(shown, path)
    with _collector_paused():
        data = _fast_manifest(shown, raw)
    if data is not None:
        return data
    document = _strictly_verified_document(shown, raw)
    try:
        return _parse(shown, document)
    except (KeyError, TypeError, ValueError) as error:
        raise ManifestError(shown, "structure", str(error)) from error


def read_verified_document(path: str | Path) -> dict[str, Any]:
    """The manifest's JSON after the read, JSON, version and digest checks (not parsed)."""
    shown = str(path)
    raw = _read_bytes(shown, path)
    document = fast_verified_document(raw)
    return document if document is not None else _strictly_verified_document(shown, raw)


def _read_bytes(shown: str, path: str | Path) -> bytes:
    try:
        return Path(path).read_bytes()
    except OSError as error:
        raise ManifestError(shown, "read", error.strerror or str(error)) from error


def _fast_manifest(shown: str, raw: bytes) -> ManifestData | None:
    """The manifest through ``manifest_fast`` with lazy entries, or None (strict path).

    Each entry is kept as its own compact JSON bytes until first read, so the parsed
    document is freed here: it never reaches the garbage collector, which would otherwise
    scan its hundreds of thousands of containers again and again.
    """
    document = fast_verified_document(raw)
    if document is None:
        return None
    try:
        return _parse(shown, document, lazy=True)
    except (KeyError, TypeError, ValueError) as error:
        raise ManifestError(shown, "structure", str(error)) from error


@contextmanager
def _collector_paused() -> Iterator[None]:
    """No garbage collection while a document is parsed and dropped: the parse only
    allocates, and the collector would rescan the growing document again and again."""
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def _strictly_verified_document(shown: str, raw: bytes) -> dict[str, Any]:
    """The json module's reading, refusing duplicate keys, and every check."""
    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_refuse_duplicate_keys)
    except (UnicodeDecodeError, ValueError) as error:
        raise ManifestError(shown, "json", str(error)) from error
    if not isinstance(document, dict):
        raise ManifestError(shown, "json", "the top level is not an object")
    version = document.get("manifest_version")
    if version not in SUPPORTED_MANIFEST_VERSIONS or isinstance(version, bool):
        supported = ", ".join(str(number) for number in sorted(SUPPORTED_MANIFEST_VERSIONS))
        raise ManifestError(
            shown, "manifest_version",
            f"manifest_version {version!r} is not supported (this loader reads {supported}); "
            "compile the manifest with a matching capc",
        )
    recorded = document.get("digest")
    if not isinstance(recorded, str):
        raise ManifestError(shown, "digest", "the manifest has no digest")
    try:
        computed = compute_digest(document)
    except ValueError as error:
        raise ManifestError(shown, "digest", f"the content cannot be hashed: {error}") from error
    if recorded != computed:
        raise ManifestError(
            shown, "digest",
            f"recorded {recorded} but the content hashes to {computed}: the file was changed "
            "after it was compiled",
        )
    return document


def _refuse_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for key, value in pairs:
        if key in result:
            raise ValueError(f"duplicate key {key!r}")
        result[key] = value
    return result


def _parse(path: str, document: dict[str, Any], *, lazy: bool = False) -> ManifestData:
    """The frozen manifest; with ``lazy`` (fast-path documents only: orjson bounds their
    nesting, so a later build cannot hit the recursion limit where an eager one would),
    entries are checked now and built when first read."""
    capabilities: dict[str, Any] = {}
    api_tool_names: set[str] = set()
    for index, raw in enumerate(_list(document, "capabilities")):
        try:
            if lazy:
                code, tool_name = check_capability(raw)
            else:
                entry = _capability(raw)
                code, tool_name = entry.code, entry.tool.original_name if entry.tool else None
        except (KeyError, TypeError, ValueError) as error:
            label = raw.get("code", "?") if isinstance(raw, dict) else "?"
            raise ValueError(f"capabilities[{index}] ({label}): {_describe(error)}") from error
        if code in capabilities:
            raise ValueError(f"capabilities[{index}]: duplicate code {code!r}")
        capabilities[code] = entry_bytes(raw) if lazy else entry
        if tool_name is not None:
            api_tool_names.add(tool_name)
    overrides = []
    for index, raw in enumerate(_list(document, "overrides")):
        try:
            source = raw.get("source") or {}
            overrides.append(ToolOverride.from_patch(
                _string(raw, "tool"), dict(raw["patch"]),
                source=f"{source.get('path', '?')}:{source.get('line', '?')}",
            ))
        except (KeyError, TypeError, ValueError, AttributeError) as error:
            raise ValueError(f"overrides[{index}]: {_describe(error)}") from error
    return ManifestData(
        path=path,
        manifest_version=document["manifest_version"],
        digest=document["digest"],
        compiler=freeze(document.get("compiler") or {}),
        capabilities=(LazyCapabilities(capabilities, _lazy_capability) if lazy
                      else MappingProxyType(capabilities)),
        overrides=tuple(overrides),
        plugins=freeze(document.get("plugins") or {}),
        api_tool_names=frozenset(api_tool_names),
    )


def _lazy_capability(blob: bytes) -> CapabilityEntry:
    return _capability(entry_value(blob))


def _capability(raw: Any) -> CapabilityEntry:
    # manifest_entries.check_capability mirrors every step that can fail: change both.
    if not isinstance(raw, dict):
        raise TypeError("a capability must be an object")
    kind = _string(raw, "type")
    if kind not in CAPABILITY_TYPES:
        raise ValueError(f"unknown type {kind!r}")
    source = raw.get("source") or {}
    entry = CapabilityEntry(
        code=_string(raw, "code"),
        name=_string(raw, "name"),
        description=raw.get("description"),
        type=kind,
        metadata=freeze(raw.get("metadata") or {}),
        when=freeze(raw.get("when")),
        source=SourceLocation(str(source.get("path", "?")), int(source.get("line", 0))),
    )
    if kind == "internal":
        codes = tuple(str(code) for code in (raw.get("internal") or {}).get("codes") or ())
        return _with(entry, internal_codes=codes or (entry.code,))
    if kind == "mcp":
        return _with(entry, mcp=_mcp(raw["mcp"]))
    return _with(entry, api=_api(raw["api"]), tool=_tool(raw["tool"]))


def _mcp(raw: dict[str, Any]) -> McpServerEntry:
    return McpServerEntry(
        server_label=str(raw.get("server_label") or ""),
        server_url=str(raw.get("server_url") or ""),
        require_approval=freeze(raw.get("require_approval")),
        headers=MappingProxyType({str(k): str(v) for k, v in (raw.get("headers") or {}).items()}),
        allowed_tools=freeze(raw.get("allowed_tools")),
        extra=freeze(raw.get("extra") or {}),
        placeholders=tuple(raw.get("placeholders") or ()),
    )


def _api(raw: dict[str, Any]) -> ApiEndpoint:
    arguments = {}
    for name, spec in (raw.get("arguments") or {}).items():
        bindings = tuple(spec["bindings"])
        unknown = set(bindings) - BINDING_KINDS
        if unknown or not bindings:
            raise ValueError(f"argument {name!r}: bad bindings {list(bindings)!r}")
        arguments[name] = ArgumentBinding(
            name=name, bindings=bindings, type=str(spec.get("type", "string")),
            multiple=bool(spec.get("multiple", False)),
        )
    return ApiEndpoint(
        method=_string(raw, "method").upper(),
        url=_string(raw, "url"),
        headers=MappingProxyType({str(k): str(v) for k, v in (raw.get("headers") or {}).items()}),
        body_template=freeze(raw.get("body_template")),
        timeout=float(raw.get("timeout") or DEFAULT_TIMEOUT),
        max_response_bytes=int(raw.get("max_response_bytes") or DEFAULT_MAX_RESPONSE_BYTES),
        arguments=MappingProxyType(arguments),
        placeholders=tuple(raw.get("placeholders") or ()),
    )


def _tool(raw: dict[str, Any]) -> ApiToolEntry:
    schema = raw["input_schema"]
    if not isinstance(schema, dict):
        raise TypeError("tool.input_schema must be an object")
    name = _string(raw, "name")
    return ApiToolEntry(
        name=name,
        original_name=str(raw.get("original_name") or name),
        description=str(raw.get("description") or ""),
        input_schema=freeze(schema),
        output_schema=freeze(raw.get("output_schema")),
    )


def _with(entry: CapabilityEntry, **changes: Any) -> CapabilityEntry:
    return replace(entry, **changes)


def _list(document: dict[str, Any], key: str) -> list[Any]:
    value = document.get(key) or []
    if not isinstance(value, list):
        raise TypeError(f"{key} must be a list")
    return value


def _describe(error: BaseException) -> str:
    if isinstance(error, KeyError):
        return f"missing key {error.args[0]!r}"
    return str(error)
