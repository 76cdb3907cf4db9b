"""``normalize_host``'s ASCII shortcut: a host of ASCII text without ``%`` is only
lowercased, and the general path (percent-decoding, NFKC, the dot variants) gives the same
text for it; every other host takes the general path."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.egress.host_literals import _decoded, normalize_host, parse_ip_literal

pytestmark = pytest.mark.fastpath

_HOST_PIECES = st.sampled_from(["a", "Z", "0", "7f", ".", "-", "%", "%2e", "%41", "0x",
                                "\u3002", "\uff0e", "\uff10", "\u2024", "\u00e9", "\u0130",
                                "\u212a", "[", "]", ":", " ", "\t", "localhost", "127",
                                "\u1e9e", "ﬀ", "%25", "%e3%80%82"])


@settings(max_examples=400, deadline=None)
@given(st.text(alphabet=st.characters(max_codepoint=127), max_size=40))
def test_ascii_hosts_skip_only_what_changes_nothing(text: str) -> None:
    if "%" not in text:
        assert _decoded(text) == text.lower()


@settings(max_examples=400, deadline=None)
@given(st.lists(_HOST_PIECES, max_size=8).map("".join))
def test_every_host_reads_as_through_the_general_path(host: str) -> None:
    stripped = host.strip()
    if stripped.startswith("[") and stripped.endswith("]"):
        return  # bracketed: not decoded on either path
    general = _decoded(stripped)
    if ":" in general:
        expected = general.split("%", 1)[0]
    else:
        expected = general[:-1] if general.endswith(".") and not general.endswith("..") \
            else general
    assert normalize_host(host) == expected


@pytest.mark.parametrize(("host", "address"), [
    ("127.0.0.1", "127.0.0.1"), ("LOCALHOST", None), ("127%2e0.0.1", "127.0.0.1"),
    ("127\u30020\u30020\u30021", "127.0.0.1"), ("\uff11\uff12\uff17.0.0.1", "127.0.0.1"),
    ("0x7F.1", "127.0.0.1"), ("example.com.", None)])
def test_both_paths_read_the_same_addresses(host: str, address: str | None) -> None:
    found = parse_ip_literal(host)
    assert (None if found is None else str(found)) == address
