"""``capc serve``: a verified manifest's profiles as MCP endpoints (SPEC §15).

The manifest is loaded and verified before anything listens: a refused manifest exits
as every other reader of it does (1 for a failed check, 2 when it cannot be read) and is
never served. A bind beyond loopback needs authentication, or ``--no-auth`` said out loud.
"""

from __future__ import annotations

import asyncio
import importlib
import ipaddress
import logging
import sys
from typing import Any

import click

from compiler.errors import InputOutputError, ManifestError, UsageError

_AUTH_MODULE = "compiler.cli.serve_auth_options"


def _auth_flags(command: Any) -> Any:
    """The built-in resource server's flags (``--auth-issuer``...), where installed."""
    try:
        module = importlib.import_module(_AUTH_MODULE)
    except ImportError:
        return command
    return module.serve_auth_options(command)


def is_loopback(host: str) -> bool:
    """Whether ``host`` is a loopback name or address (what may serve without auth)."""
    if host.strip("[]").lower() == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.strip("[]")).is_loopback
    except ValueError:
        return False


@click.command("serve", epilog="""\b
Examples:
  capc serve build/manifest.json                       # every profile, /mcp/{profile}
  capc serve build/manifest.json --profile support --watch
  capc serve build/manifest.json --profile support --stdio   # for an IDE or a desktop app
  capc serve m.json --public-key "$CAPC_PUBLIC_KEY" --host 0.0.0.0 --auth-issuer ...""")
@click.argument("manifest_path", metavar="MANIFEST")
@click.option("--profile", "profiles", multiple=True, metavar="NAME",
              help="Serve this profile at /mcp/NAME (repeatable; default: every profile).")
@click.option("--all-tools", is_flag=True,
              help="Also serve the whole manifest at /mcp.")
@click.option("--host", default="127.0.0.1", show_default=True,
              help="The address to bind (beyond loopback, authentication is required).")
@click.option("--port", type=click.IntRange(0, 65535), default=8000, show_default=True)
@click.option("--public-key", "public_keys", multiple=True, metavar="KEY",
              help="Serve only a manifest signed by this key (repeatable): ed25519:BASE64 "
                   "or a PEM public key file.")
@click.option("--expected-digest", metavar="DIGEST", default=None,
              help="Serve only the manifest with this digest (sha256:...).")
@click.option("--stdio", is_flag=True,
              help="Serve one profile (or --all-tools) over standard input and output.")
@click.option("--watch", is_flag=True,
              help="Reload the manifest when it changes; a bad version is refused and the "
                   "last good one keeps serving.")
@click.option("--no-auth", is_flag=True,
              help="Allow a bind beyond loopback without authentication.")
@click.option("--allowed-host", "allowed_hosts", multiple=True, metavar="NAME",
              help="A host name clients reach the server by (Host and Origin checks; "
                   "repeatable; loopback names are always allowed on a loopback bind).")
@click.option("--allow-private-networks", is_flag=True,
              help="api tools may call loopback and private addresses.")
@click.option("--call-timeout", type=click.FloatRange(1, 3600), default=120.0,
              show_default=True, help="Seconds one tools/call may take in all.")
@click.option("--max-concurrent-calls", type=click.IntRange(1, 10000), default=64,
              show_default=True, help="Calls run at once; more wait for a slot.")
@_auth_flags
def serve_command(manifest_path: str, profiles: tuple[str, ...], all_tools: bool, host: str,
                  port: int, public_keys: tuple[str, ...], expected_digest: str | None,
                  stdio: bool, watch: bool, no_auth: bool, allowed_hosts: tuple[str, ...],
                  allow_private_networks: bool, call_timeout: float,
                  max_concurrent_calls: int, **auth: Any) -> None:
    """Serve MANIFEST's reviewed tools to MCP clients (streamable HTTP, or --stdio)."""
    authenticator = _authenticator(auth.get("auth"))
    if stdio and len(profiles) + all_tools != 1:
        raise UsageError("--stdio serves one endpoint: give one --profile, or --all-tools")
    if not stdio and not is_loopback(host) and authenticator is None and not no_auth:
        raise UsageError(f"refusing to serve on {host} without authentication: configure "
                         "the OAuth resource server (--auth-issuer, --auth-jwks, "
                         "--public-url) or pass --no-auth")
    from compiler.runtime.serve.app import LOOPBACK_NAMES, McpServer, create_app
    from compiler.runtime.serve.endpoint import ServeLimits

    hosts: frozenset[str] | None = (LOOPBACK_NAMES | set(allowed_hosts)
                                    if is_loopback(host) or allowed_hosts else None)
    options: dict[str, Any] = dict(
        profiles=list(profiles) or None, all_tools=all_tools,
        authenticator=authenticator, public_keys=list(public_keys) or None,
        expected_digest=expected_digest, watch=watch,
        limits=ServeLimits(call_timeout=call_timeout,
                           max_concurrent_calls=max_concurrent_calls),
        allowed_hosts=hosts, allowed_origins=hosts,
        allow_private_networks=allow_private_networks)
    logging.basicConfig(stream=sys.stderr, level=logging.INFO,
                        format="%(asctime)s %(levelname)s %(name)s: %(message)s")
    try:
        if stdio:
            from compiler.runtime.serve.stdio import serve_stdio

            server = McpServer(manifest_path, **options)
            chosen = profiles[0] if profiles else None
            if chosen is not None and chosen not in server.endpoints:
                raise UsageError(f"no profile {chosen!r} in the manifest")
            asyncio.run(_stdio(server, chosen, serve_stdio))
            return
        app = create_app(manifest_path, **options)
    except ValueError as error:  # an unknown --profile, a bad key
        raise UsageError(str(error)) from None
    except Exception as error:
        _refused(error)
        raise
    _run_uvicorn(app, host, port)


async def _stdio(server: Any, profile: str | None, serve: Any) -> None:
    try:
        await serve(server, profile)
    finally:
        await server.aclose()


def _authenticator(options: Any) -> Any:
    if options is None:
        return None
    module = importlib.import_module(_AUTH_MODULE)
    return module.build_authenticator(options)


def _refused(error: Exception) -> None:
    """A manifest the loader refused, as the exit code every reader of it gives."""
    from compiler.runtime.errors import ManifestError as Refused

    if isinstance(error, Refused):
        if error.check == "read":
            raise InputOutputError(str(error)) from None
        raise ManifestError(str(error)) from None


def _run_uvicorn(app: Any, host: str, port: int) -> None:
    import uvicorn

    config = uvicorn.Config(app, host=host, port=port, lifespan="on", log_level="info",
                            server_header=False, proxy_headers=False, access_log=False)
    uvicorn.Server(config).run()
