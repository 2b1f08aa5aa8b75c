"""The connect-time guard: resolve a bot URL, judge every address, connect only to those.

* :func:`check_url` parses a bot URL (:mod:`.parsing`), resolves its host and rejects it if ANY
  address is forbidden (:mod:`.policy`). It runs at registration.
* :func:`resolve_and_check` does the same when the arena opens a connection for a match, so a
  name whose DNS later points somewhere private (DNS rebinding) is caught then too.
* :func:`open_connection` and :func:`open_tls_connection` connect only to the addresses that
  were checked, never resolving the name a second time; the ``Host`` header (the transport's),
  SNI and certificate check still use the original host name.

IP literals, numeric IPv4 spellings and ``localhost`` never reach the :data:`Resolver`.

>>> target = check_url("https://bot.example.com/gin/", resolver=lambda host, port: ["8.8.8.8"])
>>> target.host, target.port, target.path, target.addresses
('bot.example.com', 443, '/gin', (IPv4Address('8.8.8.8'),))
"""

from __future__ import annotations

import ipaddress
import socket
import ssl
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeAlias

from arena.protocol.urlguard.parsing import (
    DEFAULT_PORTS,
    IPAddress,
    Rejection,
    UrlRejectedError,
    parse_url,
)
from arena.protocol.urlguard.policy import check_addresses

#: ``resolver(host, port)`` returns the addresses (as text) that ``host`` resolves to.
Resolver: TypeAlias = Callable[[str, int], Iterable[str]]

_MAX_ADDRESSES = 32
_LOCALHOST_ADDRESSES: tuple[IPAddress, ...] = (
    ipaddress.IPv4Address("127.0.0.1"),
    ipaddress.IPv6Address("::1"),
)


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
    parsed = parse_url(url)
    host = parsed.host
    if parsed.literal is not None:
        addresses: tuple[IPAddress, ...] = (parsed.literal,)
    elif host.rstrip(".") == "localhost" or host.rstrip(".").endswith(".localhost"):
        addresses = _LOCALHOST_ADDRESSES  # RFC 6761: always loopback, whatever DNS says
    else:
        addresses = _resolve(url, host, parsed.port, resolver or system_resolver)
    check_addresses(parsed, addresses, allow_loopback=allow_loopback)
    return Target(parsed.scheme, host, parsed.port, parsed.path, addresses)


def resolve_and_check(
    url: str, allow_loopback: bool = False, resolver: Resolver | None = None
) -> Target:
    """Resolve and check a bot URL again when opening a connection for a match.

    The same checks as :func:`check_url`, with a fresh resolution: the returned
    :class:`Target`'s ``addresses`` are the only ones to connect to (pass the target to
    :func:`open_connection` or :func:`open_tls_connection`), so the name is not resolved a
    second time between the check and the connection.
    """
    return check_url(url, allow_loopback=allow_loopback, resolver=resolver)


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
