"""``capc lock``: list every MCP server of the tree and write (or ``--check``) the lock.

Exit codes: 0 written or up to date; 1 the tree has errors, or ``--check`` found a live
listing that differs from the lock; 2 a server that cannot be listed (unreachable, refused
by the address policy, a setting missing), a bad settings file, or an I/O error.
Settings values are secrets: they reach the MCP client only, and every message that
could carry one goes through a Redactor first.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from compiler.diagnostics import Diagnostic, Location
from compiler.pins.compare import compare_listings
from compiler.pins.lockfile import LockedServer, dump_lock, read_lock
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.placeholders import Redactor, resolve_string, setting_names

EXIT_OK, EXIT_DRIFT, EXIT_UNAVAILABLE = 0, 1, 2
SETTING_ENVIRONMENT_PREFIX = "CAPC_SETTING_"


@dataclass(frozen=True, slots=True)
class TreeServer:
    """An MCP server of the tree: its label, URL and headers as written."""

    label: str
    server_url: str
    headers: Mapping[str, str]


@dataclass(frozen=True, slots=True)
class LockOutcome:
    """What ``capc lock`` prints (stdout lines, stderr lines), writes and exits with."""

    exit_code: int
    out: tuple[str, ...] = ()
    err: tuple[str, ...] = ()
    diagnostics: tuple[Diagnostic, ...] = field(default=())


class ServerUnavailable(Exception):
    """A server that cannot be listed; the message names it and is already redacted."""


def tree_servers(manifest: Mapping[str, Any]) -> list[TreeServer]:
    """The MCP servers of a compiled tree, by label."""
    servers = {}
    for capability in manifest.get("capabilities", []):
        if capability.get("type") == "mcp":
            mcp = capability["mcp"]
            servers[mcp["server_label"]] = TreeServer(mcp["server_label"], mcp["server_url"],
                                                      dict(mcp.get("headers") or {}))
    return [servers[label] for label in sorted(servers)]


def read_settings(path: str | None) -> tuple[dict[str, str], list[Diagnostic]]:
    """``--settings FILE`` (one YAML mapping NAME: value, strict loader), or nothing."""
    if path is None:
        return {}, []
    from compiler.source.yaml_loader import decode_source, load_documents

    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        return {}, [Diagnostic.error(Location(path), "settings-unreadable",
                                     error.strerror or str(error))]
    text, problem = decode_source(raw)
    documents, problems = load_documents(text) if text is not None else ([], [])
    if problem is not None:
        problems = [problem]
    if problems:
        return {}, [Diagnostic.error(Location(path, p.line, p.col), p.code, p.message)
                    for p in problems]
    data = documents[0].data if len(documents) == 1 else None
    if data is None and not documents:
        return {}, []
    scalar = (str, int, float, bool)
    if not isinstance(data, dict) or not all(isinstance(v, scalar) for v in data.values()):
        return {}, [Diagnostic.error(Location(path), "settings-not-mapping",
                                     "a --settings file must hold one mapping of NAME: value")]
    return {str(key): str(value) for key, value in data.items()}, []


def setting_value(name: str, settings: Mapping[str, str]) -> str | None:
    """A setting from the settings file, else ``$CAPC_SETTING_NAME``, else None."""
    value = settings.get(name) or os.environ.get(SETTING_ENVIRONMENT_PREFIX + name)
    return value or None


def _resolve(server: TreeServer, settings: Mapping[str, str],
             redactor: Redactor) -> tuple[str, dict[str, str]]:
    names = set(setting_names(server.server_url))
    for value in server.headers.values():
        names.update(setting_names(value))
    values: dict[str, str] = {}
    missing: list[str] = []
    for name in sorted(names):
        found = setting_value(name, settings)
        if found is None:
            missing.append(name)
        else:
            values[name] = found
            redactor.add(found)
    if missing:
        raise ServerUnavailable(
            f"server {server.label!r}: setting(s) {', '.join(missing)} not given (use "
            f"--settings FILE or {SETTING_ENVIRONMENT_PREFIX}NAME)")
    headers = {name: resolve_string(value, values) for name, value in server.headers.items()}
    return resolve_string(server.server_url, values), headers


def _check_address(server: TreeServer, url: str, policy: EgressPolicy) -> None:
    try:
        host = urlsplit(url).hostname or ""
    except ValueError:
        host = ""
    if not host:
        raise ServerUnavailable(f"server {server.label!r}: {server.server_url} has no host")
    refusal = policy.refusal_for_host(host)
    if refusal is not None:
        hint = " (--allow-private-networks allows it)" if refusal.overridable else ""
        raise ServerUnavailable(f"server {server.label!r}: refused: {refusal.reason}{hint}")


async def _list_one(server: TreeServer, settings: Mapping[str, str], policy: EgressPolicy,
                    timeout: float, redactor: Redactor) -> list[dict[str, Any]]:
    from compiler.runtime.mcp.client import list_server_tools
    from compiler.runtime.mcp.listing_limits import ListingTooLarge

    url, headers = _resolve(server, settings, redactor)
    _check_address(server, url, policy)
    try:
        tools = await list_server_tools(url, headers, policy, timeout)
    except ImportError as error:
        raise ServerUnavailable(str(error)) from None
    except ListingTooLarge as error:
        raise ServerUnavailable(redactor.redact(
            f"server {server.label!r} ({server.server_url}): listing refused: {error}")) \
            from None
    except BaseException as error:  # ExceptionGroups from the SDK's task group, timeouts…
        if isinstance(error, KeyboardInterrupt | SystemExit):
            raise
        reason = _reason(error)
        raise ServerUnavailable(redactor.redact(
            f"server {server.label!r} ({server.server_url}) cannot be reached: {reason}")) \
            from None
    listing = str(tools)
    if redactor and redactor.redact(listing) != listing:
        raise ServerUnavailable(f"server {server.label!r} echoes a setting value in its tool "
                                "listing: refusing to write it into the lock")
    return tools


def _reason(error: BaseException) -> str:
    while isinstance(error, BaseExceptionGroup) and error.exceptions:
        error = error.exceptions[0]
    import httpx  # loaded already: the listing that failed went through it

    # The listing's own deadline and the HTTP client's read timeout are the same limit;
    # which one fires first is scheduling, so both read the same.
    if isinstance(error, TimeoutError | httpx.TimeoutException):
        return "timed out"
    text = str(error).splitlines()[0] if str(error) else ""
    return f"{type(error).__name__}: {text}" if text else type(error).__name__


async def _list_all(servers: Sequence[TreeServer], settings: Mapping[str, str],
                    policy: EgressPolicy, timeout: float
                    ) -> tuple[dict[str, list[dict[str, Any]]], list[str]]:
    redactor = Redactor()
    listings: dict[str, list[dict[str, Any]]] = {}
    failures: list[str] = []
    for server in servers:
        try:
            listings[server.label] = await _list_one(server, settings, policy, timeout, redactor)
        except ServerUnavailable as error:
            failures.append(str(error))
    return listings, failures


def run_lock(manifest: Mapping[str, Any], lock_path: str, settings: Mapping[str, str], *,
             check: bool, allow_private_networks: bool, timeout: float) -> LockOutcome:
    """List the tree's servers; write the lock, or compare it (``check``)."""
    servers = tree_servers(manifest)
    policy = EgressPolicy(allow_private_networks=allow_private_networks)
    listings, failures = asyncio.run(_list_all(servers, settings, policy, timeout))
    if failures:
        return LockOutcome(EXIT_UNAVAILABLE, err=tuple(f"capc lock: {f}" for f in failures))
    live = {server.label: LockedServer(server.server_url, tuple(listings[server.label]))
            for server in servers}
    if not check:
        from compiler.manifest import write_atomically

        write_atomically(Path(lock_path), dump_lock(live))
        count = sum(len(server.tools) for server in live.values())
        return LockOutcome(EXIT_OK, err=(f"capc lock: wrote {lock_path}: {len(live)} server(s), "
                                         f"{count} tool(s)",))
    return _check(lock_path, live)


def _check(lock_path: str, live: Mapping[str, LockedServer]) -> LockOutcome:
    if not Path(lock_path).is_file():
        return LockOutcome(EXIT_DRIFT, err=(f"capc lock --check: {lock_path} is missing: run "
                                            "`capc lock` and commit it",))
    locked, problems = read_lock(lock_path)
    if locked is None:
        return LockOutcome(EXIT_UNAVAILABLE, diagnostics=tuple(problems))
    out: list[str] = []
    for label in sorted(live.keys() | locked.keys()):
        if label not in locked:
            out.append(f"server {label}: not in {lock_path}")
            continue
        if label not in live:
            out.append(f"server {label}: in {lock_path} but not in the tree")
            continue
        before, after = locked[label], live[label]
        lines = []
        if before.server_url != after.server_url:
            lines.append(f"  ~ server_url: {before.server_url} -> {after.server_url}")
        lines += compare_listings(before.tools, after.tools).lines()
        if lines:
            out += [f"server {label}:", *lines]
    if not out:
        return LockOutcome(EXIT_OK, err=(f"capc lock --check: {lock_path} matches the live "
                                         f"listing of {len(live)} server(s)",))
    return LockOutcome(EXIT_DRIFT, out=tuple(out), err=(
        f"capc lock --check: the live listing differs from {lock_path}: review the change, "
        "then run `capc lock` and commit it",))
