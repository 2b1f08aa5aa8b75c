"""The golden wire examples of ``api_spec/examples/``, made from real engine play.

The examples come from real matches played on fixed seeds (each match with its own id, so no
two examples share a ``request_id``), turned into wire bodies by the same functions the HTTP
player uses (``act_request``, ``record_for_seat``). The requests are states those matches
reached; each answer example is chosen as legal for the request it answers (:data:`ANSWERS`
names the pairs). The ``/end`` example's timeout is real: on that turn the scripted player asks a
loopback bot, through the arena's HTTP player, that sleeps past the match's short deadline, and
the record keeps what the transport measured (a timeout records the deadline).

``test_wire.py`` checks the checked-in files equal what this module makes, so a change to the
wire format shows up as a failing test, and ``test_golden_examples.py`` that every answer is
legal for its request and every request is a position its own history reaches. After a
deliberate change, regenerate with::

    .venv/bin/python tests/protocol/golden.py
"""

from __future__ import annotations

import itertools
import json
import sys
import threading
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena.bots.sdk import BotServer
from arena.cards import CARD_VALUES
from arena.playing.match import MatchRunner
from arena.playing.players import Exchange, Fault, FaultKind, HeuristicPlayer, MatchContext, Turn
from arena.playing.records import MatchRecord
from arena.protocol.http_player import HttpPlayer, record_for_seat
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    ActRequest,
    BotInfo,
    EndRequest,
    StartRequest,
    WireAction,
    act_request,
)
from arena.rules.actions import Action, ActionKind, Phase, knock
from arena.rules.melds import arrange, deadwood_mask
from arena.rules.ruleset import MisknockPolicy, RuleSet

EXAMPLES = Path(__file__).resolve().parents[2] / "api_spec" / "examples"
MATCH_ID = "match-42"
SEED = 42
#: The matches of the misknock examples and of the ``/end`` example (their own ids and seeds).
ACCEPT_MATCH, OPEN_MATCH, END_MATCH = "match-43", "match-44", "match-45"
#: The ``/end`` example's deadline: short, so that the real timeout is quick to produce.
END_DEADLINE_MS = 250

#: Each answer example and the request example it answers (a test checks it is legal there).
ANSWERS = {
    "act.pass.response.json": "act.first_upcard.request.json",
    "act.take_discard.response.json": "act.draw.request.json",
    "act.draw_stock.response.json": "act.draw.request.json",
    "act.discard.response.json": "act.discard.request.json",
    "act.knock.response.json": "act.discard.request.json",
    "act.accept_knock.response.json": "act.misknock_response.request.json",
}


class _EnoughSeenError(Exception):
    """Raised by a scripted player to end a match once enough turns were seen."""


class Sleeper:
    """A loopback bot (the SDK's server) that sleeps past any deadline on every ``/act``."""

    def __init__(self) -> None:
        self.woken = threading.Event()
        self.server = BotServer(self._act, name="sleeper", author="golden.py")

    def _act(self, obs: object) -> WireAction:
        self.woken.wait(30)  # until stop(): far past the deadline
        return WireAction("draw_stock")

    def __enter__(self) -> Sleeper:
        self.server.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.woken.set()
        self.server.stop()


@dataclass
class Scripted:
    """The heuristic player, plus a misknock and a fault on chosen turns; keeps every Turn.

    On turn ``fault_on`` it asks the bot at ``timeout_url`` through the arena's HTTP player
    (a real request, which times out) and answers with that player's fault and exchange.
    """

    name: str
    misknock_on: int | None = None
    fault_on: int | None = None
    timeout_url: str | None = None
    #: Stop the match after this many turns of this player (enough examples seen).
    limit: int | None = 150
    turns: list[Turn] = field(default_factory=list)
    inner: HeuristicPlayer = field(default_factory=HeuristicPlayer)
    http: HttpPlayer | None = None
    exchange: Exchange | None = None

    def start(self, context: MatchContext) -> Fault | None:
        if self.timeout_url is not None:
            self.http = HttpPlayer(self.timeout_url, name=self.name, allow_loopback=True)
            fault = self.http.start(context)
            assert fault is None, fault
        return None

    def end(self, summary: dict[str, object]) -> None:
        if self.http is not None:
            self.http.end(summary)

    def take_exchange(self) -> Exchange | None:
        """The HTTP exchange of the last turn, if it went over HTTP (as the runner asks)."""
        exchange, self.exchange = self.exchange, None
        return exchange

    def act(self, turn: Turn) -> Action | Fault:
        self.turns.append(turn)
        n = len(self.turns)
        if self.limit is not None and n > self.limit:
            raise _EnoughSeenError
        obs = turn.observation
        if n == self.fault_on:
            assert self.http is not None, "a fault needs a timeout_url"
            fault = self.http.act(turn)
            self.exchange = self.http.take_exchange()
            assert isinstance(fault, Fault) and fault.kind is FaultKind.TIMEOUT, fault
            return fault
        knocks = [a for a in obs.legal_actions if a.kind in (ActionKind.KNOCK, ActionKind.BIG_GIN)]
        late = self.misknock_on is not None and n >= self.misknock_on
        if late and obs.phase is Phase.DISCARD and not knocks:
            self.misknock_on = None
            hand = sum(1 << c for c in obs.hand)
            allowed = [c for c in obs.hand if c != obs.taken]
            return knock(min(allowed, key=lambda c: deadwood_mask(hand & ~(1 << c))))
        return self.inner.act(turn)


def _ticks() -> Callable[[], float]:
    counter = itertools.count()
    return lambda: next(counter) * 0.0025  # every decision "takes" 2.5 ms: deterministic


def _match(
    rules: RuleSet, players: list[Scripted], seed: int | str = SEED, match_id: str = MATCH_ID
) -> MatchRecord | None:
    runner = MatchRunner(players, rules, seed, match_id, clock=_ticks())
    try:
        return runner.run()
    except _EnoughSeenError:
        return None


def _turns(players: list[Scripted]) -> Iterator[Turn]:
    for p in players:
        yield from p.turns


def _first(turns: Iterator[Turn], test: Callable[[Turn], bool]) -> Turn:
    return next(t for t in turns if test(t))


def _body(turn: Turn) -> ActRequest:
    return act_request(turn, turn.rules.to_dict())


def _knocks(turn: Turn) -> list[Action]:
    return [a for a in turn.observation.legal_actions if a.kind is ActionKind.KNOCK]


def _knock_with_melds(turn: Turn) -> WireAction:
    """The least-deadwood knock of a position, with its melds declared."""
    obs = turn.observation
    action = min(
        _knocks(turn), key=lambda a: arrange([c for c in obs.hand if c != a.card]).deadwood
    )
    assert action.card is not None
    rest = arrange([c for c in obs.hand if c != action.card])
    return WireAction("knock", str(action.card), [[str(c) for c in m] for m in rest.meld_cards()])


def _plain_discard(turn: Turn) -> WireAction:
    """The legal discard (not a knock) of a position that leaves the least deadwood."""
    obs = turn.observation
    hand = sum(1 << c for c in obs.hand)
    cards = [a.card for a in obs.legal_actions if a.kind is ActionKind.DISCARD]
    card = min(
        (c for c in cards if c is not None),
        key=lambda c: (deadwood_mask(hand & ~(1 << c)), -CARD_VALUES[c]),
    )
    return WireAction("discard", str(card))


def examples() -> dict[str, Any]:
    """Every example, by file name, as the value to encode."""
    rules = RuleSet()
    players = [Scripted("house-greedy"), Scripted("house-strong")]
    _match(rules, players)
    # The /end example: a short match (one game to 100, a short deadline) in which the
    # receiving bot times out once, for real.
    end_rules = rules.replace(target=100, best_of=1, deadline_ms=END_DEADLINE_MS)
    with Sleeper() as sleeper:
        end_players = [
            Scripted("house-greedy", limit=None),
            Scripted("house-strong", fault_on=7, timeout_url=sleeper.server.url, limit=None),
        ]
        record = _match(end_rules, end_players, SEED, END_MATCH)
    assert record is not None

    def turns() -> Iterator[Turn]:
        return _turns(players)

    first_upcard = _first(
        turns(), lambda t: t.observation.phase is Phase.FIRST_UPCARD and t.previous_deal is not None
    )
    draw = _first(
        turns(),
        lambda t: (
            t.observation.phase is Phase.DRAW
            and bool(t.observation.opponent_known)
            and ActionKind.TAKE_DISCARD in {a.kind for a in t.observation.legal_actions}
        ),
    )
    discard = _first(
        turns(),
        lambda t: (
            t.observation.phase is Phase.DISCARD
            and t.observation.taken is not None
            and bool(_knocks(t))
        ),
    )
    accept = rules.replace(misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT)
    mk_players = [Scripted("house-greedy", misknock_on=9), Scripted("house-strong")]
    _match(accept, mk_players, SEED, ACCEPT_MATCH)
    misknock = _first(_turns(mk_players), lambda t: t.observation.phase is Phase.MISKNOCK_RESPONSE)
    ex_players = [Scripted("house-greedy", misknock_on=9), Scripted("house-strong")]
    _match(rules, ex_players, SEED, OPEN_MATCH)
    exposed = _first(_turns(ex_players), lambda t: t.observation.opponent_hand is not None)
    end_record = record_for_seat(record.to_dict(), 1)
    return {
        "info.response.json": BotInfo(PROTOCOL_VERSION, "house-strong", "gin-arena", "1"),
        "start.request.json": StartRequest(
            PROTOCOL_VERSION, MATCH_ID, "house-greedy", rules.to_dict()
        ),
        "act.first_upcard.request.json": _body(first_upcard),
        "act.draw.request.json": _body(draw),
        "act.discard.request.json": _body(discard),
        "act.misknock_response.request.json": _body(misknock),
        "act.opponent_exposed.request.json": _body(exposed),
        "act.pass.response.json": WireAction("pass"),
        "act.take_discard.response.json": WireAction("take_discard"),
        "act.draw_stock.response.json": WireAction("draw_stock"),
        "act.discard.response.json": _plain_discard(discard),
        "act.knock.response.json": _knock_with_melds(discard),
        "act.accept_knock.response.json": WireAction("accept_knock"),
        "end.request.json": EndRequest(PROTOCOL_VERSION, END_MATCH, "b", end_record),
    }


def render(value: Any) -> str:
    """The text of an example file: the wire JSON in wire order, short parts on one line."""
    return _pretty(json.loads(msgspec.json.encode(value)), 0) + "\n"


def _pretty(value: Any, level: int) -> str:
    flat = json.dumps(value, ensure_ascii=False)
    if not isinstance(value, dict | list) or len(flat) + 2 * level <= 96:
        return flat
    inner = "  " * (level + 1)
    if isinstance(value, dict):
        items = [f"{inner}{json.dumps(k)}: {_pretty(v, level + 1)}" for k, v in value.items()]
        return "{\n" + ",\n".join(items) + "\n" + "  " * level + "}"
    items = [inner + _pretty(v, level + 1) for v in value]
    return "[\n" + ",\n".join(items) + "\n" + "  " * level + "]"


def write() -> list[Path]:
    EXAMPLES.mkdir(parents=True, exist_ok=True)
    written = []
    for name, value in examples().items():
        path = EXAMPLES / name
        path.write_text(render(value), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write():
        print(path.relative_to(Path.cwd()) if path.is_relative_to(Path.cwd()) else path)
    sys.exit(0)
