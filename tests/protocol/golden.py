"""The golden wire examples of ``api_spec/examples/``, made from real engine states.

The examples come from real matches played in-process on a fixed seed, turned into wire bodies
by the same functions the HTTP player uses (``act_request``, ``record_for_seat``). The test
``test_wire.py`` checks the checked-in files equal what this module makes, so a change to the
wire format shows up as a failing test; after a deliberate change, regenerate with::

    .venv/bin/python tests/protocol/golden.py
"""

from __future__ import annotations

import itertools
import json
import sys
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec

from arena.bots.strategies import greedy
from arena.match import MatchRunner
from arena.players import Fault, FaultKind, HeuristicPlayer, MatchContext, Turn
from arena.protocol.http_player import record_for_seat
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    ActRequest,
    BotInfo,
    EndRequest,
    StartRequest,
    WireAction,
    act_request,
)
from arena.records import MatchRecord
from arena.rules.actions import Action, ActionKind, Phase, knock
from arena.rules.melds import arrange, deadwood_mask
from arena.rules.ruleset import MisknockPolicy, RuleSet

EXAMPLES = Path(__file__).resolve().parents[2] / "api_spec" / "examples"
MATCH_ID = "match-42"
SEED = 42


class _EnoughSeenError(Exception):
    """Raised by a scripted player to end a match once enough turns were seen."""


@dataclass
class Scripted:
    """The heuristic player, plus a misknock and a fault on chosen turns; keeps every Turn."""

    name: str
    misknock_on: int | None = None
    fault_on: int | None = None
    #: Stop the match after this many turns of this player (enough examples seen).
    limit: int | None = 150
    turns: list[Turn] = field(default_factory=list)
    inner: HeuristicPlayer = field(default_factory=HeuristicPlayer)

    def start(self, context: MatchContext) -> Fault | None:
        return None

    def end(self, summary: dict[str, object]) -> None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        self.turns.append(turn)
        n = len(self.turns)
        if self.limit is not None and n > self.limit:
            raise _EnoughSeenError
        obs = turn.observation
        if n == self.fault_on:
            return Fault(FaultKind.TIMEOUT, "no complete answer within 1000 ms")
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


def _match(rules: RuleSet, players: list[Scripted], seed: int | str = SEED) -> MatchRecord | None:
    runner = MatchRunner(players, rules, seed, MATCH_ID, clock=_ticks())
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


def examples() -> dict[str, Any]:
    """Every example, by file name, as the value to encode."""
    rules = RuleSet()
    players = [Scripted("house-greedy"), Scripted("house-strong", fault_on=7)]
    _match(rules, players)
    # The /end example: a short match (one game to 100) with a fault of the receiving bot.
    end_players = [
        Scripted("house-greedy", limit=None),
        Scripted("house-strong", fault_on=7, limit=None),
    ]
    record = _match(rules.replace(target=100, best_of=1), end_players)
    assert record is not None

    def turns() -> Iterator[Turn]:
        return _turns(players)

    first_upcard = _first(
        turns(), lambda t: t.observation.phase is Phase.FIRST_UPCARD and t.previous_deal is not None
    )
    draw = _first(
        turns(),
        lambda t: t.observation.phase is Phase.DRAW and bool(t.observation.opponent_known),
    )
    discard = _first(
        turns(),
        lambda t: (
            t.observation.phase is Phase.DISCARD
            and t.observation.taken is not None
            and bool(_knocks(t))
        ),
    )
    plain_discard = _first(
        turns(),
        lambda t: (
            t.observation.phase is Phase.DISCARD and t.observation.taken is None and not _knocks(t)
        ),
    )
    accept = rules.replace(misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT)
    mk_players = [Scripted("house-greedy", misknock_on=9), Scripted("house-strong")]
    _match(accept, mk_players)
    misknock = _first(_turns(mk_players), lambda t: t.observation.phase is Phase.MISKNOCK_RESPONSE)
    ex_players = [Scripted("house-greedy", misknock_on=9), Scripted("house-strong")]
    _match(rules, ex_players)
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
        "act.discard.response.json": greedy(_body(plain_discard)),
        "act.knock.response.json": _knock_with_melds(discard),
        "act.accept_knock.response.json": WireAction("accept_knock"),
        "end.request.json": EndRequest(PROTOCOL_VERSION, MATCH_ID, "b", end_record),
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
