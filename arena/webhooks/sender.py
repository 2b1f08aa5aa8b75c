"""One webhook attempt over HTTP: a signed ``POST`` of a delivery's body to an owner's URL.

The exchange is the bot transport's (:class:`arena.protocol.transport.Transport`): HTTP/1.1
with keep-alive (one connection per URL, reused by the deliveries of one run), one deadline on
the whole exchange (``ARENA_WEBHOOK_TIMEOUT_SECONDS``, connect included), redirects never
followed, the answer's body read and ignored (at most :data:`MAX_ANSWER` bytes). Every new
connection resolves the URL's host again and connects only to addresses the URL guard allows
(:func:`arena.protocol.urlguard.resolve_and_check`, the bots' production rules, loopback only
with ``ARENA_ALLOW_LOOPBACK``): a name that pointed somewhere public at registration and
somewhere private now is refused at connect time.

Each attempt is signed the Standard Webhooks way (:class:`arena.protocol.signing.Signer`, one
``v1,`` signature per secret while a rotation window is open) with the event's message id as
``webhook-id`` (the same on every attempt) and the attempt's own ``webhook-timestamp``.

:meth:`Sender.send` never raises over what the owner's server does: it returns an
:class:`Outcome` (a 2xx status is a delivery; anything else, a timeout, a refused connection or
an address the guard refuses is a failure with a one-line ``error``).
"""

from __future__ import annotations

import socket
from collections.abc import Callable
from dataclasses import dataclass
from urllib.parse import urlsplit

from arena.protocol.signing import Signer
from arena.protocol.transport import Transport, TransportError
from arena.protocol.urlguard import (
    Resolver,
    Target,
    UrlRejectedError,
    open_connection,
    open_tls_connection,
    resolve_and_check,
)

__all__ = ["MAX_ANSWER", "USER_AGENT", "Delivery", "Outcome", "Sender"]

#: The largest answer body read (bigger answers are failures: the arena reads and drops it).
MAX_ANSWER = 1024 * 1024
USER_AGENT = "gin-arena-webhooks"
_HEADERS = {"Content-Type": "application/json", "User-Agent": USER_AGENT}
#: Transport faults whose detail already says what happened (``HTTP 500: ...``).
_SELF_EXPLAINED = frozenset({"status", "redirect"})


@dataclass(frozen=True, slots=True)
class Delivery:
    """One attempt to make: which delivery, to where, signed with which secrets (the current
    one first), under which message id, with which body."""

    delivery_id: int
    endpoint_id: int
    url: str
    secrets: tuple[str, ...]
    message_id: str
    body: bytes


@dataclass(frozen=True, slots=True)
class Outcome:
    """What one attempt came to: the HTTP status (None: no answer), the latency (None: no
    request was sent) and, for a failure, why."""

    status_code: int | None
    latency_ms: float | None
    error: str | None = None

    @property
    def delivered(self) -> bool:
        """The owner's server answered 2xx."""
        return self.error is None

    @property
    def gone(self) -> bool:
        """The owner's server answered ``410 Gone``: it wants no more deliveries."""
        return self.status_code == 410


class Sender:
    """Sends deliveries, keeping one connection per URL open between them (not thread-safe:
    one per sending thread; :meth:`close` when done)."""

    def __init__(
        self, *, timeout_s: float, allow_loopback: bool, resolver: Resolver | None = None
    ) -> None:
        self._timeout = timeout_s
        self._allow_loopback = allow_loopback
        self._resolver = resolver
        self._transports: dict[str, tuple[Transport, str]] = {}

    def send(self, delivery: Delivery, *, timestamp: int) -> Outcome:
        """POST ``delivery`` signed with ``timestamp`` (unix seconds) as its attempt's time."""
        signer = Signer(*delivery.secrets)

        def sign() -> dict[str, str]:
            return signer.sign(delivery.body, msg_id=delivery.message_id, timestamp=timestamp)

        try:
            transport, path = self._transport(delivery.url)
            result = transport.request(
                "POST", path, delivery.body, _HEADERS, self._timeout, sign=sign
            )
        except UrlRejectedError as exc:
            return Outcome(None, None, f"refused at connect: {exc.detail}")
        except TransportError as exc:
            error = exc.detail if exc.kind in _SELF_EXPLAINED else f"{exc.kind}: {exc.detail}"
            return Outcome(exc.status, round(exc.latency_ms, 3), error)
        return Outcome(result.status, round(result.latency_ms, 3))

    def close(self) -> None:
        """Close every connection."""
        for transport, _path in self._transports.values():
            transport.close()
        self._transports.clear()

    def _check(self, url: str) -> Target:
        return resolve_and_check(url, allow_loopback=self._allow_loopback, resolver=self._resolver)

    def _transport(self, url: str) -> tuple[Transport, str]:
        """The connection to ``url`` (made on first use, after the URL guard allowed it) and
        the request path (the URL's own, exactly as registered)."""
        known = self._transports.get(url)
        if known is not None:
            return known
        first = [self._check(url)]
        transport = Transport(
            first[0].host_header,
            self._connector(url, first),
            max_body=MAX_ANSWER,
            connect_timeout_s=self._timeout,
            any_2xx=True,
        )
        entry = (transport, urlsplit(url).path or "/")
        self._transports[url] = entry
        return entry

    def _connector(self, url: str, first: list[Target]) -> Callable[[float], socket.socket]:
        """Opens each new connection: to the addresses just checked the first time, after a
        fresh resolution and check every later time (keep-alive connections get closed)."""

        def connect(timeout: float) -> socket.socket:
            target = first.pop() if first else self._check(url)
            if target.scheme == "https":
                return open_tls_connection(target, timeout)
            return open_connection(target, timeout)

        return connect
