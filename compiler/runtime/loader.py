"""A loaded manifest: ``load_manifest`` and ``Manifest.resolve`` (SPEC §5).

What can be computed once is, per manifest: api tool blueprints (descriptor + argument
model), the internal tools with the manifest's pending overrides applied (recomputed only
when the registry changes), and one pooled HTTP client shared by every api tool. A
resolve then costs work proportional to the codes it is asked for.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Iterable, Sequence
from pathlib import Path
from types import TracebackType
from typing import TYPE_CHECKING, Any

from compiler.runtime.conditions import condition_holds
from compiler.runtime.context import RuntimeContext
from compiler.runtime.descriptors import ToolOverride
from compiler.runtime.egress.addresses import EgressPolicy, IPNetwork, parse_allowed_networks
from compiler.runtime.errors import (
    CapabilityUnavailable,
    RuntimeLoaderError,
    UnresolvedPlaceholderError,
    UnsafeSettingError,
)
from compiler.runtime.loading_policy import profile_policy
from compiler.runtime.manifest.model import DEFAULT_MAX_UPLOAD_BYTES
from compiler.runtime.manifest.read import CapabilityEntry, ManifestData, read_manifest
from compiler.runtime.mcp.server_resolution import ResolvedMcpServer, resolve_server
from compiler.runtime.provenance import Provenance, tagged_tool
from compiler.runtime.telemetry import traced
from compiler.runtime.tools.plugin_drift import log_plugin_drift
from compiler.runtime.tools.registry import ToolRegistry
from compiler.runtime.toolset import SkippedCapability, Toolset, with_policy
from compiler.runtime.usage import ManifestUsage

if TYPE_CHECKING:
    from compiler.runtime.api.tool import ApiToolBlueprint
    from compiler.runtime.manifest.signature import ManifestSignature, PublicKey

logger = logging.getLogger(__name__)


def load_manifest(
    path: str | Path,
    registry: ToolRegistry | None = None,
    allow_private_networks: bool = False,
    *,
    plugin_context: Any = None,
    max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
    trusted_keys: Iterable[str | os.PathLike[str]] | None = None,
    expected_digest: str | None = None,
    signature_path: str | os.PathLike[str] | None = None,
    allowed_networks: Iterable[str] = (),
) -> Manifest:
    """Read and verify the manifest at ``path``; with ``registry=None``, discover plugins.

    ``plugin_context`` is passed to two-parameter plugin ``register`` functions.
    ``trusted_keys`` (``ed25519:BASE64`` or PEM public key files): the manifest must carry
    a valid signature (``signature_path``, default ``PATH.sig``) by one of them;
    ``expected_digest``: the manifest must have that digest. Both are checked before any
    plugin is discovered. Raises ManifestError naming the failed check (read, json,
    manifest_version, digest, structure, signature, trusted_keys).
    ``allowed_networks`` (CIDR ranges such as ``"10.20.0.0/16"``, as in ``[tool.capc]``)
    opens exactly those private or loopback ranges; link-local and metadata never open,
    and a range that would include them raises ValueError before anything is read.
    """
    networks = parse_allowed_networks(
        [allowed_networks] if isinstance(allowed_networks, str) else allowed_networks)
    data = read_manifest(path)
    verify_origin(data, trusted_keys, expected_digest, signature_path)
    if registry is None:
        registry = ToolRegistry.discover(context=plugin_context)
    log_plugin_drift(data.plugins, registry)
    return Manifest(data, registry, allow_private_networks, max_upload_bytes,
                    allowed_networks=networks)


def verify_origin(
    data: ManifestData,
    trusted_keys: Iterable[str | os.PathLike[str] | PublicKey] | None,
    expected_digest: str | None,
    signature_path: str | os.PathLike[str] | None,
) -> ManifestSignature | None:
    """``load_manifest``'s signature and expected-digest checks of read manifest ``data``.

    Returns the verified signature (None when no ``trusted_keys`` were given).
    """
    if trusted_keys is None and expected_digest is None:
        return None
    # Imported only here: a loader that verifies no signature never loads cryptography.
    from compiler.runtime.manifest.signature import verify_manifest_origin

    return verify_manifest_origin(data.path, data.digest, trusted_keys=trusted_keys,
                                  expected_digest=expected_digest,
                                  signature_path=signature_path)


class Manifest:
    """A verified, immutable manifest bound to a tool registry and one HTTP client."""

    def __init__(
        self,
        data: ManifestData,
        registry: ToolRegistry,
        allow_private_networks: bool = False,
        max_upload_bytes: int = DEFAULT_MAX_UPLOAD_BYTES,
        *,
        allowed_networks: tuple[IPNetwork, ...] = (),
    ) -> None:
        self._data = data
        self._registry = registry
        self._policy = EgressPolicy(allow_private_networks, allowed_networks)
        self._max_upload_bytes = max_upload_bytes
        self._blueprints: dict[str, ApiToolBlueprint] = {}
        self._internal_view: tuple[int, dict[str, Any]] | None = None
        self._client: Any = None
        self._closed = False
        self._usage = ManifestUsage()
        # (capability code, profile, registry tool) -> that tool tagged with its provenance;
        # the original is kept in the value so its id cannot be reused while cached.
        self._tagged: dict[tuple[str, str | None, int], tuple[Any, Any]] = {}
        names = data.api_tool_names
        if names is None:
            names = frozenset(
                entry.tool.original_name for entry in data.capabilities.values() if entry.tool
            )
        self._api_tool_names = names

    @property
    def data(self) -> ManifestData:
        """The verified manifest content (frozen)."""
        return self._data

    @property
    def digest(self) -> str:
        """The manifest's digest (``sha256:...``)."""
        return self._data.digest

    @property
    def closed(self) -> bool:
        """Whether the manifest was closed (it resolves nothing more)."""
        return self._closed

    @property
    def open_pools(self) -> int:
        """How many pooled HTTP clients are open now (for leak checks)."""
        return 0 if self._client is None else len(self._client.clients())

    async def release_pools(self) -> None:
        """Close the HTTP pools if no call uses them now; a later call opens new ones."""
        if self._client is not None and self._usage.users == 0:
            await self._client.release_pools(lambda: self._usage.users == 0)

    @property
    def usage(self) -> ManifestUsage:
        """Who holds this manifest now (leases and in-flight api calls)."""
        return self._usage

    @property
    def registry(self) -> ToolRegistry:
        """The registry internal capabilities draw their tools from."""
        return self._registry

    def capability(self, code: str) -> CapabilityEntry | None:
        """The capability ``code``, or None."""
        return self._data.capabilities.get(code)

    def codes(self) -> list[str]:
        """Every capability code of the manifest, sorted."""
        return sorted(self._data.capabilities)

    async def resolve(
        self,
        codes: Iterable[str],
        ctx: RuntimeContext,
        overrides: Sequence[ToolOverride] = (),
        *,
        profile: str | None = None,
    ) -> Toolset:
        """The toolset of ``codes`` for ``ctx``; ``overrides`` apply after the manifest's own.

        A capability that cannot be offered (unknown code, condition false, unresolved
        setting, unsafe header, no chat for uploads) is in ``skipped``, never half-built.
        ``profile``: the profile the codes come from, recorded in every tool's metadata.
        """
        return await self._resolve(codes, ctx, overrides, {}, profile)

    async def _resolve(self, codes: Iterable[str], ctx: RuntimeContext,
                       overrides: Sequence[ToolOverride], owners: dict[str, str],
                       profile: str | None = None) -> Toolset:
        """``resolve``; ``owners`` is filled with each offered tool's capability code."""
        if self._closed:
            raise RuntimeLoaderError("this manifest was closed; load it again")
        overrides = tuple(overrides)
        self._warn_unknown_overrides(overrides)
        internal = self._internal_tools(overrides)
        tools: dict[str, tuple[Any, str]] = {}
        skipped: list[SkippedCapability] = []
        servers: list[ResolvedMcpServer] = []
        for code in dict.fromkeys(codes):
            capability = self._data.capabilities.get(code)
            if capability is None:
                skipped.append(self._skip(ctx, code, "no such capability in the manifest"))
                continue
            holds, reason = condition_holds(capability.when, ctx)
            if not holds:
                logger.info("capability %s not offered: condition not met: %s", code, reason)
                skipped.append(SkippedCapability(code, f"condition not met: {reason}"))
                continue
            try:
                if capability.type == "internal":
                    found = self._internal_for(capability, internal)
                    if not found:
                        skipped.append(self._skip(ctx, code, self._no_tools_reason(capability)))
                    for tool in found:
                        self._add(tools, tool, code, owners)
                elif capability.type == "api":
                    provenance = Provenance(code, "api", self.digest, profile)
                    tool = await self._api_tool(capability, ctx, overrides, provenance)
                    self._add(tools, tool, code, owners)
                else:
                    servers.append(await resolve_server(capability, ctx, self._policy))
            except (UnresolvedPlaceholderError, UnsafeSettingError, CapabilityUnavailable) as error:
                skipped.append(self._skip(ctx, code, str(error)))
        return Toolset(tuple(self._tagged_internal(tools, profile)), tuple(skipped),
                       tuple(servers), context=ctx, egress_policy=self._policy,
                       manifest_digest=self.digest, profile=profile)

    @property
    def profiles(self) -> list[str]:
        """The names of the manifest's profiles, sorted (SPEC §12)."""
        return sorted(self._data.profiles)

    async def resolve_profile(self, name: str, ctx: RuntimeContext,
                              overrides: Sequence[ToolOverride] = ()) -> Toolset:
        """``resolve`` over profile ``name``'s codes, with its loading policy: its tools
        carry the profile's name, deferred ones ``defer_loading`` (docs/profiles.md)."""
        profile = self._data.profiles.get(name)
        if profile is None:
            known = ", ".join(sorted(self._data.profiles)) or "none"
            raise RuntimeLoaderError(f"no profile {name!r} in the manifest (profiles: {known})")
        codes: dict[str, str] = {}
        toolset = await self._resolve(profile.capabilities, ctx, overrides, codes, profile.name)
        # api tools are built for this resolve alone: they may be marked in place.
        fresh = {name for name, code in codes.items()
                 if (entry := self._data.capabilities.get(code)) is not None
                 and entry.type == "api"}
        return with_policy(toolset, profile_policy(profile, self._data.capabilities),
                           codes, fresh)

    async def aclose(self) -> None:
        """Close the HTTP clients and the sync portal; the manifest cannot resolve afterwards."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            await client.aclose()

    async def __aenter__(self) -> Manifest:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        await self.aclose()

    def close(self) -> None:
        """Close from synchronous code (tools only ever called with ``invoke``)."""
        self._closed = True
        client, self._client = self._client, None
        if client is not None:
            client.close()

    def __enter__(self) -> Manifest:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    def _http_client(self) -> Any:
        if self._client is None:
            # Imported here so that `import compiler.runtime` does not pull in httpx.
            from compiler.runtime.egress import client as egress
            from compiler.runtime.egress.portal import LoopRoutedClient

            policy = self._policy
            self._client = LoopRoutedClient(lambda: egress.build_egress_client(policy))
        return self._client

    async def _api_tool(
        self, capability: CapabilityEntry, ctx: RuntimeContext,
        overrides: Sequence[ToolOverride], provenance: Provenance,
    ) -> Any:
        from compiler.runtime.api.tool import build_api_tool, make_blueprint

        assert capability.tool is not None
        relevant = [o for o in overrides if o.tool == capability.tool.original_name]
        blueprint = self._blueprints.get(capability.code)
        if blueprint is None:
            blueprint = self._blueprints[capability.code] = make_blueprint(capability)
        if relevant:
            # The same concurrency limiter: max_concurrency is per tool and manifest.
            blueprint = make_blueprint(capability, relevant, limiter=blueprint.limiter)
        client = self._http_client()
        return await build_api_tool(
            blueprint, ctx, traced(client), self._max_upload_bytes, portal=client.portal,
            provenance=provenance, usage=self._usage,
        )

    def _tagged_internal(
        self, tools: dict[str, tuple[Any, str]], profile: str | None
    ) -> list[Any]:
        """The resolved tools, internal ones copied once per code and profile with provenance."""
        tagged = []
        for tool, code in tools.values():
            capability = self._data.capabilities[code]
            if capability.type != "internal":
                tagged.append(tool)
                continue
            key = (code, profile, id(tool))
            cached = self._tagged.get(key)
            if cached is None:
                copy = tagged_tool(tool, Provenance(code, "internal", self.digest, profile))
                cached = self._tagged[key] = (tool, copy)
            tagged.append(cached[1])
        return tagged

    def _internal_tools(self, overrides: Sequence[ToolOverride]) -> dict[str, Any]:
        """Registry tool name -> PatchedTool for every overridden internal tool."""
        if not self._data.overrides and not overrides:
            return {}
        from compiler.runtime.tools.plugin_overrides import apply_tool_overrides

        revision = self._registry.revision
        if self._internal_view is None or self._internal_view[0] != revision:
            patched = apply_tool_overrides(
                self._registry.all_tools(), self._data.overrides,
                handled_elsewhere=self._api_tool_names, origin="manifest",
            )
            self._internal_view = (revision, patched)
        view = self._internal_view[1]
        python = [o for o in overrides if o.tool not in self._api_tool_names]
        if not python:
            return view
        extra = apply_tool_overrides(
            self._registry.all_tools(), python, base=view,
            handled_elsewhere=self._api_tool_names, origin="Python API",
        )
        return {**view, **extra}

    def _internal_for(self, capability: CapabilityEntry, patched: dict[str, Any]) -> list[Any]:
        found = []
        for registry_code in capability.internal_codes:
            for tool in self._registry.tools_for(registry_code):
                entry = patched.get(tool.name)
                found.append(entry.tool if entry is not None else tool)
        return found

    def _no_tools_reason(self, capability: CapabilityEntry) -> str:
        codes = ", ".join(capability.internal_codes)
        return f"no tools are registered under {codes} (is the plugin installed?)"

    def _warn_unknown_overrides(self, overrides: Sequence[ToolOverride]) -> None:
        if not overrides:
            return
        known = self._api_tool_names | set(self._registry.all_tools())
        for override in overrides:
            if override.tool not in known:
                logger.warning(
                    "tool override of %r (Python API) skipped: no such tool", override.tool
                )

    @staticmethod
    def _add(tools: dict[str, tuple[Any, str]], tool: Any, code: str,
             owners: dict[str, str]) -> None:
        existing = tools.get(tool.name)
        if existing is None:
            tools[tool.name] = (tool, code)
            owners[tool.name] = code
        elif existing[0] is not tool:
            logger.warning(
                "tool %r of capability %s skipped: another tool already has that name",
                tool.name, code,
            )

    @staticmethod
    def _skip(ctx: RuntimeContext, code: str, reason: str) -> SkippedCapability:
        reason = ctx.redactor.redact(reason)
        logger.warning("capability %s skipped: %s", code, reason)
        return SkippedCapability(code, reason)
