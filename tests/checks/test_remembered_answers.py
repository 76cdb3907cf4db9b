"""Answers the URL and header checks remember give what computing them again gives.

A clean header pair is remembered (so the next file's copy skips the rules), a host's
address answer is remembered per allowed networks; neither may change a finding, keep a
refused credential, or grow without bound.
"""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks import url_rules as urls
from compiler.checks.url_rules import check_headers
from compiler.diagnostics import Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath

_PATH = ("options", "headers")
_NAMES = ["Accept", "Authorization", "X-Api-Key", "Host", "Content-Length", "X-Trace",
          "session_token", "Cookie", "X-\u0130d", "Transfer-Encoding"]
_VALUES = ["application/json", "Bearer ${TOKEN}", "Bearer abcdefghijklmnop1234",
           "${OK}", "${1BAD}", "a\r\nInjected: 1", "x\x00", "sk-abcdefghijklmnopqrstuvwx",
           "plain", "", "${A}${", "ghp_abcdefghijklmnopqrstuvwxyz"]


def _document() -> SourceDocument:
    documents, problems = parse_source("a.yaml", b"options:\n  headers: {}\n", {})
    assert not problems
    return documents[0]


def _fresh(document: SourceDocument, headers: dict[str, str]) -> list[Diagnostic]:
    urls._CLEAN_HEADERS.clear()
    return check_headers(document, _PATH, headers)


@settings(max_examples=300, deadline=None)
@given(st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(_VALUES), max_size=6))
def test_remembered_headers_find_what_fresh_ones_find(headers: dict[str, str]) -> None:
    document = _document()
    first = _fresh(document, headers)
    assert check_headers(document, _PATH, headers) == first  # now from memory
    assert check_headers(document, _PATH, dict(reversed(headers.items()))) == \
        _fresh(document, dict(reversed(headers.items())))


def test_only_clean_pairs_are_remembered_and_the_memory_is_bounded() -> None:
    document = _document()
    for name, value in itertools.product(_NAMES, _VALUES):
        findings = _fresh(document, {name: value})
        check_headers(document, _PATH, {name: value})
        assert ((name, value) in urls._CLEAN_HEADERS) == (not findings), (name, value)
    urls._CLEAN_HEADERS.clear()
    many = {f"X-H{index}": "v" for index in range(urls._MAX_CLEAN_HEADERS + 10)}
    assert check_headers(document, _PATH, many) == []
    assert len(urls._CLEAN_HEADERS) <= urls._MAX_CLEAN_HEADERS
    check_headers(document, _PATH, {"X-Long": "v" * 2000})
    assert ("X-Long", "v" * 2000) not in urls._CLEAN_HEADERS


def test_host_answers_are_per_allowed_networks() -> None:
    networks = parse_allowed_networks(["127.0.0.0/8"])
    for host in ["127.0.0.1", "localhost", "10.0.0.1", "api.example.com", "0x7f.1",
                 "169.254.169.254", "a" * 300]:
        for allowed in ((), networks):
            expected = EgressPolicy(allowed_networks=allowed).refusal_for_host(host)
            assert urls._host_refusal(host, allowed) == expected
            assert urls._host_refusal(host, allowed) == expected  # remembered
    assert urls._host_refusal("127.0.0.1", ()) is not None
    assert urls._host_refusal("127.0.0.1", networks) is None
