"""Bot URL parsing: the strict reading of a bot URL's text, and the reasons a URL is refused.

A bot URL is ``http`` or ``https``, with no user info, query or fragment, a valid host and port.
:func:`parse_url` reads one into a :class:`ParsedUrl` or raises :class:`UrlRejectedError`. It
judges no address (that is :mod:`.policy`) and resolves no name (that is :mod:`.connect`).

Hosts come in these forms: a name (labels of letters, digits, ``-`` and ``_``, at most one
trailing dot), an IPv6 literal in brackets (no zone index), or an IPv4 address in any numeric
spelling ``inet_aton`` and browsers accept (``2130706433``, ``0x7f.1``, ``0177.0.0.1``,
``127.1``), read as the address it means exactly as the WHATWG URL standard does.

>>> parse_url("http://0x7f.1:8000/gin/").literal
IPv4Address('127.0.0.1')
>>> parse_url("https://[::1]/").host
'::1'
"""

from __future__ import annotations

import enum
import ipaddress
import re
import string
import urllib.parse
from dataclasses import dataclass
from typing import TypeAlias

IPAddress: TypeAlias = ipaddress.IPv4Address | ipaddress.IPv6Address

MAX_URL_LENGTH = 2048
DEFAULT_PORTS = {"http": 80, "https": 443}


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
class ParsedUrl:
    """A bot URL read but not yet resolved or judged.

    ``url`` is the text that was read; ``written_host`` the host exactly as the URL spells it
    (IPv6 with its brackets), for messages; ``host`` its normal form (lower case; an IP literal
    in canonical form, IPv6 without brackets); ``literal`` the host's address when the host is
    an IP literal or a numeric IPv4 spelling; ``path`` the path prefix without a trailing slash.
    """

    url: str
    scheme: str
    written_host: str
    host: str
    literal: IPAddress | None
    port: int
    path: str


_FORBIDDEN_URL_CHARS = frozenset(string.whitespace) | {chr(c) for c in range(32)} | {"\x7f", "\\"}
_LABEL = re.compile(r"(?!-)[a-z0-9_-]{1,63}(?<!-)\Z")


def parse_url(url: str) -> ParsedUrl:
    """Read a bot URL strictly; raise :class:`UrlRejectedError` for anything but a plain one.

    >>> try:
    ...     parse_url("http://user@bot.example.com/")
    ... except UrlRejectedError as exc:
    ...     print(exc.reason.name)
    USERINFO
    """
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
    return ParsedUrl(url, scheme, host_part, host, literal, port, parts.path.rstrip("/"))


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


def redact_url(text: str, url: str, *hosts: str | None) -> str:
    """``text`` with ``url`` written ``<url>`` and its host (and any other ``hosts``, such as
    the address it resolved to) written ``<host>``: what the arena says of a bot in public
    (faults, forfeit reasons, health probes) never shows its URL, which is its owner's.

    >>> redact_url("GET http://bot.example.com:9/ failed: bot.example.com refused", "http://bot.example.com:9/")
    'GET <url> failed: <host> refused'
    """
    text = text.replace(url, "<url>")
    try:
        written = urllib.parse.urlsplit(url).hostname
    except ValueError:
        written = None
    for host in sorted({h for h in (written, *hosts) if h}, key=len, reverse=True):
        text = re.sub(rf"(?<![\w.-]){re.escape(host)}(?![\w-])", "<host>", text)
    return text
