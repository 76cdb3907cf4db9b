"""``capc lock``: list the MCP servers of the tree and write (or ``--check``) the lock.

``--server LABEL`` lists those servers only and merges them into the lock, keeping the
other pins. A server that cannot be listed is reported and keeps its previous pins; the
servers that could be listed are still written. A server whose capability says
``unpinned: REASON`` is a documented exception: it is not listed.

Exit codes: 0 written or up to date; 1 the tree has errors, or ``--check`` found a live
listing that differs from the lock; 2 a server that cannot be listed (unreachable, refused
by the address policy, a setting missing; the others are still written), an unknown
``--server``, a bad settings file, or an I/O error.
Settings values are secrets: they reach the MCP client only, and every message that
could carry one goes through a Redactor first.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from compiler.diagnostics import Code, Diagnostic, Location
from compiler.pins.compare import compare_listings
from compiler.pins.lockfile import LockedServer, dump_lock, read_lock
from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.placeholders import Redactor, resolve_string, setting_names

SETTINGS_NOT_MAPPING = Code(
    "settings-not-mapping", "a --settings file is not one mapping of NAME: value")
SETTINGS_UNREADABLE = Code("settings-unreadable", "a --settings file cannot be read")
CODES = (SETTINGS_NOT_MAPPING, SETTINGS_UNREADABLE)

EXIT_OK, EXIT_DRIFT, EXIT_UNAVAILABLE = 0, 1, 2
SETTING_ENVIRONMENT_PREFIX = "CAPC_SETTING_"


@dataclass(frozen=True, slots=True)
class TreeServer:
    """An MCP server of the tree: its label, URL and headers as written, and why it is
    deliberately unpinned (None: it is pinned)."""

    label: str
    server_url: str
    headers: Mapping[str, str]
    unpinned: str | None = None


@dataclass(frozen=True, slots=True)
class LockRequest:
    """What the flags of ``capc lock`` ask for."""

    lock_path: str
    check: bool = False
    timeout: float = 30.0
    servers: tuple[str, ...] = ()  # --server labels; empty: every server of the tree


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
                                                      dict(mcp.get("headers") or {}),
                                                      mcp.get("unpinned"))
    return [servers[label] for label in sorted(servers)]


def read_settings(path: str | None) -> tuple[dict[str, str], list[Diagnostic]]:
    """``--settings FILE`` (one YAML mapping NAME: value, strict loader), or nothing."""
    if path is None:
        return {}, []
    from compiler.source.yaml_loader import decode_source, load_documents

    try:
        raw = Path(path).read_bytes()
    except OSError as error:
        return {}, [Diagnostic.error(Location(path), SETTINGS_UNREADABLE,
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
        return {}, [Diagnostic.error(Location(path), SETTINGS_NOT_MAPPING,
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
        hint = (" (list its range in [tool.capc] allowed_networks or --allow-network CIDR)"
                if refusal.overridable else "")
        raise ServerUnavailable(f"server {server.label!r}: refused: {refusal.reason}{hint}")


async def _list_one(server: TreeServer, settings: Mapping[str, str], policy: EgressPolicy,
                    timeout: float, redactor: Redactor) -> list[dict[str, Any]]:
    from compiler.runtime.mcp.listing_limits import ListingTooLarge
    from compiler.runtime.mcp.sessions import list_server_tools

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


def run_lock(manifest: Mapping[str, Any], request: LockRequest, settings: Mapping[str, str],
             policy: EgressPolicy) -> LockOutcome:
    """List the servers ``request`` names (default: all but the unpinned ones); merge them
    into the lock and write it, or compare them with it (``check``)."""
    every = tree_servers(manifest)
    by_label = {server.label: server for server in every}
    unknown = [label for label in request.servers if label not in by_label]
    if unknown:
        return LockOutcome(EXIT_UNAVAILABLE, err=tuple(
            f"capc lock: --server {label!r} is not an MCP server of the tree"
            f"{_did_you_mean(label, list(by_label))} (servers: {', '.join(by_label) or 'none'})"
            for label in unknown))
    chosen = [by_label[label] for label in dict.fromkeys(request.servers)] or every
    notes = tuple(f"capc lock: server {s.label}: not pinned on purpose (unpinned: {s.unpinned})"
                  for s in chosen if s.unpinned is not None)
    listed = [server for server in chosen if server.unpinned is None]
    with _quiet_sdk_logs():
        listings, failures = asyncio.run(_list_all(listed, settings, policy, request.timeout))
    errors = tuple(f"capc lock: {failure}" for failure in failures)
    live = {server.label: LockedServer(server.server_url, tuple(listings[server.label]))
            for server in listed if server.label in listings}
    locked: dict[str, LockedServer] = {}
    if Path(request.lock_path).is_file():
        read, problems = read_lock(request.lock_path)
        if read is None:
            return LockOutcome(EXIT_UNAVAILABLE, diagnostics=tuple(problems))
        locked = read
    elif request.check:
        return LockOutcome(EXIT_UNAVAILABLE if failures else EXIT_DRIFT, err=(
            f"capc lock --check: {request.lock_path} is missing: run `capc lock` and commit it",
            *errors))
    exit_code = EXIT_UNAVAILABLE if failures else EXIT_OK
    if request.check:
        outcome = _check(request.lock_path, live, locked, whole_tree=not request.servers,
                         tree_labels=set(by_label))
        return LockOutcome(max(outcome.exit_code, exit_code), outcome.out,
                           (*notes, *outcome.err, *errors))
    # Merge: what was listed replaces its pins; every other pin stays, except (on a lock
    # of the whole tree) those of servers the tree no longer has or deliberately unpins.
    merged = dict(locked)
    if not request.servers:
        merged = {label: pin for label, pin in locked.items()
                  if label in by_label and by_label[label].unpinned is None}
    merged.update(live)
    if not live and merged == locked:  # nothing listed, nothing to drop: leave it be
        return LockOutcome(exit_code, err=(*notes, *errors))
    from compiler.manifest import write_atomically

    write_atomically(Path(request.lock_path), dump_lock(merged))
    count = sum(len(server.tools) for server in live.values())
    kept = len(merged) - len(live)
    wrote = (f"capc lock: wrote {request.lock_path}: {len(live)} server(s) listed, "
             f"{count} tool(s)" + (f"; {kept} other server(s) kept as pinned" if kept else ""))
    if failures:
        wrote += f"; {len(failures)} server(s) could not be listed (their pins are unchanged)"
    return LockOutcome(exit_code, err=(*notes, wrote, *errors))


@contextlib.contextmanager
def _quiet_sdk_logs() -> Iterator[None]:
    """Keep the MCP SDK's own log records (tracebacks included) off the terminal while
    listing: every failure reaches the user once, as capc's located one-line reason."""
    sdk = logging.getLogger("mcp")
    quiet = logging.NullHandler()
    propagate = sdk.propagate
    sdk.addHandler(quiet)
    sdk.propagate = False
    try:
        yield
    finally:
        sdk.removeHandler(quiet)
        sdk.propagate = propagate


def _did_you_mean(label: str, labels: Sequence[str]) -> str:
    import difflib

    close = difflib.get_close_matches(label, labels, n=1, cutoff=0.6)
    return f"; did you mean {close[0]!r}?" if close else ""


def _check(lock_path: str, live: Mapping[str, LockedServer],
           locked: Mapping[str, LockedServer], *, whole_tree: bool,
           tree_labels: set[str]) -> LockOutcome:
    out: list[str] = []
    labels = set(live) | (set(locked) if whole_tree else set())
    for label in sorted(labels):
        if label not in locked:
            out.append(f"server {label}: not in {lock_path}")
            continue
        if label not in live:
            if label not in tree_labels:
                out.append(f"server {label}: in {lock_path} but not in the tree")
            continue  # in the tree but not listed: unpinned, or reported as unreachable
        before, after = locked[label], live[label]
        lines = []
        if before.server_url != after.server_url:
            lines.append(f"  ~ server_url: {shown_value(before.server_url)} -> "
                         f"{shown_value(after.server_url)}")
        drift = compare_listings(before.tools, after.tools)
        lines += drift.lines()
        for change in drift.changed:
            old, new = before.tool(change.name) or {}, after.tool(change.name) or {}
            for name in change.fields:
                lines += [f"      {name} was: {shown_value(old.get(name))}",
                          f"      {name} now: {shown_value(new.get(name))}"]
        if lines:
            out += [f"server {label}:", *lines]
    if not out:
        return LockOutcome(EXIT_OK, err=(f"capc lock --check: {lock_path} matches the live "
                                         f"listing of {len(live)} server(s)",))
    return LockOutcome(EXIT_DRIFT, out=tuple(out), err=(
        f"capc lock --check: the live listing differs from {lock_path}: review the change, "
        "then run `capc lock` and commit it",))


# How much of one old or new value ``lock --check`` prints: enough to review a changed
# description, bounded so a hostile server cannot flood the log.
SHOWN_VALUE_LIMIT = 400


def shown_value(value: Any) -> str:
    """A listed value as one line of JSON text, control characters escaped, bounded."""
    import json

    from compiler.report.escape import escape_control

    text = escape_control(json.dumps(value, ensure_ascii=False, sort_keys=True, default=str))
    if len(text) > SHOWN_VALUE_LIMIT:
        text = f"{text[:SHOWN_VALUE_LIMIT]}… ({len(text) - SHOWN_VALUE_LIMIT} more characters)"
    return text
