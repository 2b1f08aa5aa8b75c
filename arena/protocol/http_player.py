"""The arena's player for a bot behind a URL: observation in, action (or fault) out.

It never raises over the bot's behaviour. At the start of a match it resolves and checks the
URL (the SSRF guard), asks ``GET /`` for the protocol version and sends ``POST /start``; any
failure there is a fault that forfeits the match. Each turn is one signed ``POST /act`` within
the rule set's deadline; whatever goes wrong comes back as a :class:`~arena.players.Fault`.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable
from typing import Any

import msgspec

from arena.players import Fault, FaultKind, MatchContext, Turn
from arena.protocol.signing import Signer
from arena.protocol.transport import MAX_BODY, Transport, TransportError
from arena.protocol.urlguard import (
    Resolver,
    Target,
    UrlRejectedError,
    open_connection,
    open_tls_connection,
    resolve_and_check,
)
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    BotInfo,
    EndRequest,
    StartRequest,
    WireError,
    act_request,
    decode_action,
)
from arena.rules.actions import Action

__all__ = ["HttpPlayer"]

_encoder = msgspec.json.Encoder()
_info_decoder = msgspec.json.Decoder(BotInfo)
_JSON = {"Content-Type": "application/json"}


class HttpPlayer:
    """A remote bot. One instance plays one seat of one match (it is not shared by threads)."""

    def __init__(
        self,
        url: str,
        *,
        name: str | None = None,
        secret: str | None = None,
        allow_loopback: bool = False,
        resolver: Resolver | None = None,
        max_body: int = MAX_BODY,
        connect_timeout_s: float = 2.0,
        wall_clock: Callable[[], float] = time.time,
    ) -> None:
        self.url = url
        self.name = name or url
        self._signer = Signer(secret) if secret else None
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

    # -- plumbing ---------------------------------------------------------------------------

    def _headers(self, body: bytes, msg_id: str) -> dict[str, str]:
        if self._signer is None:
            return _JSON
        return {**_JSON, **self._signer.sign(body, msg_id=msg_id, timestamp=int(self._wall()))}

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

    def _post(self, path: str, body: bytes, msg_id: str) -> bytes:
        assert self._transport is not None
        result = self._transport.request("POST", path, body, self._headers(body, msg_id), self._deadline_s)
        return result.body

    # -- the Player interface ---------------------------------------------------------------

    def start(self, context: MatchContext) -> Fault | None:
        """Check the URL, the protocol version, and announce the match."""
        self._rules = context.rules.to_dict()
        self._deadline_s = context.rules.deadline_ms / 1000.0
        self._match_id = context.match_id
        self._seat = context.seat
        try:
            target = resolve_and_check(self.url, allow_loopback=self._allow_loopback, resolver=self._resolver)
        except UrlRejectedError as exc:
            return Fault(FaultKind.UNREACHABLE, f"URL refused: {exc}")
        except OSError as exc:
            return Fault(FaultKind.UNREACHABLE, f"cannot resolve {self.url}: {exc}")
        self._transport = self._open(target)
        try:
            info_body = self._transport.request("GET", "/", None, {"Accept": "application/json"}, self._deadline_s).body
        except TransportError as exc:
            return Fault(FaultKind.UNREACHABLE, f"GET / failed ({exc.kind}): {exc.detail}")
        try:
            self.info = _info_decoder.decode(info_body)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
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
            self._post("/start", body, f"{context.match_id}-start-{context.seat}")
        except TransportError as exc:
            return Fault(FaultKind.UNREACHABLE, f"POST /start failed ({exc.kind}): {exc.detail}")
        return None

    def act(self, turn: Turn) -> Action | Fault:
        """One signed ``POST /act``; an action, or the fault that stopped it."""
        if self._transport is None:
            return Fault(FaultKind.UNREACHABLE, "the match was not started")
        body = _encoder.encode(act_request(turn, self._rules))
        try:
            answer = self._post("/act", body, turn.request_id)
        except TransportError as exc:
            return Fault(FaultKind(exc.kind), exc.detail)
        try:
            return decode_action(answer)
        except WireError as exc:
            return Fault(FaultKind(exc.kind), str(exc))

    def end(self, summary: dict[str, object]) -> None:
        """Send the full record (best effort) and close the connection."""
        if self._transport is None:
            return
        record = dict(summary)
        seat = "ab"[self._seat]
        faults = record.get("faults")
        if isinstance(faults, list):
            record["faults"] = [f for f in faults if isinstance(f, dict) and f.get("seat") == seat]
        body = _encoder.encode(EndRequest(PROTOCOL_VERSION, self._match_id, seat, record))  # type: ignore[arg-type]
        try:
            self._post("/end", body, f"{self._match_id}-end-{self._seat}")
        except TransportError:
            pass
        finally:
            self._transport.close()
            self._transport = None
