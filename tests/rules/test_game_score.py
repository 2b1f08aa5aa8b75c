"""RULES.md "A game" and "A match": the cut, dealer rotation, game bonuses, best of five."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import pytest

from arena.cards import CARDS
from arena.playing.match import NeitherStartedError, play_match
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    RandomPlayer,
    Turn,
)
from arena.rules import Action, RuleSet
from arena.rules.game import add_deal, cut_for_deal, deal_deck, first_dealer, games_to_win
from arena.rules.hand import DealResult, Misknock
from arena.rules.scoring import GameScore, HandResult, Outcome, Role, final_totals, next_dealer

# --- final totals -------------------------------------------------------------------------------

#: name: (points, hands won, reached first, overrides, totals, winner, shutout)
FINAL_CASES: dict[
    str, tuple[tuple[int, int], tuple[int, int], int, dict[str, Any], tuple[int, int], int, bool]
] = {
    "game bonus to who reached the target": ((260, 100), (6, 4), 0, {}, (510, 200), 0, False),
    "shutout doubles the game bonus": ((260, 0), (5, 0), 0, {}, (585, 0), 0, True),
    "shutout multiplier is a field": (
        (260, 0),
        (5, 0),
        0,
        {"shutout_multiplier": 3},
        (685, 0),
        0,
        True,
    ),
    "game bonus is a field": ((260, 100), (6, 4), 0, {"game_bonus": 50}, (460, 200), 0, False),
    "box bonus 20": ((260, 100), (6, 4), 0, {"box_bonus": 20}, (480, 180), 0, False),
    "box bonus overturns who reached the target first": (
        (250, 240),
        (2, 9),
        0,
        {},
        (400, 465),
        1,
        False,
    ),
    "tie in totals goes to who reached the target first": (
        (200, 250),
        (8, 2),
        1,
        {},
        (400, 400),
        1,
        False,
    ),
    "tie in totals goes to who reached the target first (seat 0)": (
        (250, 200),
        (2, 8),
        0,
        {},
        (400, 400),
        0,
        False,
    ),
    "seat 1 reaches the target": ((30, 255), (1, 7), 1, {}, (55, 530), 1, False),
}


@pytest.mark.parametrize(
    ("points", "won", "reached", "overrides", "totals", "winner", "shutout"),
    FINAL_CASES.values(),
    ids=FINAL_CASES.keys(),
)
def test_final_totals(
    points: tuple[int, int],
    won: tuple[int, int],
    reached: int,
    overrides: dict[str, Any],
    totals: tuple[int, int],
    winner: int,
    shutout: bool,
) -> None:
    result = final_totals(RuleSet(**overrides), GameScore(points, won, reached))
    assert result.totals == totals
    assert result.winner == winner
    assert result.shutout is shutout
    assert result.points == points
    assert sum(result.game_bonus) + sum(result.box_bonus) + sum(points) == sum(totals)


def test_final_totals_needs_a_finished_game() -> None:
    with pytest.raises(ValueError, match="not over"):
        final_totals(RuleSet(), GameScore((100, 20), (3, 1)))


# --- folding deals into a game ------------------------------------------------------------------


def _deal(
    outcome: Outcome, winner: Role | None, points: int, knocker: int | None, **kw: Any
) -> DealResult:
    return DealResult(HandResult(outcome, winner, points), knocker=knocker, **kw)


def test_reached_first_is_the_first_to_cross_the_target() -> None:
    rules = RuleSet(target=100)
    score = GameScore()
    score = add_deal(rules, score, _deal(Outcome.KNOCK, Role.KNOCKER, 60, 1))
    score = add_deal(rules, score, _deal(Outcome.GIN, Role.KNOCKER, 70, 1))
    assert score.reached_first == 1 and score.over(100)
    score = add_deal(rules, score, _deal(Outcome.GIN, Role.KNOCKER, 500, 0))
    assert score.reached_first == 1
    assert score.points == (500, 130)
    assert score.hands_won == (1, 2)
    assert score.hands_played == 3


def test_undercut_credits_the_defender_seat() -> None:
    score = add_deal(RuleSet(), GameScore(), _deal(Outcome.UNDERCUT, Role.DEFENDER, 30, 0))
    assert score.points == (0, 30)
    assert score.hands_won == (0, 1)


@pytest.mark.parametrize(
    "deal",
    [
        _deal(Outcome.DEAD, None, 0, None),
        _deal(Outcome.TIE, None, 0, 1),
    ],
    ids=["dead hand", "tie without undercut"],
)
def test_hands_without_a_winner_score_nothing_and_win_no_box(deal: DealResult) -> None:
    score = add_deal(RuleSet(), GameScore(), deal)
    assert score.points == (0, 0)
    assert score.hands_won == (0, 0)
    assert score.hands_played == 1


def test_misknock_penalties_count_toward_the_game_but_win_no_box() -> None:
    deal = _deal(
        Outcome.DEAD,
        None,
        0,
        None,
        penalties=(25, 0),
        misknocks=(Misknock(1, CARDS[0], 30),),
    )
    score = add_deal(RuleSet(target=20), GameScore(), deal)
    assert score.points == (25, 0)
    assert score.hands_won == (0, 0)
    assert score.reached_first == 0


# --- dealers ------------------------------------------------------------------------------------

#: name: (overrides, dealer, winner, dead, next dealer)
NEXT_DEALER_CASES: dict[str, tuple[dict[str, Any], int, int | None, bool, int]] = {
    "alternate after a win by the dealer": ({}, 0, 0, False, 1),
    "alternate after a win by the non-dealer": ({}, 0, 1, False, 1),
    "loser deals": ({"next_dealer": "loser"}, 0, 0, False, 1),
    "loser deals (seat 0 lost)": ({"next_dealer": "loser"}, 0, 1, False, 0),
    "winner deals": ({"next_dealer": "winner"}, 1, 0, False, 0),
    "winner deals (seat 1 won)": ({"next_dealer": "winner"}, 0, 1, False, 1),
    "tie alternates": ({"next_dealer": "winner"}, 0, None, False, 1),
    "dead hand: same dealer": ({}, 1, None, True, 1),
    "dead hand: other dealer": ({"dead_hand_dealer": "other"}, 1, None, True, 0),
}


@pytest.mark.parametrize(
    ("overrides", "dealer", "winner", "dead", "expected"),
    NEXT_DEALER_CASES.values(),
    ids=NEXT_DEALER_CASES.keys(),
)
def test_next_dealer(
    overrides: dict[str, Any], dealer: int, winner: int | None, dead: bool, expected: int
) -> None:
    assert next_dealer(RuleSet(**overrides), dealer, winner, dead) == expected


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 17, "match-42"])
def test_cut_for_deal_lowest_card_deals(seed: int | str) -> None:
    cut = cut_for_deal(seed)
    assert cut == cut_for_deal(seed)
    *redo, (a, b) = cut.cards
    assert all(x % 13 == y % 13 for x, y in redo)  # equal ranks cut again
    assert a % 13 != b % 13
    assert cut.dealer == (0 if a % 13 < b % 13 else 1)
    assert first_dealer(seed, 0) == cut.dealer
    assert [first_dealer(seed, g) for g in range(4)] == [cut.dealer, 1 - cut.dealer] * 2


def test_cut_sometimes_needs_another_round_and_either_seat_may_deal() -> None:
    cuts = [cut_for_deal(seed) for seed in range(200)]
    assert {c.dealer for c in cuts} == {0, 1}
    assert any(len(c.cards) > 1 for c in cuts)


def test_deal_decks_are_seeded_per_game_and_deal() -> None:
    assert deal_deck(7, 0, 0) == deal_deck(7, 0, 0)
    assert deal_deck(7, 0, 0) != deal_deck(7, 0, 1) != deal_deck(7, 1, 1)
    assert sorted(deal_deck(7, 2, 3)) == list(range(52))


# --- a match ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("best_of", "needed"), [(5, 3), (3, 2), (1, 1)], ids=["best of five", "three", "one"]
)
def test_match_is_won_by_a_majority_of_games(best_of: int, needed: int) -> None:
    rules = RuleSet(best_of=best_of, target=100)
    assert games_to_win(rules) == needed
    record = play_match([HeuristicPlayer(), RandomPlayer(seed=3)], rules, seed=11)
    wins = record.games_won
    assert max(wins) == needed and min(wins) < needed
    assert needed <= len(record.games) <= best_of
    assert record.winner == (0 if wins[0] > wins[1] else 1)
    assert record.forfeit is None


def test_match_games_alternate_the_first_dealer_and_settle_their_totals() -> None:
    rules = RuleSet()
    record = play_match(
        [HeuristicPlayer(), HeuristicPlayer(name="cautious", late_knock=2)], rules, seed=5
    )
    assert max(record.games_won) == 3
    cut = cut_for_deal(5).dealer
    for game in record.games:
        assert game.first_dealer == cut ^ (game.index & 1)
        assert game.hands[0].dealer == game.first_dealer
        score = GameScore()
        dealer = game.first_dealer
        for hand in game.hands:
            assert hand.dealer == dealer
            score = add_deal(rules, score, hand.result)
            dealer = next_dealer(rules, dealer, hand.result.winner, hand.result.knocker is None)
        assert score.reached_first is not None
        assert max(score.points) >= rules.target
        assert final_totals(rules, score) == game.result


def test_match_record_json_has_the_stable_fields() -> None:
    record = play_match([HeuristicPlayer(), RandomPlayer(seed=1)], RuleSet(target=60), seed=2)
    data = record.to_dict()
    assert data["winner"] in ("a", "b")
    assert data["forfeit"] is None
    assert isinstance(data["faults"], list) and isinstance(data["misknocks"], list)
    for game in data["games"]:
        assert game["winner"] in ("a", "b")
        assert set(game["points"]) == set(game["totals"]) == {"a", "b"}
        for hand in game["hands"]:
            assert hand["outcome"] in ("knock", "undercut", "gin", "big_gin", "dead", "tie")
            assert hand["winner"] in ("a", "b", None)
            assert isinstance(hand["points"], int)


# --- faults (RULES.md "Bots' faults are not rules events") -------------------------------------


@dataclass
class FaultyPlayer:
    """Faults on every request (or cannot be reached at all)."""

    name: str = "faulty"
    unreachable: bool = False

    def start(self, context: MatchContext) -> Fault | None:
        return Fault(FaultKind.CONNECTION, "refused") if self.unreachable else None

    def act(self, turn: Turn) -> Action | Fault:
        return Fault(FaultKind.TIMEOUT, "too slow")

    def end(self, summary: dict[str, object]) -> None:
        return None


def test_max_strikes_forfeits_the_match_after_safe_fallbacks() -> None:
    record = play_match([HeuristicPlayer(), FaultyPlayer()], RuleSet(max_strikes=3), seed=4)
    assert record.forfeit is not None and record.forfeit[0] == 1
    assert record.winner == 0
    assert [f.seat for f in record.faults] == [1, 1, 1]
    assert all(f.fallback is not None and f.fallback["action"] != "knock" for f in record.faults)
    assert record.to_dict()["forfeit"]["seat"] == "b"


def test_a_bot_unreachable_at_the_start_forfeits_at_once() -> None:
    record = play_match([FaultyPlayer(unreachable=True), HeuristicPlayer()], RuleSet(), seed=4)
    assert record.forfeit is not None and record.forfeit[0] == 0
    assert (record.winner, record.games) == (1, ())


def test_both_unreachable_is_not_played_and_forfeits_neither() -> None:
    """Two bots unreachable at once is the arena's failure, not a double forfeit."""
    players = [FaultyPlayer(unreachable=True), FaultyPlayer(name="other", unreachable=True)]
    with pytest.raises(NeitherStartedError, match="neither player could be started"):
        play_match(players, RuleSet(), seed=4)


def test_an_illegal_action_is_a_fault_answered_by_the_fallback() -> None:
    class Illegal(FaultyPlayer):
        def act(self, turn: Turn) -> Action | Fault:
            return Action.from_dict({"action": "discard", "card": "As"})

    record = play_match([Illegal(), HeuristicPlayer()], RuleSet(max_strikes=2), seed=9)
    assert [f.kind for f in record.faults] == ["illegal_action", "illegal_action"]
    assert record.forfeit is not None and record.forfeit[0] == 0
