"""SSRF matrix: every spelling, name and redirect into private space reaches nothing.

The network is hostile by construction: ``RoutingConnector`` routes *any* address egress
dials to a real loopback server ("private" for non-public addresses), so a target that
slipped past the policy would show up as a recorded request. A control run with the policy
switched off proves that each target really would have arrived.
"""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import quote

import pytest

from compiler.runtime.egress.addresses import AddressClass, EgressPolicy, IPAddress, Refusal
from compiler.runtime.egress.client import EgressClient, build_egress_client
from compiler.runtime.egress.egress_errors import EgressRefused, InvalidRequest
from tests.support.loopback import FakeDns, LoopbackServer, RoutingConnector

PUBLIC_IP = "93.184.216.34"

LITERAL_HOSTS = [
    "127.0.0.1", "127.0.0.1.", "2130706433", "0177.0.0.1", "0x7f.1", "0x7F000001", "127.1",
    "127.0.1", "0177.1", "127.000.000.001", "[::1]", "[0:0:0:0:0:0:0:1]",
    "[::ffff:127.0.0.1]", "[::FFFF:7f00:1]", "[::127.0.0.1]", "[64:ff9b::7f00:1]",
    "[2002:7f00:1::1]", "localhost", "LOCALHOST.", "api.localhost", "0.0.0.0", "0", "[::]",
    "10.0.0.1", "172.16.0.1", "192.168.1.1", "100.64.0.1", "169.254.169.254", "2852039166",
    "0xa9fea9fe", "[::ffff:169.254.169.254]", "[fd00:ec2::254]", "100.100.100.200",
    "192.0.0.192", "168.63.129.16", "169.254.170.2", "metadata.google.internal",
    "[fe80::1%25eth0]", "224.0.0.1", "[ff02::1]", "255.255.255.255", "198.18.0.1",
]

# Names whose DNS answers are private: only the transport's post-resolution check sees them.
HOSTILE_NAMES: dict[str, list[list[str]]] = {
    "loopback.evil.test": [["127.0.0.1"]],
    "private.evil.test": [["10.1.2.3"]],
    "cgnat.evil.test": [["100.64.0.5"]],
    "v6-loopback.evil.test": [["::1"]],
    "mapped.evil.test": [["::ffff:127.0.0.1"]],
    "mixed.evil.test": [["127.0.0.1", PUBLIC_IP]],
    "mixed-public-first.evil.test": [[PUBLIC_IP, "10.0.0.7"]],
    "imds.evil.test": [["169.254.169.254"]],
    "imds-v6.evil.test": [["fd00:ec2::254"]],
    "ula.evil.test": [["fd12::1"]],
    "metadata.google.internal": [["169.254.169.254"]],
    "public.test": [[PUBLIC_IP]],
    "localhost": [["127.0.0.1"]],
    "localhost.": [["127.0.0.1"]],
    "api.localhost": [["127.0.0.1"]],
}

# Spellings httpx itself refuses to parse: without the policy they fail as invalid URLs.
HTTPX_REJECTS = ("literal 0177.0.0.1", "literal 127.000.000.001")

REDIRECT_TARGETS = [
    "http://127.0.0.1:{port}/ok",
    "http://localhost:{port}/ok",
    "http://[::ffff:127.0.0.1]:{port}/ok",
    "http://2130706433:{port}/ok",
    "http://169.254.169.254/latest/meta-data/",
    "http://loopback.evil.test:{port}/ok",
    "http://imds.evil.test/latest/api/token",
]


@dataclass(frozen=True)
class Target:
    label: str
    method: str
    path_on_public: str | None  # a redirect starts on the public server
    url_template: str


def _targets() -> list[Target]:
    targets = [
        Target(f"literal {host}", "GET", None, f"http://{host}:{{port}}/ok")
        for host in LITERAL_HOSTS
    ]
    targets += [
        Target(f"name {name}", "GET", None, f"http://{name}:{{port}}/ok")
        for name in HOSTILE_NAMES
        if name not in ("public.test", "localhost", "localhost.", "api.localhost")
    ]
    for status, method in [(302, "GET"), (301, "GET"), (303, "POST"), (307, "POST"), (308, "PUT")]:
        for destination in REDIRECT_TARGETS[:2] if status != 302 else REDIRECT_TARGETS:
            targets.append(
                Target(f"redirect {status} {method} to {destination}", method, destination, "")
            )
    return targets


TARGETS = _targets()


@dataclass(frozen=True, slots=True)
class NoPolicy(EgressPolicy):
    """The control: refuses nothing, to prove that each target would otherwise arrive."""

    def refusal_for_address(self, ip: IPAddress) -> Refusal | None:
        return None

    def refusal_for_host(self, host: str) -> Refusal | None:
        return None


def _client(policy: EgressPolicy, public: LoopbackServer, private: LoopbackServer) -> tuple[
    EgressClient, RoutingConnector, FakeDns
]:
    connector = RoutingConnector(public.port, private.port)
    dns = FakeDns(HOSTILE_NAMES)
    return build_egress_client(policy, resolver=dns, connector=connector), connector, dns


def _url(target: Target, public: LoopbackServer, private: LoopbackServer) -> str:
    if target.path_on_public is None:
        return target.url_template.format(port=private.port)
    destination = target.path_on_public.format(port=private.port)
    status = target.label.split()[1]
    return f"http://public.test:{public.port}/redirect?status={status}&to={quote(destination)}"


def test_the_matrix_has_at_least_thirty_targets() -> None:
    assert len(TARGETS) >= 30
    assert len({target.label for target in TARGETS}) == len(TARGETS)


@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.label)
async def test_no_request_reaches_private_space(
    target: Target, server: LoopbackServer, other_server: LoopbackServer
) -> None:
    public, private = server, other_server
    client, connector, _ = _client(EgressPolicy(), public, private)
    async with client:
        with pytest.raises(EgressRefused) as refused:
            await client.request(target.method, _url(target, public, private), timeout=5)
        assert client.pool().active == 0
    assert private.requests == []
    assert refused.value.refusal.address_class is not AddressClass.PUBLIC
    # Only public addresses were ever dialled (the redirect's first hop, nothing else).
    assert all(address == PUBLIC_IP for address in connector.dialled)


@pytest.mark.parametrize("target", TARGETS, ids=lambda target: target.label)
async def test_control_without_policy_every_target_arrives(
    target: Target, server: LoopbackServer, other_server: LoopbackServer
) -> None:
    public, private = server, other_server
    client, _, _ = _client(NoPolicy(), public, private)
    async with client:
        if any(host in target.label for host in HTTPX_REJECTS):
            with pytest.raises(InvalidRequest):
                await client.request(target.method, _url(target, public, private), timeout=5)
            return
        response = await client.request(target.method, _url(target, public, private), timeout=5)
    assert response.status_code in (200, 404)  # arrived; the metadata paths do not exist
    if "public-first" in target.label:
        assert len(public.requests) == 1 and private.requests == []
    else:
        assert len(private.requests) == 1


@pytest.mark.parametrize(
    ("host", "opened"),
    [("127.0.0.1", True), ("2130706433", True), ("[::ffff:127.0.0.1]", True),
     ("localhost", True), ("loopback.evil.test", True), ("10.0.0.1", True),
     ("100.64.0.1", True), ("ula.evil.test", True), ("169.254.169.254", False),
     ("[::ffff:169.254.169.254]", False), ("imds-v6.evil.test", False),
     ("metadata.google.internal", False), ("[fe80::1%25eth0]", False), ("0.0.0.0", False)],
)
async def test_allow_private_networks_opens_loopback_and_private_only(
    host: str, opened: bool, server: LoopbackServer, other_server: LoopbackServer
) -> None:
    public, private = server, other_server
    client, _, _ = _client(EgressPolicy(allow_private_networks=True), public, private)
    async with client:
        if opened:
            response = await client.request("GET", f"http://{host}:{private.port}/ok", timeout=5)
            assert response.status_code == 200
        else:
            with pytest.raises(EgressRefused):
                await client.request("GET", f"http://{host}:{private.port}/ok", timeout=5)
    assert len(private.requests) == (1 if opened else 0)


async def test_real_loopback_without_injection(server: LoopbackServer) -> None:
    """The system resolver and real sockets: refused by default, reachable when allowed."""
    async with build_egress_client(EgressPolicy()) as closed:
        for host in ("127.0.0.1", "localhost", "2130706433", "127.1", "[::ffff:127.0.0.1]"):
            with pytest.raises(EgressRefused):
                await closed.request("GET", server.url("/ok", host=host), timeout=5)
    assert server.requests == []
    async with build_egress_client(EgressPolicy(allow_private_networks=True)) as opened:
        for host in ("127.0.0.1", "localhost", "2130706433", "127.1"):
            assert (await opened.request("GET", server.url("/ok", host=host))).status_code == 200
    assert len(server.requests) == 4


async def test_rebinding_between_two_resolutions_cannot_reach_private_space(
    server: LoopbackServer, other_server: LoopbackServer
) -> None:
    """First answer public, second answer loopback: each connection uses its one checked answer."""
    public, private = server, other_server
    connector = RoutingConnector(public.port, private.port)
    dns = FakeDns({"rebind.evil.test": [[PUBLIC_IP], ["127.0.0.1"], [PUBLIC_IP], ["127.0.0.1"]]})
    url = f"http://rebind.evil.test:{private.port}/ok"
    for _ in range(2):
        # A fresh pool each time, so each request opens a connection and resolves again.
        async with build_egress_client(EgressPolicy(), resolver=dns, connector=connector) as c:
            assert (await c.request("GET", url)).status_code == 200
        async with build_egress_client(EgressPolicy(), resolver=dns, connector=connector) as c:
            with pytest.raises(EgressRefused):
                await c.request("GET", url)
    assert private.requests == []
    assert len(public.requests) == 2
    # One lookup per connection, and only the checked answers were dialled.
    assert dns.calls == ["rebind.evil.test"] * 4
    assert connector.dialled == [PUBLIC_IP, PUBLIC_IP]


async def test_rebinding_inside_one_client_keeps_the_checked_connection(
    server: LoopbackServer, other_server: LoopbackServer
) -> None:
    """A pooled connection stays on its checked address; a new one is checked again."""
    public, private = server, other_server
    connector = RoutingConnector(public.port, private.port)
    dns = FakeDns({"rebind.evil.test": [[PUBLIC_IP], ["127.0.0.1"]]})
    url = f"http://rebind.evil.test:{private.port}/ok"
    async with build_egress_client(EgressPolicy(), resolver=dns, connector=connector) as client:
        for _ in range(5):
            assert (await client.request("GET", url)).status_code == 200
    assert dns.calls == ["rebind.evil.test"]
    assert private.requests == [] and len(public.requests) == 5
