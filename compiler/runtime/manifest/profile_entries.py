"""Profiles in the manifest (SPEC §12): which codes an agent gets, which are deferred.

A ``kind: Profile`` source names capability codes and globs; the compiler expands the
globs against the tree, so the manifest records the exact codes that were reviewed and a
capability added later never joins a profile without a recompile (and a ``capc diff``
that shows it). The ``profiles`` key is written only when a tree has profiles, so the
manifests of trees without any keep their bytes and digests; likewise a profile's
``namespaces`` (OpenAI's groups of deferred functions) only when it declares some.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import field
from typing import Any

from compiler.runtime.manifest.fields import (
    BUILD,
    EntryShapeError,
    JsonObject,
    ParseMode,
    document_list,
    json_object,
    optional_string,
    parsed_entry,
    required_string,
    strings,
)
from compiler.runtime.manifest.origins import SourceLocation
from compiler.runtime.records import record


@record(frozen=True, slots=True)
class ProfileBudget:
    """Limits on what one request sends up front (None: no limit of that kind)."""

    tokens: int | None = None
    tools: int | None = None

    @classmethod
    def parse(cls, raw: Any) -> ProfileBudget:
        """The budget of a ``{"tokens"?, "tools"?}`` object (absent: no limits)."""
        raw = json_object({} if raw is None else raw, "profile.budget")
        return cls(_limit(raw, "tokens"), _limit(raw, "tools"))

    def to_json(self) -> JsonObject:
        """Only the limits that are set."""
        return {key: value for key, value in (("tokens", self.tokens), ("tools", self.tools))
                if value is not None}


def _limit(raw: Mapping[str, Any], key: str) -> int | None:
    value = raw.get(key)
    if value is None:
        return None
    if value.__class__ is not int or value < 1:
        raise EntryShapeError(f"profile budget {key} must be a positive integer")
    return int(value)


@record(frozen=True, slots=True)
class NamespaceEntry:
    """A named group of a profile's deferred capabilities: on OpenAI, one ``namespace``
    tool whose name and description alone are sent up front (docs/profiles.md)."""

    name: str
    description: str
    capabilities: tuple[str, ...]

    @classmethod
    def parse(cls, raw: Any) -> NamespaceEntry:
        """The entry of one ``namespaces`` object."""
        raw = json_object(raw, "a namespace")
        return cls(required_string(raw, "name"), required_string(raw, "description"),
                   strings(raw, "capabilities"))

    def to_json(self) -> JsonObject:
        """The ``namespaces`` object (docs/manifest.md, PROFILE)."""
        return {"name": self.name, "description": self.description,
                "capabilities": list(self.capabilities)}


def _namespaces(raw: Mapping[str, Any], deferred: tuple[str, ...]) -> tuple[NamespaceEntry, ...]:
    """A profile's namespaces: uniquely named, each code deferred and in one of them."""
    namespaces = tuple(NamespaceEntry.parse(item) for item in document_list(raw, "namespaces"))
    names = [namespace.name for namespace in namespaces]
    if len(set(names)) != len(names):
        raise EntryShapeError("two namespaces of a profile share a name")
    members = [code for namespace in namespaces for code in namespace.capabilities]
    if len(set(members)) != len(members) or not set(members) <= set(deferred):
        raise EntryShapeError("a namespace's code is not deferred, or is in two namespaces")
    return namespaces


@record(frozen=True, slots=True)
class ProfileEntry:
    """One profile: its codes in order (globs expanded), the deferred ones, its budget."""

    name: str
    description: str | None
    capabilities: tuple[str, ...]
    deferred: tuple[str, ...] = ()
    budget: ProfileBudget = ProfileBudget()
    source: SourceLocation = field(default_factory=lambda: SourceLocation("?", 0))
    namespaces: tuple[NamespaceEntry, ...] = ()

    @classmethod
    def parse(cls, raw: Any, mode: ParseMode = BUILD) -> ProfileEntry:
        """The entry of one ``profiles`` object."""
        raw = json_object(raw, "a profile")
        codes = strings(raw, "capabilities")
        deferred = strings(raw, "deferred")
        if not set(deferred) <= set(codes):
            raise EntryShapeError("a deferred code is not among the profile's capabilities")
        return cls(required_string(raw, "name"), optional_string(raw, "description"),
                   codes, deferred, ProfileBudget.parse(raw.get("budget")),
                   SourceLocation.parse(raw.get("source"), "source", mode),
                   _namespaces(raw, deferred))

    def to_json(self) -> JsonObject:
        """The ``profiles`` object (docs/manifest.md, PROFILE)."""
        written: JsonObject = {
            "name": self.name,
            "description": self.description,
            "capabilities": list(self.capabilities),
            "deferred": list(self.deferred),
            "budget": self.budget.to_json(),
            "source": self.source.to_json(),
        }
        if self.namespaces:  # absent unless declared: older manifests keep their bytes
            written["namespaces"] = [namespace.to_json() for namespace in self.namespaces]
        return written


def parse_profiles(document: Mapping[str, Any]) -> tuple[ProfileEntry, ...]:
    """The profiles of a manifest document (none when it has no ``profiles`` key)."""
    raw = document_list(document, "profiles")
    profiles = tuple(parsed_entry("profiles", index, item, ProfileEntry.parse)
                     for index, item in enumerate(raw))
    names = [profile.name for profile in profiles]
    if len(set(names)) != len(names):
        raise EntryShapeError("profiles: two profiles share a name")
    return profiles


def profiles_json(profiles: tuple[ProfileEntry, ...]) -> JsonObject:
    """``{"profiles": [...]}`` sorted by name, or ``{}`` for a tree without profiles."""
    if not profiles:
        return {}
    return {"profiles": [profile.to_json() for profile in
                         sorted(profiles, key=lambda profile: profile.name)]}
