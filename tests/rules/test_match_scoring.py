"""Scoring variants of the seeds over games and matches (issue 10, 3.3): shutout doubling the
winner's whole score (seed 000), the net payout of a game (004), Hollywood scoring (000, 004)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from arena.playing.match import play_match
from arena.playing.players import HeuristicPlayer, RandomPlayer
from arena.playing.stored import parse_record
from arena.reading.replay import verify_record
from arena.rules import RuleSet
from arena.rules.game import HollywoodScore
from arena.rules.hand import DealResult
from arena.rules.record import replay_deal
from arena.rules.scoring import GameScore, HandResult, Outcome, Role, final_totals

# --- shutout: the winner's whole score doubled (seed 000) ---------------------------------------

#: name: (overrides, points, hands won, totals)
SHUTOUTS: dict[str, tuple[dict[str, Any], tuple[int, int], tuple[int, int], tuple[int, int]]] = {
    # 260 + 200 (doubled game bonus) + 5 x 25
    "default: the game bonus doubles (seed 004)": ({}, (260, 0), (5, 0), (585, 0)),
    # (260 + 100 + 125) x 2: the whole score doubles, not the bonus
    "seed 000: the winner's score doubles": (
        {"shutout_multiplier": 1, "shutout_total_multiplier": 2}, (260, 0), (5, 0), (970, 0),
    ),
    # both, if a house wants it: (260 + 200 + 125) x 2
    "both doublings": ({"shutout_total_multiplier": 2}, (260, 0), (5, 0), (1170, 0)),
    # no shutout: the field changes nothing
    "not a shutout": ({"shutout_total_multiplier": 2}, (260, 10), (5, 1), (485, 35)),
}  # fmt: skip


@pytest.mark.parametrize(("overrides", "points", "won", "totals"), SHUTOUTS.values(),
                         ids=SHUTOUTS.keys())  # fmt: skip
def test_shutout_total_multiplier_doubles_the_winners_whole_score(
    overrides: dict[str, Any],
    points: tuple[int, int],
    won: tuple[int, int],
    totals: tuple[int, int],
) -> None:
    result = final_totals(RuleSet(**overrides), GameScore(points, won, 0))
    assert result.totals == totals
    assert result.winner == 0


# --- the net payout (seed 004) ------------------------------------------------------------------


@pytest.mark.parametrize(
    ("points", "won", "reached", "net", "winner"),
    [
        ((260, 100), (6, 4), 0, 310, 0),
        ((250, 240), (2, 9), 0, 65, 1),
        ((200, 250), (8, 2), 1, 0, 1),
    ],
    ids=["reacher wins", "box bonus overturns", "equal totals"],
)
def test_net_payout_is_the_difference_of_the_final_totals(
    points: tuple[int, int], won: tuple[int, int], reached: int, net: int, winner: int
) -> None:
    result = final_totals(RuleSet(), GameScore(points, won, reached))
    assert (result.net, result.winner) == (net, winner)
    assert result.net == result.totals[winner] - result.totals[1 - winner]


def test_every_game_record_carries_its_net_payout() -> None:
    record = play_match([HeuristicPlayer(), RandomPlayer(seed=4)], RuleSet(target=60, best_of=3), 7)
    games = record.to_dict()["games"]
    assert games
    for game in games:
        totals = game["totals"]
        loser = "b" if game["winner"] == "a" else "a"
        assert game["net"] == totals[game["winner"]] - totals[loser] >= 0
        assert {"points", "totals", "game_bonus", "box_bonus", "hands_won", "shutout"} <= set(game)


# --- Hollywood scoring (seeds 000 and 004) ------------------------------------------------------


def win(seat: int, points: int, penalties: tuple[int, int] = (0, 0)) -> DealResult:
    return DealResult(HandResult(Outcome.KNOCK, Role.KNOCKER, points), seat, penalties)


DEAD = DealResult(HandResult(Outcome.DEAD, None, 0), None)
HOLLYWOOD = RuleSet(match_scoring="hollywood", best_of=3, target=100)


def sheet_after(*deals: DealResult, rules: RuleSet = HOLLYWOOD) -> HollywoodScore:
    sheet = HollywoodScore.new(rules)
    for deal in deals:
        sheet = sheet.add(rules, deal)
    return sheet


def test_hollywood_first_win_in_game_one_second_in_one_and_two_third_in_all() -> None:
    sheet = sheet_after(win(0, 10), win(0, 20), win(0, 30), win(0, 5))
    assert [g.points for g in sheet.games] == [(65, 0), (55, 0), (35, 0)]
    assert [g.hands_won for g in sheet.games] == [(4, 0), (3, 0), (2, 0)]


def test_hollywood_counts_each_players_wins_apart() -> None:
    sheet = sheet_after(win(0, 10), win(1, 7), win(1, 8), win(0, 20), DEAD, win(1, 9))
    assert [g.points for g in sheet.games] == [(30, 24), (20, 17), (0, 9)]
    assert [g.hands_played for g in sheet.games] == [6, 6, 6]


def test_a_closed_hollywood_game_takes_no_more_points() -> None:
    sheet = sheet_after(win(0, 60), win(0, 50))  # game one closes at 110
    assert sheet.current(100) == 1 and sheet.games[0].reached_first == 0
    sheet = sheet.add(HOLLYWOOD, win(0, 40))
    assert [g.points for g in sheet.games] == [(110, 0), (90, 0), (40, 0)]
    assert sheet.scored_in(sheet_after(win(0, 60), win(0, 50))) == (1, 2)


def test_hollywood_win_after_a_closed_game_scores_in_the_first_open_game_not_nowhere() -> None:
    """Seat 1 was shut out of game one, which closed; its first win goes into the first open
    game in which it has not yet scored (seed 004), not into the closed game one alone (which
    scored it nowhere and left seat 1 "shut out" of game two though it had won a deal there)."""
    sheet = sheet_after(win(0, 60), win(0, 50))  # game one closes at 110-0
    before = sheet
    sheet = sheet.add(HOLLYWOOD, win(1, 30))
    assert sheet.scored_in(before) == (1,)
    assert [g.points for g in sheet.games] == [(110, 0), (50, 30), (0, 0)]
    sheet = sheet.add(HOLLYWOOD, win(1, 20))  # its second: games two and three
    assert [g.points for g in sheet.games] == [(110, 0), (50, 50), (0, 20)]
    assert [g.hands_won for g in sheet.games] == [(2, 0), (1, 2), (0, 1)]


def test_hollywood_penalties_go_to_the_earliest_open_game() -> None:
    sheet = sheet_after(win(0, 120), win(1, 5, penalties=(25, 0)))
    # seat 1's first win goes to the first open game in which it has not scored: game two
    assert [g.points for g in sheet.games] == [(120, 0), (25, 5), (0, 0)]


def test_hollywood_games_settle_with_their_own_bonuses() -> None:
    sheet = sheet_after(win(0, 60), win(1, 10), win(0, 50), win(0, 5))
    # Game one closed at 110-10 on seat 0's second win; its third went to games two and three.
    assert [g.points for g in sheet.games] == [(110, 10), (55, 0), (5, 0)]
    one = final_totals(HOLLYWOOD, sheet.games[0])
    assert one.totals == (110 + 100 + 2 * 25, 10 + 25)
    assert one.box_bonus == (50, 25) and not one.shutout
    assert sheet.games[1].hands_won == (2, 0)


def test_adding_to_a_finished_hollywood_sheet_is_refused() -> None:
    done = sheet_after(win(0, 100), win(0, 100), win(0, 100))
    assert done.current(100) is None
    with pytest.raises(ValueError, match="over"):
        done.add(HOLLYWOOD, win(0, 1))


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_a_hollywood_match_plays_every_game_and_replays(seed: int) -> None:
    rules = RuleSet(match_scoring="hollywood", best_of=3, target=80)
    record = play_match([HeuristicPlayer(), RandomPlayer(seed=seed)], rules, seed=seed)
    assert record.forfeit is None
    assert len(record.games) == 3 and sum(record.games_won) == 3
    assert record.winner == (0 if record.games_won[0] >= 2 else 1)
    data = json.loads(json.dumps(record.to_dict()))
    assert verify_record(parse_record(data)) == []
    # Each deal is recorded once, under the earliest open game, and replays exactly.
    sheet = HollywoodScore.new(rules)
    for _, hand in record.all_hands():
        final = list(replay_deal(hand.deal_record(rules)))[-1]
        assert final.result == hand.result
        before, sheet = sheet, sheet.add(rules, hand.result)
        assert hand.scored_in == sheet.scored_in(before)
    for game in record.games:
        assert game.result == final_totals(rules, sheet.games[game.index])
    # The game dicts keep the plain form; deals say which games they scored in.
    assert all("scored_in" in h for g in data["games"] for h in g["hands"])


def test_plain_games_records_do_not_change_shape() -> None:
    record = play_match([HeuristicPlayer(), RandomPlayer(seed=1)], RuleSet(target=60, best_of=1), 1)
    hands = record.to_dict()["games"][0]["hands"]
    assert hands and all("scored_in" not in h for h in hands)
