"""Load: 1,000 concurrent calls through one client, no failures, no leaked connections."""

from __future__ import annotations

import asyncio

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.egress.client import build_egress_client
from tests.support.loopback import LoopbackServer

CALLS = 1000
# Each call's whole budget, its wait for one of the 10 connections included: a guard against
# a hang, not a speed requirement (a loaded 2-core machine took over 30 s for the last calls).
HANG_GUARD = 600


async def test_a_thousand_concurrent_calls_through_one_client(server: LoopbackServer) -> None:
    client = build_egress_client(
        EgressPolicy(allow_private_networks=True), max_connections=10, max_keepalive_connections=10
    )
    urls = [server.url(f"/echo?call={index}") for index in range(CALLS)]
    responses = await asyncio.gather(
        *(client.request("GET", url, headers={"X-Call": url[-8:]}, timeout=HANG_GUARD)
          for url in urls),
        return_exceptions=True,
    )
    failures = [response for response in responses if isinstance(response, BaseException)]
    assert failures == []
    assert all(response.status_code == 200 for response in responses)  # type: ignore[union-attr]
    assert len(server.requests) == CALLS
    # Each response answers its own request: no cross-talk between pooled calls.
    paths = sorted(request.path for request in server.requests)
    assert paths == sorted(f"/echo?call={index}" for index in range(CALLS))
    after = client.pool()
    assert after.active == 0 and after.total <= 10
    await client.aclose()
    assert client.pool().total == 0
