"""The bot URL guard: which addresses, host names and URLs are refused, in production and
development mode, and that a guarded connection goes only to the addresses that were checked.

No test resolves a real name: host names go through a fake resolver, and the only traffic is to
servers these tests start on 127.0.0.1.
"""

from __future__ import annotations

import http.client
import http.server
import ipaddress
import pickle
import shutil
import socket
import ssl
import subprocess
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from arena.protocol import urlguard
from arena.protocol.urlguard import (
    Rejection,
    Target,
    UrlRejectedError,
    check_url,
    forbidden_reason,
    open_connection,
    open_tls_connection,
    resolve_and_check,
)

SAME = "same as production"


@dataclass(frozen=True)
class AddressCase:
    """An address and the reason (a fragment of it) it is refused, or None if allowed."""

    name: str
    address: str
    production: str | None
    dev: str | None = SAME  # the same as in production unless given

    @property
    def in_development(self) -> str | None:
        return self.production if self.dev == SAME else self.dev


A = AddressCase


ADDRESS_CASES = [
    # IPv4, allowed
    A("google-dns", "8.8.8.8", None),
    A("cloudflare-dns", "1.1.1.1", None),
    A("just-above-172.16/12", "172.32.0.1", None),
    A("just-above-cgnat", "100.128.0.1", None),
    # IPv4, forbidden
    A("loopback", "127.0.0.1", "loopback", dev=None),
    A("loopback-top", "127.255.255.254", "loopback", dev=None),
    A("private-10", "10.1.2.3", "private (10.0.0.0/8)"),
    A("private-172.16", "172.16.0.1", "private (172.16.0.0/12)"),
    A("private-172.31", "172.31.255.255", "private (172.16.0.0/12)"),
    A("private-192.168", "192.168.1.1", "private (192.168.0.0/16)"),
    A("link-local", "169.254.1.1", "link-local"),
    A("metadata-aws-gcp-azure", "169.254.169.254", "link-local (169.254.0.0/16), a cloud metadata"),
    A("metadata-aws-ecs", "169.254.170.2", "cloud metadata"),
    A("cgnat", "100.64.0.1", "CGNAT"),
    A("metadata-alibaba", "100.100.100.200", "CGNAT, 100.64.0.0/10), a cloud metadata"),
    A("unspecified", "0.0.0.0", "unspecified"),
    A("this-network", "0.1.2.3", "unspecified"),
    A("multicast", "224.0.0.1", "multicast"),
    A("multicast-ssdp", "239.255.255.250", "multicast"),
    A("reserved", "240.0.0.1", "reserved (240.0.0.0/4)"),
    A("broadcast", "255.255.255.255", "broadcast"),
    A("ietf-protocol", "192.0.0.1", "IETF protocol assignments"),
    A(
        "metadata-oracle",
        "192.0.0.192",
        "IETF protocol assignments (192.0.0.0/24), a cloud metadata",
    ),
    A("benchmarking", "198.18.0.1", "benchmarking"),
    A("benchmarking-top", "198.19.255.255", "benchmarking"),
    A("test-net-1", "192.0.2.1", "documentation (TEST-NET-1)"),
    A("test-net-2", "198.51.100.1", "documentation (TEST-NET-2)"),
    A("test-net-3", "203.0.113.1", "documentation (TEST-NET-3)"),
    A("6to4-relay-anycast", "192.88.99.1", "6to4 relay"),
    # IPv6, allowed
    A("cloudflare-v6", "2606:4700::1111", None),
    A("google-v6", "2001:4860:4860::8888", None),
    # IPv6, forbidden
    A("v6-loopback", "::1", "loopback (::1)", dev=None),
    A("v6-unspecified", "::", "unspecified (::)"),
    A("v6-link-local", "fe80::1", "link-local (fe80::/10)"),
    A("v6-ula-fc", "fc00::1", "unique local"),
    A("v6-ula-fd", "fd12:3456::1", "unique local"),
    A("metadata-aws-v6", "fd00:ec2::254", "unique local (fc00::/7), a cloud metadata"),
    A("v6-site-local", "fec0::1", "site-local"),
    A("v6-multicast", "ff02::1", "multicast"),
    A("v6-discard", "100::1", "discard-only"),
    A("v6-documentation", "2001:db8::1", "documentation (2001:db8::/32)"),
    A("v6-documentation-3fff", "3fff::1", "documentation (3fff::/20)"),
    A("v6-benchmarking", "2001:2::1", "benchmarking"),
    A("v6-orchid", "2001:10::1", "ORCHID"),
    A("v6-ietf-protocol", "2001:1::1", "IETF protocol assignments"),
    A("v6-srv6", "5f00::1", "segment routing"),
    A("v6-unallocated", "4000::1", "global unicast space"),
    A("v6-reserved-::/8", "::1:0:0:1", "reserved by the IETF"),
    # IPv4-mapped ::ffff:0:0/96: judged by the IPv4 inside; its loopback is this machine's
    A(
        "mapped-loopback",
        "::ffff:127.0.0.1",
        "IPv4-mapped address embedding 127.0.0.1: loopback",
        dev=None,
    ),
    A("mapped-loopback-hex", "::ffff:7f01:203", "embedding 127.1.2.3: loopback", dev=None),
    A("mapped-private", "::ffff:10.0.0.1", "IPv4-mapped address embedding 10.0.0.1: private"),
    A("mapped-metadata", "::ffff:169.254.169.254", "cloud metadata"),
    A("mapped-unspecified", "::ffff:0.0.0.0", "unspecified"),
    A("mapped-public", "::ffff:8.8.8.8", None),
    # IPv4-compatible ::/96 (deprecated): refused anyway, naming the IPv4 if it is the reason
    A(
        "compatible-loopback",
        "::127.0.0.1",
        "IPv4-compatible address embedding 127.0.0.1: loopback",
    ),
    A("compatible-private", "::192.168.0.1", "embedding 192.168.0.1: private"),
    A("compatible-public", "::8.8.8.8", "deprecated IPv4-compatible"),
    # IPv4-translated ::ffff:0:0:0/96 (deprecated)
    A(
        "translated-loopback",
        "::ffff:0:127.0.0.1",
        "IPv4-translated address embedding 127.0.0.1: loopback",
    ),
    A("translated-public", "::ffff:0:8.8.8.8", "deprecated IPv4-translated"),
    # NAT64 64:ff9b::/96 (Python's is_global calls 64:ff9b::7f00:1 global)
    A("nat64-loopback", "64:ff9b::7f00:1", "NAT64 address embedding 127.0.0.1: loopback"),
    A("nat64-loopback-dotted", "64:ff9b::127.0.0.1", "NAT64 address embedding 127.0.0.1"),
    A("nat64-metadata", "64:ff9b::a9fe:a9fe", "embedding 169.254.169.254: link-local"),
    A("nat64-private", "64:ff9b::10.0.0.1", "embedding 10.0.0.1: private"),
    A("nat64-public", "64:ff9b::8.8.8.8", None),
    # local-use NAT64 64:ff9b:1::/48: not globally reachable
    A("nat64-local-loopback", "64:ff9b:1::7f00:1", "local-use NAT64 address embedding 127.0.0.1"),
    A("nat64-local-public", "64:ff9b:1::808:808", "local-use NAT64 (64:ff9b:1::/48)"),
    # 6to4 2002::/16: the IPv4 is bits 16..47
    A("6to4-loopback", "2002:7f00:1::1", "6to4 address embedding 127.0.0.1: loopback"),
    A("6to4-metadata", "2002:a9fe:a9fe::1", "embedding 169.254.169.254"),
    A("6to4-private", "2002:c0a8:101::", "embedding 192.168.1.1: private"),
    A("6to4-public", "2002:808:808::1", None),
    # Teredo 2001::/32: server IPv4 in bits 32..63, client IPv4 = last 32 bits XOR 0xffffffff
    A(
        "teredo-rfc4380-example",
        "2001:0:4136:e378:8000:63bf:3fff:fdd2",
        "Teredo address embedding client 192.0.2.45: documentation",
    ),
    A(
        "teredo-client-loopback",
        "2001:0:4136:e378:8000:63bf:80ff:fffe",
        "embedding client 127.0.0.1: loopback",
    ),
    A("teredo-client-metadata", "2001:0:4136:e378::5601:5601", "embedding client 169.254.169.254"),
    A("teredo-server-private", "2001:0:a00:1::f7f7:f7f7", "embedding server 10.0.0.1: private"),
    A("teredo-public", "2001:0:808:808::f7f7:f7f7", None),
]


@pytest.mark.parametrize("case", ADDRESS_CASES, ids=lambda c: c.name)
def test_address_in_production(case: AddressCase) -> None:
    reason = forbidden_reason(ipaddress.ip_address(case.address))
    if case.production is None:
        assert reason is None
    else:
        assert reason is not None
        assert case.production in reason


@pytest.mark.parametrize("case", ADDRESS_CASES, ids=lambda c: c.name)
def test_address_in_development(case: AddressCase) -> None:
    expected = case.in_development
    reason = forbidden_reason(ipaddress.ip_address(case.address), allow_loopback=True)
    if expected is None:
        assert reason is None
    else:
        assert reason is not None
        assert expected in reason


@pytest.mark.parametrize(
    "address", ["::127.0.0.1", "64:ff9b::7f00:1", "2002:7f00:1::1", "::ffff:0:127.0.0.1"]
)
def test_development_allows_only_this_machines_loopback(address: str) -> None:
    reason = forbidden_reason(ipaddress.ip_address(address), allow_loopback=True)
    assert reason is not None
    assert "not this machine's" in reason


def test_zone_index_is_refused() -> None:
    reason = forbidden_reason(ipaddress.ip_address("fe80::1%eth0"), allow_loopback=True)
    assert reason == "an IPv6 address with a zone index"


IPV4_CASES = [c for c in ADDRESS_CASES if ipaddress.ip_address(c.address).version == 4]


@pytest.mark.parametrize("case", IPV4_CASES, ids=lambda c: c.name)
@pytest.mark.parametrize("form", ["::ffff:{}", "64:ff9b::{}"])
def test_embedding_forms_get_the_verdict_of_their_ipv4(case: AddressCase, form: str) -> None:
    outer = ipaddress.ip_address(form.format(case.address))
    assert (forbidden_reason(outer) is None) == (case.production is None)


SPECIAL_NETWORKS = [
    "0.0.0.0/8", "10.0.0.0/8", "100.64.0.0/10", "127.0.0.0/8", "169.254.0.0/16", "172.16.0.0/12",
    "192.0.0.0/24", "192.0.2.0/24", "192.168.0.0/16", "198.18.0.0/15", "198.51.100.0/24",
    "203.0.113.0/24", "224.0.0.0/4", "240.0.0.0/4", "::/8", "100::/64", "2001::/23",
    "2001:db8::/32", "fc00::/7", "fe80::/10", "fec0::/10", "ff00::/8",
]  # fmt: skip
EMBEDDING_NETWORKS = [
    ipaddress.ip_network(n)
    for n in ("::ffff:0:0/96", "64:ff9b::/96", "64:ff9b:1::/48", "2002::/16", "2001::/32")
]


@given(
    st.one_of(
        st.ip_addresses(),
        st.sampled_from(SPECIAL_NETWORKS).flatmap(lambda n: st.ip_addresses(network=n)),
    )
)
def test_whatever_python_calls_non_global_is_refused(ip: Any) -> None:
    # The explicit table must cover at least what ipaddress knows (embedding forms with a public
    # IPv4, which ipaddress calls non-global for the wrong reason, are judged by the IPv4).
    if any(ip in net for net in EMBEDDING_NETWORKS if net.version == ip.version):
        return
    if not ip.is_global:
        assert forbidden_reason(ip) is not None


@given(st.ip_addresses(v=4))
def test_every_ipv4_gets_the_same_verdict_in_every_usable_embedding(v4: Any) -> None:
    value = int(v4)
    forms = [
        ipaddress.IPv6Address((0xFFFF << 32) | value),  # IPv4-mapped
        ipaddress.IPv6Address((0x64FF9B << 96) | value),  # NAT64
        ipaddress.IPv6Address((0x2002 << 112) | (value << 80)),  # 6to4
    ]
    allowed = forbidden_reason(v4) is None
    for outer in forms:
        assert (forbidden_reason(outer) is None) == allowed, outer


# --- host names, through a fake resolver -------------------------------------------------------


@dataclass
class FakeResolver:
    """Answers from a table; records every question; unknown names fail like NXDOMAIN."""

    answers: dict[str, list[str]]
    calls: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return self.answers[host]


DNS = {
    "bot.example.com": ["93.184.216.34"],
    "dual.example.com": ["8.8.8.8", "2606:4700::1111"],
    "dup.example.com": ["8.8.8.8", "8.8.8.8"],
    "mixed.example.com": ["8.8.8.8", "10.0.0.5"],
    "rebind.example.com": ["127.0.0.1"],
    "metadata.example.com": ["169.254.169.254"],
    "ula.example.com": ["fd00::1"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "nat64.example.com": ["64:ff9b::7f00:1"],
    "zone.example.com": ["fe80::1%eth0"],
    "garbage.example.com": ["not-an-address"],
    "empty.example.com": [],
    "many.example.com": [f"8.8.{i // 256}.{i % 256}" for i in range(40)],
}


FORBIDDEN = Rejection.FORBIDDEN_ADDRESS
UNRESOLVABLE = Rejection.UNRESOLVABLE
BAD_HOST = Rejection.BAD_HOST


@dataclass(frozen=True)
class HostCase:
    name: str
    url: str
    production: Rejection | None  # None: allowed
    dev: Rejection | str | None = SAME  # the same as in production unless given
    address: str | None = None  # the address named in the rejection
    asks: bool = True  # whether the resolver is asked

    @property
    def in_development(self) -> Rejection | None:
        return self.production if self.dev == SAME else Rejection(self.dev) if self.dev else None


H = HostCase


def local(name: str, url: str) -> HostCase:
    """A URL whose host means 127.0.0.1 without asking the resolver: allowed only in dev mode."""
    return HostCase(name, url, FORBIDDEN, dev=None, address="127.0.0.1", asks=False)


HOST_CASES = [
    H("public-name", "http://bot.example.com/", None),
    H("dual-stack-name", "https://dual.example.com:8443/gin", None),
    H("any-forbidden-address-rejects", "http://mixed.example.com/", FORBIDDEN, address="10.0.0.5"),
    H(
        "name-to-loopback",
        "http://rebind.example.com:9000/",
        FORBIDDEN,
        dev=None,
        address="127.0.0.1",
    ),
    H("name-to-metadata", "http://metadata.example.com/", FORBIDDEN, address="169.254.169.254"),
    H("name-to-ula", "http://ula.example.com/", FORBIDDEN, address="fd00::1"),
    H(
        "name-to-mapped-loopback",
        "http://mapped.example.com/",
        FORBIDDEN,
        dev=None,
        address="::ffff:7f00:1",
    ),
    H("name-to-nat64-loopback", "http://nat64.example.com/", FORBIDDEN, address="64:ff9b::7f00:1"),
    H("name-to-zoned-link-local", "http://zone.example.com/", FORBIDDEN, address="fe80::1%eth0"),
    H("resolver-garbage", "http://garbage.example.com/", UNRESOLVABLE),
    H("no-addresses", "http://empty.example.com/", UNRESOLVABLE),
    H("too-many-addresses", "http://many.example.com/", UNRESOLVABLE),
    H("nxdomain", "http://nxdomain.example.com/", UNRESOLVABLE),
    local("localhost", "http://localhost:8000/"),
    local("localhost-fqdn", "http://LocalHost.:8000/"),
    local("localhost-subdomain", "http://bot.localhost/"),
    local("literal-loopback", "http://127.0.0.1:8000/"),
    H("literal-v6-loopback", "http://[::1]:8000/", FORBIDDEN, dev=None, address="::1", asks=False),
    H(
        "literal-mapped-loopback",
        "http://[::ffff:127.0.0.1]/",
        FORBIDDEN,
        dev=None,
        address="::ffff:7f00:1",
        asks=False,
    ),
    H(
        "literal-nat64-loopback",
        "http://[64:ff9b::7f00:1]/",
        FORBIDDEN,
        address="64:ff9b::7f00:1",
        asks=False,
    ),
    H(
        "literal-metadata",
        "http://169.254.169.254/latest/",
        FORBIDDEN,
        address="169.254.169.254",
        asks=False,
    ),
    H(
        "literal-v6-metadata",
        "http://[fd00:ec2::254]/",
        FORBIDDEN,
        address="fd00:ec2::254",
        asks=False,
    ),
    H("literal-public", "http://8.8.8.8/", None, asks=False),
    H("literal-v6-public", "https://[2606:4700::1111]:8443/", None, asks=False),
    # Numeric spellings inet_aton and browsers read as IPv4: judged as the address they mean.
    local("decimal-integer", "http://2130706433/"),
    local("hex-parts", "http://0x7f.1/"),
    local("hex-integer", "http://0x7F000001/"),
    local("short-form", "http://127.1:8000/"),
    local("octal-parts", "http://0177.0.0.1/"),
    local("octal-integer", "http://017700000001/"),
    local("trailing-dot", "http://127.0.0.1./"),
    H("zero", "http://0/", FORBIDDEN, address="0.0.0.0", asks=False),
    H(
        "short-form-metadata",
        "http://169.254.43518/",
        FORBIDDEN,
        address="169.254.169.254",
        asks=False,
    ),
    H("short-form-public", "http://1.256/", None, asks=False),
    H("numeric-out-of-range", "http://256.0.0.1/", BAD_HOST, asks=False),
    H("numeric-five-parts", "http://1.2.3.4.5/", BAD_HOST, asks=False),
    H("numeric-too-big", "http://0x100000000/", BAD_HOST, asks=False),
    H("numeric-bad-octal", "http://08.0.0.1/", BAD_HOST, asks=False),
    H("name-ending-in-number", "http://bot.example.1/", BAD_HOST, asks=False),
]


@pytest.mark.parametrize("mode", ["production", "development"])
@pytest.mark.parametrize("case", HOST_CASES, ids=lambda c: c.name)
def test_host(case: HostCase, mode: str) -> None:
    resolver = FakeResolver(DNS)
    development = mode == "development"
    expected = case.in_development if development else case.production
    if expected is None:
        target = check_url(case.url, allow_loopback=development, resolver=resolver)
        assert target.addresses
    else:
        with pytest.raises(UrlRejectedError) as caught:
            check_url(case.url, allow_loopback=development, resolver=resolver)
        assert caught.value.reason is expected, str(caught.value)
        if case.address is not None:
            assert str(caught.value.address) == case.address
    assert bool(resolver.calls) == case.asks


def test_numeric_host_is_named_as_written_and_as_meant() -> None:
    with pytest.raises(
        UrlRejectedError, match=r"host '0x7f\.1' is 127\.0\.0\.1, which is loopback"
    ):
        check_url("http://0x7f.1/")


def test_forbidden_name_message_names_the_address_and_the_reason() -> None:
    with pytest.raises(UrlRejectedError) as caught:
        check_url("http://mixed.example.com/", resolver=FakeResolver(DNS))
    assert str(caught.value) == (
        "bot URL 'http://mixed.example.com/' rejected: host 'mixed.example.com' resolves to"
        " 10.0.0.5, which is private (10.0.0.0/8)"
    )


def test_resolver_is_asked_for_the_name_and_port() -> None:
    resolver = FakeResolver(DNS)
    check_url("https://Bot.Example.COM/", resolver=resolver)
    assert resolver.calls == [("bot.example.com", 443)]


def test_localhost_gets_both_loopback_addresses_ipv4_first() -> None:
    target = check_url("http://localhost:8000/", allow_loopback=True)
    assert target.addresses == (ipaddress.ip_address("127.0.0.1"), ipaddress.ip_address("::1"))


def test_duplicate_addresses_are_kept_once() -> None:
    target = check_url("http://dup.example.com/", resolver=FakeResolver(DNS))
    assert target.addresses == (ipaddress.ip_address("8.8.8.8"),)


def test_check_at_connect_time_catches_dns_rebinding() -> None:
    answers = {"bot.example.com": ["8.8.8.8"]}
    resolver = FakeResolver(answers)
    registered = check_url("http://bot.example.com/", resolver=resolver)
    assert registered.addresses == (ipaddress.ip_address("8.8.8.8"),)
    answers["bot.example.com"] = ["8.8.8.8", "169.254.169.254"]  # the owner changes DNS later
    with pytest.raises(UrlRejectedError) as caught:
        resolve_and_check("http://bot.example.com/", False, resolver)
    assert caught.value.reason is Rejection.FORBIDDEN_ADDRESS
    assert len(resolver.calls) == 2


def test_system_resolver_resolves_localhost_names_and_numeric_forms() -> None:
    # The default resolver is getaddrinfo; on this machine only loopback is reachable.
    assert "127.0.0.1" in urlguard.system_resolver("127.0.0.1", 80)
    assert "127.0.0.1" in urlguard.system_resolver("2130706433", 80)  # what the guard pre-empts


# --- URL syntax --------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("url", "reason"),
    [
        pytest.param("ftp://bot.example.com/", Rejection.BAD_SCHEME, id="ftp"),
        pytest.param("file:///etc/passwd", Rejection.BAD_SCHEME, id="file"),
        pytest.param("gopher://bot.example.com/", Rejection.BAD_SCHEME, id="gopher"),
        pytest.param("javascript:alert(1)", Rejection.BAD_SCHEME, id="javascript"),
        pytest.param("bot.example.com:8000", Rejection.BAD_SCHEME, id="no-scheme-host-port"),
        pytest.param("//bot.example.com/", Rejection.BAD_SCHEME, id="scheme-relative"),
        pytest.param("", Rejection.BAD_SCHEME, id="empty"),
        pytest.param("http://user@bot.example.com/", Rejection.USERINFO, id="user"),
        pytest.param("http://user:pw@bot.example.com/", Rejection.USERINFO, id="user-password"),
        pytest.param("http://bot.example.com@127.0.0.1/", Rejection.USERINFO, id="at-trick"),
        pytest.param("http://@bot.example.com/", Rejection.USERINFO, id="empty-user"),
        pytest.param("http://bot.example.com/?x=1", Rejection.QUERY_OR_FRAGMENT, id="query"),
        pytest.param("http://bot.example.com/?", Rejection.QUERY_OR_FRAGMENT, id="empty-query"),
        pytest.param("http://bot.example.com/#top", Rejection.QUERY_OR_FRAGMENT, id="fragment"),
        pytest.param("http://", Rejection.EMPTY_HOST, id="nothing"),
        pytest.param("http:///path", Rejection.EMPTY_HOST, id="no-host"),
        pytest.param("http://:8000/", Rejection.EMPTY_HOST, id="port-only"),
        pytest.param("http://[]/", Rejection.MALFORMED, id="empty-brackets"),
        pytest.param("http:/bot.example.com/", Rejection.MALFORMED, id="one-slash"),
        pytest.param("http:bot.example.com", Rejection.MALFORMED, id="no-slashes"),
        pytest.param("http://bot.example.com:0/", Rejection.BAD_PORT, id="port-0"),
        pytest.param("http://bot.example.com:65536/", Rejection.BAD_PORT, id="port-65536"),
        pytest.param("http://bot.example.com:99999999/", Rejection.BAD_PORT, id="port-huge"),
        pytest.param("http://bot.example.com:http/", Rejection.BAD_PORT, id="port-name"),
        pytest.param("http://bot.example.com:+80/", Rejection.BAD_PORT, id="port-plus"),
        pytest.param("http://bot.example.com:-1/", Rejection.BAD_PORT, id="port-negative"),
        pytest.param("http://bot.example.com:/", Rejection.BAD_PORT, id="port-empty"),
        pytest.param("http://bot.example.com:８０/", Rejection.MALFORMED, id="port-fullwidth"),
        pytest.param("http://[::1]x/", Rejection.BAD_HOST, id="junk-after-bracket"),
        pytest.param("http://::1/", Rejection.BAD_HOST, id="v6-without-brackets"),
        pytest.param("http://[fe80::1%25eth0]/", Rejection.BAD_HOST, id="zone-index"),
        pytest.param("http://bot_.example-.com/", Rejection.BAD_HOST, id="label-ends-in-hyphen"),
        pytest.param("http://bot..example.com/", Rejection.BAD_HOST, id="empty-label"),
        pytest.param("http://" + "a" * 64 + ".com/", Rejection.BAD_HOST, id="label-too-long"),
        pytest.param("http://bücher.example/", Rejection.MALFORMED, id="non-ascii-host"),
        pytest.param("http://bot.example.com/gïn", Rejection.MALFORMED, id="non-ascii-path"),
        pytest.param("http://bot.example.com/\u00a0", Rejection.MALFORMED, id="nbsp"),
        pytest.param("http://%31%32%37.0.0.1/", Rejection.BAD_HOST, id="percent-encoded"),
        pytest.param("http://bot.example.com\\@127.0.0.1/", Rejection.MALFORMED, id="backslash"),
        pytest.param("http://bot.example.com /", Rejection.MALFORMED, id="space"),
        pytest.param("http://bot.exa\tmple.com/", Rejection.MALFORMED, id="tab"),
        pytest.param("http://bot.example.com/\r\nX: y", Rejection.MALFORMED, id="crlf"),
        pytest.param(" http://bot.example.com/", Rejection.MALFORMED, id="leading-space"),
        pytest.param("http://[::1/", Rejection.MALFORMED, id="unclosed-bracket"),
        pytest.param("http://bot.example.com/" + "a" * 2100, Rejection.MALFORMED, id="too-long"),
    ],
)
def test_url_syntax(url: str, reason: Rejection) -> None:
    resolver = FakeResolver(DNS)
    with pytest.raises(UrlRejectedError) as caught:
        check_url(url, allow_loopback=True, resolver=resolver)
    assert caught.value.reason is reason, str(caught.value)
    assert isinstance(caught.value, ValueError)
    assert resolver.calls == []


def test_rejection_survives_pickling() -> None:
    with pytest.raises(UrlRejectedError) as caught:
        check_url("http://10.0.0.1/")
    copy = pickle.loads(pickle.dumps(caught.value))
    assert (copy.reason, copy.address, str(copy)) == (
        Rejection.FORBIDDEN_ADDRESS,
        ipaddress.ip_address("10.0.0.1"),
        str(caught.value),
    )


def test_non_string_url_is_malformed() -> None:
    with pytest.raises(UrlRejectedError) as caught:
        check_url(b"http://bot.example.com/")  # type: ignore[arg-type]
    assert caught.value.reason is Rejection.MALFORMED


@pytest.mark.parametrize(
    ("url", "host", "port", "path", "host_header"),
    [
        ("http://bot.example.com", "bot.example.com", 80, "", "bot.example.com"),
        ("HTTPS://Bot.Example.com/", "bot.example.com", 443, "", "bot.example.com"),
        ("http://bot.example.com:8080/gin/v1/", "bot.example.com", 8080, "/gin/v1", None),
        ("https://bot.example.com:443/x", "bot.example.com", 443, "/x", "bot.example.com"),
        ("http://[2606:4700:0::1111]:81/", "2606:4700::1111", 81, "", "[2606:4700::1111]:81"),
        ("http://8.8.8.8/", "8.8.8.8", 80, "", "8.8.8.8"),
    ],
)
def test_target_normal_form(
    url: str, host: str, port: int, path: str, host_header: str | None
) -> None:
    target = check_url(url, resolver=FakeResolver(DNS))
    assert (target.host, target.port, target.path) == (host, port, path)
    assert target.host_header == (host_header or f"{host}:{port}")
    scheme = url.partition(":")[0].lower()
    assert target.base_url == f"{scheme}://{target.host_header}{path}"
    assert target.path_for("/act") == path + "/act"


# --- connecting --------------------------------------------------------------------------------


@dataclass
class Seen:
    requests: list[tuple[str, str, str | None]] = field(default_factory=list)
    sni: list[str | None] = field(default_factory=list)


class _Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    seen: Seen

    def do_GET(self) -> None:
        self.seen.requests.append((self.command, self.path, self.headers.get("Host")))
        body = b'{"protocol": "gin-arena/1"}'
        self.send_response(200)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


@dataclass
class LocalServer:
    port: int
    seen: Seen
    cert: Path | None = None


def _serve(context: ssl.SSLContext | None = None) -> Iterator[tuple[LocalServer, Seen]]:
    seen = Seen()
    handler = type("Handler", (_Handler,), {"seen": seen})
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    server.daemon_threads = True
    if context is not None:
        server.socket = context.wrap_socket(server.socket, server_side=True)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield LocalServer(server.server_address[1], seen), seen
    finally:
        server.shutdown()
        server.server_close()
        thread.join(5)


@pytest.fixture
def http_server() -> Iterator[LocalServer]:
    for server, _ in _serve():
        yield server


@pytest.fixture(scope="module")
def certificate(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    if shutil.which("openssl") is None:
        pytest.skip("openssl is needed to make a test certificate")
    folder = tmp_path_factory.mktemp("tls")
    cert, key = folder / "cert.pem", folder / "key.pem"
    subprocess.run(
        ["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
         "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "2", "-subj", "/CN=bot.test",
         "-addext", "subjectAltName=DNS:bot.test"],
        check=True, capture_output=True, timeout=60,
    )  # fmt: skip
    return cert, key


@pytest.fixture
def https_server(certificate: tuple[Path, Path]) -> Iterator[LocalServer]:
    cert, key = certificate
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    seen_sni: list[str | None] = []

    def remember_sni(sock: Any, name: str | None, ctx: Any) -> None:
        seen_sni.append(name)

    context.sni_callback = remember_sni
    for server, seen in _serve(context):
        seen.sni = seen_sni
        server.cert = cert
        yield server


def _get(target: Target, path: str, *, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    """One GET over the sockets the arena's transport uses (open_connection, or
    open_tls_connection for https), with the Host header the transport sends."""
    if target.scheme == "https":
        sock: socket.socket = open_tls_connection(target, 5.0, context)
    else:
        sock = open_connection(target, 5.0)
    with sock:
        request = f"GET {path} HTTP/1.1\r\nHost: {target.host_header}\r\nConnection: close\r\n\r\n"
        sock.sendall(request.encode())
        data = b""
        while chunk := sock.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), body


def test_request_goes_to_the_checked_address_with_the_original_host_header(
    http_server: LocalServer,
) -> None:
    resolver = FakeResolver({"bot.test": ["127.0.0.1"]})
    target = check_url(
        f"http://bot.test:{http_server.port}/gin/", allow_loopback=True, resolver=resolver
    )
    status, body = _get(target, target.path_for("/"))
    assert (status, body) == (200, b'{"protocol": "gin-arena/1"}')
    assert http_server.seen.requests == [("GET", "/gin/", f"bot.test:{http_server.port}")]
    assert resolver.calls == [("bot.test", http_server.port)]


def test_connection_falls_back_to_the_next_checked_address(http_server: LocalServer) -> None:
    # Nothing listens on 127.0.0.2 (the server is bound to 127.0.0.1): refused, next address.
    resolver = FakeResolver({"bot.test": ["127.0.0.2", "127.0.0.1"]})
    target = check_url(
        f"http://bot.test:{http_server.port}/", allow_loopback=True, resolver=resolver
    )
    assert _get(target, "/")[0] == 200


def test_ipv4_mapped_address_is_connected_over_ipv4(http_server: LocalServer) -> None:
    resolver = FakeResolver({"bot.test": ["::ffff:127.0.0.1"]})
    target = check_url(
        f"http://bot.test:{http_server.port}/", allow_loopback=True, resolver=resolver
    )
    assert _get(target, "/")[0] == 200


def test_localhost_connects_in_development(http_server: LocalServer) -> None:
    target = check_url(f"http://localhost:{http_server.port}/", allow_loopback=True)
    assert _get(target, "/")[0] == 200
    assert http_server.seen.requests[0][2] == f"localhost:{http_server.port}"


def test_open_connection_sets_tcp_nodelay_and_the_timeout(http_server: LocalServer) -> None:
    target = check_url(f"http://127.0.0.1:{http_server.port}/", allow_loopback=True)
    with open_connection(target, 2.5) as sock:
        assert sock.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        assert sock.gettimeout() == 2.5
        assert sock.getpeername() == ("127.0.0.1", http_server.port)


def test_open_connection_raises_when_no_checked_address_accepts() -> None:
    with socket.socket() as placeholder:  # a port that nothing listens on
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    target = check_url(f"http://127.0.0.1:{port}/", allow_loopback=True)
    with pytest.raises(ConnectionRefusedError):
        open_connection(target, 2.0)


class _RefusingSocket:
    """Stands in for socket.socket where a real one would send packets off this machine."""

    attempts: ClassVar[list[tuple[int, Any]]] = []

    def __init__(self, family: int, kind: int) -> None:
        self.family = family

    def settimeout(self, timeout: float) -> None:
        pass

    def setsockopt(self, *args: Any) -> None:
        pass

    def connect(self, address: Any) -> None:
        self.attempts.append((self.family, address))
        raise ConnectionRefusedError("refused (test)")

    def close(self) -> None:
        pass


def test_unreachable_checked_addresses_are_never_resolved_again(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    resolver = FakeResolver({"bot.example.com": ["8.8.8.8", "2606:4700::1111"]})
    target = check_url("http://bot.example.com/gin", resolver=resolver)
    assert len(resolver.calls) == 1

    def no_resolution(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"resolved again: {args}")

    attempts: list[tuple[int, Any]] = []
    monkeypatch.setattr(_RefusingSocket, "attempts", attempts)
    monkeypatch.setattr(socket, "socket", _RefusingSocket)
    monkeypatch.setattr(socket, "getaddrinfo", no_resolution)
    monkeypatch.setattr(socket, "create_connection", no_resolution)
    for _ in range(2):  # a second connection (the transport's retry) uses them again
        with pytest.raises(ConnectionRefusedError):
            open_connection(target, 1.0)
    assert (
        attempts
        == [
            (socket.AF_INET, ("8.8.8.8", 80)),
            (socket.AF_INET6, ("2606:4700::1111", 80)),
        ]
        * 2
    )
    assert len(resolver.calls) == 1


def test_https_context_must_verify() -> None:
    target = Target("https", "bot.test", 443, "", (ipaddress.ip_address("8.8.8.8"),))
    lax = ssl.create_default_context()
    lax.check_hostname = False
    lax.verify_mode = ssl.CERT_NONE
    with pytest.raises(ValueError, match="verify"):
        open_tls_connection(target, 1.0, context=lax)


def test_https_verifies_the_certificate_for_the_original_host(https_server: LocalServer) -> None:
    assert https_server.cert is not None
    context = ssl.create_default_context(cafile=str(https_server.cert))
    resolver = FakeResolver({"bot.test": ["127.0.0.1"]})
    target = check_url(
        f"https://bot.test:{https_server.port}/gin", allow_loopback=True, resolver=resolver
    )
    status, _ = _get(target, target.path_for("/"), context=context)
    assert status == 200
    assert https_server.seen.requests == [("GET", "/gin/", f"bot.test:{https_server.port}")]
    assert https_server.seen.sni == ["bot.test"]


def test_https_refuses_a_certificate_for_another_host(https_server: LocalServer) -> None:
    assert https_server.cert is not None
    context = ssl.create_default_context(cafile=str(https_server.cert))
    resolver = FakeResolver({"other.test": ["127.0.0.1"]})
    target = check_url(
        f"https://other.test:{https_server.port}/", allow_loopback=True, resolver=resolver
    )
    with pytest.raises(ssl.SSLCertVerificationError, match=r"other\.test"):
        _get(target, "/", context=context)
    assert https_server.seen.requests == []


def test_https_refuses_an_unknown_certificate_authority(https_server: LocalServer) -> None:
    target = check_url(
        f"https://bot.test:{https_server.port}/",
        allow_loopback=True,
        resolver=FakeResolver({"bot.test": ["127.0.0.1"]}),
    )
    with pytest.raises(ssl.SSLCertVerificationError):
        _get(target, "/")


@pytest.mark.parametrize(
    ("url", "hinted"),
    [
        ("http://127.0.0.1:8000/", True),
        ("http://localhost:8000/", True),
        ("http://[::1]:8000/", True),
        ("http://2130706433/", True),
        ("http://[::ffff:127.0.0.1]/", True),
        ("http://10.0.0.1/", False),
        ("http://169.254.169.254/", False),
        ("http://[64:ff9b::7f00:1]/", False),
    ],
)
def test_a_url_refused_only_for_loopback_names_the_setting_that_allows_it(
    url: str, hinted: bool
) -> None:
    """One URL policy, one refusal: loopback is allowed by ARENA_ALLOW_LOOPBACK=1 alone, so the
    message says so; an address that setting would not allow never suggests it."""
    with pytest.raises(urlguard.UrlRejectedError) as refused:
        urlguard.check_url(url)
    assert ("ARENA_ALLOW_LOOPBACK=1" in str(refused.value)) is hinted
    if hinted:
        assert urlguard.check_url(url, allow_loopback=True).addresses
