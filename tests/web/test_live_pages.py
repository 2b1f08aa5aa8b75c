"""The live pages as the server renders them, on SQLite and PostgreSQL: a pending or running
match embeds where its stream is (and no replay), a running tournament, the ladder and the
leaderboard name theirs on ``<body>``, every live page still reloads itself without JavaScript,
a finished match links its deal chips to the replay and offers each seat's view; and the
replay's running score: each deal's game points and games won, before and after it."""

from __future__ import annotations

import itertools
import json
import re
from typing import Any

import pytest
from web_data import SHORT, house_bots, make_app, populate

from arena.db.session import Database
from arena.playing.match import play_match
from arena.playing.players import HeuristicPlayer, RandomPlayer
from arena.rules.ruleset import MatchScoring, RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.tournaments import create_tournament, start_tournament
from arena.web.replay_steps import build_replay, running_scores

NOSCRIPT_REFRESH = re.compile(r'<noscript><meta http-equiv="refresh" content="\d+"></noscript>')
LIVE_DATA = re.compile(r'<script type="application/json" id="live-data">(.*?)</script>', re.S)
REPLAY_DATA = re.compile(r'<script type="application/json" id="replay-data">(.*?)</script>', re.S)


def _get(db: Database, path: str) -> str:
    response = make_app(db).test_client().get(path)
    assert response.status_code == 200, (path, response.status_code)
    return response.get_data(as_text=True)


def _embedded(pattern: re.Pattern[str], page: str) -> dict[str, Any]:
    found = pattern.search(page)
    assert found, pattern.pattern
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_a_pending_match_page_follows_its_stream_and_reloads_without_javascript(
    db: Database,
) -> None:
    a = register_bot(db, name="ann", owner="t", url="http://127.0.0.1:9001").bot_id
    b = register_bot(db, name="bob", owner="t", url="http://127.0.0.1:9002").bot_id
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=SHORT, seed=3).id
    page = _get(db, f"/matches/{match_id}")
    live = _embedded(LIVE_DATA, page)
    assert live["live"] == {"events": f"/api/v1/matches/{match_id}/events"}
    assert live["deals"] == [] and live["names"] == {"a": "ann", "b": "bob"}
    assert "replay-data" not in page, "nothing of the deals before they are played"
    assert NOSCRIPT_REFRESH.search(page) and "replay.js" in page
    assert 'id="btn-play"' in page and 'id="view-select"' not in page


def test_a_finished_match_links_its_deal_chips_and_offers_each_seats_view(db: Database) -> None:
    with house_bots(["greedy"]) as servers:
        data = populate(db, servers, tournament=False)
    match_id = data.matches[0]
    page = _get(db, f"/matches/{match_id}")
    replay = _embedded(REPLAY_DATA, page)
    assert replay["seats"] == {
        seat: f"/api/v1/matches/{match_id}/replay?seat={seat}" for seat in "ab"
    }
    chips = re.findall(r'<a class="deal-chip[^"]*" href="#(g\d+-d\d+-s0)"', page)
    assert chips == [f"g{d['game'] + 1}-d{d['deal'] + 1}-s0" for d in replay["deals"]]
    assert 'id="view-select"' in page and "Space" in page
    assert "refresh" not in page and "live-data" not in page and "data-live-events" not in page


def test_a_running_tournament_the_ladder_and_the_leaderboard_name_their_streams(
    db: Database,
) -> None:
    ids = [
        register_bot(db, name=n, owner="t", url=f"http://127.0.0.1:{9100 + i}").bot_id
        for i, n in enumerate(["ann", "bob", "cy"])
    ]
    cup = create_tournament(
        db, name="Cup", format_name="round_robin", bot_ids=ids, rules=SHORT, seed=1
    )
    start_tournament(db, cup, lambda _ids: None)
    page = _get(db, f"/tournaments/{cup}")
    assert f'<body data-live-events="/api/v1/tournaments/{cup}/events">' in page
    assert NOSCRIPT_REFRESH.search(page) and "live.js" in page
    assert 'id="live-tournament" data-live' in page

    ladder = _get(db, "/ladder")
    assert '<body data-live-events="/api/v1/ladder/events">' in ladder
    assert NOSCRIPT_REFRESH.search(ladder) and 'id="live-ladder" data-live' in ladder

    board = _get(db, "/")
    assert '<body data-live-events="/api/v1/ladder/events">' in board
    assert 'id="live-board" data-live' in board
    assert "refresh" not in board, "the leaderboard never reloaded itself; it still does not"


def _chained(deals: list[dict[str, Any]]) -> None:
    """Within a game each deal starts where the one before ended; games won never go down."""
    for before, after in itertools.pairwise(deals):
        if after["game"] == before["game"]:
            assert after["score"] == before["after"]["score"]
        assert after["games"] == before["after"]["games"]


def test_the_running_score_is_each_games_points_and_the_games_won_around_each_deal() -> None:
    stored = play_match([HeuristicPlayer(), RandomPlayer(seed=3)], RuleSet(), seed=7).to_stored()
    deals = build_replay(stored, {"a": "x", "b": "y"})["deals"]
    assert deals[0]["score"] == {"a": 0, "b": 0} == deals[0]["games"]
    _chained(deals)
    for game in stored.games:
        mine = [d for d in deals if d["game"] == game.index]
        assert mine[0]["score"] == {"a": 0, "b": 0}
        assert mine[-1]["after"]["score"] == {"a": game.points.a, "b": game.points.b}
    won = {"a": stored.games_won.a, "b": stored.games_won.b}
    assert deals[-1]["after"]["games"] == won
    for deal in deals:
        result = deal["result"]
        gained = sum(deal["after"]["score"].values()) - sum(deal["score"].values())
        assert gained == result["points"] * (result["winner"] is not None) + sum(
            result["penalties"].values()
        )


@pytest.mark.parametrize("seed", [7, 11])
def test_under_hollywood_a_win_scores_in_every_game_it_counts_in(seed: int) -> None:
    rules = RuleSet(match_scoring=MatchScoring.HOLLYWOOD, best_of=3, target=100)
    stored = play_match([HeuristicPlayer(), RandomPlayer(seed=3)], rules, seed=seed).to_stored()
    scores = running_scores(stored)
    hands = stored.all_hands()
    assert len(scores) == len(hands)
    # Each deal's game (the earliest open one) gains its points, and the games closed with the
    # deal that took a seat to the target are counted as won from then on.
    assert scores[-1]["after"]["games"] == {"a": stored.games_won.a, "b": stored.games_won.b}
    for (game, hand), score in zip(hands, scores, strict=True):
        if hand.winner is not None and game in (hand.scored_in or [game]):
            gained = score["after"]["score"][hand.winner] - score["score"][hand.winner]
            assert gained >= hand.points
