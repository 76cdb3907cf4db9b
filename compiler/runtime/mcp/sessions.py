"""Talking to MCP servers from this process: listing tools, and client-side LangChain tools.

Both ``capc lock`` and ``Toolset.client_mcp_tools`` connect through the official MCP
Python SDK over streamable HTTP, with an httpx client on capc's pinned egress transport:
every connection goes to an address the policy checked (DNS rebinding included). ``mcp``
and ``langchain_mcp_adapters`` (the optional extra ``capc[mcp]``) are imported only here,
inside the functions that use them.
"""

from __future__ import annotations

import inspect
import logging
from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import httpx

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.loading_policy import profiled_tool
from compiler.runtime.manifest.pinned import PinnedToolEntry
from compiler.runtime.mcp.gating import allowed_tool_names
from compiler.runtime.mcp.listing_limits import (
    BudgetedTransport,
    ListingBudget,
    ListingTooLarge,
    bounded_listing,
    check_tool_count,
)
from compiler.runtime.mcp.pins import listed_tool
from compiler.runtime.provenance import Provenance

if TYPE_CHECKING:
    from compiler.runtime.context import RuntimeContext
    from compiler.runtime.mcp.server_resolution import ResolvedMcpServer

logger = logging.getLogger(__name__)

DEFAULT_TIMEOUT = 30.0
MAX_LIST_PAGES = 100  # a server that pages forever is cut off, not followed
Approver = Callable[[str, dict[str, Any]], Awaitable[bool]]


class McpExtraMissing(ImportError):
    """The optional extra ``capc[mcp]`` (mcp, langchain-mcp-adapters) is not installed."""


def checked_http_client(policy: EgressPolicy, headers: Mapping[str, str] | None = None,
                        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
                        auth: httpx.Auth | None = None,
                        budget: ListingBudget | None = None) -> httpx.AsyncClient:
    """An httpx client whose every connection goes through the egress address policy.

    ``budget``: the response bytes it may read (a tool listing's client).
    """
    from compiler.runtime.egress.transport import PinnedNetworkBackend, PinnedTransport

    transport: httpx.AsyncBaseTransport = PinnedTransport(
        PinnedNetworkBackend(policy), httpx.Limits(max_connections=10))
    if budget is not None:
        transport = BudgetedTransport(transport, budget)
    return httpx.AsyncClient(transport=transport, headers=dict(headers or {}),
                             timeout=timeout, auth=auth, follow_redirects=False,
                             trust_env=False)


def checked_client_factory(policy: EgressPolicy, budget: ListingBudget | None = None
                           ) -> Callable[..., httpx.AsyncClient]:
    """An ``httpx_client_factory`` for langchain-mcp-adapters on the checked egress client."""

    def factory(headers: dict[str, str] | None = None, timeout: httpx.Timeout | None = None,
                auth: httpx.Auth | None = None) -> httpx.AsyncClient:
        return checked_http_client(policy, headers, timeout or DEFAULT_TIMEOUT, auth, budget)
    return factory


async def list_raw_tools(session: Any) -> list[Any]:
    """Every tool of an initialized ``mcp.ClientSession``, following ``nextCursor``.

    Raises ListingTooLarge past MAX_LISTED_TOOLS tools.
    """
    tools: list[Any] = []
    cursor: str | None = None
    for _ in range(MAX_LIST_PAGES):
        result = await (session.list_tools(cursor) if cursor else session.list_tools())
        tools += result.tools
        check_tool_count(len(tools))
        cursor = result.nextCursor
        if not cursor:
            return tools
    raise RuntimeError(f"the server listed more than {MAX_LIST_PAGES} pages of tools")


async def list_server_tools(url: str, headers: Mapping[str, str], policy: EgressPolicy,
                            timeout: float = DEFAULT_TIMEOUT) -> list[dict[str, Any]]:
    """The server's tools as pinned descriptors (with digests), sorted by name.

    The whole exchange (connect, initialize, every page) is bounded by ``timeout``, the
    bytes it reads by MAX_LISTING_BYTES and the tools by MAX_LISTED_TOOLS (ListingTooLarge).
    """
    try:
        from mcp import ClientSession
        from mcp.client.streamable_http import streamable_http_client
    except ImportError as error:
        raise McpExtraMissing("listing MCP tools needs the extra: pip install 'capc[mcp]'") \
            from error

    budget = ListingBudget()

    async def exchange() -> list[Any]:
        async with checked_http_client(policy, headers, timeout, budget=budget) as http, \
                streamable_http_client(url, http_client=http) as (read, write, _), \
                ClientSession(read, write) as session:
            await session.initialize()
            return await list_raw_tools(session)

    try:
        raw = await bounded_listing(exchange(), budget, timeout)
    except Exception as error:
        # The HTTP client's own timeout and the overall deadline are equal, so which one
        # fires first depends on scheduling; both mean the same thing to the caller.
        if is_timeout(error):
            raise TimeoutError(f"no complete listing within {timeout:g} s") from None
        raise
    return sorted((listed_tool(tool) for tool in raw), key=lambda tool: tool["name"])


def is_timeout(error: BaseException) -> bool:
    """Whether ``error`` is, or wraps (groups, causes), a timeout of any layer."""
    pending: list[BaseException] = [error]
    seen = 0
    while pending and seen < 64:  # bounded: a hostile chain cannot make this loop long
        current = pending.pop()
        seen += 1
        if isinstance(current, TimeoutError | httpx.TimeoutException):
            return True
        if isinstance(current, BaseExceptionGroup):
            pending.extend(current.exceptions)
        pending.extend(link for link in (current.__cause__, current.__context__) if link)
    return False


@dataclass(frozen=True, slots=True)
class SkippedTool:
    """A client-side MCP tool left out, and why."""

    server_label: str
    tool: str
    reason: str


@dataclass(frozen=True, slots=True)
class ClientMcpTools:
    """What ``Toolset.client_mcp_tools`` gives: the tools to bind, and those left out."""

    tool_entries: tuple[Any, ...]
    skipped: tuple[SkippedTool, ...]

    @property
    def tools(self) -> list[Any]:
        """The LangChain tools, in server then listing order."""
        return list(self.tool_entries)

    def __iter__(self) -> Any:
        return iter(self.tool_entries)

    def __len__(self) -> int:
        return len(self.tool_entries)

    def __repr__(self) -> str:
        # The tools' connections hold resolved URLs and headers: show names only.
        names = [str(getattr(tool, "name", "?")) for tool in self.tool_entries]
        return f"ClientMcpTools(tools={names!r}, skipped={list(self.skipped)!r})"


def needs_approval(require_approval: Any, tool: str) -> bool:
    """Whether a call of ``tool`` needs a human first (anything but "never" does).

    OpenAI's filter form ``{"never": {"tool_names": [...]}}`` exempts the tools it names;
    an absent value is OpenAI's default, "always".
    """
    if require_approval == "never":
        return False
    if isinstance(require_approval, Mapping):
        never = require_approval.get("never")
        names = never.get("tool_names") if isinstance(never, Mapping) else None
        return not (isinstance(names, Sequence) and tool in names)
    return True


async def client_mcp_tools(servers: Sequence[ResolvedMcpServer], context: RuntimeContext | None,
                           policy: EgressPolicy, timeout: float = DEFAULT_TIMEOUT,
                           taken_names: Iterable[str] = (), manifest_digest: str = "",
                           profile: str | None = None,
                           deferred: Iterable[str] = ()) -> ClientMcpTools:
    """LangChain tools for ``servers``, offering only what the capability and its pin allow.

    A tool whose name another tool already has (``taken_names``: the toolset's own tools,
    or an earlier server's) is left out, as the loader does for any name clash. Each tool
    carries its provenance (capability code, kind mcp, ``manifest_digest``, ``profile``);
    with a ``profile``, each is marked as the profile's other tools are: its name in
    ``metadata``, and ``defer_loading`` in ``extras`` when its server's code is in
    ``deferred`` (the profile's deferred codes).
    """
    try:
        from langchain_mcp_adapters.sessions import create_session
        from langchain_mcp_adapters.tools import convert_mcp_tool_to_langchain_tool
    except ImportError as error:
        raise McpExtraMissing("client-side MCP tools need the extra: pip install 'capc[mcp]'") \
            from error
    approve: Approver | None = getattr(context, "approve", None) if context else None
    offer = _Offer(set(taken_names))
    deferred_codes = frozenset(deferred)
    for server in servers:
        label = server.entry.server_label
        connection: dict[str, Any] = {
            "transport": "streamable_http", "url": server.server_url,
            "headers": dict(server.headers), "timeout": timeout,
            "httpx_client_factory": checked_client_factory(policy),
        }
        allowed = _allowed_filter(server)
        if allowed is None:
            offer.skip(label, "*", f"allowed_tools {server.options()['allowed_tools']!r} "
                                   "cannot be read as a tool filter: nothing is offered "
                                   "rather than too much")
            continue
        try:
            raw_tools = await _list_server(create_session, connection, policy, timeout)
        except Exception as error:  # any transport or protocol failure: leave the server out
            reason = (f"the server could not be listed ({error})"
                      if isinstance(error, ListingTooLarge)
                      else f"the server could not be listed ({type(error).__name__})")
            offer.skip(label, "*", context.redactor.redact(reason) if context else reason)
            continue
        pins = {pin.name: pin for pin in server.entry.pins or ()}
        for raw in raw_tools:
            name = str(raw.name)
            if not allowed(name, raw):
                continue  # not allowed by the capability: never offered, not drift
            pin = pins.get(name)
            gated = needs_approval(server.options()["require_approval"], name)
            refused = _refusal(server, raw, pin, offer.names, gated and approve is None)
            if refused is not None:
                offer.skip(label, name, refused)
                continue
            tool = convert_mcp_tool_to_langchain_tool(None, raw, connection=connection,  # type: ignore[arg-type]
                                                      server_name=label)
            if (pin is not None and pin.overridden) or gated:
                tool = _guarded(tool, pin, approve if gated else None, raw)
            provenance = Provenance(server.code, "mcp", manifest_digest, profile)
            tool.metadata = provenance.metadata(dict(tool.metadata or {}))
            if profile is not None:  # as resolve_profile marks the profile's other tools
                tool = profiled_tool(tool, profile, server.code in deferred_codes,
                                     in_place=True)
            offer.names.add(name)
            offer.tools.append(tool)
    return ClientMcpTools(tuple(offer.tools), tuple(offer.skipped))


@dataclass(slots=True)
class _Offer:
    """What ``client_mcp_tools`` has offered so far: names taken, tools, tools left out."""

    names: set[str]
    tools: list[Any] = field(default_factory=list)
    skipped: list[SkippedTool] = field(default_factory=list)

    def skip(self, label: str, tool: str, reason: str) -> None:
        """Leave ``tool`` of server ``label`` out, saying why (logged and recorded)."""
        logger.warning("MCP tool %r of server %r not offered: %s", tool, label, reason)
        self.skipped.append(SkippedTool(label, tool, reason))


async def _list_server(create_session: Callable[..., Any], connection: dict[str, Any],
                       policy: EgressPolicy, timeout: float) -> list[Any]:
    """The server's raw tool listing, bounded in bytes, pages and time."""
    budget = ListingBudget()
    # The listing has its own client, bounded in bytes; the tools' calls use ``connection``.
    bounded = {**connection, "httpx_client_factory": checked_client_factory(policy, budget)}

    async def listing() -> list[Any]:
        async with create_session(bounded) as session:
            await session.initialize()
            return await list_raw_tools(session)
    return await bounded_listing(listing(), budget, timeout)


def _refusal(server: ResolvedMcpServer, raw: Any, pin: PinnedToolEntry | None,
             names: set[str], unapprovable: bool) -> str | None:
    """Why an allowed listed tool is not offered (None: it is), first reason first."""
    name = str(raw.name)
    if server.entry.pins is not None:
        if pin is None:
            return "not pinned in the lock (added after review)"
        if listed_tool(raw)["digest"] != pin.digest:
            return ("its live descriptor differs from its pin (changed after review): run "
                    "`capc lock --check`")
    if name in names:
        return "another tool already has that name"
    if unapprovable:
        return "require_approval is not 'never' and the context has no approve callback"
    return None


def _allowed_filter(server: ResolvedMcpServer) -> Callable[[str, Any], bool] | None:
    """The capability's allowed_tools as a predicate over (name, listed tool); None: unreadable."""
    allowed_tools = server.options()["allowed_tools"]
    if allowed_tools is None:
        return lambda name, raw: True
    if isinstance(allowed_tools, Mapping) and set(allowed_tools) <= {"tool_names", "read_only"}:
        names = allowed_tools.get("tool_names")
        if names is not None and allowed_tool_names(names) is None:
            return None
        read_only = allowed_tools.get("read_only") is True

        def by_filter(name: str, raw: Any) -> bool:
            hint = getattr(getattr(raw, "annotations", None), "readOnlyHint", None)
            return (names is None or name in names) and (not read_only or hint is True)
        return by_filter
    listed = allowed_tool_names(allowed_tools)
    if listed is None:
        return None
    return lambda name, raw: name in listed


def _guarded(tool: Any, pin: PinnedToolEntry | None, approve: Approver | None, raw: Any) -> Any:
    """``tool`` showing the pin's overridden descriptor and asking ``approve`` before a call.

    The server is called with its own name and only the arguments its listed schema
    declares: a parameter an override added is dropped, as for any other executor.
    """
    from langchain_core.tools import StructuredTool

    from compiler.runtime.manifest.read import thaw

    listed_properties = (getattr(raw, "inputSchema", None) or {}).get("properties")
    description = tool.description
    schema: Any = tool.args_schema
    if pin is not None and pin.overridden:
        description = pin.shown_description or ""
        schema = thaw(pin.shown_input_schema)
    inner = tool.coroutine

    async def call(**arguments: Any) -> Any:
        arguments.pop("runtime", None)
        if isinstance(listed_properties, Mapping):
            arguments = {k: v for k, v in arguments.items() if k in listed_properties}
        if approve is not None and not await _approved(approve, tool.name, arguments):
            logger.warning("MCP tool %r: call not approved", tool.name)
            return f"Error: the call to {tool.name} was not approved", None
        return await inner(**arguments)

    return StructuredTool(name=tool.name, description=description, args_schema=schema,
                          coroutine=call, response_format="content_and_artifact",
                          metadata=tool.metadata)


async def _approved(approve: Approver, name: str, arguments: Mapping[str, Any]) -> bool:
    """Whether ``approve`` said yes: exactly ``True``. "no", [False], None or 1 refuse.

    A truthy answer is not consent: a callback returning a string or a list by mistake
    must fail closed. A plain (non-async) callback is accepted too.
    """
    verdict: Any = approve(name, dict(arguments))
    if inspect.isawaitable(verdict):
        verdict = await verdict
    return verdict is True
