"""A bot that refuses the arena's signature at the start (issue 10, 2.10) forfeits with a reason
that says so, not "unreachable", and a tournament withdraws it as it withdraws a bot that cannot
be reached: both are bots that cannot be started."""

from __future__ import annotations

from dataclasses import dataclass

from tournament_driver import Driver, Lineup, add_bots, entries, matches_of, new_tournament

from arena.db.session import Database
from arena.playing.players import Fault, FaultKind, MatchContext, Player, Turn
from arena.rules.actions import Action
from arena.states import MatchStatus


class RefusesSignatures:
    """Answers ``/start`` with 401: the secret it verifies with is not the arena's."""

    def __init__(self, name: str) -> None:
        self.name = name

    def start(self, context: MatchContext) -> Fault | None:
        return Fault(
            FaultKind.SIGNATURE_REFUSED,
            "the bot refused the arena's signed POST /start (HTTP 401: bad signature)",
        )

    def act(self, turn: Turn) -> Action | Fault:  # pragma: no cover - never asked
        raise AssertionError("a bot refused at the start is never asked to act")

    def end(self, summary: dict[str, object]) -> None:
        return None  # (an HTTP player sends nothing to a bot refused at the start)


@dataclass
class RefusingLineup(Lineup):
    refuser: int = 0

    def _player(self, bot_id: int, name: str, seed: int, nth: int, winner: int | None) -> Player:
        if bot_id == self.refuser and nth > 1:
            return RefusesSignatures(name)
        return super()._player(bot_id, name, seed, nth, winner)


def test_a_bot_refusing_the_signature_is_withdrawn_with_a_signature_reason(db: Database) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "round_robin")
    refuser = bots[0]
    Driver(db, RefusingLineup(db, refuser=refuser)).run(tid)
    theirs = [m for m in matches_of(db, tid) if refuser in (m.bot_a_id, m.bot_b_id)]
    (forfeit,) = [m for m in theirs if m.forfeit_reason]
    reason = str(forfeit.forfeit_reason)
    assert reason.startswith("refused the arena's signature at the start"), reason
    assert "unreachable" not in reason
    assert forfeit.forfeit_seat == ("a" if forfeit.bot_a_id == refuser else "b")
    assert entries(db, tid)[refuser].withdrawn
    assert any(m.status is MatchStatus.CANCELLED for m in theirs)
