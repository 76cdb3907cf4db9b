"""The one address policy: which hosts capc may send requests to.

Two callers share it: the compiler's static URL checks (SPEC §2.1) and the runtime egress
transport, which applies it to every address a hostname resolves to, just before
connecting. The policy is an explicit table of networks written here, not the
``ipaddress`` ``is_private``/``is_global`` flags, whose answers change between Python
versions.

- :func:`parse_ip_literal` reads a host the way URL parsers and OS resolvers do: decimal
  ``2130706433``, octal ``0177.0.0.1``, hex ``0x7f.1``, short ``127.1``, bracketed IPv6
  with a zone id, a trailing dot, percent-encoding and full-width digits.
- :func:`classify_address` maps an address to an :class:`AddressClass`; IPv6 forms that
  carry an IPv4 address (mapped, compatible, translated, NAT64, 6to4) are classified by
  the embedded IPv4 address; forms that may carry one in several places (local-use NAT64
  at every RFC 6052 prefix length, Teredo server and client, ISATAP) take the most
  dangerous class of every candidate, so metadata stays closed in each of them.
- :class:`EgressPolicy` turns a class into a :class:`Refusal` (or None when allowed).
  ``allow_private_networks`` opens loopback, private and CGNAT space; link-local, cloud
  metadata, multicast, unspecified and reserved addresses stay closed.
  ``allowed_networks`` opens exactly the listed ranges, which must lie inside that
  loopback, private and CGNAT space (:func:`parse_allowed_networks`).
"""

from __future__ import annotations

import enum
import ipaddress
import re
from collections.abc import Iterable

from compiler.runtime.egress.host_literals import (
    IPAddress as IPAddress,
)
from compiler.runtime.egress.host_literals import (
    address_of,
    normalize_host,
    reads_as_address,
)
from compiler.runtime.records import record

_HOSTNAME_CHARACTERS = re.compile(r"[^\s/\\?#@\[\]<>^|%\x00-\x1f\x7f]+")


class AddressClass(enum.Enum):
    """What kind of destination an address (or host) is."""

    PUBLIC = "public"
    LOOPBACK = "loopback"
    PRIVATE = "private"
    CGNAT = "carrier-grade NAT"
    UNSPECIFIED = "unspecified"
    MULTICAST = "multicast"
    LINK_LOCAL = "link-local"
    METADATA = "cloud metadata"
    RESERVED = "reserved"
    # A host that reads as an IP literal but is not a valid one ("1.2.3.4.5", "[::g]"):
    # resolvers disagree on such spellings, so it is never sent anywhere.
    MALFORMED = "malformed address"


# Classes that allow_private_networks opens. CGNAT (100.64.0.0/10) is here because it is
# the address space of overlay networks such as Tailscale and of ISP-internal services, the
# same trust zone as RFC 1918; Alibaba's metadata address inside it is METADATA and stays
# closed. Link-local and metadata are never opened: that is where instance credentials live.
OVERRIDABLE_CLASSES: frozenset[AddressClass] = frozenset(
    {AddressClass.LOOPBACK, AddressClass.PRIVATE, AddressClass.CGNAT}
)

# Exact cloud metadata endpoints. They are matched before the network table, so the
# METADATA class wins over the link-local / CGNAT / private network they sit in.
METADATA_ADDRESSES: frozenset[IPAddress] = frozenset(
    ipaddress.ip_address(text)
    for text in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean, Hetzner, ...
        "169.254.170.2",  # AWS ECS task metadata and credentials
        "169.254.170.23",  # AWS EKS Pod Identity agent
        "169.254.0.23",  # Tencent Cloud
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud (legacy)
        "168.63.129.16",  # Azure WireServer: a public address, but the platform's own
        "fd00:ec2::254",  # AWS IMDS over IPv6
        "fd00:ec2::23",  # AWS EKS Pod Identity over IPv6
    )
)

# Hostnames that name a metadata service; compared after normalisation (lowercase, no
# trailing dot). Resolution would catch most of them, but the compiler cannot resolve.
METADATA_HOSTNAMES: frozenset[str] = frozenset(
    {
        "metadata",
        "metadata.google.internal",
        "metadata.goog",
        "instance-data",
        "instance-data.ec2.internal",
        "metadata.tencentyun.com",
        "metadata.platformequinix.com",
        "metadata.packet.net",
    }
)

_V4 = ipaddress.IPv4Network
_V6 = ipaddress.IPv6Network

# First match wins; addresses in no listed network are PUBLIC.
IPV4_NETWORKS: tuple[tuple[ipaddress.IPv4Network, AddressClass], ...] = (
    (_V4("0.0.0.0/8"), AddressClass.UNSPECIFIED),  # "this network"; 0.0.0.0 reaches the host
    (_V4("10.0.0.0/8"), AddressClass.PRIVATE),
    (_V4("100.64.0.0/10"), AddressClass.CGNAT),
    (_V4("127.0.0.0/8"), AddressClass.LOOPBACK),
    (_V4("169.254.0.0/16"), AddressClass.LINK_LOCAL),
    (_V4("172.16.0.0/12"), AddressClass.PRIVATE),
    (_V4("192.0.0.0/24"), AddressClass.RESERVED),  # IETF protocol assignments
    (_V4("192.0.2.0/24"), AddressClass.RESERVED),  # TEST-NET-1
    (_V4("192.88.99.0/24"), AddressClass.RESERVED),  # 6to4 relay anycast (deprecated)
    (_V4("192.168.0.0/16"), AddressClass.PRIVATE),
    (_V4("198.18.0.0/15"), AddressClass.RESERVED),  # benchmarking
    (_V4("198.51.100.0/24"), AddressClass.RESERVED),  # TEST-NET-2
    (_V4("203.0.113.0/24"), AddressClass.RESERVED),  # TEST-NET-3
    (_V4("224.0.0.0/4"), AddressClass.MULTICAST),
    (_V4("240.0.0.0/4"), AddressClass.RESERVED),  # future use, and 255.255.255.255
)

# IPv6 prefixes whose low bits carry an IPv4 address; classified by that address.
# (network, shift): the IPv4 address is (int(address) >> shift) & 0xFFFFFFFF.
IPV6_EMBEDDING_V4: tuple[tuple[ipaddress.IPv6Network, int], ...] = (
    (_V6("::ffff:0:0/96"), 0),  # IPv4-mapped
    (_V6("::ffff:0:0:0/96"), 0),  # IPv4-translated (SIIT)
    (_V6("::/96"), 0),  # IPv4-compatible (deprecated), except :: and ::1
    (_V6("64:ff9b::/96"), 0),  # NAT64 well-known prefix (RFC 6052: /96 only)
    (_V6("2002::/16"), 80),  # 6to4: bits 16..47
)

# Forms where an IPv4 address *may* sit at one of several places; every candidate is
# classified and the most dangerous class wins (fail closed: capc cannot know how the
# translator or relay on the path reads the address).
# Local-use NAT64 (RFC 8215): a site translator's prefix may be any RFC 6052 length from
# /48 to /96 inside 64:ff9b:1::/48, so the IPv4 address may sit at any of those places.
NAT64_LOCAL_USE = _V6("64:ff9b:1::/48")
# RFC 6052 §2.2: prefix length -> the (bit offset, bit count) pieces of the IPv4 address,
# counted from the most significant bit; bits 64..71 (the "u" octet) are always zero.
RFC6052_LAYOUTS: tuple[tuple[int, tuple[tuple[int, int], ...]], ...] = (
    (48, ((48, 16), (72, 16))),
    (56, ((56, 8), (72, 24))),
    (64, ((72, 32),)),
    (96, ((96, 32),)),
)
# Teredo (RFC 4380): the server's IPv4 address in bits 32..63, the client's (the real
# destination) in bits 96..127, inverted.
TEREDO = _V6("2001::/32")
# ISATAP (RFC 5214): an interface identifier 0:5efe:a.b.c.d (or 200:5efe:...) under any
# prefix names the IPv4 tunnel end point a.b.c.d.
_ISATAP_MARK, _ISATAP_MASK = 0x00005EFE, 0xFCFFFFFF

# When several candidates disagree, the first class of this list that occurs is the
# answer: never-opened classes before the ones allow_private_networks opens.
SEVERITY: tuple[AddressClass, ...] = (
    AddressClass.METADATA, AddressClass.LINK_LOCAL, AddressClass.UNSPECIFIED,
    AddressClass.MULTICAST, AddressClass.RESERVED, AddressClass.MALFORMED,
    AddressClass.LOOPBACK, AddressClass.PRIVATE, AddressClass.CGNAT, AddressClass.PUBLIC,
)

IPV6_NETWORKS: tuple[tuple[ipaddress.IPv6Network, AddressClass], ...] = (
    (_V6("::/128"), AddressClass.UNSPECIFIED),
    (_V6("::1/128"), AddressClass.LOOPBACK),
    # Local-use NAT64 reaches no further than the site's own translator: private at
    # least, and worse when an IPv4 address it may carry is worse (see above).
    (NAT64_LOCAL_USE, AddressClass.PRIVATE),
    (_V6("100::/64"), AddressClass.RESERVED),  # discard-only
    (_V6("2001::/23"), AddressClass.RESERVED),  # IETF protocol assignments, Teredo
    (_V6("2001:db8::/32"), AddressClass.RESERVED),  # documentation
    (_V6("3fff::/20"), AddressClass.RESERVED),  # documentation (RFC 9637)
    (_V6("5f00::/16"), AddressClass.RESERVED),  # SRv6 SIDs
    (_V6("fd00:ec2::/32"), AddressClass.METADATA),  # AWS's reserved service prefix
    (_V6("fc00::/7"), AddressClass.PRIVATE),  # unique local addresses
    (_V6("fe80::/10"), AddressClass.LINK_LOCAL),
    (_V6("fec0::/10"), AddressClass.PRIVATE),  # site-local (deprecated)
    (_V6("ff00::/8"), AddressClass.MULTICAST),
)

_LOOPBACK_V4, _LOOPBACK_V6 = ipaddress.IPv4Address("127.0.0.1"), ipaddress.IPv6Address("::1")
_UNSPECIFIED_AND_LOOPBACK_V6 = frozenset(ipaddress.IPv6Address(text) for text in ("::", "::1"))

# Only 2000::/3 is allocated as global unicast; anything else left over is reserved.
IPV6_GLOBAL_UNICAST = _V6("2000::/3")

def classify_address(ip: IPAddress) -> AddressClass:
    """The class of one address, by the explicit tables of this module."""
    return classify_with_carried(ip)[0]


def classify_with_carried(ip: IPAddress) -> tuple[AddressClass, ipaddress.IPv4Address | None]:
    """The class of ``ip`` and, when an embedded IPv4 address decided it, that address."""
    if ip in METADATA_ADDRESSES:
        return AddressClass.METADATA, None
    if isinstance(ip, ipaddress.IPv4Address):
        return _classify_in(ip, IPV4_NETWORKS) or AddressClass.PUBLIC, None
    embedded = embedded_ipv4(ip)
    if embedded is not None:
        return classify_address(embedded), embedded
    listed = _classify_in(ip, IPV6_NETWORKS)
    if listed is None:
        listed = AddressClass.PUBLIC if ip in IPV6_GLOBAL_UNICAST else AddressClass.RESERVED
    worst: tuple[AddressClass, ipaddress.IPv4Address | None] = (listed, None)
    for candidate in carried_ipv4_candidates(ip):
        candidate_class = classify_address(candidate)
        if SEVERITY.index(candidate_class) < SEVERITY.index(worst[0]):
            worst = (candidate_class, candidate)
    return worst


def embedded_ipv4(ip: ipaddress.IPv6Address) -> ipaddress.IPv4Address | None:
    """The IPv4 address an IPv6 address carries (mapped, compatible, NAT64, 6to4), or None."""
    if ip in _UNSPECIFIED_AND_LOOPBACK_V6:
        # Inside ::/96, but they are addresses of their own, not IPv4-compatible forms.
        return None
    for network, shift in IPV6_EMBEDDING_V4:
        if ip in network:
            return ipaddress.IPv4Address((int(ip) >> shift) & 0xFFFFFFFF)
    return None


def carried_ipv4_candidates(ip: ipaddress.IPv6Address) -> tuple[ipaddress.IPv4Address, ...]:
    """Every IPv4 address ``ip`` may carry where its form does not say which (NAT64
    local-use prefix lengths, Teredo server and client, an ISATAP interface identifier)."""
    number = int(ip)
    found: list[int] = []
    if ip in NAT64_LOCAL_USE:
        found += _rfc6052_candidates(number)
    if ip in TEREDO:
        found += [(number >> 64) & 0xFFFFFFFF, (number & 0xFFFFFFFF) ^ 0xFFFFFFFF]
    if (number >> 32) & _ISATAP_MASK == _ISATAP_MARK:
        found.append(number & 0xFFFFFFFF)
    return tuple(ipaddress.IPv4Address(value) for value in dict.fromkeys(found))


def _rfc6052_candidates(number: int) -> list[int]:
    """The IPv4 addresses of each RFC 6052 layout that ``number`` is a valid instance of."""
    def bits(offset: int, count: int) -> int:
        return (number >> (128 - offset - count)) & ((1 << count) - 1)

    found = []
    for length, pieces in RFC6052_LAYOUTS:
        end = pieces[-1][0] + pieces[-1][1]
        if length < 96 and bits(64, 8):
            continue  # the u octet must be zero
        if end < 128 and bits(end, 128 - end):
            continue  # the suffix must be zero
        value = 0
        for offset, count in pieces:
            value = (value << count) | bits(offset, count)
        found.append(value)
    return found


def _classify_in(
    ip: IPAddress,
    table: tuple[tuple[ipaddress.IPv4Network, AddressClass], ...]
    | tuple[tuple[ipaddress.IPv6Network, AddressClass], ...],
) -> AddressClass | None:
    for network, address_class in table:
        if ip in network:
            return address_class
    return None


@record(frozen=True, slots=True)
class Refusal:
    """Why a destination is refused. ``overridable``: allowed under allow_private_networks."""

    address_class: AddressClass
    reason: str
    overridable: bool


IPNetwork = ipaddress.IPv4Network | ipaddress.IPv6Network

# The networks ``allowed_networks`` may name ranges inside: the overridable classes' own
# networks. A range anywhere else (public, link-local, metadata, reserved) is refused when
# it is read, so "allowed" never reaches an address the table keeps closed.
ALLOWABLE_NETWORKS: tuple[IPNetwork, ...] = (
    *(network for network, kind in IPV4_NETWORKS if kind in OVERRIDABLE_CLASSES),
    *(network for network, kind in IPV6_NETWORKS if kind in OVERRIDABLE_CLASSES),
)


class NetworkRangeError(ValueError):
    """An ``allowed_networks`` entry that is not a CIDR range capc can allow."""


def parse_allowed_networks(texts: Iterable[str]) -> tuple[IPNetwork, ...]:
    """The CIDR ranges of ``allowed_networks``; each must lie inside loopback, private or
    CGNAT space and hold no cloud metadata address (those are never allowed)."""
    networks: list[IPNetwork] = []
    for text in texts:
        if not isinstance(text, str):
            raise NetworkRangeError(f"{text!r} is not a CIDR range such as 10.20.0.0/16")
        try:
            network = ipaddress.ip_network(text.strip(), strict=True)
        except ValueError as error:
            raise NetworkRangeError(
                f"{text!r} is not a CIDR range such as 10.20.0.0/16 ({error})") from None
        inside = [n for n in ALLOWABLE_NETWORKS
                  if n.version == network.version and network.subnet_of(n)]  # type: ignore[arg-type]
        if not inside:
            raise NetworkRangeError(
                f"{text} is not inside a loopback, private or carrier-grade NAT network; "
                "only those can be allowed (link-local, metadata and public ranges never)")
        metadata = sorted(str(a) for a in METADATA_ADDRESSES if a in network)
        if metadata or (network.version == 6 and network.overlaps(_V6("fd00:ec2::/32"))):
            raise NetworkRangeError(
                f"{text} contains the cloud metadata address {', '.join(metadata) or 'fd00:ec2::'}"
                ", which is never allowed: name a narrower range")
        networks.append(network)
    return tuple(networks)


@record(frozen=True, slots=True)
class EgressPolicy:
    """Where requests may go. Refusals name the address, never a URL path or header.

    ``allowed_networks`` (from :func:`parse_allowed_networks`) opens exactly those ranges,
    whatever ``allow_private_networks`` says; everything else keeps the table's rules.
    """

    allow_private_networks: bool = False
    allowed_networks: tuple[IPNetwork, ...] = ()

    def allows_network_of(self, ip: IPAddress) -> bool:
        """True when ``ip`` (or the IPv4 address it carries) is in an allowed range."""
        if not self.allowed_networks:
            return False
        address_class, carried = classify_with_carried(ip)
        if address_class not in OVERRIDABLE_CLASSES:
            return False  # metadata inside an allowed range stays closed
        candidates: list[IPAddress] = [ip] if carried is None else [ip, carried]
        return any(candidate in network for candidate in candidates
                   for network in self.allowed_networks if network.version == candidate.version)

    def refusal_for_address(self, ip: IPAddress) -> Refusal | None:
        """A refusal for one concrete address, or None when this policy allows it."""
        address_class, embedded = classify_with_carried(ip)
        if address_class is AddressClass.PUBLIC or self.allows_network_of(ip):
            return None
        spelled = f"{ip} (carrying {embedded})" if embedded is not None else str(ip)
        article = "an" if address_class.value[0] in "aeiou" else "a"
        return self._refuse(address_class, f"{spelled} is {article} {address_class.value} address")

    def refusal_for_resolved(self, host: str, ip: IPAddress) -> Refusal | None:
        """A refusal for an address the name ``host`` resolved to, or None when allowed.

        The reason names the host and the kind of address, never the address itself: the
        text reaches the model, and where a name points inside a network is not its to learn.
        """
        refusal = self.refusal_for_address(ip)
        if refusal is None:
            return None
        address_class = refusal.address_class
        article = "an" if address_class.value[0] in "aeiou" else "a"
        reason = f"{normalize_host(host)} resolves to {article} {address_class.value} address"
        return Refusal(address_class, reason, refusal.overridable)

    def refusal_for_host(self, host: str) -> Refusal | None:
        """A refusal decided from the host text alone (IP literals, localhost, metadata names).

        None means "not refused by its spelling": a hostname must still have every
        resolved address checked with :meth:`refusal_for_address` before connecting.
        """
        text = normalize_host(host)  # once: the three readings below share it
        ip = address_of(text)
        if ip is not None:
            return self.refusal_for_address(ip)
        if reads_as_address(text):
            return self._refuse(AddressClass.MALFORMED, f"{text!r} is not a valid IP address")
        if not _HOSTNAME_CHARACTERS.fullmatch(text):
            reason = "the host is empty or has characters no host name may have"
            return self._refuse(AddressClass.MALFORMED, reason)
        if text in METADATA_HOSTNAMES:
            return self._refuse(AddressClass.METADATA, f"{text} is a cloud metadata host")
        if text == "localhost" or text.endswith(".localhost"):
            # Its resolved addresses are still checked one by one before connecting.
            if self.allows_network_of(_LOOPBACK_V4) or self.allows_network_of(_LOOPBACK_V6):
                return None
            return self._refuse(AddressClass.LOOPBACK, f"{text} is a loopback host")
        return None

    def _refuse(self, address_class: AddressClass, reason: str) -> Refusal | None:
        overridable = address_class in OVERRIDABLE_CLASSES
        if overridable and self.allow_private_networks:
            return None
        return Refusal(address_class=address_class, reason=reason, overridable=overridable)
