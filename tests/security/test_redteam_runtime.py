"""Red team, runtime side (issue 12, items 3, 4, 7, 10, 11, 12, 13): each class, several spellings.

Every case drives the real runtime: a sealed manifest on disk, ``load_manifest``, LangChain
tools, the egress client and real HTTP servers on 127.0.0.1 that act as hostile endpoints
(echoing secrets into headers and redirects). A routing network stands in for "every
address is reachable", so a refused destination shows up as a request that never arrived.
"""

from __future__ import annotations

import json
import logging
import pprint
import reprlib
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any
from urllib.parse import quote

import pytest

from compiler.build import build
from compiler.pipeline import CompileOptions
from compiler.runtime import RuntimeContext, StaticSettings, ToolRegistry, load_manifest
from compiler.runtime.api.media_types import SlotEncoding, slot_encoding
from compiler.runtime.api.request import build_request, resolve_endpoint
from compiler.runtime.api.tool import build_api_tool, make_blueprint
from compiler.runtime.egress.addresses import AddressClass, EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from compiler.runtime.egress.egress_errors import EgressError, EgressRefused, InvalidRequest
from compiler.runtime.egress.headers import FORBIDDEN_REQUEST_HEADERS, is_forbidden_request_header
from compiler.runtime.egress.host_literals import parse_ip_literal
from compiler.runtime.manifest.read import read_manifest
from tests.support.loopback import FakeDns, LoopbackServer, RoutingConnector
from tests.support.runtime import (
    ReceivedRequest,
    api_capability,
    mcp_capability,
    recording_server,
    write_manifest,
)

SECRET = "sk-live-Qw7Er9Ty2Ui4Op6As8"
TOKEN = "tok-Zx1Cv3Bn5Mm7Lk9Jh2"
SETTINGS = {"API_KEY": SECRET, "API_TOKEN": TOKEN}
PUBLIC_IP = "93.184.216.34"


def _context(**settings: str) -> RuntimeContext:
    return RuntimeContext(user_id=1, group_id=2, chat_id=3,
                          settings=StaticSettings({**SETTINGS, **settings}))


def _api(code: str, url: str, **options: Any) -> dict[str, Any]:
    """An api capability with a ``q`` query argument and both secrets in headers."""
    headers = options.pop("headers", {"X-Api-Key": "${API_KEY}",
                                      "Authorization": "Bearer ${API_TOKEN}"})
    placeholders = options.pop("placeholders", ["API_KEY", "API_TOKEN"])
    return api_capability(
        code, url, properties={"q": {"type": "string"}},
        arguments=options.pop("arguments", {"q": {"bindings": ["query"], "type": "string"}}),
        headers=headers, placeholders=placeholders, **options,
    )


async def _resolve(tmp_path: Path, capabilities: list[dict[str, Any]],
                   ctx: RuntimeContext | None = None, allow_private: bool = True) -> Any:
    path = write_manifest(tmp_path / "manifest.json", capabilities)
    manifest = load_manifest(path, registry=ToolRegistry(), allow_private_networks=allow_private)
    toolset = await manifest.resolve(manifest.codes(), ctx or _context())
    return manifest, toolset


def _compile(tmp_path: Path, yaml_text: str) -> list[str]:
    tree = tmp_path / "capabilities"
    tree.mkdir(exist_ok=True)
    (tree / "x.yaml").write_text(yaml_text, encoding="utf-8")
    result = build([str(tree)], options=CompileOptions(), use_cache=False)
    return [f"error[{diagnostic.code}]: {diagnostic.message}"
            for diagnostic in result.diagnostics if diagnostic.severity.name.lower() == "error"]


def _api_yaml(url: str, headers: str = "", extra: str = "") -> str:
    return f"""apiVersion: capc/v1
kind: Capability
code: x
name: x
type: api
options:
  description: x
  method: POST
  url: "{url}"
  headers:
    X-Api-Key: "${{API_KEY}}"
{headers}{extra}"""


# --------------------------------------------------------------------------------------
# 3. DEBUG logging: no record of any library under the egress carries a resolved secret.
# --------------------------------------------------------------------------------------

def _hostile_echo(request: ReceivedRequest) -> tuple[int, dict[str, str], bytes]:
    """Echo the request's secrets into response headers, a redirect and the body."""
    key = request.header("X-Api-Key") or ""
    auth = request.header("Authorization") or ""
    if request.path == "/start":
        return 302, {"Location": f"/landing?key={key}&auth={quote(auth)}",
                     "X-Echo-Key": key, "WWW-Authenticate": f'Bearer realm="{auth}"',
                     "Set-Cookie": f"session={key}; Path=/"}, b""
    return 500, {"X-Echo-Key": key, "X-Echo-Auth": auth, "Content-Type": "text/plain"}, (
        f"failed for key={key} auth={auth}".encode())


def _assert_no_secret_in_records(caplog: pytest.LogCaptureFixture, *secrets: str) -> None:
    assert caplog.records, "nothing was logged: the test would prove nothing"
    for record in caplog.records:
        texts = [record.getMessage(), str(record.exc_text or ""), str(record.stack_info or "")]
        texts += [str(value) for value in vars(record).values() if isinstance(value, str)]
        for secret in secrets:
            assert all(secret not in text for text in texts), (record.name, record.getMessage())
    for secret in secrets:
        assert secret not in caplog.text


async def test_debug_logs_of_every_library_hold_no_secret(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    with recording_server() as server:
        server.responder = _hostile_echo
        manifest, toolset = await _resolve(tmp_path, [_api("echo", server.base_url + "/start")])
        async with manifest:
            output = await toolset.tools[0].ainvoke({"q": "x"})
        # The secrets really went out and came back (in Location, headers and body).
        assert server.received[0].header("X-Api-Key") == SECRET
        assert server.received[1].query.startswith(f"key={SECRET}")
    assert output.startswith("Error: HTTP 500") and SECRET not in output
    # httpcore logged the response headers, Location included: masked.
    headers_logged = [r for r in caplog.records if r.name.startswith("httpcore")
                      and "receive_response_headers.complete" in r.getMessage()]
    assert headers_logged and all("[redacted]" in r.getMessage() for r in headers_logged)
    _assert_no_secret_in_records(caplog, SECRET, TOKEN)


@pytest.mark.parametrize("secret", [
    "sk-back\\slash-Kd8Jf7Hg6", "sk-quote'mark-Lp0Oi9Uy8", 'sk-dquote"mark-Mn2Bv3Cx4',
    "sk-latin1-caf\u00e9-Qa1Ws2Ed3",
])
async def test_escaped_spellings_in_debug_logs_are_masked(
    tmp_path: Path, caplog: pytest.LogCaptureFixture, secret: str
) -> None:
    """httpcore logs header bytes as ``b'...'``: escaped backslashes, quotes, \\xe9."""
    caplog.set_level(logging.DEBUG)
    ctx = _context(API_KEY=secret)
    await ctx.resolve_settings(["API_KEY"])
    logging.getLogger("httpcore.http11").debug(
        "receive_response_headers.complete return_value=%r",
        (b"HTTP/1.1", 302, b"Found", [(b"Location", b"/x?key=" + secret.encode("latin-1"))]),
    )
    logging.getLogger("compiler.runtime").debug("value %r and %s", secret, secret)
    _assert_no_secret_in_records(caplog, secret, repr(secret.encode("latin-1"))[2:-1],
                                 repr(secret)[1:-1])
    del ctx


async def test_direct_egress_calls_mask_their_secret_headers_in_logs(
    caplog: pytest.LogCaptureFixture,
) -> None:
    """No RuntimeContext at all: the egress client masks its own secret headers' values."""
    caplog.set_level(logging.DEBUG)
    with recording_server() as server:
        server.responder = _hostile_echo
        async with build_egress_client(EgressPolicy(allow_private_networks=True)) as client:
            response = await client.request(
                "GET", server.base_url + "/start",
                headers={"X-Api-Key": SECRET, "Authorization": f"Bearer {TOKEN}"},
                secret_headers={"X-Api-Key", "Authorization"},
            )
    assert response.status_code == 500 and len(server.received) == 2
    _assert_no_secret_in_records(caplog, SECRET, TOKEN)


@pytest.mark.parametrize("logger_name", [
    "httpx", "httpcore.connection", "h11", "h2.connection", "hpack.hpack", "anyio",
    "asyncio", "mcp.client.streamable_http", "openai._base_client", "compiler.runtime.loader",
    "some.library.created.later",
])
async def test_records_of_any_logger_are_masked_with_live_secrets(
    caplog: pytest.LogCaptureFixture, logger_name: str
) -> None:
    caplog.set_level(logging.DEBUG)
    logger = logging.getLogger(logger_name)  # as a library does when it is imported
    ctx = _context()
    await ctx.resolve_settings(["API_KEY", "API_TOKEN"])
    logger.debug("Location: https://x.test/?key=%s", SECRET)
    logger.debug("headers=%s", {"authorization": f"Bearer {TOKEN}"})
    logger.warning("extra", extra={"leaked": SECRET})
    try:
        raise ValueError(f"h11 quotes the value {SECRET!r}")
    except ValueError:
        logger.exception("request failed")
    _assert_no_secret_in_records(caplog, SECRET, TOKEN)
    assert caplog.text.count("[redacted]") >= 3
    del ctx


async def test_a_logger_made_after_the_context_is_masked_too(
    caplog: pytest.LogCaptureFixture,
) -> None:
    caplog.set_level(logging.DEBUG)
    ctx = _context()
    await ctx.resolve_settings(["API_KEY"])
    logger = logging.getLogger("a.plugin.imported.later")
    logger.debug("GET /x?key=%s", SECRET)
    try:
        raise RuntimeError(SECRET)
    except RuntimeError:
        logger.error("failed", exc_info=True)
    _assert_no_secret_in_records(caplog, SECRET)
    del ctx


async def test_a_handler_on_a_child_logger_sees_masked_records() -> None:
    """Masking happens to the record, not at the root: a handler anywhere sees it masked."""
    seen: list[str] = []

    class Collect(logging.Handler):
        def emit(self, record: logging.LogRecord) -> None:
            seen.append(self.format(record))

    handler = Collect(level=logging.DEBUG)
    logger = logging.getLogger("httpcore.http11")
    logger.addHandler(handler)
    previous = logger.level
    logger.setLevel(logging.DEBUG)
    try:
        ctx = _context()
        await ctx.resolve_settings(["API_KEY"])
        logger.debug("receive_response_headers.complete [(b'X-Echo', b'%s')]", SECRET)
    finally:
        logger.removeHandler(handler)
        logger.setLevel(previous)
    assert seen and all(SECRET not in line for line in seen) and "[redacted]" in seen[0]
    del ctx


# --------------------------------------------------------------------------------------
# 4. repr() and str() of everything that holds resolved headers or URLs.
# --------------------------------------------------------------------------------------

async def test_reprs_of_toolsets_configs_servers_and_tools_mask_secrets(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)
    capabilities = [
        _api("search", "https://api.example.com/v1/${API_KEY}/items?token=${API_TOKEN}",
             method="POST", body_template='{"key": "${API_KEY}", "q": "{q}"}',
             arguments={"q": {"bindings": ["template"], "type": "string"}}),
        mcp_capability("docs", server_url="https://mcp.example.com/${API_KEY}/mcp",
                       headers={"Authorization": "Bearer ${API_TOKEN}",
                                "X-Key": "${API_KEY}"},
                       placeholders=["API_KEY", "API_TOKEN"]),
    ]
    manifest, toolset = await _resolve(tmp_path, capabilities)
    async with manifest:
        tool = toolset.tools[0]
        configs = [toolset.mcp(provider) for provider in ("openai", "anthropic", "langchain")]
        # The payloads must carry the secrets (they are what providers receive) ...
        assert SECRET in json.dumps(configs[0].tools)
        assert TOKEN in json.dumps(configs[2].mcp_servers)
        server = toolset.mcp_server_entries[0]
        call = tool.coroutine
        endpoint = call._resolved
        request = build_request(endpoint, {"q": "x"})
        shown = [
            repr(toolset), str(toolset), f"{toolset!r}", repr(toolset.mcp_server_entries),
            *map(repr, configs), *map(str, configs), repr(server), str(server),
            repr(tool), str(tool), repr(call), repr(endpoint), repr(endpoint.body_template),
            repr(request), repr((toolset, configs, [server, endpoint])),
        ]
        logging.getLogger("app").debug("toolset %r config %s tool %r", toolset, configs[0], tool)
    for text in [*shown, caplog.text]:
        assert SECRET not in text and TOKEN not in text, text
    assert "search" in repr(toolset) and "docs" in repr(toolset)
    assert "${API_KEY}" in repr(server) and "Authorization" in repr(server)


RENDERINGS = {
    "repr": repr, "str": str, "format": format, "f-string": lambda value: f"{value!r} {value}",
    "pformat": lambda value: pprint.pformat(value),
    "percent": lambda value: "%r %s" % (value, value),  # noqa: UP031 (the spelling tested)
    "in a tuple": lambda value: repr((value, [value], {"k": value})),
    "reprlib": lambda value: reprlib.repr(value),
}


@pytest.mark.parametrize("rendering", sorted(RENDERINGS))
async def test_every_rendering_of_every_resolved_object_masks_secrets(
    tmp_path: Path, rendering: str
) -> None:
    capabilities = [
        _api("search", "https://api.example.com/v1?key=${API_KEY}"),
        mcp_capability("docs", server_url="https://mcp.example.com/mcp?k=${API_KEY}",
                       headers={"Authorization": "Bearer ${API_TOKEN}"},
                       placeholders=["API_KEY", "API_TOKEN"]),
    ]
    manifest, toolset = await _resolve(tmp_path, capabilities)
    async with manifest:
        tool = toolset.tools[0]
        objects = [toolset, *(toolset.mcp(p) for p in ("openai", "anthropic", "langchain")),
                   toolset.mcp_server_entries[0], tool, tool.coroutine, tool.coroutine._resolved,
                   build_request(tool.coroutine._resolved, {"q": "x"})]
        texts = [RENDERINGS[rendering](value) for value in objects]
    for text in texts:
        assert SECRET not in text and TOKEN not in text, text


async def test_an_egress_response_repr_hides_url_headers_and_body() -> None:
    with recording_server() as server:
        server.responder = lambda request: (200, {"X-Echo": SECRET}, SECRET.encode())
        async with build_egress_client(EgressPolicy(allow_private_networks=True)) as client:
            response = await client.request("GET", server.base_url + f"/x?key={SECRET}")
    assert SECRET in response.url and response.headers["x-echo"] == SECRET
    assert SECRET not in repr(response) and SECRET not in str(response)
    assert "status_code=200" in repr(response)


# --------------------------------------------------------------------------------------
# 7. Host, framing and hop-by-hop headers are refused at runtime.
# --------------------------------------------------------------------------------------

FORBIDDEN_SPELLINGS = [
    "Host", "host", "HOST", " Host", "Host ", "Ho\u017ft", "\uff28\uff4f\uff53\uff54",
    "Content-Length", "content-length", "Transfer-Encoding", "TRANSFER-ENCODING",
    "Connection", "Keep-Alive", "Proxy-Authorization", "Proxy-Connection", "Proxy-Anything",
    "TE", "te", "Trailer", "Upgrade", "Expect", "X-Forwarded-Host", "Forwarded",
    "X-HTTP-Method-Override", "X-Original-URL",
]


@pytest.mark.parametrize("name", FORBIDDEN_SPELLINGS)
async def test_an_api_capability_with_a_routing_header_is_skipped(
    tmp_path: Path, name: str
) -> None:
    with recording_server() as server:
        capability = _api("routed", server.base_url + "/x",
                          headers={name: "${API_KEY}", "X-Api-Key": "${API_KEY}"})
        manifest, toolset = await _resolve(tmp_path, [capability])
        async with manifest:
            pass
        assert toolset.tools == [] and server.received == []
    [skipped] = toolset.skipped
    assert skipped.code == "routed" and repr(name) in skipped.reason
    assert SECRET not in skipped.reason


@pytest.mark.parametrize("name", ["Host", "Transfer-Encoding", "Connection", " host"])
async def test_an_mcp_server_with_a_routing_header_is_skipped(tmp_path: Path, name: str) -> None:
    capability = mcp_capability("docs", headers={name: "${API_KEY}"}, placeholders=["API_KEY"])
    manifest, toolset = await _resolve(tmp_path, [capability])
    async with manifest:
        pass
    assert toolset.mcp_server_entries == () and toolset.mcp("openai").tools == []
    assert "MCP header" in toolset.skipped[0].reason


@pytest.mark.parametrize("name", ["Host", "Content-Length", "Transfer-Encoding", "Connection",
                                  "Keep-Alive", "Upgrade", "TE", "Trailer", "Proxy-Foo"])
async def test_the_egress_client_refuses_routing_headers_before_sending(name: str) -> None:
    with recording_server() as server:
        async with build_egress_client(EgressPolicy(allow_private_networks=True)) as client:
            with pytest.raises(InvalidRequest) as refused:
                await client.request("POST", server.base_url + "/x", content=b"{}",
                                     headers={name: "evil.internal"})
        assert server.received == []
    assert "routes or frames" in str(refused.value)


def test_the_one_list_covers_every_hop_by_hop_header() -> None:
    hop_by_hop = {"connection", "keep-alive", "proxy-connection", "te", "trailer",
                  "transfer-encoding", "upgrade", "proxy-authorization", "proxy-authenticate"}
    assert hop_by_hop | {"host", "content-length"} <= FORBIDDEN_REQUEST_HEADERS
    assert not any(map(is_forbidden_request_header, ["Content-Type", "Authorization",
                                                     "X-Api-Key", "Accept", "User-Agent"]))


# --------------------------------------------------------------------------------------
# 10. MCP URLs built from settings get the compiler's URL rules at boot.
# --------------------------------------------------------------------------------------

HOSTILE_MCP_HOSTS = [
    "evil.test\\@mcp.example.com", "mcp.example.com\\@169.254.169.254",
    "mcp.example.com@evil.test", "user:pw@mcp.example.com", "evil%2Etest",
    "%31%36%39.254.169.254", "mcp.exa\tmple.com", "mcp.example.com\u200b",
    "mcp.example.com\u202e", "mcp.example.com:99999", "mcp.example.com:0", "169.254.169.254",
    "0xa9fea9fe", "2852039166", "[::ffff:169.254.169.254]", "[64:ff9b:1::a9fe:a9fe]",
    "metadata.google.internal.", "127.0.0.1", "localhost", "[fe80::1%25eth0]", "",
    "mcp.example.com/../#",
]


@pytest.mark.parametrize("host", HOSTILE_MCP_HOSTS)
async def test_a_server_url_host_from_settings_gets_the_compile_time_rules(
    tmp_path: Path, host: str
) -> None:
    capability = mcp_capability("tenant", server_url="https://${MCP_HOST}/mcp",
                                placeholders=["MCP_HOST"])
    ctx = _context(MCP_HOST=host or "x")
    if not host:
        ctx = RuntimeContext(settings=StaticSettings({"MCP_HOST": "\u2028"}))
    manifest, toolset = await _resolve(tmp_path, [capability], ctx, allow_private=False)
    async with manifest:
        pass
    assert toolset.mcp_server_entries == ()
    assert toolset.mcp("openai").tools == [] and toolset.mcp("langchain").mcp_servers == []
    assert "MCP server URL is refused" in toolset.skipped[0].reason


@pytest.mark.parametrize("url", [
    "file:///etc/passwd", "gopher://mcp.example.com:70/_x", "javascript:alert(1)",
    "http:mcp.example.com/mcp", "http:/\\mcp.example.com/mcp", "https:///mcp.example.com",
    "//mcp.example.com/mcp", " https://mcp.example.com/mcp", "HTTP://169.254.169.254/",
    "https://mcp.example.com/mcp\r\nX-Injected: 1",
])
async def test_a_whole_server_url_from_settings_gets_the_compile_time_rules(
    tmp_path: Path, url: str
) -> None:
    capability = mcp_capability("tenant", server_url="${MCP_URL}", placeholders=["MCP_URL"])
    manifest, toolset = await _resolve(tmp_path, [capability], _context(MCP_URL=url))
    async with manifest:
        pass
    assert toolset.mcp_server_entries == ()
    assert "MCP server URL is refused" in toolset.skipped[0].reason


async def test_a_plain_server_url_from_settings_still_works(tmp_path: Path) -> None:
    capability = mcp_capability("tenant", server_url="https://${MCP_HOST}/mcp",
                                placeholders=["MCP_HOST"])
    manifest, toolset = await _resolve(tmp_path, [capability], _context(MCP_HOST="mcp.ex.com"))
    async with manifest:
        pass
    assert [e["server_url"] for e in toolset.mcp("openai").tools] == ["https://mcp.ex.com/mcp"]


@pytest.mark.parametrize("host", ["api.example.com\\@127.0.0.1", "a@127.0.0.1",
                                  "api%2Eexample.com", "api.example.com\u200b"])
async def test_an_api_origin_from_settings_gets_the_same_rules(tmp_path: Path, host: str) -> None:
    with recording_server() as server:
        capability = _api("tenant", "http://${HOST}/v1", placeholders=["API_KEY", "API_TOKEN",
                                                                        "HOST"])
        manifest, toolset = await _resolve(tmp_path, [capability], _context(HOST=host))
        async with manifest:
            pass
        assert server.received == []
    assert toolset.tools == [] and "URL is refused" in toolset.skipped[0].reason


@pytest.mark.parametrize(("url", "code"), [
    ("https://evil%2Etest/x", "url-invalid"), ("https://api.example.com\\u200b/x", "url-invalid"),
    ("https://api.exa\\tmple.com/x", "url-invalid"), ("https://api.example.com/x\\u00a0y",
                                                      "url-invalid"),
    ("https://[64:ff9b:1::a9fe:a9fe]/x", "url-forbidden-address"),
    ("https://[2001:0:4136:e378:8000:63bf:5601:5601]/x", "url-forbidden-address"),
])
def test_the_compiler_applies_the_same_url_rules(tmp_path: Path, url: str, code: str) -> None:
    errors = _compile(tmp_path, _api_yaml(url))
    assert any(f"error[{code}]" in error for error in errors), errors


# --------------------------------------------------------------------------------------
# 11. Every v4-embedding IPv6 form is judged by its IPv4 address, even with private allowed.
# --------------------------------------------------------------------------------------

METADATA_IN_V6 = [
    "64:ff9b:1::a9fe:a9fe", "64:ff9b:1::169.254.169.254", "64:ff9b:1:ffff:ffff::a9fe:a9fe",
    "64:ff9b:1:0:a9:fea9:fe00:0", "64:ff9b:1:a9:fe:a9fe::", "64:ff9b:1:a9fe:a9:fe00::",
    "64:ff9b::a9fe:a9fe", "64:ff9b::169.254.170.2", "2002:a9fe:a9fe::1", "2002:a9fe:aa02:1::",
    "2001:0:4136:e378:8000:63bf:5601:5601", "2001:0:a9fe:a9fe::1", "::a9fe:a9fe",
    "::169.254.169.254", "::ffff:169.254.169.254", "::ffff:0:169.254.169.254",
    "::ffff:0:a9fe:a9fe", "2600::5efe:a9fe:a9fe", "2600::200:5efe:a9fe:a9fe",
    "64:ff9b:1::6464:64c8", "64:ff9b:1::a9fe:1",
]


@pytest.mark.parametrize("address", METADATA_IN_V6)
def test_carried_metadata_and_link_local_stay_closed_with_private_allowed(address: str) -> None:
    ip = parse_ip_literal(f"[{address}]")
    assert ip is not None
    refusal = EgressPolicy(allow_private_networks=True).refusal_for_address(ip)
    assert refusal is not None and not refusal.overridable
    assert refusal.address_class in (AddressClass.METADATA, AddressClass.LINK_LOCAL)


@pytest.mark.parametrize("address", METADATA_IN_V6[:12])
async def test_no_request_reaches_carried_metadata(
    address: str, server: LoopbackServer, other_server: LoopbackServer
) -> None:
    """Literal and resolved, with private networks allowed: nothing is even dialled."""
    connector = RoutingConnector(server.port, other_server.port)
    dns = FakeDns({"nat64.evil.test": [[address]]})
    policy = EgressPolicy(allow_private_networks=True)
    async with build_egress_client(policy, resolver=dns, connector=connector) as client:
        for url in (f"http://[{address}]:{other_server.port}/ok",
                    f"http://nat64.evil.test:{other_server.port}/ok"):
            with pytest.raises(EgressRefused):
                await client.request("GET", url, timeout=5)
    assert other_server.requests == [] and connector.dialled == []


@pytest.mark.parametrize("address", ["64:ff9b::808:808", "2002:808:808::1",
                                     "2606:4700:4700::1111"])
def test_public_v4_embeddings_stay_open(address: str) -> None:
    ip = parse_ip_literal(f"[{address}]")
    assert ip is not None and EgressPolicy().refusal_for_address(ip) is None


# --------------------------------------------------------------------------------------
# 12. JSON under another name: every JSON-ish Content-Type JSON-escapes slot values.
# --------------------------------------------------------------------------------------

JSON_TYPES = [
    "application/json", "text/json", "application/x-json", "application/json-seq",
    "application/jsonl", "application/x-jsonlines", "application/x-ndjson",
    "application/ndjson", "application/vnd.api+json", "application/problem+json",
    "application/merge-patch+json", "application/geo+json-seq", "application/x-amz-json-1.1",
    "text/x-json", "application/json; charset=utf-8", "APPLICATION/JSON",
    "Application/Vnd.Api+JSON ; charset=UTF-8", 'application/json;charset="utf-8"',
    '"application/x-json"',
]
INJECTIONS = ['x", "key": "evil', 'x"}\n{"admin": true, "x": "', "x\\", "\u2028", '"]}}}']


@pytest.mark.parametrize("content_type", JSON_TYPES)
async def test_json_ish_string_templates_escape_slot_values(
    tmp_path: Path, content_type: str
) -> None:
    capability = _api(
        "post", "", method="POST", headers={"Content-Type": content_type,
                                            "X-Api-Key": "${API_KEY}"},
        placeholders=["API_KEY"], body_template='{"key": "${API_KEY}", "q": "{q}"}',
        arguments={"q": {"bindings": ["template"], "type": "string"}})
    with recording_server() as server:
        capability["api"]["url"] = server.base_url + "/x"
        manifest, toolset = await _resolve(tmp_path, [capability])
        async with manifest:
            for injection in INJECTIONS:
                await toolset.tools[0].ainvoke({"q": injection})
        bodies = [request.body.decode() for request in server.received]
    assert len(bodies) == len(INJECTIONS)
    for injection, body in zip(INJECTIONS, bodies, strict=True):
        assert "\n" not in body  # one record, whatever the value (json-seq, ndjson, jsonl)
        assert json.loads(body) == {"key": SECRET, "q": injection}


@pytest.mark.parametrize(("content_type", "expected"), [
    ("application/soap+xml", SlotEncoding.MARKUP), ("text/xml; charset=utf-8",
                                                    SlotEncoding.MARKUP),
    ("text/html", SlotEncoding.MARKUP), ("application/x-www-form-urlencoded",
                                         SlotEncoding.FORM),
    ("text/plain", SlotEncoding.TEXT), (None, SlotEncoding.TEXT),
    ("application/graphql", SlotEncoding.UNKNOWN), ("text/csv", SlotEncoding.UNKNOWN),
    ("multipart/form-data; boundary=x", SlotEncoding.UNKNOWN),
    ("application/yaml", SlotEncoding.UNKNOWN),
])
def test_the_shared_predicate_names_every_encoding(
    content_type: str | None, expected: SlotEncoding
) -> None:
    assert slot_encoding(content_type) is expected


@pytest.mark.parametrize("content_type", ["application/graphql", "application/yaml",
                                          "text/csv", "multipart/form-data; boundary=b"])
def test_an_unknown_type_with_slots_is_a_compile_error(tmp_path: Path, content_type: str) -> None:
    errors = _compile(tmp_path, _api_yaml(
        "https://api.example.com/x", headers=f"    Content-Type: \"{content_type}\"\n",
        extra="  body_template: 'query {{ item(id: \"{id}\") }}'\n"
              "  body_params:\n    id: {type: string, description: id}\n"))
    assert any("error[api-template-media-type]" in error for error in errors), errors


@pytest.mark.parametrize("content_type", ["application/graphql", "text/csv"])
async def test_an_unknown_type_from_a_setting_is_skipped_at_runtime(
    tmp_path: Path, content_type: str
) -> None:
    capability = _api(
        "post", "https://api.example.com/x", method="POST",
        headers={"Content-Type": "${CT}"}, placeholders=["CT"], body_template="q={q}",
        arguments={"q": {"bindings": ["template"], "type": "string"}})
    manifest, toolset = await _resolve(tmp_path, [capability], _context(CT=content_type))
    async with manifest:
        pass
    assert toolset.tools == [] and "no safe encoding" in toolset.skipped[0].reason


def test_two_spellings_of_content_type_are_refused() -> None:
    path_capability = _api("post", "https://api.example.com/x", method="POST",
                           headers={"Content-Type": "text/plain",
                                    "content-type": "application/json"},
                           placeholders=[], body_template='{"q": "{q}"}',
                           arguments={"q": {"bindings": ["template"], "type": "string"}})
    endpoint = _endpoint_of(path_capability)
    with pytest.raises(Exception, match="more than once"):
        resolve_endpoint(endpoint, {})


def _endpoint_of(capability: dict[str, Any]) -> Any:
    return _read_entry(capability).api


def _read_entry(capability: dict[str, Any]) -> Any:
    import tempfile

    with tempfile.TemporaryDirectory() as directory:
        path = write_manifest(Path(directory) / "m.json", [capability])
        return read_manifest(path).capabilities[capability["code"]]


# --------------------------------------------------------------------------------------
# 13. Refusal texts name the host asked for and the kind, never a resolved address.
# --------------------------------------------------------------------------------------

RESOLVED_PRIVATE = {
    "api.example.com": ["10.1.2.3"], "loop.example.com": ["127.0.0.9"],
    "imds.example.com": ["169.254.169.254"], "ula.example.com": ["fd12:3456::7"],
    "mapped.example.com": ["::ffff:10.9.8.7"], "cgnat.example.com": ["100.64.7.7"],
    "mixed.example.com": [PUBLIC_IP, "192.168.44.4"], "nat64.example.com": ["64:ff9b:1::a9fe:a9fe"],
}


@contextmanager
def _hostile_network(public: LoopbackServer, private: LoopbackServer,
                     allow_private: bool = False) -> Iterator[Any]:
    dns = FakeDns({name: [answers] for name, answers in {
        **RESOLVED_PRIVATE, "public.test": [PUBLIC_IP]}.items()})
    connector = RoutingConnector(public.port, private.port)
    yield build_egress_client(EgressPolicy(allow_private_networks=allow_private),
                              resolver=dns, connector=connector)


def _internal_addresses() -> set[str]:
    found = set()
    for answers in RESOLVED_PRIVATE.values():
        for text in answers:
            ip = parse_ip_literal(text)
            found |= {text, str(ip)}
            if ip is not None and ip.version == 6 and ip.ipv4_mapped:
                found.add(str(ip.ipv4_mapped))
    return found - {PUBLIC_IP}


@pytest.mark.parametrize("host", sorted(RESOLVED_PRIVATE))
async def test_a_refusal_names_the_host_and_kind_not_the_address(
    host: str, server: LoopbackServer, other_server: LoopbackServer
) -> None:
    with _hostile_network(server, other_server) as client:
        async with client:
            with pytest.raises(EgressRefused) as refused:
                await client.request("GET", f"http://{host}:{other_server.port}/ok", timeout=5)
            with pytest.raises(EgressRefused) as redirected:
                target = quote(f"http://{host}:{other_server.port}/ok")
                await client.request("GET", f"http://public.test:{server.port}/redirect?to={target}",
                                     timeout=5)
    for error in (refused.value, redirected.value):
        text = f"{error} {error.refusal.reason} {error!r}"
        assert host in text and "resolves to a" in text, text
        assert not any(address in text for address in _internal_addresses()), text
    assert "redirected to" in str(redirected.value)
    assert other_server.requests == []


async def test_the_model_sees_only_the_host_and_kind(
    tmp_path: Path, server: LoopbackServer, other_server: LoopbackServer
) -> None:
    path = write_manifest(tmp_path / "m.json", [
        _api("lookup", f"http://api.example.com:{other_server.port}/v1"),
        _api("hop", f"http://public.test:{server.port}/redirect?to="
             + quote(f"http://imds.example.com:{other_server.port}/latest", safe="")),
    ])
    entries = read_manifest(path).capabilities
    ctx = _context()
    outputs = []
    with _hostile_network(server, other_server) as client:
        async with client:
            for code in ("lookup", "hop"):
                tool = await build_api_tool(make_blueprint(entries[code]), ctx, client)
                outputs.append(await tool.ainvoke({"q": "x"}))
    assert "api.example.com resolves to a private address" in outputs[0]
    assert "imds.example.com resolves to a cloud metadata address" in outputs[1]
    for output in outputs:
        assert output.startswith("Error") and not any(
            address in output for address in _internal_addresses()), output
    assert other_server.requests == []


async def test_refusal_texts_stay_safe_across_every_egress_error(
    server: LoopbackServer, other_server: LoopbackServer
) -> None:
    """Every failure kind's text: no resolved address, no path, no query, no secret."""
    urls = [f"http://{host}:{other_server.port}/p?key={SECRET}" for host in RESOLVED_PRIVATE]
    urls += [f"http://unknown.example.com:{server.port}/p?key={SECRET}"]
    messages = []
    with _hostile_network(server, other_server) as client:
        async with client:
            for url in urls:
                with pytest.raises(EgressError) as failed:
                    await client.request("GET", url, timeout=5)
                messages.append(str(failed.value))
    for message in messages:
        assert SECRET not in message and "/p" not in message
        assert not any(address in message for address in _internal_addresses()), message


def test_literal_addresses_may_be_named_since_the_model_wrote_them() -> None:
    """Contrast: a literal host *is* what was asked for; the text may spell its address."""
    refusal = EgressPolicy().refusal_for_host("0x7f.1")
    assert refusal is not None and refusal.reason == "127.0.0.1 is a loopback address"
