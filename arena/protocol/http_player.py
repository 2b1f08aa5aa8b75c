"""The arena's player for a bot behind a URL: observation in, action (or fault) out.

It never raises over the bot's behaviour. At the start of a match it resolves and checks the
URL (the SSRF guard), asks ``GET /`` for the protocol version and sends ``POST /start``; any
failure there is a fault that forfeits the match. Each turn is one signed ``POST /act`` within
the rule set's deadline; whatever goes wrong comes back as a :class:`~arena.playing.players.Fault`.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from typing import Any

import msgspec

from arena.playing.players import Exchange, Fault, FaultKind, MatchContext, Turn
from arena.protocol.signing import Signer, new_message_id
from arena.protocol.transport import MAX_BODY, HttpResult, Transport, TransportError
from arena.protocol.urlguard import (
    Resolver,
    Target,
    UrlRejectedError,
    open_connection,
    open_tls_connection,
    redact_url,
    resolve_and_check,
)
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    BotInfo,
    EndRequest,
    HistoryCache,
    StartRequest,
    WireError,
    act_request,
    decode_action,
    decode_info,
)
from arena.rules.actions import Action

__all__ = ["HttpPlayer", "record_for_seat"]

_encoder = msgspec.json.Encoder()
_JSON = {"Content-Type": "application/json"}


class HttpPlayer:
    """A remote bot. One instance plays one seat of one match (it is not shared by threads)."""

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        secret: str | Sequence[str] | None = None,
        allow_loopback: bool = False,
        resolver: Resolver | None = None,
        max_body: int = MAX_BODY,
        connect_timeout_s: float = 2.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.name = name or url
        # Several secrets (the current one first) while a rotation window is open: every
        # request then carries one v1 signature per secret.
        keys = [k for k in ([secret] if isinstance(secret, str) else secret or ()) if k]
        self._signer = Signer(*keys) if keys else None
        self._allow_loopback = allow_loopback
        self._resolver = resolver
        self._max_body = max_body
        self._connect_timeout = connect_timeout_s
        self._wall = wall_clock
        self._transport: Transport | None = None
        self._rules: dict[str, Any] = {}
        self._deadline_s = 1.0
        self._match_id = ""
        self._seat = 0
        self._seq = 0
        self.info: BotInfo | None = None
        self._history = HistoryCache()
        self._exchange: Exchange | None = None

    # -- plumbing ---------------------------------------------------------------------------

    def _signing(self, body: bytes) -> Callable[[], dict[str, str]] | None:
        """The signature headers for each HTTP attempt at sending ``body``, made afresh.

        Every attempt gets its own ``webhook-id`` (and timestamp), the transport's retry on a
        new connection included: bots may refuse an id they have seen (replays), and a retry
        is answered like any request (``request_id`` in the body says it is the same turn).
        """
        signer = self._signer
        if signer is None:
            return None
        return lambda: signer.sign(body, msg_id=new_message_id(), timestamp=int(self._wall()))

    def _open(self, target: Target) -> Transport:
        def connect(timeout: float) -> socket.socket:
            if target.scheme == "https":
                return open_tls_connection(target, timeout)
            return open_connection(target, timeout)

        return Transport(
            target.host_header,
            connect,
            base_path=target.path,
            max_body=self._max_body,
            connect_timeout_s=self._connect_timeout,
        )

    def _post(self, path: str, body: bytes) -> HttpResult:
        assert self._transport is not None
        return self._transport.request(
            "POST", path, body, _JSON, self._deadline_s, sign=self._signing(body)
        )

    # -- the Player interface ---------------------------------------------------------------

    def start(self, context: MatchContext) -> Fault | None:
        """Check the URL, the protocol version, and announce the match."""
        self._rules = context.rules.to_dict()
        self._deadline_s = context.rules.deadline_ms / 1000.0
        self._match_id = context.match_id
        self._seat = context.seat
        try:
            target = resolve_and_check(
                self.url, allow_loopback=self._allow_loopback, resolver=self._resolver
            )
        except UrlRejectedError as exc:
            # A fault is public (match pages, the other owner's events), a bot's URL its owner's.
            return Fault(FaultKind.UNREACHABLE, f"URL refused: {redact_url(exc.detail, exc.url)}")
        except OSError as exc:
            return Fault(FaultKind.UNREACHABLE, f"cannot resolve the bot's host: {exc}")
        self._transport = self._open(target)
        fault = self._handshake(context)
        if fault is not None:
            # Refused at the start: the bot hears nothing more of this match (not even /end).
            self._transport.close()
            self._transport = None
        return fault

    def _handshake(self, context: MatchContext) -> Fault | None:
        assert self._transport is not None
        try:
            info_body = self._transport.request(
                "GET", "/", None, {"Accept": "application/json"}, self._deadline_s
            ).body
        except TransportError as exc:
            return Fault(FaultKind.UNREACHABLE, f"GET / failed ({exc.kind}): {exc.detail}")
        try:
            self.info = decode_info(info_body)
        except WireError as exc:
            return Fault(FaultKind.UNREACHABLE, f"GET / did not answer with bot info: {exc}")
        if self.info.protocol != PROTOCOL_VERSION:
            return Fault(
                FaultKind.UNREACHABLE,
                f"the bot speaks {self.info.protocol!r}; this arena speaks {PROTOCOL_VERSION!r}",
            )
        body = _encoder.encode(
            StartRequest(PROTOCOL_VERSION, context.match_id, context.opponent, self._rules)
        )
        try:
            self._post("/start", body)
        except TransportError as exc:
            if exc.kind == "status" and exc.detail.startswith(("HTTP 401", "HTTP 403")):
                hint = (
                    "it must verify with the secret the arena holds for it"
                    if self._signer is not None
                    else "it wants signed requests, and the arena holds no secret for it"
                )
                signed = "signed" if self._signer is not None else "unsigned"
                return Fault(
                    FaultKind.SIGNATURE_REFUSED,
                    f"the bot refused the arena's {signed} POST /start ({exc.detail}): {hint}",
                )
            return Fault(FaultKind.UNREACHABLE, f"POST /start failed ({exc.kind}): {exc.detail}")
        return None

    def act(self, turn: Turn) -> Action | Fault:
        """One signed ``POST /act``; an action, or the fault that stopped it (never raises
        over the answer: whatever its bytes, they decode to an action or become a fault).

        :meth:`take_exchange` then gives the answer's raw bytes and the latency.
        """
        if self._transport is None:
            self._exchange = None
            return Fault(FaultKind.UNREACHABLE, "the match was not started")
        return self.send_act(_encoder.encode(act_request(turn, self._rules, self._history)))

    def send_act(self, body: bytes) -> Action | Fault:
        """:meth:`act` for a request body made elsewhere, sent as it is (``gin-arena rerun
        --step`` sends a stored request this way): signed, within the deadline, never raising."""
        self._exchange = None
        if self._transport is None:
            return Fault(FaultKind.UNREACHABLE, "the match was not started")
        try:
            result = self._post("/act", body)
        except TransportError as exc:
            self._exchange = Exchange(None, exc.latency_ms)
            return Fault(FaultKind(exc.kind), exc.detail)
        self._exchange = Exchange(result.body, result.latency_ms)
        try:
            return decode_action(result.body)
        except WireError as exc:
            return Fault(FaultKind(exc.kind), str(exc))
        except Exception as exc:  # no answer may escape as an exception, whatever its bytes
            return Fault(
                FaultKind.SCHEMA, f"the answer could not be read: {type(exc).__name__}: {exc}"
            )

    def take_exchange(self) -> Exchange | None:
        """The raw answer and latency of the last :meth:`act`, once (then None)."""
        exchange, self._exchange = self._exchange, None
        return exchange

    def end(self, summary: dict[str, object]) -> None:
        """Send the full record (best effort) and close the connection."""
        if self._transport is None:
            return
        seat = "ab"[self._seat]
        record = record_for_seat(summary, self._seat)
        body = _encoder.encode(EndRequest(PROTOCOL_VERSION, self._match_id, seat, record))  # type: ignore[arg-type]
        try:
            self._post("/end", body)
        except TransportError:
            pass
        finally:
            self._transport.close()
            self._transport = None

    def close(self) -> None:
        """Close the connection without ``/end`` (a caller that stops before the match ends)."""
        if self._transport is not None:
            self._transport.close()
            self._transport = None


def record_for_seat(summary: dict[str, object], seat: int) -> dict[str, object]:
    """The match record as sent to one seat's bot: its own faults only, no seed, no decks.

    The other seat's faults are dropped from ``faults`` and their markers (the fourth item of
    an action entry) from the deal logs; the fallbacks stay, as ordinary actions. The raw
    answers (an entry's fifth item) are dropped too: the bot knows what it sent. The seed and
    each deal's deck order are withheld: a duplicate match replays the same deals, and a bot
    that saw them could play the second match with foreknowledge.
    """
    other = 1 - seat
    record = dict(summary)
    record.pop("seed", None)
    faults = record.get("faults")
    if isinstance(faults, list):
        mine = "ab"[seat]
        record["faults"] = [f for f in faults if isinstance(f, dict) and f.get("seat") == mine]

    def entry(item: object) -> object:
        if not isinstance(item, list) or len(item) <= 3:
            return item
        mine = item[:1] != [other] and item[3] is not None
        return item[:4] if mine else item[:3]

    def strip(hand: object) -> object:
        if not isinstance(hand, dict) or not isinstance(hand.get("actions"), list):
            return hand
        actions = [entry(a) for a in hand["actions"]]
        return {k: v for k, v in hand.items() if k != "deck"} | {"actions": actions}

    def strip_all(part: object) -> object:
        if not isinstance(part, dict) or not isinstance(part.get("hands"), list):
            return part
        return {**part, "hands": [strip(h) for h in part["hands"]]}

    games = record.get("games")
    if isinstance(games, list):
        record["games"] = [strip_all(g) for g in games]
    if "unfinished_game" in record:
        record["unfinished_game"] = strip_all(record["unfinished_game"])
    return record
