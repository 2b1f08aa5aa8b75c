"""The SSRF table: URLs the arena must refuse before it connects anywhere, and the means to
prove it connected nowhere (issue 14, 2c).

:data:`SSRF_CASES` is one table, reused by every entry point that takes a URL (registration,
URL update, webhook endpoints) and by the connect-time checks (a match's player, a webhook
delivery): numeric IPv4 spellings (decimal, octal, hex, short forms), private, shared,
reserved and multicast ranges, cloud metadata addresses in every spelling, IPv6 loopback,
IPv4-mapped, IPv4-compatible, NAT64 (global and local-use), 6to4, Teredo, ULA and link-local,
names that resolve to private addresses (through :class:`FakeResolver`, whose answers the
table gives), user info, schemes other than http and https, bad ports, over-long URLs and
hosts, and characters that smuggle a second host. Every loopback URL points at the port of a
:class:`Sentinel`, a listening socket that must see no connection.

:class:`Tripwire` is an audit hook (``sys.addaudithook``) that, while armed, records every
``socket.connect`` and every ``getaddrinfo`` the process makes, and refuses (``OSError``) any
connect to an address that is not loopback: a refused URL must cause neither, and nothing
ever leaves the machine.

:data:`REDIRECT_TARGETS` are where a hostile bot redirects to: the arena never follows a
redirect, so the sentinel sees nothing there either.

:func:`record_figures` appends a test's counts to the JSON-lines file that
``ARENA_SECURITY_FIGURES`` names (``benchmarks/bench_security.py`` sets it), if set.
"""

from __future__ import annotations

import ipaddress
import json
import os
import select
import socket
import sys
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any

from arena.protocol.urlguard import Rejection

__all__ = [
    "DNS",
    "REDIRECT_TARGETS",
    "SSRF_CASES",
    "FakeResolver",
    "Sentinel",
    "SsrfCase",
    "Tripwire",
    "record_figures",
]

FORBIDDEN = Rejection.FORBIDDEN_ADDRESS
SCHEME = Rejection.BAD_SCHEME
USERINFO = Rejection.USERINFO
PORT = Rejection.BAD_PORT
HOST = Rejection.BAD_HOST
MALFORMED = Rejection.MALFORMED
UNRESOLVABLE = Rejection.UNRESOLVABLE
QUERY = Rejection.QUERY_OR_FRAGMENT


@dataclass(frozen=True)
class SsrfCase:
    """A URL (``{port}`` is the sentinel's port) and why the URL guard refuses it."""

    kind: str
    name: str
    url: str
    reason: Rejection

    def for_port(self, port: int) -> str:
        return self.url.replace("{port}", str(port))


#: What the table's host names resolve to (the fake resolver's answers).
DNS: dict[str, list[str]] = {
    "rebind.example.com": ["127.0.0.1"],
    "loopback6.example.com": ["::1"],
    "metadata.example.com": ["169.254.169.254"],
    "ecs-metadata.example.com": ["169.254.170.2"],
    "private.example.com": ["10.0.0.7"],
    "mixed.example.com": ["93.184.216.34", "192.168.1.20"],
    "mapped.example.com": ["::ffff:127.0.0.1"],
    "nat64.example.com": ["64:ff9b::a9fe:a9fe"],
    "ula.example.com": ["fd00::1"],
    "linklocal6.example.com": ["fe80::1"],
    "zero.example.com": ["0.0.0.0"],
    "cgnat.example.com": ["100.64.0.9"],
    "garbage.example.com": ["not-an-address"],
    "empty.example.com": [],
    "public.example.com": ["93.184.216.34"],
}

C = SsrfCase
SSRF_CASES: list[SsrfCase] = [
    # Loopback in numeric spellings inet_aton and browsers accept (all mean 127.0.0.1).
    C("decimal-ipv4", "loopback-decimal", "http://2130706433:{port}/", FORBIDDEN),
    C("octal-ipv4", "loopback-octal-dotted", "http://0177.0.0.1:{port}/", FORBIDDEN),
    C("octal-ipv4", "loopback-octal-integer", "http://017700000001:{port}/", FORBIDDEN),
    C("hex-ipv4", "loopback-hex-dotted", "http://0x7f.0x0.0x0.0x1:{port}/", FORBIDDEN),
    C("hex-ipv4", "loopback-hex-integer", "http://0x7F000001:{port}/", FORBIDDEN),
    C("hex-ipv4", "loopback-hex-short", "http://0x7f.1:{port}/", FORBIDDEN),
    C("short-ipv4", "loopback-short", "http://127.1:{port}/", FORBIDDEN),
    C("short-ipv4", "loopback-three-parts", "http://127.0.1:{port}/", FORBIDDEN),
    C("ipv4", "loopback", "http://127.0.0.1:{port}/", FORBIDDEN),
    C("ipv4", "loopback-trailing-dot", "http://127.0.0.1.:{port}/", FORBIDDEN),
    C("ipv4", "loopback-top-of-range", "http://127.255.255.254:{port}/", FORBIDDEN),
    # Private, shared, reserved, multicast, unspecified.
    C("ipv4", "private-10", "http://10.0.0.1:{port}/", FORBIDDEN),
    C("ipv4", "private-172.16", "http://172.16.5.4:{port}/", FORBIDDEN),
    C("ipv4", "private-192.168", "http://192.168.0.1:{port}/", FORBIDDEN),
    C("decimal-ipv4", "private-decimal", "http://167772161:{port}/", FORBIDDEN),
    C("octal-ipv4", "private-octal", "http://012.0.0.1:{port}/", FORBIDDEN),
    C("hex-ipv4", "private-hex", "http://0xc0.0xa8.0.1:{port}/", FORBIDDEN),
    C("ipv4", "cgnat", "http://100.64.0.1:{port}/", FORBIDDEN),
    C("ipv4", "unspecified", "http://0.0.0.0:{port}/", FORBIDDEN),
    C("decimal-ipv4", "unspecified-zero", "http://0:{port}/", FORBIDDEN),
    C("ipv4", "broadcast", "http://255.255.255.255:{port}/", FORBIDDEN),
    C("ipv4", "multicast", "http://224.0.0.1:{port}/", FORBIDDEN),
    C("ipv4", "reserved", "http://240.0.0.1:{port}/", FORBIDDEN),
    C("ipv4", "documentation", "http://192.0.2.1:{port}/", FORBIDDEN),
    # Cloud metadata services, in every spelling.
    C("metadata", "metadata", "http://169.254.169.254/latest/meta-data", FORBIDDEN),
    C("metadata", "metadata-decimal", "http://2852039166/", FORBIDDEN),
    C("metadata", "metadata-hex", "http://0xa9fea9fe/", FORBIDDEN),
    C("metadata", "metadata-octal", "http://0251.0376.0251.0376/", FORBIDDEN),
    C("metadata", "metadata-short", "http://169.254.43518/", FORBIDDEN),
    C("metadata", "metadata-aws-ecs", "http://169.254.170.2/v2/credentials", FORBIDDEN),
    C("metadata", "metadata-alibaba", "http://100.100.100.200/latest/", FORBIDDEN),
    C("metadata", "metadata-oracle", "http://192.0.0.192/opc/v2/", FORBIDDEN),
    C("metadata", "metadata-aws-ipv6", "http://[fd00:ec2::254]/latest/", FORBIDDEN),
    C("metadata", "metadata-mapped", "http://[::ffff:169.254.169.254]/", FORBIDDEN),
    C("metadata", "metadata-nat64", "http://[64:ff9b::a9fe:a9fe]/", FORBIDDEN),
    # IPv6 and the forms that embed an IPv4 address.
    C("ipv6", "v6-loopback", "http://[::1]:{port}/", FORBIDDEN),
    C("ipv6", "v6-loopback-long", "http://[0:0:0:0:0:0:0:1]:{port}/", FORBIDDEN),
    C("ipv6", "v6-unspecified", "http://[::]:{port}/", FORBIDDEN),
    C("ipv4-mapped", "mapped-loopback", "http://[::ffff:127.0.0.1]:{port}/", FORBIDDEN),
    C("ipv4-mapped", "mapped-loopback-hex", "http://[::ffff:7f00:1]:{port}/", FORBIDDEN),
    C("ipv4-mapped", "mapped-long-form", "http://[0:0:0:0:0:ffff:127.0.0.1]:{port}/", FORBIDDEN),
    C("ipv4-mapped", "mapped-private", "http://[::ffff:10.0.0.1]:{port}/", FORBIDDEN),
    C("ipv4-compatible", "compatible-loopback", "http://[::127.0.0.1]:{port}/", FORBIDDEN),
    C("nat64", "nat64-loopback", "http://[64:ff9b::7f00:1]:{port}/", FORBIDDEN),
    C("nat64", "nat64-private", "http://[64:ff9b::10.0.0.1]:{port}/", FORBIDDEN),
    C("nat64", "nat64-local-use", "http://[64:ff9b:1::a00:1]:{port}/", FORBIDDEN),
    C("6to4", "6to4-loopback", "http://[2002:7f00:1::1]:{port}/", FORBIDDEN),
    C(
        "teredo",
        "teredo-loopback-client",
        "http://[2001:0:4136:e378:8000:63bf:80ff:fffe]/",
        FORBIDDEN,
    ),
    C("ipv6", "v6-unique-local", "http://[fc00::1]:{port}/", FORBIDDEN),
    C("ipv6", "v6-link-local", "http://[fe80::1]:{port}/", FORBIDDEN),
    C("ipv6", "v6-zone-index", "http://[fe80::1%25lo]:{port}/", HOST),
    # Names that resolve to private addresses (the fake resolver answers as DNS says).
    C("localhost", "localhost", "http://localhost:{port}/", FORBIDDEN),
    C("localhost", "localhost-fqdn-upper", "http://LOCALHOST.:{port}/", FORBIDDEN),
    C("localhost", "localhost-subdomain", "http://bot.localhost:{port}/", FORBIDDEN),
    C("dns", "name-to-loopback", "http://rebind.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-v6-loopback", "http://loopback6.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-metadata", "http://metadata.example.com/", FORBIDDEN),
    C("dns", "name-to-ecs-metadata", "http://ecs-metadata.example.com/", FORBIDDEN),
    C("dns", "name-to-private", "http://private.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-public-and-private", "http://mixed.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-mapped-loopback", "http://mapped.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-nat64-metadata", "http://nat64.example.com/", FORBIDDEN),
    C("dns", "name-to-ula", "http://ula.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-v6-link-local", "http://linklocal6.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-unspecified", "http://zero.example.com:{port}/", FORBIDDEN),
    C("dns", "name-to-cgnat", "http://cgnat.example.com:{port}/", FORBIDDEN),
    C("dns", "resolver-gives-garbage", "http://garbage.example.com/", UNRESOLVABLE),
    C("dns", "name-with-no-address", "http://empty.example.com/", UNRESOLVABLE),
    C("dns", "nxdomain", "http://nxdomain.example.com/", UNRESOLVABLE),
    # User info (and the tricks that hide a host behind it).
    C("userinfo", "user", "http://user@127.0.0.1:{port}/", USERINFO),
    C("userinfo", "user-password", "http://user:pw@public.example.com/", USERINFO),
    C(
        "userinfo",
        "public-name-then-loopback",
        "http://public.example.com@127.0.0.1:{port}/",
        USERINFO,
    ),
    C("userinfo", "empty-user", "http://@127.0.0.1:{port}/", USERINFO),
    C("userinfo", "backslash-at", "http://public.example.com\\@127.0.0.1:{port}/", MALFORMED),
    C("userinfo", "percent-encoded-at", "http://public.example.com%40127.0.0.1:{port}/", HOST),
    # Other schemes.
    C("scheme", "file", "file:///etc/passwd", SCHEME),
    C("scheme", "ftp", "ftp://127.0.0.1:{port}/", SCHEME),
    C("scheme", "gopher", "gopher://127.0.0.1:{port}/_GET%20/", SCHEME),
    C("scheme", "dict", "dict://127.0.0.1:{port}/info", SCHEME),
    C("scheme", "websocket", "ws://127.0.0.1:{port}/", SCHEME),
    C("scheme", "javascript", "javascript:alert(1)", SCHEME),
    C("scheme", "data", "data:text/plain,hello", SCHEME),
    C("scheme", "scheme-relative", "//127.0.0.1:{port}/", SCHEME),
    C("scheme", "no-scheme", "127.0.0.1:{port}", SCHEME),
    # Bad ports.
    C("port", "port-0", "http://public.example.com:0/", PORT),
    C("port", "port-65536", "http://public.example.com:65536/", PORT),
    C("port", "port-huge", "http://public.example.com:99999999999/", PORT),
    C("port", "port-negative", "http://public.example.com:-80/", PORT),
    C("port", "port-name", "http://public.example.com:http/", PORT),
    C("port", "port-empty", "http://public.example.com:/", PORT),
    # Long URLs and hosts.
    C("long", "url-over-2048", "http://public.example.com/" + "a" * 2100, MALFORMED),
    C("long", "label-over-63", "http://" + "a" * 64 + ".example.com/", HOST),
    C("long", "host-over-253", "http://" + ("a" * 60 + ".") * 5 + "com/", HOST),
    # Smuggling: characters that a lax parser reads as a second host, a header or a query.
    C("smuggling", "crlf", "http://public.example.com/\r\nHost: 127.0.0.1", MALFORMED),
    C("smuggling", "space", "http://127.0.0.1 .public.example.com/", MALFORMED),
    C("smuggling", "query", "http://public.example.com/?next=http://127.0.0.1/", QUERY),
    C("smuggling", "fragment", "http://public.example.com/#@127.0.0.1", QUERY),
    C("smuggling", "non-ascii-dot", "http://127\u30020.0.1/", MALFORMED),
]

#: Where hostile bots (and webhook receivers) redirect to; ``{port}`` is the sentinel's.
REDIRECT_TARGETS = [
    "http://127.0.0.1:{port}/act",
    "http://localhost:{port}/",
    "http://169.254.169.254/latest/meta-data/",
    "http://[::ffff:127.0.0.1]:{port}/",
    "/act",  # relative: the same bot, another path
]


@dataclass
class FakeResolver:
    """Answers from a table (``answers``, changeable between calls); records every question;
    a name it does not know fails as NXDOMAIN does."""

    answers: dict[str, list[str]] = field(default_factory=lambda: dict(DNS))
    calls: list[tuple[str, int]] = field(default_factory=list)

    def __call__(self, host: str, port: int) -> list[str]:
        self.calls.append((host, port))
        if host not in self.answers:
            raise socket.gaierror(socket.EAI_NONAME, "Name or service not known")
        return list(self.answers[host])


class Sentinel:
    """A listening socket on 127.0.0.1 that nothing may connect to (it never accepts; the
    kernel completes a connection anyway, and :meth:`connections` counts what is waiting)."""

    def __init__(self) -> None:
        self._sock = socket.create_server(("127.0.0.1", 0), backlog=64)
        self._sock.setblocking(False)
        self._seen = 0

    @property
    def port(self) -> int:
        return int(self._sock.getsockname()[1])

    def connections(self) -> int:
        """Connections made to the sentinel so far (each accepted and closed once counted)."""
        while select.select([self._sock], [], [], 0.02)[0]:
            try:
                conn, _ = self._sock.accept()
            except BlockingIOError:
                break
            conn.close()
            self._seen += 1
        return self._seen

    def close(self) -> None:
        self._sock.close()


def _is_loopback(address: Any) -> bool:
    host = address[0] if isinstance(address, tuple) else address
    try:
        ip = ipaddress.ip_address(str(host).split("%")[0])
    except ValueError:
        return False
    mapped = ip.ipv4_mapped if isinstance(ip, ipaddress.IPv6Address) else None
    return (mapped or ip).is_loopback


class Tripwire:
    """The process's ``socket.connect`` and ``getaddrinfo`` calls while armed (see the module
    docstring); a connect to anything but loopback is refused with ``OSError``."""

    _installed: Tripwire | None = None

    def __init__(self) -> None:
        self.connects: list[Any] = []
        self.lookups: list[Any] = []
        self._armed = False
        self._lock = threading.Lock()

    @classmethod
    def get(cls) -> Tripwire:
        """The one tripwire of this process (an audit hook cannot be removed: it is added once
        and does nothing while disarmed)."""
        if cls._installed is None:
            cls._installed = Tripwire()
            sys.addaudithook(cls._installed._hook)
        return cls._installed

    def _hook(self, event: str, args: tuple[Any, ...]) -> None:
        if not self._armed:
            return
        if event == "socket.connect":
            address = args[1]
            with self._lock:
                self.connects.append(address)
            if not _is_loopback(address):
                raise OSError(f"tripwire: a connection to {address!r} (not loopback) was refused")
        elif event == "socket.getaddrinfo":
            with self._lock:
                self.lookups.append(args[0])

    @contextmanager
    def armed(self) -> Iterator[Tripwire]:
        with self._lock:
            self.connects, self.lookups = [], []
        self._armed = True
        try:
            yield self
        finally:
            self._armed = False


def record_figures(kind: str, figures: dict[str, Any]) -> None:
    """Append ``{kind: figures}`` to ``ARENA_SECURITY_FIGURES`` (JSON lines), if it is set."""
    out = os.environ.get("ARENA_SECURITY_FIGURES")
    if out:
        with open(out, "a", encoding="utf-8") as file:
            file.write(json.dumps({kind: figures}) + "\n")
