"""Bot URLs guarded against server-side request forgery: which URLs and addresses the arena calls.

Bots are other people's HTTP services, so a bot URL is a way to make the arena send requests
wherever its owner likes. This module owns the rules that stop that reaching anything but the
public internet, and the connect side that makes the check stick:

* :func:`check_url` parses a bot URL strictly (http/https only, no user info, query or fragment,
  a valid host and port), resolves the host and rejects it if ANY address is forbidden. It runs
  at registration.
* :func:`resolve_and_check` does the same when the arena opens a connection for a match, so a
  name whose DNS later points somewhere private (DNS rebinding) is caught then too.
* :func:`open_connection` and :func:`open_tls_connection` connect only to the addresses that
  were checked, never resolving the name a second time; the ``Host`` header (the transport's),
  SNI and certificate check still use the original host name.
* :func:`forbidden_reason` judges one address from an explicit table (not Python's
  ``is_global``, which for example calls the NAT64 form of 127.0.0.1, ``64:ff9b::7f00:1``,
  global). IPv6 forms that embed an IPv4 address (mapped, compatible, translated, NAT64, 6to4,
  Teredo) are judged by the IPv4 address inside.

Numeric host spellings that ``inet_aton`` and browsers accept (``2130706433``, ``0x7f.1``,
``127.1``) are read here as the IPv4 address they mean, exactly as the WHATWG URL standard does,
and judged as that address; they never reach the resolver.

In development mode (``allow_loopback=True``) loopback is allowed too, and nothing else:
127.0.0.0/8, ``::1`` and the IPv4-mapped ``::ffff:127.0.0.0/104``. This is the one URL policy:
the service passes ``ARENA_ALLOW_LOOPBACK`` at registration, at a URL change, at reactivation
and when a worker connects for a match (every executor), and a URL refused only for being
loopback says so and names that setting (:data:`LOOPBACK_HINT`). The author's tools on the
command line (``gin-arena match``, ``bot check``) and the demo target local bots by design and
always allow loopback (``--production`` applies the service's policy instead).

>>> target = check_url("https://bot.example.com/gin/", resolver=lambda host, port: ["8.8.8.8"])
>>> target.host, target.port, target.path, target.addresses
('bot.example.com', 443, '/gin', (IPv4Address('8.8.8.8'),))
>>> print(forbidden_reason(ipaddress.ip_address("64:ff9b::a9fe:a9fe")))
NAT64 address embedding 169.254.169.254: link-local (169.254.0.0/16), a cloud metadata endpoint
"""

from __future__ import annotations

import enum
import ipaddress
import re
import socket
import ssl
import string
import urllib.parse
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias

__all__ = [
    "LOOPBACK_HINT",
    "IPAddress",
    "Rejection",
    "Resolver",
    "Target",
    "UrlRejectedError",
    "check_url",
    "forbidden_reason",
    "open_connection",
    "open_tls_connection",
    "resolve_and_check",
    "system_resolver",
]

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address
#: ``resolver(host, port)`` returns the addresses (as text) that ``host`` resolves to.
Resolver: TypeAlias = Callable[[str, int], Iterable[str]]

#: Said whenever a URL is refused only because it is loopback: the one switch that allows it.
LOOPBACK_HINT = "set ARENA_ALLOW_LOOPBACK=1 to allow loopback bots in development"

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}
_MAX_ADDRESSES = 32


class Rejection(enum.StrEnum):
    """Why a bot URL was refused (the ``reason`` of a :class:`UrlRejectedError`)."""

    MALFORMED = "malformed URL"
    BAD_SCHEME = "scheme not allowed"
    USERINFO = "user info in URL"
    QUERY_OR_FRAGMENT = "query or fragment in URL"
    EMPTY_HOST = "empty host"
    BAD_HOST = "invalid host"
    BAD_PORT = "invalid port"
    UNRESOLVABLE = "host does not resolve"
    FORBIDDEN_ADDRESS = "forbidden address"


class UrlRejectedError(ValueError):
    """A bot URL that the arena will not call; ``reason`` says why, the message says more."""

    def __init__(
        self, url: str, reason: Rejection, detail: str, address: IPAddress | None = None
    ) -> None:
        shown = url if len(url) <= 120 else url[:117] + "..."
        super().__init__(f"bot URL {shown!r} rejected: {detail}")
        self.url = url
        self.reason = reason
        self.detail = detail
        self.address = address

    def __reduce__(self) -> tuple[type[UrlRejectedError], tuple[object, ...]]:
        # Survives pickling (e.g. a task queue's result backend) with its fields intact.
        return type(self), (self.url, self.reason, self.detail, self.address)


@dataclass(frozen=True, slots=True)
class Target:
    """A checked bot URL: where to connect (``addresses``) and what to say (``host``, ``path``).

    ``host`` is the host as written (lower case; an IP literal in canonical form, IPv6 without
    brackets); ``path`` is the path prefix without a trailing slash (``""`` for the root);
    ``addresses`` are the checked addresses, in the resolver's order.
    """

    scheme: str
    host: str
    port: int
    path: str
    addresses: tuple[IPAddress, ...]

    @property
    def host_header(self) -> str:
        """The ``Host`` header value: brackets around IPv6, the port unless it is the default."""
        host = f"[{self.host}]" if ":" in self.host else self.host
        return host if self.port == DEFAULT_PORTS[self.scheme] else f"{host}:{self.port}"

    @property
    def base_url(self) -> str:
        """The URL in normal form (``scheme://host[:port]/prefix``)."""
        return f"{self.scheme}://{self.host_header}{self.path}"

    def path_for(self, endpoint: str) -> str:
        """The request path for an endpoint such as ``"/act"`` under this bot's path prefix.

        >>> Target("http", "bot.test", 80, "/gin", ()).path_for("/act")
        '/gin/act'
        """
        return self.path + endpoint


# ---------------------------------------------------------------------------------------------
# Addresses

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


# ---------------------------------------------------------------------------------------------
# URLs

_FORBIDDEN_URL_CHARS = frozenset(string.whitespace) | {chr(c) for c in range(32)} | {"\x7f", "\\"}
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)\Z")
_LOCALHOST_ADDRESSES: tuple[IPAddress, ...] = (
    ipaddress.IPv4Address("127.0.0.1"),
    ipaddress.IPv6Address("::1"),
)


def system_resolver(host: str, port: int) -> list[str]:
    """The addresses ``socket.getaddrinfo`` gives for a TCP connection to ``host:port``."""
    infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, proto=socket.IPPROTO_TCP)
    return [str(info[4][0]) for info in infos]


def check_url(
    url: str, *, allow_loopback: bool = False, resolver: Resolver | None = None
) -> Target:
    """Parse, resolve and check a bot URL; raise :class:`UrlRejectedError` if it is refused.

    Every address the host resolves to must be allowed (one forbidden address rejects the
    URL: a resolver may hand out any of them later). ``resolver`` defaults to
    :func:`system_resolver`; IP literals, numeric IPv4 spellings and ``localhost`` (with its
    subdomains) never reach it.

    >>> try:
    ...     check_url("http://0x7f.1:8000/")
    ... except UrlRejectedError as exc:
    ...     print(exc.reason.name, exc.address)
    FORBIDDEN_ADDRESS 127.0.0.1
    """
    scheme, written, host, literal, port, path = _parse(url)
    if literal is not None:
        addresses: tuple[IPAddress, ...] = (literal,)
    elif host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost"):
        addresses = _LOCALHOST_ADDRESSES  # RFC 6761: always loopback, whatever DNS says
    else:
        addresses = _resolve(url, host, port, resolver or system_resolver)
    for address in addresses:
        reason = forbidden_reason(address, allow_loopback=allow_loopback)
        if reason is not None:
            shown = "is" if literal is not None else "resolves to"
            if not allow_loopback and forbidden_reason(address, allow_loopback=True) is None:
                reason += f" ({LOOPBACK_HINT})"
            raise UrlRejectedError(
                url,
                Rejection.FORBIDDEN_ADDRESS,
                f"host {written!r} {shown} {address}, which is {reason}",
                address,
            )
    return Target(scheme, host, port, path, addresses)


def resolve_and_check(
    url: str, allow_loopback: bool = False, resolver: Resolver | None = None
) -> Target:
    """Resolve and check a bot URL again when opening a connection for a match.

    The same checks as :func:`check_url`, with a fresh resolution: the returned
    :class:`Target`'s ``addresses`` are the only ones to connect to (pass the target to
    :func:`open_connection` or a Guarded connection), so the name is not resolved a second
    time between the check and the connection.
    """
    return check_url(url, allow_loopback=allow_loopback, resolver=resolver)


def _parse(url: str) -> tuple[str, str, str, IPAddress | None, int, str]:
    """(scheme, host as written, host in normal form, the host's address if it is an IP literal,
    port, path prefix)."""
    if not isinstance(url, str):
        raise UrlRejectedError(repr(url), Rejection.MALFORMED, "a URL must be a str")
    if len(url) > MAX_URL_LENGTH:
        raise UrlRejectedError(url, Rejection.MALFORMED, f"longer than {MAX_URL_LENGTH} characters")
    if not url.isascii():
        raise UrlRejectedError(
            url,
            Rejection.MALFORMED,
            "non-ASCII characters (percent-encode the path; write the host in punycode, xn--)",
        )
    if any(c in _FORBIDDEN_URL_CHARS for c in url):
        raise UrlRejectedError(
            url, Rejection.MALFORMED, "control characters, spaces or backslashes are not allowed"
        )
    try:
        parts = urllib.parse.urlsplit(url)
    except ValueError as exc:
        raise UrlRejectedError(url, Rejection.MALFORMED, str(exc)) from None
    scheme = parts.scheme
    if scheme not in DEFAULT_PORTS:
        shown = f"scheme {scheme!r}" if scheme else "no scheme"
        raise UrlRejectedError(url, Rejection.BAD_SCHEME, f"{shown}; only http and https")
    netloc = parts.netloc
    if "@" in netloc:
        raise UrlRejectedError(url, Rejection.USERINFO, "user info ('user@') is not allowed")
    if "?" in url or "#" in url:
        raise UrlRejectedError(
            url, Rejection.QUERY_OR_FRAGMENT, "a bot URL takes no query or fragment"
        )
    if not url[len(scheme) :].startswith("://"):
        raise UrlRejectedError(url, Rejection.MALFORMED, f"expected {scheme}://host")
    host_part, port_text = _split_netloc(url, netloc)
    port = _parse_port(url, port_text, DEFAULT_PORTS[scheme])
    host, literal = _parse_host(url, host_part)
    return scheme, host_part, host, literal, port, parts.path.rstrip("/")


def _split_netloc(url: str, netloc: str) -> tuple[str, str | None]:
    if netloc.startswith("["):
        end = netloc.find("]")
        if end < 0:
            raise UrlRejectedError(url, Rejection.BAD_HOST, "unclosed '[' in the host")
        host, rest = netloc[: end + 1], netloc[end + 1 :]
        if rest and not rest.startswith(":"):
            raise UrlRejectedError(url, Rejection.BAD_HOST, f"unexpected {rest!r} after ']'")
        return host, rest[1:] if rest else None
    host, colon, port = netloc.rpartition(":")
    if not colon:
        return netloc, None
    if ":" in host:
        raise UrlRejectedError(
            url, Rejection.BAD_HOST, "an IPv6 address in a URL must be in brackets"
        )
    return host, port


def _parse_port(url: str, text: str | None, default: int) -> int:
    if text is None:
        return default
    if not (text.isascii() and text.isdigit()) or len(text) > 5 or not 0 < int(text) <= 65535:
        raise UrlRejectedError(url, Rejection.BAD_PORT, f"port {text!r} is not 1 to 65535")
    return int(text)


def _parse_host(url: str, text: str) -> tuple[str, IPAddress | None]:
    if not text or text == "[]":
        raise UrlRejectedError(url, Rejection.EMPTY_HOST, "the URL has no host")
    if text.startswith("["):
        inner = text[1:-1]
        if "%" in inner:
            raise UrlRejectedError(url, Rejection.BAD_HOST, "IPv6 zone indexes are not allowed")
        try:
            v6 = ipaddress.IPv6Address(inner)
        except ValueError:
            raise UrlRejectedError(
                url, Rejection.BAD_HOST, f"{inner!r} is not an IPv6 address"
            ) from None
        return v6.compressed, v6
    host = text.lower()
    labels = host.split(".")
    if len(labels) > 1 and labels[-1] == "":
        labels.pop()  # one trailing dot: a fully qualified name
    if _is_number(labels[-1]):
        v4 = _parse_ipv4_number_form(labels)
        if v4 is None:
            raise UrlRejectedError(
                url, Rejection.BAD_HOST, f"{text!r} looks numeric but is not an IPv4 address"
            )
        return str(v4), v4
    if len(host) > 253 or not all(_LABEL.match(label) for label in labels):
        raise UrlRejectedError(url, Rejection.BAD_HOST, f"{text!r} is not a valid host name")
    return host, None


def _is_number(label: str) -> bool:
    """WHATWG's 'ends in a number' test for the last label of a host."""
    if label.startswith("0x"):
        return all(c in string.hexdigits for c in label[2:])
    return label != "" and all(c in string.digits for c in label)


_RADIX_DIGITS = {
    8: frozenset(string.octdigits),
    10: frozenset(string.digits),
    16: frozenset(string.hexdigits),
}


def _parse_ipv4_number_form(labels: list[str]) -> ipaddress.IPv4Address | None:
    """The WHATWG URL standard's IPv4 parser (what ``inet_aton`` accepts too): 1 to 4 parts,
    each decimal, octal (leading 0) or hex (0x), the last one filling the remaining bytes."""
    if len(labels) > 4:
        return None
    numbers: list[int] = []
    for label in labels:
        if label.startswith("0x"):
            digits, base = label[2:], 16
        elif len(label) > 1 and label.startswith("0"):
            digits, base = label[1:], 8
        else:
            digits, base = label, 10
        if (base == 10 and not digits) or len(digits) > 32:
            return None
        if not set(digits) <= _RADIX_DIGITS[base]:
            return None
        numbers.append(int(digits, base) if digits else 0)
    *head, last = numbers
    if any(n > 255 for n in head) or last >= 256 ** (5 - len(numbers)):
        return None
    value = last
    for i, n in enumerate(head):
        value += n << (8 * (3 - i))
    return ipaddress.IPv4Address(value)


def _resolve(url: str, host: str, port: int, resolver: Resolver) -> tuple[IPAddress, ...]:
    try:
        answers = list(resolver(host, port))
    except (OSError, UnicodeError) as exc:
        raise UrlRejectedError(
            url, Rejection.UNRESOLVABLE, f"host {host!r} does not resolve: {exc}"
        ) from None
    addresses: list[IPAddress] = []
    for answer in answers:
        try:
            address = ipaddress.ip_address(answer)
        except ValueError:
            raise UrlRejectedError(
                url, Rejection.UNRESOLVABLE, f"resolver gave {answer!r} for {host!r}"
            ) from None
        if address not in addresses:
            addresses.append(address)
    if not addresses:
        raise UrlRejectedError(url, Rejection.UNRESOLVABLE, f"host {host!r} has no address")
    if len(addresses) > _MAX_ADDRESSES:
        raise UrlRejectedError(
            url, Rejection.UNRESOLVABLE, f"host {host!r} has over {_MAX_ADDRESSES} addresses"
        )
    return tuple(addresses)


# ---------------------------------------------------------------------------------------------
# Connecting


def open_connection(target: Target, timeout: float) -> socket.socket:
    """A TCP socket connected to one of ``target.addresses``, tried in order, TCP_NODELAY set.

    Never resolves the host again. ``timeout`` bounds each attempt and is left on the socket.
    Raises the last ``OSError`` if no address accepts.
    """
    if not target.addresses:
        raise OSError(f"no checked address to connect to for {target.host!r}")
    last_error: OSError | None = None
    for checked in target.addresses:
        # An IPv4-mapped address is connected to over IPv4: no dual-stack socket needed.
        mapped = checked.ipv4_mapped if isinstance(checked, ipaddress.IPv6Address) else None
        address = mapped or checked
        family = socket.AF_INET if address.version == 4 else socket.AF_INET6
        sock = socket.socket(family, socket.SOCK_STREAM)
        try:
            sock.settimeout(timeout)
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            sock.connect((str(address), target.port))
        except OSError as exc:
            sock.close()
            last_error = exc
            continue
        return sock
    assert last_error is not None
    raise last_error


def open_tls_connection(
    target: Target, timeout: float, context: ssl.SSLContext | None = None
) -> ssl.SSLSocket:
    """:func:`open_connection` wrapped in TLS, verified against ``target.host`` (sent as SNI).

    ``context`` defaults to ``ssl.create_default_context()``; one that does not check the
    host name and require a certificate is refused.
    """
    context = _checked_context(context)
    sock = open_connection(target, timeout)
    try:
        return context.wrap_socket(sock, server_hostname=target.host)
    except BaseException:
        sock.close()
        raise


def _checked_context(context: ssl.SSLContext | None) -> ssl.SSLContext:
    if context is None:
        return ssl.create_default_context()
    if not context.check_hostname or context.verify_mode != ssl.CERT_REQUIRED:
        raise ValueError("the TLS context must verify the certificate and the host name")
    return context
