"""The address policy: which addresses the arena may connect to, production or development.

:func:`forbidden_reason` judges one address from an explicit table (not Python's ``is_global``,
which for example calls the NAT64 form of 127.0.0.1, ``64:ff9b::7f00:1``, global): private,
loopback, link-local, shared, documentation, reserved and multicast ranges are refused, and the
well-known cloud metadata endpoints are named as such. IPv6 forms that embed an IPv4 address
(mapped, compatible, translated, NAT64, 6to4, Teredo) are judged by the IPv4 address inside.

In development mode (``allow_loopback=True``) loopback is allowed too, and nothing else:
127.0.0.0/8, ``::1`` and the IPv4-mapped ``::ffff:127.0.0.0/104``. This is the one URL policy:
the service passes ``ARENA_ALLOW_LOOPBACK`` at registration, at a URL change, at reactivation
and when a worker connects for a match (every executor), and a URL refused only for being
loopback says so and names that setting (:data:`LOOPBACK_HINT`). The author's tools on the
command line (``gin-arena match``, ``bot check``) and the demo target local bots by design and
always allow loopback (``--production`` applies the service's policy instead).

>>> print(forbidden_reason(ipaddress.ip_address("64:ff9b::a9fe:a9fe")))
NAT64 address embedding 169.254.169.254: link-local (169.254.0.0/16), a cloud metadata endpoint
"""

from __future__ import annotations

import ipaddress
from collections.abc import Iterable
from typing import TypeAlias

from arena.protocol.urlguard.parsing import IPAddress, ParsedUrl, Rejection, UrlRejectedError

#: Said whenever a URL is refused only because it is loopback: the one switch that allows it.
LOOPBACK_HINT = "set ARENA_ALLOW_LOOPBACK=1 to allow loopback bots in development"

_IPV4_TABLE: tuple[tuple[ipaddress.IPv4Network, str], ...] = tuple(
    (ipaddress.IPv4Network(net), reason)
    for net, reason in (
        ("0.0.0.0/8", "unspecified ('this network', 0.0.0.0/8)"),
        ("10.0.0.0/8", "private (10.0.0.0/8)"),
        ("100.64.0.0/10", "shared address space (CGNAT, 100.64.0.0/10)"),
        ("127.0.0.0/8", "loopback (127.0.0.0/8)"),
        ("169.254.0.0/16", "link-local (169.254.0.0/16)"),
        ("172.16.0.0/12", "private (172.16.0.0/12)"),
        ("192.0.0.0/24", "IETF protocol assignments (192.0.0.0/24)"),
        ("192.0.2.0/24", "documentation (TEST-NET-1)"),
        ("192.88.99.0/24", "deprecated 6to4 relay anycast (192.88.99.0/24)"),
        ("192.168.0.0/16", "private (192.168.0.0/16)"),
        ("198.18.0.0/15", "benchmarking (198.18.0.0/15)"),
        ("198.51.100.0/24", "documentation (TEST-NET-2)"),
        ("203.0.113.0/24", "documentation (TEST-NET-3)"),
        ("224.0.0.0/4", "multicast (224.0.0.0/4)"),
        ("255.255.255.255/32", "broadcast (255.255.255.255)"),
        ("240.0.0.0/4", "reserved (240.0.0.0/4)"),
    )
)

# Checked after the loopback/unspecified and embedded-IPv4 forms; the first match wins.
_IPV6_TABLE: tuple[tuple[ipaddress.IPv6Network, str], ...] = tuple(
    (ipaddress.IPv6Network(net), reason)
    for net, reason in (
        ("100::/64", "discard-only (100::/64)"),
        ("2001:2::/48", "benchmarking (2001:2::/48)"),
        ("2001:10::/28", "deprecated ORCHID (2001:10::/28)"),
        ("2001:db8::/32", "documentation (2001:db8::/32)"),
        ("2001::/23", "IETF protocol assignments (2001::/23)"),
        ("3fff::/20", "documentation (3fff::/20)"),
        ("5f00::/16", "segment routing SIDs (5f00::/16)"),
        ("fc00::/7", "unique local (fc00::/7)"),
        ("fe80::/10", "link-local (fe80::/10)"),
        ("fec0::/10", "deprecated site-local (fec0::/10)"),
        ("ff00::/8", "multicast (ff00::/8)"),
        ("::/8", "reserved by the IETF (::/8)"),
    )
)
_IPV6_GLOBAL_UNICAST = ipaddress.IPv6Network("2000::/3")

#: Well-known cloud metadata services, named in the reason so an operator sees what was tried.
_METADATA = frozenset(
    ipaddress.ip_address(a)
    for a in (
        "169.254.169.254",  # AWS, GCP, Azure, OpenStack, DigitalOcean...
        "169.254.170.2",  # AWS ECS task metadata
        "100.100.100.200",  # Alibaba Cloud
        "192.0.0.192",  # Oracle Cloud
        "fd00:ec2::254",  # AWS IMDS over IPv6
    )
)

_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
_IPV4_COMPATIBLE = ipaddress.IPv6Network("::/96")
_IPV4_TRANSLATED = ipaddress.IPv6Network("::ffff:0:0:0/96")
_NAT64 = ipaddress.IPv6Network("64:ff9b::/96")
_NAT64_LOCAL = ipaddress.IPv6Network("64:ff9b:1::/48")
_SIX_TO_FOUR = ipaddress.IPv6Network("2002::/16")
_TEREDO = ipaddress.IPv6Network("2001::/32")
_LOOPBACK_V4 = ipaddress.IPv4Network("127.0.0.0/8")
_LOOPBACK_V6 = ipaddress.IPv6Address("::1")
_UNSPECIFIED_V6 = ipaddress.IPv6Address("::")


def check_addresses(
    parsed: ParsedUrl, addresses: Iterable[IPAddress], *, allow_loopback: bool
) -> None:
    """Raise :class:`UrlRejectedError` unless every address of ``parsed``'s host is allowed.

    One forbidden address rejects the URL: a resolver may hand out any of them later. A URL
    refused only for being loopback says how to allow it (:data:`LOOPBACK_HINT`).
    """
    for address in addresses:
        reason = forbidden_reason(address, allow_loopback=allow_loopback)
        if reason is not None:
            shown = "is" if parsed.literal is not None else "resolves to"
            if not allow_loopback and forbidden_reason(address, allow_loopback=True) is None:
                reason += f" ({LOOPBACK_HINT})"
            raise UrlRejectedError(
                parsed.url,
                Rejection.FORBIDDEN_ADDRESS,
                f"host {parsed.written_host!r} {shown} {address}, which is {reason}",
                address,
            )


def forbidden_reason(ip: IPAddress, *, allow_loopback: bool = False) -> str | None:
    """Why the arena must not connect to ``ip``, or ``None`` if it may.

    >>> forbidden_reason(ipaddress.ip_address("8.8.8.8")) is None
    True
    >>> forbidden_reason(ipaddress.ip_address("::ffff:10.0.0.1"))
    'IPv4-mapped address embedding 10.0.0.1: private (10.0.0.0/8)'
    >>> forbidden_reason(ipaddress.ip_address("127.0.0.1"), allow_loopback=True) is None
    True
    """
    if isinstance(ip, ipaddress.IPv4Address):
        return _ipv4_reason(ip, allow_loopback=allow_loopback)
    if ip.scope_id is not None:
        return "an IPv6 address with a zone index"
    if ip == _LOOPBACK_V6:
        return None if allow_loopback else "loopback (::1)"
    if ip == _UNSPECIFIED_V6:
        return "unspecified (::)"
    embedded = _embedded_ipv4(ip)
    if embedded is not None:
        form, inners, usable = embedded
        for role, inner in inners:
            # Only the mapped form reaches this machine's own loopback (it is connected to
            # over IPv4); 127.x inside NAT64, 6to4 or Teredo is some other machine's loopback.
            local = form == "IPv4-mapped"
            reason = _ipv4_reason(inner, allow_loopback=allow_loopback and local)
            if reason is not None:
                if allow_loopback and inner in _LOOPBACK_V4:
                    reason += ", not this machine's (only 127/8, ::1 and ::ffff:127/104 are)"
                return f"{form} address embedding {role}{inner}: {reason}"
        return None if usable else _UNUSABLE_FORMS[form]
    for network, reason in _IPV6_TABLE:
        if ip in network:
            return _with_metadata(ip, reason)
    if ip not in _IPV6_GLOBAL_UNICAST:
        return "outside the IPv6 global unicast space (2000::/3)"
    if not ip.is_global:  # a backstop for anything the table above missed
        return "not globally reachable"
    return None


_UNUSABLE_FORMS = {
    "IPv4-compatible": "the deprecated IPv4-compatible form (::/96)",
    "IPv4-translated": "the deprecated IPv4-translated form (::ffff:0:0:0/96)",
    "local-use NAT64": "local-use NAT64 (64:ff9b:1::/48), not globally reachable",
}


def _ipv4_reason(ip: ipaddress.IPv4Address, *, allow_loopback: bool) -> str | None:
    for network, reason in _IPV4_TABLE:
        if ip in network:
            if allow_loopback and network == _LOOPBACK_V4:
                return None
            return _with_metadata(ip, reason)
    if not ip.is_global:  # a backstop for anything the table above missed
        return "not globally reachable"
    return None


def _with_metadata(ip: IPAddress, reason: str) -> str:
    return f"{reason}, a cloud metadata endpoint" if ip in _METADATA else reason


_Embedded: TypeAlias = tuple[str, tuple[tuple[str, ipaddress.IPv4Address], ...], bool]


def _embedded_ipv4(ip: ipaddress.IPv6Address) -> _Embedded | None:
    """(form, the embedded IPv4 addresses with their role, whether the form is usable when they
    are public), or None for an address that embeds no IPv4."""
    value = int(ip)
    low32 = ipaddress.IPv4Address(value & 0xFFFFFFFF)
    if ip in _IPV4_MAPPED:
        return "IPv4-mapped", (("", low32),), True
    if ip in _IPV4_COMPATIBLE:
        return "IPv4-compatible", (("", low32),), False
    if ip in _IPV4_TRANSLATED:
        return "IPv4-translated", (("", low32),), False
    if ip in _NAT64:
        return "NAT64", (("", low32),), True
    if ip in _NAT64_LOCAL:
        # RFC 6052 lets the operator put the IPv4 at several offsets; the /96 one is judged,
        # and the form is refused anyway.
        return "local-use NAT64", (("", low32),), False
    if ip in _SIX_TO_FOUR:  # 2002:AABB:CCDD::/48 embeds AA.BB.CC.DD
        return "6to4", (("", ipaddress.IPv4Address((value >> 80) & 0xFFFFFFFF)),), True
    if ip in _TEREDO:  # 2001:0:SERVER:flags:port:~CLIENT; both ends must be public
        server = ipaddress.IPv4Address((value >> 64) & 0xFFFFFFFF)
        client = ipaddress.IPv4Address(~value & 0xFFFFFFFF)
        return "Teredo", (("client ", client), ("server ", server)), True
    return None
