"""TLS through the pinned transport: connect to the checked IP, verify the certificate
against the host *name*, and send that name as SNI."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from compiler.runtime.egress.egress_errors import EgressConnectionError
from tests.support.loopback import FakeDns, LoopbackServer, start_server, stop_server
from tests.support.tls import certificate_files, client_context, server_context

HOST = "secure.test"


@pytest.fixture(scope="module")
def tls_files(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, Path]:
    return certificate_files(HOST, tmp_path_factory.mktemp("tls"))


@pytest.fixture
def tls_server(tls_files: tuple[Path, Path, Path]) -> Iterator[tuple[LoopbackServer, list[str]]]:
    context = server_context(tls_files)
    server_names: list[str] = []
    context.sni_callback = lambda sock, name, ctx: server_names.append(str(name))
    running = start_server(b"", tls=context)
    yield running, server_names
    stop_server(running)


async def test_pinned_address_keeps_sni_and_certificate_checks_on_the_name(
    tls_server: tuple[LoopbackServer, list[str]], tls_files: tuple[Path, Path, Path]
) -> None:
    server, server_names = tls_server
    dns = FakeDns({HOST: [["127.0.0.1"]]})
    async with build_egress_client(
        EgressPolicy(allow_private_networks=True), resolver=dns,
        ssl_context=client_context(tls_files),
    ) as client:
        response = await client.request("GET", f"https://{HOST}:{server.port}/echo")
    assert response.status_code == 200
    assert response.json()["headers"]["Host"] == f"{HOST}:{server.port}"
    assert server_names == [HOST] and dns.calls == [HOST]


@pytest.mark.parametrize("host", ["wrong.test", "127.0.0.1"])
async def test_a_certificate_for_another_name_is_refused(
    tls_server: tuple[LoopbackServer, list[str]], tls_files: tuple[Path, Path, Path], host: str
) -> None:
    server, _ = tls_server
    dns = FakeDns({"wrong.test": [["127.0.0.1"]]})
    async with build_egress_client(
        EgressPolicy(allow_private_networks=True), resolver=dns,
        ssl_context=client_context(tls_files),
    ) as client:
        with pytest.raises(EgressConnectionError):
            await client.request("GET", f"https://{host}:{server.port}/echo")
    assert server.requests == []
