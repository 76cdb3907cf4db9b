"""``check_url``'s shortcut for plain URLs gives the full rules' answers.

A URL of the plain shape (http(s), a host of letters, digits, dots and hyphens, a path of
printable ASCII) whose host the address policy does not refuse skips the URL rules; any
other URL, or a refused host, goes through all of them. The pieces below mix the plain
shape with every spelling the rules exist for, so a shortcut that skipped too much fails.
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.checks.url_rules import _PLAIN_URL, _url_findings, check_placeholders, check_url
from compiler.diagnostics import Diagnostic
from compiler.runtime.egress.addresses import EgressPolicy, parse_allowed_networks
from compiler.source.documents import SourceDocument, parse_source

pytestmark = pytest.mark.fastpath

_PATH = ("options", "url")


def _document() -> SourceDocument:
    documents, problems = parse_source("a.yaml", b"options:\n  url: https://x.test/\n", {})
    assert not problems
    return documents[0]


def _full_rules(document: SourceDocument, url: str, allow_private: bool,
                policy: EgressPolicy | None) -> list[Diagnostic]:
    """check_url without its shortcut: every rule for every URL."""
    found = check_placeholders(document, _PATH, url)
    if url.startswith("${"):
        return found
    networks = policy.allowed_networks if policy else ()
    return found + _url_findings(document, _PATH, url, allow_private, networks)


_POLICIES = [None, EgressPolicy(False, ()),
             EgressPolicy(False, parse_allowed_networks(["10.0.0.0/8", "127.0.0.0/8"])),
             EgressPolicy(True, parse_allowed_networks(["192.168.0.0/16"]))]
_PLAIN_SCHEMES = ["https://", "http://"]
_OTHER_SCHEMES = ["HTTPS://", "ftp://", "https:/", "//", "https:", "${BASE}", "",
                  "https://user:pw@", "https://u@", "https://${U}:${P}@"]
_PLAIN_HOSTS = ["api.example.com", "Ex-Ample.COM", ".", "-", "a" * 300, "x.localhost",
                "127.0.0.1", "10.1.2.3", "169.254.169.254", "localhost", "0x7f000001",
                "2130706433", "0177.0.0.1", "metadata.google.internal", "1.2.3.4.5"]
_OTHER_HOSTS = ["[::1]", "[::ffff:7f00:1]", "%2e", "\u200b", "\uff10", "\t", " ", "${HOST}",
                "{slot}", "$", ":8080", ":0", ":99999", ":", "@", "\\", "\u00e9", ""]
_PATHS = ["", "/", "/v1/items", "/v1/{item_id}", "/${VERSION}/x"]
_RESTS = ["", "/x", "?q=1", "?api_key=abc123", "?token=${T}", "#top", " b", "\x00", "\\x",
          "%41", "@evil.test", "\u00e9", "?", "#", "\n", "\t", "?b#c", "~!$&'()*+,;=:@[]",
          "\x7f", "\u0085", "\u200b", "?password=hunter22"]
_CASES = [(False, None), (True, None), (False, _POLICIES[2]), (True, _POLICIES[3])]


def _same_answer(url: str, allow_private: bool, policy: EgressPolicy | None) -> None:
    document = _document()
    assert check_url(document, _PATH, url, allow_private, policy) == \
        _full_rules(document, url, allow_private, policy), url


def test_shortcut_finds_what_the_full_rules_find_for_each_piece() -> None:
    for scheme in _PLAIN_SCHEMES + _OTHER_SCHEMES:
        for host in _PLAIN_HOSTS + _OTHER_HOSTS:
            for rest in _RESTS:
                for allow_private, policy in _CASES:
                    _same_answer(scheme + host + "/v1" + rest, allow_private, policy)
                    _same_answer(scheme + host + rest, allow_private, policy)


def _mostly(plain: list[str], other: list[str]) -> st.SearchStrategy[str]:
    return st.one_of(st.sampled_from(plain), st.sampled_from(plain), st.sampled_from(other))


@settings(max_examples=300, deadline=None)
@given(_mostly(_PLAIN_SCHEMES, _OTHER_SCHEMES),
       st.lists(_mostly(_PLAIN_HOSTS, _OTHER_HOSTS), min_size=1, max_size=3).map("".join),
       st.sampled_from(_PATHS), st.lists(st.sampled_from(_RESTS), max_size=2).map("".join),
       st.sampled_from(_CASES))
def test_shortcut_finds_what_the_full_rules_find(
    scheme: str, host: str, path: str, rest: str,
    case: tuple[bool, EgressPolicy | None],
) -> None:
    _same_answer(scheme + host + path + rest, *case)


def test_plain_urls_take_the_shortcut_and_refused_hosts_are_still_reported() -> None:
    assert _PLAIN_URL.fullmatch("https://api.example.com/v2/items/{item_id}")
    assert _PLAIN_URL.fullmatch("http://Example.COM")
    for not_plain in ("https://api.example.com/v2?q=1", "https://h:8080/", "https://a@b/",
                      "https://h/a b", "https://h/\u00e9", "https://h\\x/", "https://h#f",
                      "https://${H}/", "HTTPS://h/"):
        assert _PLAIN_URL.fullmatch(not_plain) is None, not_plain
    document = _document()
    for url, code in [("https://127.0.0.1/v1", "url-private-address"),
                      ("http://localhost/x", "url-private-address"),
                      ("https://169.254.169.254/latest", "url-forbidden-address"),
                      ("https://0x7f000001/", "url-private-address")]:
        assert [d.code for d in check_url(document, _PATH, url, False)] == [code], url
    assert check_url(document, _PATH, "https://10.0.0.1/", False, _POLICIES[2]) == []
