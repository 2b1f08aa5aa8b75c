"""The rerun logic (:mod:`arena.playing.rerun`) under every kind of match, with in-process
players: the same player reproduces the stored match exactly (faults, forfeits, Hollywood and
Oklahoma included); a changed one diverges at its first different answer; records that cannot
be rerun say why."""

from __future__ import annotations

from typing import Any

import pytest

from arena.playing.match import MatchRunner
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    Player,
    RandomPlayer,
    Turn,
)
from arena.playing.rerun import RerunError, StepAddress, rerun_match, stored_steps
from arena.playing.stored import StoredMatch, parse_record
from arena.rules.actions import Action
from arena.rules.ruleset import MisknockPolicy, RuleSet


class Faulty:
    """Wraps a player; every ``every``-th answer (from 1) is a bad-JSON fault instead."""

    def __init__(self, inner: Any, every: int) -> None:
        self.inner, self.name, self.every, self.n = inner, inner.name, every, 0

    def start(self, context: MatchContext) -> Fault | None:
        self.n = 0
        return self.inner.start(context)

    def act(self, turn: Turn) -> Action | Fault:
        self.n += 1
        if self.every and self.n % self.every == 0:
            return Fault(FaultKind.BAD_JSON, "not JSON")
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        self.inner.end(summary)


class ChangedAt:
    """The heuristic player, except that its ``at``-th answer (from 1) is another legal one."""

    def __init__(self, at: int) -> None:
        self.inner, self.name, self.at, self.n = HeuristicPlayer(name="h"), "changed", at, 0
        self.changed: Action | None = None

    def start(self, context: MatchContext) -> Fault | None:
        self.n = 0
        return None

    def act(self, turn: Turn) -> Action | Fault:
        self.n += 1
        usual = self.inner.act(turn)
        if self.n != self.at:
            return usual
        assert isinstance(usual, Action)
        self.changed = next(a for a in turn.observation.legal_actions if a != usual)
        return self.changed

    def end(self, summary: dict[str, object]) -> None:
        return None


def played(rules: RuleSet, a: Player, b: Player, seed: int = 3) -> StoredMatch:
    record = MatchRunner([a, b], rules, seed, match_id=f"m{seed}").run().to_stored()
    return parse_record(record.to_dict())  # as read back from storage


def decisions(record: StoredMatch) -> list[tuple[str, int, object, object]]:
    return [
        (str(s.address), s.entry.seat, s.entry.action, s.entry.fault) for s in stored_steps(record)
    ]


CASES = {
    "plain": (RuleSet(target=100, best_of=3), 0),
    "faults-and-forfeit": (RuleSet(target=100, best_of=3), 9),
    "misknock-response": (RuleSet(target=100, misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT), 0),
    "oklahoma": (RuleSet.oklahoma(target=60), 0),
    "hollywood": (RuleSet(target=60, best_of=3, match_scoring="hollywood"), 0),
    "hollywood-forfeit": (RuleSet(target=60, best_of=3, match_scoring="hollywood"), 9),
}


@pytest.mark.parametrize(("rules", "fault_every"), CASES.values(), ids=CASES.keys())
@pytest.mark.parametrize("seat", ["a", "b"])
def test_the_same_player_reproduces_the_stored_match(
    rules: RuleSet, fault_every: int, seat: str
) -> None:
    def seat_b() -> Player:
        return Faulty(RandomPlayer(seed=5, name="r"), fault_every)

    stored = played(rules, HeuristicPlayer(name="h"), seat_b())
    mine = HeuristicPlayer(name="h") if seat == "a" else seat_b()
    result = rerun_match(stored, seat, mine, RandomPlayer(seed=99, name="other"))
    assert result.divergence is None
    assert result.agreed == sum(1 for s in stored_steps(stored) if s.entry.seat == "ab".index(seat))
    assert decisions(result.rerun) == decisions(stored)
    assert (result.rerun.winner, result.rerun.games_won) == (stored.winner, stored.games_won)
    assert [f.kind for f in result.rerun.faults] == [f.kind for f in stored.faults]
    assert (result.rerun.forfeit is None) == (stored.forfeit is None)


def test_a_changed_player_diverges_at_its_first_different_answer() -> None:
    rules = RuleSet(target=100, best_of=3)
    stored = played(rules, HeuristicPlayer(name="h"), RandomPlayer(seed=5, name="r"))
    changed = ChangedAt(at=20)
    result = rerun_match(stored, "a", changed, RandomPlayer(seed=99, name="other"))
    mine = [s for s in stored_steps(stored) if s.entry.seat == 0]
    d = result.divergence
    assert d is not None and result.agreed == 19
    assert d.address == mine[19].address and d.seat == "a"
    assert d.stored.action == mine[19].entry.action.to_dict()
    assert changed.changed is not None and d.yours.action == changed.changed.to_dict()
    assert d.request["request_id"] == f"m3-r{stored_steps(stored).index(mine[19]) + 1}"
    # Played on to a whole match from there, the deals still dealt by the stored seed.
    assert result.rerun.winner in ("a", "b") and result.rerun.games
    assert result.rerun.games[0].hands[0].deck == stored.games[0].hands[0].deck


def test_an_illegal_answer_where_the_stored_one_was_legal_is_a_divergence() -> None:
    class Illegal(ChangedAt):
        def act(self, turn: Turn) -> Action | Fault:
            self.n += 1
            usual = self.inner.act(turn)
            if self.n != self.at:
                return usual
            self.changed = next(
                a
                for a in (Action.from_dict({"action": "discard", "card": c}) for c in ("As", "Kd"))
                if a not in turn.observation.legal_actions
            )
            return self.changed

    stored = played(RuleSet(target=100), HeuristicPlayer(name="h"), RandomPlayer(name="r"))
    result = rerun_match(stored, "a", Illegal(at=3), RandomPlayer(seed=99, name="other"))
    assert result.divergence is not None
    assert result.divergence.yours.fault == "illegal_action"
    assert result.divergence.stored.fault is None


def test_a_record_whose_decks_are_not_its_seeds_cannot_be_rerun() -> None:
    stored = played(RuleSet(target=100), HeuristicPlayer(name="h"), RandomPlayer(name="r"))
    data = stored.to_dict()
    deck = data["games"][0]["hands"][0]["deck"]
    data["games"][0]["hands"][0]["deck"] = deck[2:] + deck[:2]
    with pytest.raises(RerunError, match="game 0 deal 0: the stored deck is not the one"):
        rerun_match(parse_record(data), "a", HeuristicPlayer(), RandomPlayer())


def test_a_match_forfeited_at_the_start_has_nothing_to_rerun() -> None:
    class Gone(RandomPlayer):
        def start(self, context: MatchContext) -> Fault | None:
            return Fault(FaultKind.UNREACHABLE, "nobody home")

    stored = played(RuleSet(target=100), HeuristicPlayer(name="h"), Gone(name="gone"))
    with pytest.raises(RerunError, match=r"no steps to rerun \(forfeit: unreachable at the start"):
        rerun_match(stored, "a", HeuristicPlayer(), RandomPlayer())


@pytest.mark.parametrize(
    ("text", "parsed"), [("0:0:0", StepAddress(0, 0, 0)), ("1:12:305", StepAddress(1, 12, 305))]
)
def test_a_step_is_written_game_deal_step(text: str, parsed: StepAddress) -> None:
    assert StepAddress.parse(text) == parsed and str(parsed) == text


@pytest.mark.parametrize("text", ["", "1:2", "1:2:3:4", "a:b:c", "-1:0:0", "1::2"])
def test_anything_else_is_no_step(text: str) -> None:
    with pytest.raises(ValueError, match="GAME:DEAL:STEP"):
        StepAddress.parse(text)
