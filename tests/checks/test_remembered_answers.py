"""Answers the URL and header checks remember within one compile give what computing them
again gives.

``CheckAnswers`` (one per compile, made by ``check_api_documents``) keeps a host's address
answer per allowed networks and a header name's forbidden-header answer; neither may
change a finding or grow without bound, and nothing is kept between compiles.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks.url_rules import CheckAnswers, check_headers, check_url
from compiler.diagnostics import Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath

_PATH = ("options", "headers")
_NAMES = ["Accept", "Authorization", "X-Api-Key", "Host", "Content-Length", "X-Trace",
          "session_token", "Cookie", "X-\u0130d", "Transfer-Encoding", "host", "HOST"]
_VALUES = ["application/json", "Bearer ${TOKEN}", "Bearer abcdefghijklmnop1234",
           "${OK}", "${1BAD}", "a\r\nInjected: 1", "x\x00", "sk-abcdefghijklmnopqrstuvwx",
           "plain", "", "${A}${", "ghp_abcdefghijklmnopqrstuvwxyz"]
_HOSTS = ["127.0.0.1", "localhost", "10.0.0.1", "api.example.com", "0x7f.1",
          "169.254.169.254", "a" * 300, "LOCALHOST", "[::1]", "example.com.", "2130706433"]


def _document() -> SourceDocument:
    documents, problems = parse_source("a.yaml", b"options:\n  headers: {}\n", {})
    assert not problems
    return documents[0]


def _url_findings(url: str, networks: tuple[object, ...],
                  answers: CheckAnswers | None) -> list[Diagnostic]:
    policy = EgressPolicy(allowed_networks=networks)  # type: ignore[arg-type]
    document = _document()
    return check_url(document, ("options", "url"), url, False, policy, answers)


@settings(max_examples=300, deadline=None)
@given(st.lists(st.dictionaries(st.sampled_from(_NAMES), st.sampled_from(_VALUES),
                                max_size=6), max_size=4))
def test_remembered_answers_are_the_rules_answers(files: list[dict[str, str]]) -> None:
    document = _document()
    answers = CheckAnswers()
    for headers in [*files, *files]:  # the second time from memory
        assert check_headers(document, _PATH, headers, answers) == \
            check_headers(document, _PATH, headers)
    networks = parse_allowed_networks(["127.0.0.0/8"])
    for host in _HOSTS:
        for allowed in ((), networks):
            url = f"https://{host}/v1/items"
            for _ in range(2):
                assert _url_findings(url, allowed, answers) == _url_findings(url, allowed, None)


def test_host_answers_are_per_allowed_networks() -> None:
    networks = parse_allowed_networks(["127.0.0.0/8"])
    answers = CheckAnswers()
    for host in _HOSTS:
        for allowed in ((), networks):
            expected = EgressPolicy(allowed_networks=allowed).refusal_for_host(host)
            assert answers.refusal(host, allowed) == expected
            assert answers.refusal(host, allowed) == expected  # remembered
    assert answers.refusal("127.0.0.1", ()) is not None
    assert answers.refusal("127.0.0.1", networks) is None


def test_the_answers_are_bounded_and_long_texts_are_not_kept() -> None:
    answers = CheckAnswers()
    for index in range(CheckAnswers.MAX_ANSWERS + 10):
        answers.refusal(f"h{index}.example.com", ())
        answers.header_problem(f"X-H{index}")
    assert len(answers._hosts) == len(answers._headers) == CheckAnswers.MAX_ANSWERS
    fresh = CheckAnswers()
    assert fresh.refusal("a" * 300, ()) == EgressPolicy().refusal_for_host("a" * 300)
    assert fresh.header_problem("X" * 300) is None
    assert fresh._hosts == {} and fresh._headers == {}
