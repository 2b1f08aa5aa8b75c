"""Hostile bots for the protocol tests: real servers on loopback that misbehave on purpose.

Two families:

* :class:`RawBot`, a hand-written HTTP/1.1 server on a raw socket (an accept loop in a thread,
  one thread per connection, minimal request parsing) for misbehaviour below the protocol:
  sleeping past the deadline, HTTP 500, garbage JSON, JSON of the wrong schema, a huge answer
  (with ``Content-Length`` or chunked without it), a redirect, a dropped connection, an answer
  cut short, a malformed HTTP answer, a trickle of one byte every 0.2 s, a wrong protocol
  version in ``GET /``. It misbehaves on the ``/act``
  requests whose number (from 1, over the bot's life) is in ``on``, or on all of them. It plays
  the greedy house strategy otherwise, counts the TCP connections it accepts and records every
  request.
* SDK bots (:class:`arena.bots.sdk.BotServer` with a custom act function) for misbehaviour
  within the protocol: a card not held, the action of another phase, discarding the card just
  taken, knocking over the limit on purpose (misknocks: rules events, not faults), and a
  well-behaved :class:`RecordingBot` that keeps every request body and counts connections.

Every server here binds 127.0.0.1 only, and ``stop()`` ends every thread and closes every
socket it opened (the suite runs with ``filterwarnings = error``): the raw bot's plumbing is
:class:`loopback.LoopbackServer`.
"""

from __future__ import annotations

import io
import json
import socket
import threading
from collections.abc import Callable, Collection, Iterator, Sequence
from contextlib import contextmanager
from typing import Any

import msgspec
from loopback import HttpMessage, LoopbackServer, free_port, http_head, http_response

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer, _Handler
from arena.bots.strategies import greedy
from arena.cards import CARDS, parse_card
from arena.playing.match import play_match
from arena.playing.records import MatchRecord
from arena.playing.stored import ActionEntry
from arena.protocol.http_player import HttpPlayer
from arena.protocol.wire import PROTOCOL_VERSION, ActRequest, WireAction
from arena.rules.hand import HandState, apply, new_deal
from arena.rules.melds import deadwood_mask
from arena.rules.record import parse_deck
from arena.rules.ruleset import RuleSet

__all__ = [
    "RAW_MODES",
    "RawBot",
    "RecordingBot",
    "card_not_held",
    "closed_port_url",
    "discards_taken_card",
    "faulted_turns",
    "house",
    "misknocker",
    "play",
    "running",
    "sdk_bot",
    "start_quickly",
    "wrong_phase",
]

_act_decoder = msgspec.json.Decoder(ActRequest)
_encoder = msgspec.json.Encoder()

#: Raw misbehaviours, by name.
RAW_MODES = (
    "behave",
    "sleep",
    "status_500",
    "garbage",
    "wrong_schema",
    "huge_length",
    "huge_chunked",
    "redirect",
    "drop",
    "truncated",
    "bad_http",
    "trickle",
    "wrong_version",
)
#: Size of the huge answers: well over the arena's 64 KiB cap.
HUGE = 200 * 1024


class RawBot(LoopbackServer):
    """A raw-socket bot that misbehaves in ``mode`` on the ``/act`` requests numbered in ``on``.

    ``on=None`` means every ``/act`` request. ``wrong_version`` misbehaves on ``GET /``.
    """

    def __init__(
        self,
        mode: str = "behave",
        *,
        on: Collection[int] | None = None,
        sleep_s: float = 1.0,
        trickle_s: float = 0.2,
        name: str | None = None,
    ) -> None:
        if mode not in RAW_MODES:
            raise ValueError(f"unknown mode {mode!r}")
        super().__init__(name or f"raw-{mode}")
        self.mode = mode
        self.on = on
        self.sleep_s = sleep_s
        self.trickle_s = trickle_s
        #: Every request: (method, path, body).
        self.requests: list[tuple[str, str, bytes]] = []
        #: ``/act`` requests seen so far.
        self.acts = 0

    def bodies(self, path: str) -> list[bytes]:
        """Bodies of the requests received on ``path``."""
        with self._lock:
            return [b for _, p, b in self.requests if p == path]

    # -- one connection ---------------------------------------------------------------------

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        method, path = request.target
        return self._answer(conn, method, path, request.body)

    def _info(self) -> bytes:
        protocol = "gin-arena/2" if self.mode == "wrong_version" else PROTOCOL_VERSION
        return _encoder.encode(
            {"protocol": protocol, "name": self.name, "author": "tests", "version": "1"}
        )

    def _answer(self, conn: socket.socket, method: str, path: str, body: bytes) -> bool:
        """Answer one request; False to close the connection."""
        with self._lock:
            self.requests.append((method, path, body))
        if method == "GET" and path == "/":
            conn.sendall(http_response(self._info()))
            return True
        if method == "POST" and path in ("/start", "/end"):
            conn.sendall(http_response(b"{}"))
            return True
        if method != "POST" or path != "/act":
            conn.sendall(http_response(b'{"error": "not found"}', "404 Not Found"))
            return True
        with self._lock:
            self.acts += 1
            number = self.acts
        good = _encoder.encode(greedy(_act_decoder.decode(body)))
        if self.mode in ("behave", "wrong_version") or (
            self.on is not None and number not in self.on
        ):
            conn.sendall(http_response(good))
            return True
        return self._misbehave(conn, good)

    def _misbehave(self, conn: socket.socket, good: bytes) -> bool:
        mode = self.mode
        if mode == "sleep":
            self._stopping.wait(self.sleep_s)
            conn.sendall(http_response(good))  # far too late: the arena has hung up
            return False
        if mode == "status_500":
            conn.sendall(
                http_response(
                    b'{"error": "internal", "detail": "the bot broke"}', "500 Internal Server Error"
                )
            )
            return True
        if mode == "garbage":
            conn.sendall(http_response(b'{"action": draw_stock, oops'))
            return True
        if mode == "wrong_schema":
            conn.sendall(http_response(b'{"move": "draw_stock", "card": 7}'))
            return True
        if mode == "huge_length":
            padding = b'{"action": "pass", "padding": "' + b"x" * HUGE + b'"}'
            conn.sendall(http_response(padding))
            return False
        if mode == "huge_chunked":
            conn.sendall(
                http_head(
                    "200 OK", {"Content-Type": "application/json", "Transfer-Encoding": "chunked"}
                )
            )
            chunk = b"x" * 8192
            for _ in range(HUGE // len(chunk)):
                conn.sendall(b"%x\r\n%s\r\n" % (len(chunk), chunk))
            conn.sendall(b"0\r\n\r\n")
            return False
        if mode == "redirect":
            conn.sendall(
                http_head(
                    "302 Found", {"Location": "http://127.0.0.1:9/act", "Content-Length": "0"}
                )
            )
            return True
        if mode == "drop":
            return False
        if mode == "truncated":  # half an answer, then the connection closes
            whole = http_response(good)
            conn.sendall(whole[: len(whole) - 5])
            return False
        if mode == "bad_http":
            conn.sendall(b"HELLO THERE\r\n\r\n{}")
            return False
        if mode == "trickle":
            for byte in http_response(good):
                if self._stopping.wait(self.trickle_s):
                    break
                conn.sendall(bytes([byte]))
            return False
        raise AssertionError(mode)  # pragma: no cover


# --- SDK bots ---------------------------------------------------------------------------------

ActFn = Callable[[ActRequest], "WireAction | dict[str, Any]"]


def sdk_bot(act: ActFn, name: str) -> BotServer:
    """An SDK bot with this act function (not started)."""
    return BotServer(act, name=name, author="tests")


def _not_held(obs: ActRequest) -> str:
    hand = set(obs.hand)
    return next(str(c) for c in CARDS if str(c) not in hand)


def card_not_held(obs: ActRequest) -> WireAction:
    """Discards a card it does not hold."""
    if obs.phase == "discard":
        return WireAction("discard", _not_held(obs))
    return greedy(obs)


def wrong_phase(obs: ActRequest) -> WireAction:
    """Answers a draw with a discard (the action of another phase)."""
    if obs.phase == "draw":
        return WireAction("discard", obs.hand[0])
    return greedy(obs)


def discards_taken_card(obs: ActRequest) -> WireAction:
    """Takes every discard it may, then discards the card it just took (forbidden by default)."""
    if obs.phase in ("first_upcard", "draw") and any(
        a.action == "take_discard" for a in obs.legal_actions
    ):
        return WireAction("take_discard")
    if obs.phase == "discard" and obs.taken_card is not None:
        return WireAction("discard", obs.taken_card)
    return greedy(obs)


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


def misknocker(obs: ActRequest) -> WireAction:
    """Knocks at every discard, over the limit when it must: a misknock, not a fault."""
    if obs.phase != "discard" or any(a.action in ("knock", "big_gin") for a in obs.legal_actions):
        return greedy(obs)
    hand = _mask(obs.hand)
    allowed = [c for c in obs.hand if c != obs.taken_card]
    card = min(allowed, key=lambda c: deadwood_mask(hand & ~(1 << parse_card(c))))
    return WireAction("knock", card)


class RecordingBot:
    """A well-behaved SDK bot (greedy) that keeps every raw request body and counts connections.

    ``respond`` chooses the answer to a ``misknock_response`` (default: greedy, open_hand).
    """

    def __init__(self, name: str = "recorder", respond: Callable[[int], str] | None = None) -> None:
        self.requests: list[tuple[str, bytes]] = []
        self.connections = 0
        #: The accepted sockets (the server closes them; kept to inspect their options).
        self.accepted: list[socket.socket] = []
        self.responses = 0
        self._respond = respond
        self._lock = threading.Lock()
        self.server = sdk_bot(self._act, name)
        recorder = self

        class Recording(_Handler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length)
                with recorder._lock:
                    recorder.requests.append((self.path, body))
                real, self.rfile = self.rfile, io.BytesIO(body)
                try:
                    super().do_POST()
                finally:
                    self.rfile = real

        inner = self.server._server
        inner.RequestHandlerClass = Recording
        get_request = inner.get_request

        def counting() -> tuple[socket.socket, Any]:
            conn, address = get_request()
            with self._lock:
                self.connections += 1
                self.accepted.append(conn)
            return conn, address

        inner.get_request = counting  # type: ignore[method-assign]

    def _act(self, obs: ActRequest) -> WireAction:
        if obs.phase == "misknock_response" and self._respond is not None:
            with self._lock:
                self.responses += 1
                n = self.responses
            return WireAction(self._respond(n))  # type: ignore[arg-type]
        return greedy(obs)

    @property
    def url(self) -> str:
        return self.server.url

    def start(self) -> RecordingBot:
        self.server.start()
        return self

    def stop(self) -> None:
        self.server.stop()

    def bodies(self, path: str) -> list[bytes]:
        with self._lock:
            return [b for p, b in self.requests if p == path]

    def acts(self) -> list[dict[str, Any]]:
        """The decoded ``/act`` bodies, in order."""
        return [json.loads(b) for b in self.bodies("/act")]


# --- helpers ----------------------------------------------------------------------------------


@contextmanager
def running(*servers: Any) -> Iterator[None]:
    """Start the servers (RawBot, RecordingBot, BotServer) and stop them all afterwards."""
    started = []
    try:
        for server in servers:
            if isinstance(server, BotServer):
                start_quickly(server)
            elif isinstance(server, RecordingBot):
                start_quickly(server.server)
            else:
                server.start()
            started.append(server)
        yield
    finally:
        for server in started:
            server.stop()


def start_quickly(server: BotServer) -> BotServer:
    """``server.start()`` with a 20 ms poll interval, so that ``stop()`` takes 20 ms, not 500."""
    thread = threading.Thread(
        target=server._server.serve_forever, kwargs={"poll_interval": 0.02}, daemon=True
    )
    server._thread = thread
    thread.start()
    return server


def closed_port_url() -> str:
    """A loopback URL where nothing listens (the port was free a moment ago)."""
    return f"http://127.0.0.1:{free_port()}"


def house(kind: str) -> BotServer:
    """A house bot (not started)."""
    return house_bot(kind, name=f"house-{kind}")


# --- playing and replaying ----------------------------------------------------------------------


def play(
    urls: Sequence[str], rules: RuleSet, *, seed: int | str = 1, match_id: str = "hostile"
) -> MatchRecord:
    """Play one match between two bot URLs through the real HTTP player."""
    players = [
        HttpPlayer(url, name=f"{'ab'[i]}:{url}", allow_loopback=True) for i, url in enumerate(urls)
    ]
    return play_match(players, rules, seed=seed, match_id=match_id)


def faulted_turns(record: MatchRecord) -> list[tuple[HandState, ActionEntry]]:
    """Replay every recorded deal; the state before each faulted turn, and its entry.

    A deal interrupted by a forfeit is not in the record's hands (its faults are in ``faults``).
    """
    out = []
    for _game, hand in record.all_hands():
        state = new_deal(record.rules, hand.dealer, deck=parse_deck(hand.deck))
        for entry in hand.actions:
            assert entry.seat == state.to_act
            if entry.fault is not None:
                out.append((state, entry))
            state = apply(state, entry.action)
        assert state.is_over  # only whole deals are recorded
    return out
