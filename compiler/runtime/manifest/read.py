"""Read a manifest file: check its version and digest, parse it into frozen entries.

The format is docs/manifest.md. Every JSON container is frozen on the way in (mappings
become read-only proxies, lists tuples), so nothing handed out can change the manifest.
A file orjson can verify (``manifest_fast``) is read that way, and its capability entries
are checked at load but built on first access (``manifest_entries``); any other file goes
through the json module and is parsed entirely at load, as before.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Any

from compiler.runtime.collector import collector_paused
from compiler.runtime.descriptors import ToolOverride
from compiler.runtime.errors import ManifestError
from compiler.runtime.manifest.entries import LazyCapabilities
from compiler.runtime.manifest.fast_read import entry_bytes, entry_value, fast_verified_document
from compiler.runtime.manifest.fields import (
    EntryShapeError,
    document_list,
    freeze,
    json_object,
    parsed_entry,
    thaw,
)
from compiler.runtime.manifest.files import MAX_MANIFEST_BYTES, UnreadableFile, read_regular_file
from compiler.runtime.manifest.format import SUPPORTED_MANIFEST_VERSIONS, compute_digest
from compiler.runtime.manifest.model import (
    ApiEndpoint,
    ApiToolEntry,
    ArgumentBinding,
    CapabilityEntry,
    McpServerEntry,
    PendingOverride,
    SourceLocation,
    check_capability,
    manifest_profiles,
    parse_capability,
)
from compiler.runtime.manifest.profile_entries import ProfileEntry

__all__ = [
    "ApiEndpoint", "ApiToolEntry", "ArgumentBinding", "CapabilityEntry", "ManifestData",
    "McpServerEntry", "SourceLocation", "freeze", "manifest_from_bytes", "read_manifest",
    "read_verified_document", "thaw", "verified_document",
]


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
    profiles: Mapping[str, ProfileEntry] = field(default_factory=lambda: MappingProxyType({}))


def read_manifest(path: str | Path) -> ManifestData:
    """Read and verify the manifest at ``path``; ManifestError names the failed check."""
    shown = str(path)
    return manifest_from_bytes(shown, _read_bytes(shown, path))


def manifest_from_bytes(shown: str, raw: bytes) -> ManifestData:
    """Verify and parse manifest bytes already read (``shown`` names them in errors)."""
    with collector_paused():
        data = _fast_manifest(shown, raw)
    if data is not None:
        return data
    document = _strictly_verified_document(shown, raw)
    try:
        return _parse(shown, document)
    except (KeyError, TypeError, ValueError) as error:
        raise ManifestError(shown, "structure", str(error)) from error
    except RecursionError:
        raise ManifestError(shown, "structure", "the manifest is nested too deeply") from None


def read_verified_document(path: str | Path) -> dict[str, Any]:
    """The manifest's JSON after the read, JSON, version and digest checks (not parsed)."""
    shown = str(path)
    return verified_document(_read_bytes(shown, path), shown)


def verified_document(raw: bytes, shown: str) -> dict[str, Any]:
    """The JSON of manifest bytes after the JSON, version and digest checks (``shown``
    names the manifest in a ManifestError)."""
    document = fast_verified_document(raw)
    return document if document is not None else _strictly_verified_document(shown, raw)


def _read_bytes(shown: str, path: str | Path) -> bytes:
    try:
        return read_regular_file(path, MAX_MANIFEST_BYTES)
    except UnreadableFile as error:
        raise ManifestError(shown, "read", error.strerror or str(error)) from None


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
    except RecursionError:
        raise ManifestError(shown, "structure", "the manifest is nested too deeply") from None




def _strictly_verified_document(shown: str, raw: bytes) -> dict[str, Any]:
    """The json module's reading, refusing duplicate keys, and every check."""
    try:
        document = json.loads(raw.decode("utf-8"), object_pairs_hook=_refuse_duplicate_keys)
    except (UnicodeDecodeError, ValueError) as error:
        raise ManifestError(shown, "json", str(error)) from error
    except RecursionError:  # the json module recurses once per nesting level
        raise ManifestError(shown, "json", "the JSON is nested too deeply") from None
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
    except RecursionError:
        raise ManifestError(shown, "json", "the JSON is nested too deeply") from None
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
    """The frozen manifest; with ``lazy`` (fast-path documents only, whose nesting
    ``manifest_fast`` bounds, so a later build cannot hit the recursion limit), each entry
    is checked now by the model's own parse in CHECK mode and built when first read."""
    capabilities: dict[str, Any] = {}
    api_tool_names: set[str] = set()
    for index, raw in enumerate(document_list(document, "capabilities")):
        if lazy:
            code, tool_name = parsed_entry("capabilities", index, raw, check_capability)
        else:
            entry = parsed_entry("capabilities", index, raw, parse_capability)
            code, tool_name = entry.code, entry.tool.original_name if entry.tool else None
        if code in capabilities:
            raise EntryShapeError(f"capabilities[{index}]: duplicate code {code!r}")
        capabilities[code] = entry_bytes(raw) if lazy else entry
        if tool_name is not None:
            api_tool_names.add(tool_name)
    overrides = tuple(parsed_entry("overrides", index, raw, _boot_override)
                      for index, raw in enumerate(document_list(document, "overrides")))
    return ManifestData(
        path=path,
        manifest_version=document["manifest_version"],
        digest=document["digest"],
        compiler=freeze(json_object(document.get("compiler") or {}, "compiler")),
        capabilities=(LazyCapabilities(capabilities, _lazy_capability) if lazy
                      else MappingProxyType(capabilities)),
        overrides=overrides,
        plugins=freeze(json_object(document.get("plugins") or {}, "plugins")),
        api_tool_names=frozenset(api_tool_names),
        profiles=MappingProxyType({profile.name: profile
                                   for profile in manifest_profiles(document, capabilities)}),
    )


def _boot_override(raw: Any) -> ToolOverride:
    return PendingOverride.parse(raw).tool_override()


def _lazy_capability(blob: bytes) -> CapabilityEntry:
    return parse_capability(entry_value(blob))
