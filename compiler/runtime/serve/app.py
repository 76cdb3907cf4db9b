"""``create_app``: the ASGI application serving a manifest's profiles over MCP (SPEC §15).

    from compiler.runtime.serve import create_app

    app = create_app("build/manifest.json", profiles=["support"])   # /mcp/support
    # uvicorn module:app, or Mount("/tools", app=app) in a Starlette or FastAPI app

The manifest is loaded and verified when the app is made (a refused manifest raises
ManifestError and never serves); with ``watch=True`` it is watched from the first request
or the app's start-up, whichever comes first, and reloads as ``watch_manifest`` does.
"""

from __future__ import annotations

import asyncio
import inspect
import os
from collections.abc import AsyncIterator, Awaitable, Callable, Iterable, Mapping, Sequence
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING, Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import BaseRoute, Route

from compiler.runtime.serve.calls import CallGate
from compiler.runtime.serve.endpoint import Approver, McpEndpoint, ServeLimits
from compiler.runtime.serve.identity import (
    ANONYMOUS,
    Authenticator,
    ContextFactory,
    Identity,
    profile_allowed,
)
from compiler.runtime.serve.protocol import INVALID_REQUEST, PROTOCOL_VERSIONS
from compiler.runtime.serve.settings import EnvironmentSettings
from compiler.runtime.serve.source import FixedManifest, ManifestSource
from compiler.runtime.serve.streamable_http import (
    PendingElicitations,
    StreamExchange,
    answer,
    error_response,
    header_problem,
    json_response,
    parsed,
    read_body,
    rebinding_problem,
)

if TYPE_CHECKING:
    from compiler.runtime.context import RuntimeContext, SettingsService
    from compiler.runtime.fleet.watch import ManifestWatcher
    from compiler.runtime.loader import Manifest

LOOPBACK_NAMES = frozenset({"127.0.0.1", "localhost", "::1"})
DEFAULT_LIMITS = ServeLimits()
SERVER_NAME = "capc"


def create_app(
    manifest: Manifest | str | os.PathLike[str],
    *,
    profiles: Sequence[str] | None = None,
    all_tools: bool = False,
    settings: SettingsService | None = None,
    context_factory: ContextFactory | None = None,
    authenticator: Authenticator | None = None,
    profile_scopes: Mapping[str, str] | None = None,
    public_keys: Iterable[str] | None = None,
    expected_digest: str | None = None,
    watch: bool = False,
    watch_interval: float = 2.0,
    limits: ServeLimits = DEFAULT_LIMITS,
    allowed_hosts: Iterable[str] | None = LOOPBACK_NAMES,
    allowed_origins: Iterable[str] | None = LOOPBACK_NAMES,
    registry: Any = None,
    allow_private_networks: bool = False,
) -> Starlette:
    """The ASGI app serving ``manifest`` (a loaded Manifest, or a path to load and verify).

    ``profiles``: the profiles to serve at ``/mcp/{profile}`` (default: all of them);
    ``all_tools``: also the whole manifest at ``/mcp``. ``settings``: the settings service
    (default: ``$CAPC_SETTING_NAME``); ``context_factory``: the host's ``(request,
    identity) -> RuntimeContext`` (settings then come from the contexts it makes).
    ``authenticator`` checks every MCP request first; ``profile_scopes`` maps a profile
    to the scope it needs. ``public_keys``/``expected_digest``: as ``load_manifest``'s
    ``trusted_keys``/``expected_digest``. ``allowed_hosts``/``allowed_origins``: the host
    names a ``Host`` and an ``Origin`` may name (None: not checked).
    """
    server = McpServer(
        manifest, profiles=profiles, all_tools=all_tools, settings=settings,
        context_factory=context_factory, authenticator=authenticator,
        profile_scopes=profile_scopes, public_keys=public_keys,
        expected_digest=expected_digest, watch=watch, watch_interval=watch_interval,
        limits=limits, allowed_hosts=allowed_hosts, allowed_origins=allowed_origins,
        registry=registry, allow_private_networks=allow_private_networks)

    @asynccontextmanager
    async def lifespan(app: Starlette) -> AsyncIterator[None]:
        await server.start()
        try:
            yield
        finally:
            await server.aclose()

    app = Starlette(routes=server.routes(), lifespan=lifespan)
    app.state.capc_server = server
    return app


class McpServer:
    """The state of one served manifest: its source, endpoints, limits and checks."""

    def __init__(self, manifest: Any, *, profiles: Sequence[str] | None = None,
                 all_tools: bool = False, settings: Any = None,
                 context_factory: ContextFactory | None = None,
                 authenticator: Authenticator | None = None,
                 profile_scopes: Mapping[str, str] | None = None,
                 public_keys: Iterable[str] | None = None, expected_digest: str | None = None,
                 watch: bool = False, watch_interval: float = 2.0,
                 limits: ServeLimits = DEFAULT_LIMITS,
                 allowed_hosts: Iterable[str] | None = LOOPBACK_NAMES,
                 allowed_origins: Iterable[str] | None = LOOPBACK_NAMES,
                 registry: Any = None, allow_private_networks: bool = False) -> None:
        from compiler import __version__

        self._limits = limits
        self._settings = settings if settings is not None else EnvironmentSettings()
        self._context_factory = context_factory
        self._authenticator = authenticator
        self._profile_scopes = dict(profile_scopes or {})
        self._hosts = _names(allowed_hosts)
        self._origins = _names(allowed_origins)
        self._pending = PendingElicitations()
        self._gate = CallGate(limits.max_concurrent_calls, limits.max_waiting_calls)
        self._watcher: ManifestWatcher | None = None
        self._start_lock = asyncio.Lock()
        self._closed = False
        # Called after each reload: the stdio transport tells its client the list changed.
        self.change_listeners: list[Callable[[], Awaitable[None]]] = []
        loaded = _loaded(manifest, public_keys, expected_digest, registry,
                         allow_private_networks)
        self._source: ManifestSource = FixedManifest(loaded, owned=not _is_manifest(manifest))
        self._started = not watch
        if watch:
            self._watch_args = (os.fspath(loaded.data.path), public_keys, expected_digest,
                                loaded.registry, allow_private_networks, watch_interval)
        known = loaded.profiles
        chosen = list(profiles) if profiles is not None else known
        unknown = [name for name in chosen if name not in known]
        if unknown:
            raise ValueError(f"no profile {', '.join(map(repr, unknown))} in the manifest "
                             f"(profiles: {', '.join(known) or 'none'})")
        self.server_info = {"name": SERVER_NAME, "version": __version__}
        self.endpoints: dict[str | None, McpEndpoint] = {
            name: self._endpoint(name) for name in dict.fromkeys(chosen)}
        if all_tools:
            self.endpoints[None] = self._endpoint(None)
        self.watching = watch

    def _endpoint(self, profile: str | None) -> McpEndpoint:
        return McpEndpoint(_SourceView(self), profile, limits=self._limits, gate=self._gate,
                           server_info=self.server_info)

    @property
    def limits(self) -> ServeLimits:
        """The bounds of this server."""
        return self._limits

    @property
    def source(self) -> ManifestSource:
        """Where the manifest served now comes from."""
        return self._source

    def routes(self) -> list[BaseRoute]:
        """The endpoints, the health and status routes, and the authenticator's routes."""
        routes: list[BaseRoute] = [
            Route("/healthz", self._healthz, methods=["GET"]),
            Route("/readyz", self._readyz, methods=["GET"]),
            Route("/status", self._status, methods=["GET"]),
        ]
        if self._authenticator is not None:
            routes += self._authenticator.metadata_routes()
        for profile in self.endpoints:
            path = "/mcp" if profile is None else f"/mcp/{profile}"
            routes.append(Route(path, self._handler(profile),
                                methods=["GET", "POST", "DELETE"]))
        return routes

    async def start(self) -> None:
        """Start watching (with ``watch=True``); idempotent, safe from any request."""
        if self._started:
            return
        async with self._start_lock:
            if self._started:
                return
            from compiler.runtime.serve.source import watched_source

            path, keys, digest, registry, private, interval = self._watch_args
            source, watcher = watched_source(
                path, trusted_keys=None if keys is None else list(keys),
                expected_digest=digest, registry=registry,
                allow_private_networks=private, interval=interval, on_change=self._changed)
            await watcher.start()
            old, self._source, self._watcher = self._source, source, watcher
            await old.aclose()
            self._started = True

    async def _changed(self, manifest: Manifest) -> None:
        """A new manifest was swapped in: the next request of any client sees it, and the
        clients a transport keeps a stream to are told."""
        for listener in list(self.change_listeners):
            await listener()

    async def aclose(self) -> None:
        """Stop watching and close the manifest's connection pools."""
        self._closed = True
        await self._source.aclose()

    def status_document(self) -> dict[str, Any]:
        """Digest, profiles, reloads and the last rejection; no setting, header or path."""
        served = sorted(name for name in self.endpoints if name is not None)
        return {**self._source.status(), "profiles": served,
                "all_tools": None in self.endpoints,
                "protocol_versions": list(PROTOCOL_VERSIONS),
                "calls_running": self._gate.running, "server": self.server_info}

    async def _healthz(self, request: Request) -> Response:
        return JSONResponse({"status": "ok"})

    async def _readyz(self, request: Request) -> Response:
        if self._closed:
            return JSONResponse({"ready": False, "reason": "shutting down"}, status_code=503)
        try:
            await self.start()
        except Exception as error:  # the watcher refused the manifest it was started on
            return JSONResponse({"ready": False, "reason": type(error).__name__},
                                status_code=503)
        return JSONResponse({"ready": True, "digest": self.status_document()["digest"]})

    async def _status(self, request: Request) -> Response:
        return JSONResponse(self.status_document())

    def _handler(self, profile: str | None) -> Any:
        endpoint = self.endpoints[profile]

        async def handle(request: Request) -> Response:
            return await self._handle(request, endpoint)
        return handle

    async def _handle(self, request: Request, endpoint: McpEndpoint) -> Response:
        refused = rebinding_problem(request, self._hosts, self._origins)
        if refused is not None:
            return refused
        identity = ANONYMOUS
        if self._authenticator is not None:
            checked = await self._authenticator.authenticate(request)
            if isinstance(checked, Response):
                return checked
            identity = checked
        if endpoint.profile is not None and not profile_allowed(
                identity, endpoint.profile, self._profile_scopes):
            scope = self._profile_scopes[endpoint.profile]
            return error_response(403, INVALID_REQUEST, "Forbidden: this profile needs the "
                                  f"scope {scope!r}", headers={"www-authenticate":
                                  f'Bearer error="insufficient_scope", scope="{scope}"'})
        if request.method != "POST":
            return Response(status_code=405, headers={"allow": "POST"})
        problem = header_problem(request)
        if problem is not None:
            return problem
        body = await read_body(request, self._limits.max_body_bytes)
        if isinstance(body, Response):
            return body
        message = parsed(body)
        if isinstance(message, Response):
            return message
        if message.kind == "response":
            self._pending.answer(message)
            return Response(status_code=202)
        if message.kind == "notification":
            return Response(status_code=202)
        await self.start()
        exchange = StreamExchange(self._pending,
                                  "text/event-stream" in request.headers.get("accept", ""))

        async def make_context(approve: Approver) -> RuntimeContext:
            return await self.context_for(request, identity, approve)

        if message.method == "tools/call" and exchange.can_elicit:
            return await answer(exchange, lambda: endpoint.dispatch(message, make_context,
                                                                    exchange))
        reply = await endpoint.dispatch(message, make_context, exchange)
        return json_response(reply) if reply is not None else Response(status_code=202)

    async def context_for(self, request: Request | None, identity: Identity,
                          approve: Approver) -> RuntimeContext:
        """The ``RuntimeContext`` of one MCP request (``request`` None: over stdio)."""
        from compiler.runtime.context import RuntimeContext

        if self._context_factory is None or request is None:
            return RuntimeContext(user_id=identity.user_id, group_id=identity.group_id,
                                  settings=self._settings, approve=approve)
        made: Any = self._context_factory(request, identity)
        context: RuntimeContext = await made if inspect.isawaitable(made) else made
        return context.with_changes(approve=approve)


class _SourceView:
    """The server's current source, followed across the switch to a watched one."""

    def __init__(self, server: McpServer) -> None:
        self._server = server

    def lease(self) -> Any:
        """Hold the manifest served now, for one request."""
        return self._server.source.lease()

    def status(self) -> dict[str, Any]:
        """The current source's status."""
        return self._server.source.status()

    async def aclose(self) -> None:
        """Nothing: the server closes its source."""


def _names(names: Iterable[str] | None) -> frozenset[str] | None:
    return None if names is None else frozenset(name.strip("[]").lower() for name in names)


def _is_manifest(value: Any) -> bool:
    return hasattr(value, "resolve_profile") and hasattr(value, "digest")


def _loaded(manifest: Any, public_keys: Iterable[str] | None, expected_digest: str | None,
            registry: Any, allow_private_networks: bool) -> Manifest:
    if _is_manifest(manifest):
        loaded: Manifest = manifest
        return loaded
    from compiler.runtime.loader import load_manifest

    return load_manifest(manifest, registry=registry,
                         allow_private_networks=allow_private_networks,
                         trusted_keys=None if public_keys is None else list(public_keys),
                         expected_digest=expected_digest)
