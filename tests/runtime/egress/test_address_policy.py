"""The address table, checked against fixed spellings and an independent integer oracle."""

from __future__ import annotations

import ipaddress

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from compiler.runtime.egress.addresses import (
    AddressClass,
    EgressPolicy,
    classify_address,
)
from compiler.runtime.egress.host_literals import parse_ip_literal

A = AddressClass

# The oracle: the same policy written independently as inclusive integer ranges.
V4_METADATA = {0xA9FEA9FE, 0xA9FEAA02, 0xA9FEAA17, 0xA9FE0017, 0x646464C8, 0xC00000C0, 0xA83F8110}
V4_RANGES: list[tuple[int, int, AddressClass]] = [
    (0x00000000, 0x00FFFFFF, A.UNSPECIFIED),
    (0x0A000000, 0x0AFFFFFF, A.PRIVATE),
    (0x64400000, 0x647FFFFF, A.CGNAT),
    (0x7F000000, 0x7FFFFFFF, A.LOOPBACK),
    (0xA9FE0000, 0xA9FEFFFF, A.LINK_LOCAL),
    (0xAC100000, 0xAC1FFFFF, A.PRIVATE),
    (0xC0000000, 0xC00000FF, A.RESERVED),
    (0xC0000200, 0xC00002FF, A.RESERVED),
    (0xC0586300, 0xC05863FF, A.RESERVED),
    (0xC0A80000, 0xC0A8FFFF, A.PRIVATE),
    (0xC6120000, 0xC613FFFF, A.RESERVED),
    (0xC6336400, 0xC63364FF, A.RESERVED),
    (0xCB007100, 0xCB0071FF, A.RESERVED),
    (0xE0000000, 0xEFFFFFFF, A.MULTICAST),
    (0xF0000000, 0xFFFFFFFF, A.RESERVED),
]


def oracle_v4(number: int) -> AddressClass:
    if number in V4_METADATA:
        return A.METADATA
    for low, high, address_class in V4_RANGES:
        if low <= number <= high:
            return address_class
    return A.PUBLIC


# Where several IPv4 addresses may be carried, the most dangerous class wins.
SEVERITY_ORDER = [A.METADATA, A.LINK_LOCAL, A.UNSPECIFIED, A.MULTICAST, A.RESERVED,
                  A.MALFORMED, A.LOOPBACK, A.PRIVATE, A.CGNAT, A.PUBLIC]


def worst(*classes: AddressClass) -> AddressClass:
    return min(classes, key=SEVERITY_ORDER.index)


def oracle_local_nat64_candidates(number: int) -> list[int]:
    """RFC 6052 §2.2, read byte by byte: the IPv4 address of each valid prefix length."""
    octets = number.to_bytes(16, "big")
    candidates = [int.from_bytes(octets[12:16], "big")]  # /96
    if octets[8] == 0:  # the u octet of the shorter layouts
        if not any(octets[13:]):
            candidates.append(int.from_bytes(octets[9:13], "big"))  # /64
        if not any(octets[12:]):
            candidates.append(int.from_bytes(octets[7:8] + octets[9:12], "big"))  # /56
        if not any(octets[11:]):
            candidates.append(int.from_bytes(octets[6:8] + octets[9:11], "big"))  # /48
    return candidates


def oracle_v6(number: int) -> AddressClass:
    low32 = number & 0xFFFFFFFF
    top = number >> 96
    if number == 0:
        return A.UNSPECIFIED
    if number == 1:
        return A.LOOPBACK
    nat64 = top == 0x0064FF9B and (number >> 32) & (2**64 - 1) == 0
    if number >> 32 in (0, 0xFFFF, 0xFFFF0000) or nat64:
        return oracle_v4(low32)
    if number >> 112 == 0x2002:
        return oracle_v4((number >> 80) & 0xFFFFFFFF)
    carried: list[int] = []
    if number >> 80 == 0x0064FF9B0001:
        carried += oracle_local_nat64_candidates(number)
    if number >> 96 == 0x20010000:  # Teredo: server, and the client inverted
        carried += [(number >> 64) & 0xFFFFFFFF, low32 ^ 0xFFFFFFFF]
    if (number >> 32) & 0xFFFFFFFF in (0x00005EFE, 0x01005EFE, 0x02005EFE, 0x03005EFE):
        carried.append(low32)  # ISATAP
    return worst(oracle_v6_listed(number), *map(oracle_v4, carried))


def oracle_v6_listed(number: int) -> AddressClass:
    if number in (0xFD000EC2 << 96 | 0x254, 0xFD000EC2 << 96 | 0x23) or number >> 96 == 0xFD000EC2:
        return A.METADATA
    if number >> 80 == 0x0064FF9B0001:
        return A.PRIVATE
    if number >> 64 == 0x0100000000000000:
        return A.RESERVED
    if number >> 105 == 0x2001 << 16 >> 9 or number >> 96 == 0x20010DB8:
        return A.RESERVED
    if number >> 108 == 0x3FFF0 or number >> 112 == 0x5F00:
        return A.RESERVED
    if number >> 121 == 0xFC >> 1:
        return A.PRIVATE
    if number >> 118 == 0xFE80 >> 6:
        return A.LINK_LOCAL
    if number >> 118 == 0xFEC0 >> 6:
        return A.PRIVATE
    if number >> 120 == 0xFF:
        return A.MULTICAST
    return A.PUBLIC if number >> 125 == 1 else A.RESERVED


def _part(value: int, base: str) -> str:
    if base == "oct":
        return "0" + format(value, "o")
    if base == "hex":
        return "0x" + format(value, "x")
    if base == "HEX":
        return "0X" + format(value, "X")
    return str(value)


@st.composite
def ipv4_spellings(draw: st.DrawFn) -> tuple[int, str]:
    """An IPv4 integer and one of the many ways a URL host may spell it."""
    number = draw(st.integers(0, 2**32 - 1))
    octets = [(number >> shift) & 0xFF for shift in (24, 16, 8, 0)]
    bases = st.sampled_from(["dec", "oct", "hex", "HEX"])
    form = draw(st.sampled_from(["whole", "four", "three", "two", "mapped", "mapped-hex",
                                 "compatible", "nat64", "6to4"]))
    dotted = ".".join(map(str, octets))
    if form == "whole":
        text = _part(number, draw(bases))
    elif form == "four":
        text = ".".join(_part(octet, draw(bases)) for octet in octets)
    elif form == "three":
        text = ".".join([_part(octets[0], draw(bases)), _part(octets[1], draw(bases)),
                         _part(number & 0xFFFF, draw(bases))])
    elif form == "two":
        text = _part(octets[0], draw(bases)) + "." + _part(number & 0xFFFFFF, draw(bases))
    elif form == "mapped":
        text = f"[::ffff:{dotted}]"
    elif form == "mapped-hex":
        text = f"[::FFFF:{number >> 16:X}:{number & 0xFFFF:x}]"
    elif form == "compatible":
        number = max(number, 2)  # ::0.0.0.0 and ::0.0.0.1 are :: and ::1, not embeddings
        octets = [(number >> shift) & 0xFF for shift in (24, 16, 8, 0)]
        text = "[::" + ".".join(map(str, octets)) + "]"
    elif form == "nat64":
        text = f"[64:ff9b::{dotted}]"
    else:
        text = f"[2002:{number >> 16:x}:{number & 0xFFFF:x}::1]"
    if not text.startswith("[") and draw(st.booleans()):
        text += "."  # a trailing dot is the same host
    return number, text


@settings(max_examples=1500, deadline=None)
@given(ipv4_spellings())
def test_every_ipv4_spelling_is_classified_like_the_oracle(case: tuple[int, str]) -> None:
    number, text = case
    address = parse_ip_literal(text)
    assert address is not None, text
    assert classify_address(address) is oracle_v4(number), text


# Regions worth aiming at: (top bits, how many), so rare prefixes are hit, not only 2**-20 odds.
V6_REGIONS = [(0, 0), (0, 96), (0xFFFF, 96), (0xFFFF0000, 96), (0x0064FF9B, 96),
              (0x0064FF9B0001, 48), (0x0064FF9B0001, 48), (0x20010000, 32), (0x2002, 16),
              (0x0100000000000000, 64), (0x20010000 >> 9, 23),
              (0x20010DB8, 32), (0x3FFF0, 20), (0x5F00, 16), (0xFD000EC2, 32), (0xFC >> 1, 7),
              (0xFE80 >> 6, 10), (0xFEC0 >> 6, 10), (0xFF, 8), (1, 3), (0, 120)]


# IPv4 addresses worth carrying: every class, metadata above all.
INTERESTING_V4 = [*sorted(V4_METADATA), 0x7F000001, 0x0A000001, 0xA9FE0001, 0x64400001,
                  0x08080808, 0x00000000, 0xE0000001, 0xC0000201]


@st.composite
def carried_v4_numbers(draw: st.DrawFn) -> int:
    """An IPv6 address that may carry an interesting IPv4 address in a less obvious place."""
    v4 = draw(st.sampled_from(INTERESTING_V4) | st.integers(0, 2**32 - 1))
    v4_bytes = v4.to_bytes(4, "big")
    form = draw(st.sampled_from(["local96", "local64", "local56", "local48", "teredo",
                                 "isatap"]))
    if form == "teredo":
        server = draw(st.sampled_from(INTERESTING_V4) | st.integers(0, 2**32 - 1))
        middle = draw(st.integers(0, 2**32 - 1))
        return 0x20010000 << 96 | server << 64 | middle << 32 | v4 ^ 0xFFFFFFFF
    if form == "isatap":
        prefix = draw(st.integers(0, 2**64 - 1))
        marker = draw(st.sampled_from([0x00005EFE, 0x02005EFE]))
        return prefix << 64 | marker << 32 | v4
    octets = bytearray(bytes.fromhex("0064ff9b0001") + bytes(10))
    if form == "local96":
        octets[6:12] = draw(st.binary(min_size=6, max_size=6))
        octets[12:16] = v4_bytes
    elif form == "local64":
        octets[6:8] = draw(st.binary(min_size=2, max_size=2))
        octets[9:13] = v4_bytes
    elif form == "local56":
        octets[6] = draw(st.integers(0, 255))
        octets[7], octets[9:12] = v4_bytes[0], v4_bytes[1:]
    else:
        octets[6:8], octets[9:11] = v4_bytes[:2], v4_bytes[2:]
    return int.from_bytes(octets, "big")


@st.composite
def ipv6_numbers(draw: st.DrawFn) -> int:
    """A 128-bit integer, often inside (or next to) one of the special regions."""
    if draw(st.integers(0, 4)) == 0:
        return draw(carried_v4_numbers())
    top, length = draw(st.sampled_from(V6_REGIONS))
    low = draw(st.integers(0, 2 ** (128 - length) - 1))
    number = (top << (128 - length)) | low
    return (number + draw(st.sampled_from([0, 0, 0, -1, 1]))) % 2**128


@settings(max_examples=1500, deadline=None)
@given(carried_v4_numbers())
def test_a_carried_metadata_address_is_never_opened(number: int) -> None:
    """Whatever place a translator may read it from, a carried metadata address stays closed."""
    address = ipaddress.IPv6Address(number)
    expected = oracle_v6(number)
    assert classify_address(address) is expected
    refusal = EgressPolicy(allow_private_networks=True).refusal_for_address(address)
    assert (refusal is None) is (expected in (A.PUBLIC, A.LOOPBACK, A.PRIVATE, A.CGNAT))


@settings(max_examples=3000, deadline=None)
@given(ipv6_numbers())
def test_every_ipv6_address_is_classified_like_the_oracle(number: int) -> None:
    address = ipaddress.IPv6Address(number)
    for text in (f"[{address}]", f"[{address.exploded.upper()}]", f"[{address}%25eth0]"):
        parsed = parse_ip_literal(text)
        assert parsed == address, text
        assert classify_address(parsed) is oracle_v6(number), text


@pytest.mark.parametrize(
    ("host", "expected"),
    [
        ("127.0.0.1", A.LOOPBACK), ("2130706433", A.LOOPBACK), ("0177.0.0.1", A.LOOPBACK),
        ("0x7f.1", A.LOOPBACK), ("0x7F000001", A.LOOPBACK), ("127.1", A.LOOPBACK),
        ("127.0.1", A.LOOPBACK), ("127.0.0.1.", A.LOOPBACK), ("[::1]", A.LOOPBACK),
        ("[0:0:0:0:0:0:0:1]", A.LOOPBACK), ("[::ffff:127.0.0.1]", A.LOOPBACK),
        ("[::ffff:7f00:1]", A.LOOPBACK), ("[::127.0.0.1]", A.LOOPBACK),
        ("%31%32%37.0.0.1", A.LOOPBACK), ("\uff11\uff12\uff17.0.0.1", A.LOOPBACK),
        ("127\u30020\u30020\u30021", A.LOOPBACK), ("localhost", A.LOOPBACK),
        ("LocalHost.", A.LOOPBACK), ("api.localhost", A.LOOPBACK),
        ("10.1.2.3", A.PRIVATE), ("172.31.255.255", A.PRIVATE), ("192.168.0.1", A.PRIVATE),
        ("[fd12:3456::1]", A.PRIVATE), ("[64:ff9b::192.168.1.1]", A.PRIVATE),
        ("[2002:c0a8:101::1]", A.PRIVATE), ("100.64.0.1", A.CGNAT),
        ("0.0.0.0", A.UNSPECIFIED), ("0", A.UNSPECIFIED), ("[::]", A.UNSPECIFIED),
        ("224.0.0.1", A.MULTICAST), ("[ff02::1]", A.MULTICAST),
        ("169.254.1.1", A.LINK_LOCAL), ("[fe80::1%25eth0]", A.LINK_LOCAL),
        ("[FE80::1%eth0]", A.LINK_LOCAL),
        ("169.254.169.254", A.METADATA), ("2852039166", A.METADATA),
        ("0xa9.0xfe.0xa9.0xfe", A.METADATA), ("0251.0376.0251.0376", A.METADATA),
        ("[::ffff:169.254.169.254]", A.METADATA), ("169.254.170.2", A.METADATA),
        ("[fd00:ec2::254]", A.METADATA), ("100.100.100.200", A.METADATA),
        ("192.0.0.192", A.METADATA), ("168.63.129.16", A.METADATA),
        ("metadata.google.internal", A.METADATA), ("METADATA.GOOGLE.INTERNAL.", A.METADATA),
        ("metadata", A.METADATA),
        ("192.0.2.1", A.RESERVED), ("198.18.0.1", A.RESERVED), ("255.255.255.255", A.RESERVED),
        ("[2001:db8::1]", A.RESERVED), ("[4000::1]", A.RESERVED),
        ("1.2.3.4.5", A.MALFORMED), ("256.0.0.1", A.MALFORMED), ("0x100000000", A.MALFORMED),
        ("08.0.0.1", A.MALFORMED), ("[::g]", A.MALFORMED), ("a b", A.MALFORMED),
        ("", A.MALFORMED), ("evil.com@127.0.0.1", A.MALFORMED),
    ],
)
def test_refused_hosts(host: str, expected: AddressClass) -> None:
    refusal = EgressPolicy().refusal_for_host(host)
    assert refusal is not None and refusal.address_class is expected, refusal


@pytest.mark.parametrize(
    "host",
    ["example.com", "api.example.com.", "8.8.8.8", "134744072", "[2606:4700:4700::1111]",
     "[2002:808:808::1]", "[64:ff9b::8.8.8.8]", "bücher.de", "xn--bcher-kva.de", "localhost.com",
     "metadata.example.com", "127.0.0.1.nip.io"],
)
def test_public_hosts_pass(host: str) -> None:
    assert EgressPolicy().refusal_for_host(host) is None
    assert EgressPolicy(allow_private_networks=True).refusal_for_host(host) is None


@pytest.mark.parametrize(
    ("host", "opened"),
    [("127.0.0.1", True), ("localhost", True), ("10.0.0.1", True), ("[fd00::1]", True),
     ("100.64.0.1", True), ("169.254.169.254", False), ("169.254.1.1", False),
     ("[fe80::1]", False), ("metadata.google.internal", False), ("0.0.0.0", False),
     ("224.0.0.1", False), ("192.0.2.1", False), ("[::ffff:169.254.169.254]", False)],
)
def test_allow_private_networks_opens_loopback_private_cgnat(host: str, opened: bool) -> None:
    closed = EgressPolicy().refusal_for_host(host)
    assert closed is not None and closed.overridable is opened
    assert (EgressPolicy(allow_private_networks=True).refusal_for_host(host) is None) is opened


def test_refusal_reason_names_the_embedded_address() -> None:
    refusal = EgressPolicy().refusal_for_host("[::ffff:a9fe:a9fe]")
    assert refusal is not None
    assert refusal.reason == (
        "::ffff:a9fe:a9fe (carrying 169.254.169.254) is a cloud metadata address"
    )
