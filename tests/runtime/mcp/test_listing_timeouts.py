"""A listing that runs out of time is a timeout, whichever layer noticed first."""

from __future__ import annotations

import asyncio

import httpx
import pytest

from compiler.runtime.egress.addresses import EgressPolicy
from compiler.runtime.mcp.sessions import is_timeout, list_server_tools
from tests.support.mcp_server import stalled_server


def test_a_read_timeout_inside_the_sdks_task_group_is_a_timeout() -> None:
    inner = httpx.ReadTimeout("read timed out")
    assert is_timeout(ExceptionGroup("task group", [ValueError("x"), inner]))


def test_a_timeout_kept_only_as_the_cause_is_a_timeout() -> None:
    try:
        try:
            raise TimeoutError
        except TimeoutError as cause:
            raise RuntimeError("wrapped") from cause
    except RuntimeError as error:
        assert is_timeout(error)


def test_other_failures_are_not_timeouts() -> None:
    assert not is_timeout(ExceptionGroup("g", [ConnectionRefusedError(), ValueError()]))


def test_a_self_referencing_chain_ends() -> None:
    error = RuntimeError("loop")
    error.__context__ = error
    assert not is_timeout(error)


def test_a_server_that_never_answers_is_reported_as_a_timeout() -> None:
    with stalled_server() as url, pytest.raises(TimeoutError, match=r"within 0\.5 s"):
        asyncio.run(list_server_tools(url, {}, EgressPolicy(allow_private_networks=True), 0.5))
