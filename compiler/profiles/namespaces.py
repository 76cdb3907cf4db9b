"""The checks of a profile's OpenAI namespaces that need its tools' names and kinds.

``check.py`` has already matched each namespace's selectors to the profile's deferred
codes. Here: a namespace's name is the name of a group in OpenAI's request and in the
model's calls, so it may not be a tool's name, a search tool's or an MCP server label of
the same profile (the model would see two things of one name); an MCP capability cannot
join one (a namespace holds functions, and a deferred server is searchable on its own);
and a namespace of ten functions or more gets OpenAI's advice to keep them fewer.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from typing import Any

from compiler.diagnostics import Code, Diagnostic, Severity
from compiler.profiles.definitions import BootOverrides, boot_overrides, capability_tools
from compiler.runtime.loading_policy import SEARCH_TOOL_NAMES
from compiler.runtime.manifest.model import CapabilityEntry, PendingOverride
from compiler.runtime.manifest.profile_entries import NamespaceEntry, ProfileEntry
from compiler.source.documents import SourceDocument

# OpenAI's tool search guide: "aim to keep each namespace to fewer than 10 functions".
ADVISED_FUNCTIONS = 10

PROFILE_NAMESPACE_COLLISION = Code(
    "profile-namespace-collision",
    "a namespace is named like a tool, a search tool or an MCP server of its profile")
PROFILE_NAMESPACE_LARGE = Code(
    "profile-namespace-large", "a namespace holds 10 functions or more (OpenAI advises fewer)",
    Severity.WARNING)
PROFILE_NAMESPACE_MCP = Code("profile-namespace-mcp", "a namespace lists an MCP capability")
CODES = (PROFILE_NAMESPACE_COLLISION, PROFILE_NAMESPACE_LARGE, PROFILE_NAMESPACE_MCP)


def check_namespaces(documents: Iterable[SourceDocument], profiles: Iterable[ProfileEntry],
                     entries: Iterable[CapabilityEntry], plugins: Mapping[str, Any],
                     overrides: Iterable[PendingOverride] = ()) -> list[Diagnostic]:
    """Located problems of every profile's namespaces (nothing to do for profiles without;
    ``overrides``: the manifest's pending ones, which rename plugin tools at boot)."""
    by_name = {document.data["name"]: document for document in documents}
    by_code = {entry.code: entry for entry in entries}
    at_boot = boot_overrides(overrides)
    found: list[Diagnostic] = []
    for profile in profiles:
        if profile.namespaces:
            found += _profile_problems(by_name[profile.name], profile, by_code, plugins,
                                       at_boot)
    return found


def _profile_problems(document: SourceDocument, profile: ProfileEntry,
                      by_code: Mapping[str, CapabilityEntry],
                      plugins: Mapping[str, Any], at_boot: BootOverrides) -> list[Diagnostic]:
    tools = {code: capability_tools(by_code[code], plugins, at_boot)
             for code in profile.capabilities if code in by_code}
    taken: dict[str, str] = {name: "the search tool" for name in SEARCH_TOOL_NAMES}
    for code, capability in tools.items():
        entry = by_code[code]
        if entry.mcp is not None:
            taken[entry.mcp.server_label] = f"the MCP server of {code}"
        for definition in capability.definitions:
            taken[definition.name] = f"a tool of {code}"
    found: list[Diagnostic] = []
    for namespace in profile.namespaces:
        index = _index(document, namespace)
        owner = taken.get(namespace.name)
        if owner is not None:
            found.append(Diagnostic.error(
                document.location(("namespaces", index, "name")), PROFILE_NAMESPACE_COLLISION,
                f"namespace {namespace.name!r} of profile {profile.name!r} has the name of "
                f"{owner}: the model would see two things of one name; rename the namespace"))
        servers = [code for code in namespace.capabilities if by_code[code].mcp is not None]
        found += [Diagnostic.error(
            document.location(("namespaces", index, "capabilities")), PROFILE_NAMESPACE_MCP,
            f"namespace {namespace.name!r} lists MCP capability {code!r}: a namespace holds "
            "functions, and a deferred MCP server is searchable on its own; leave it out")
            for code in servers]
        functions = sum(len(tools[code].definitions) for code in namespace.capabilities
                        if code in tools)
        if functions >= ADVISED_FUNCTIONS:
            found.append(Diagnostic.warning(
                document.location(("namespaces", index, "capabilities")),
                PROFILE_NAMESPACE_LARGE,
                f"namespace {namespace.name!r} holds {functions} functions; OpenAI advises "
                f"fewer than {ADVISED_FUNCTIONS} per namespace: split it"))
    return found


def _index(document: SourceDocument, namespace: NamespaceEntry) -> int:
    """The position of ``namespace`` in the document (the first of its name)."""
    written = [raw["name"] for raw in document.data.get("namespaces") or []]
    return written.index(namespace.name)
