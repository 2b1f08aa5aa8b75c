"""An arena failure never scores a loss for a bot that did nothing wrong (issue 10, 1.1), through
a real Celery worker and in a tournament, as the API shows it; and two bots unreachable at once
is an arena failure (most likely the arena's own network), not a double forfeit.

* Celery: a round robin of three bots, one of which the arena cannot build a player for (its
  stored secret is corrupt: an exception in the arena's code). A real ``gin-arena worker`` plays
  every match; the broken bot's two matches are tried ``ARENA_MAX_ATTEMPTS`` times, then void.
  The API's match view of a void match shows no winner and no forfeit, its bracket pairing a
  draw with nobody forfeited, its standings no loss for anyone from it, and the ratings of
  the voided bot are unchanged.
* Hostile answers (an error page with NUL bytes, nested JSON, a 101) through a real worker:
  the sender forfeits, recorded once; never an arena failure that voids the match.
* Both unreachable: a round robin of two dead URLs and one live bot. The dead-v-dead match is
  void (it used to be a loss for both); each dead bot, unreachable while its opponent answered,
  still forfeits that match and is withdrawn from the tournament.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from arena_procs import Workers, house_bots, wait_until
from celery_fixtures import *  # noqa: F403 - pytest fixtures
from flask.testing import FlaskClient
from loopback import free_port, http_response
from sqlalchemy import select, update
from test_hostile_records import AnswersWith

from arena.api import close_app, create_app
from arena.db.models import (
    BotRow,
    BotStatsRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
    TournamentEntryRow,
    TournamentRow,
)
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor, LocalExecutor
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.tournaments import create_tournament, load_plan, start_tournament
from arena.settings import Settings, load_settings
from arena.states import MatchStatus, TournamentStatus

pytestmark = [pytest.mark.postgres, pytest.mark.redis]

RULES = RuleSet(target=50, best_of=1)


@pytest.fixture
def worker_env() -> dict[str, str]:
    return {
        "ARENA_ALLOW_LOOPBACK": "true",
        "ARENA_LEASE_SECONDS": "10",
        "ARENA_MAX_ATTEMPTS": "2",
        "ARENA_TASK_SOFT_TIME_LIMIT": "50",
        "ARENA_TASK_TIME_LIMIT": "60",
        "ARENA_VISIBILITY_TIMEOUT": "90",
    }


@pytest.fixture
def api(pg_url: str) -> Iterator[FlaskClient]:
    """The public API over the test database (no token: what anyone sees)."""
    db = Database(pg_url)
    app = create_app(Settings(database_url=pg_url, rate_limit=""), db=db)
    app.config["TESTING"] = True
    try:
        yield app.test_client()
    finally:
        close_app(app)
        db.dispose()


def finished(db: Database, tournament_id: int) -> bool:
    with db.session() as s:
        return s.get_one(TournamentRow, tournament_id).status is TournamentStatus.FINISHED


def get(api: FlaskClient, path: str) -> Any:
    response = api.get(path)
    assert response.status_code == 200, response.get_data(as_text=True)
    return response.json


def test_an_arena_failure_under_celery_is_void_in_the_api_bracket_standings_and_ratings(
    db: Database, workers: Workers, executor: CeleryExecutor, api: FlaskClient
) -> None:
    workers.start("w1", concurrency=2)
    with house_bots(["greedy", "strong", "random"]) as servers:
        ids = [
            register_bot(db, name=name, owner="t", url=server.url).bot_id
            for name, server in zip(["broken", "sound-1", "sound-2"], servers, strict=True)
        ]
        with db.session() as s:
            s.execute(update(BotRow).where(BotRow.id == ids[0]).values(secret="whsec_not-base64!"))
        tid = create_tournament(
            db, name="t", format_name="round_robin", bot_ids=ids, rules=RULES, seed=3
        )
        start_tournament(db, tid, executor.submit)
        wait_until(
            lambda: finished(db, tid), timeout=180, what="the tournament", explain=workers.logs
        )

    broken = ids[0]
    with db.session() as s:
        matches = list(s.scalars(select(MatchRow).where(MatchRow.tournament_id == tid)))
        void = [m for m in matches if broken in (m.bot_a_id, m.bot_b_id)]
        assert len(void) == 2 and len(matches) == 3
        assert all(m.status is MatchStatus.FAILED and m.attempt == 2 for m in void)
        void_ids = [m.id for m in void]
        assert not list(
            s.scalars(select(MatchResultRow).where(MatchResultRow.match_id.in_(void_ids)))
        )
        assert not list(
            s.scalars(select(RatingHistoryRow).where(RatingHistoryRow.match_id.in_(void_ids)))
        )
        stats = s.get_one(BotStatsRow, broken)
        assert (stats.matches, stats.losses, stats.forfeits) == (0, 0, 0)
        assert s.get_one(BotRow, broken).elo == 1500.0

    for match_id in void_ids:
        view = get(api, f"/api/v1/matches/{match_id}")
        assert view["status"] == "failed" and view["winner"] is None
        assert view["forfeit"] is None and view["games_won"] == {"a": 0, "b": 0}
        assert view["error"] is not None and "gave up after 2 attempts" in view["error"]
        assert "Traceback" not in view["error"]
    bracket = get(api, f"/api/v1/tournaments/{tid}/bracket")
    pairings = [p for sec in bracket["sections"] for r in sec["rounds"] for p in r["pairings"]]
    seats = [(p, [(p[s] or {}).get("bot_id") for s in ("a", "b")]) for p in pairings]
    against_broken = [p for p, bots in seats if broken in bots and None not in bots]
    assert len(against_broken) == 2, pairings
    for p in against_broken:
        assert p["winner"] is None and p["result"]["winner"] is None
        assert p["result"]["forfeited"] == []
    standings = {
        row["bot_id"]: row for row in get(api, f"/api/v1/tournaments/{tid}/standings")["items"]
    }
    assert standings[broken]["losses"] == 0
    assert standings[ids[1]]["losses"] + standings[ids[2]]["losses"] == 1
    bot = get(api, f"/api/v1/bots/{broken}")
    assert bot["elo"] == 1500.0


def test_two_bots_unreachable_at_once_void_their_match_and_each_is_withdrawn_alone(
    db: Database,
) -> None:
    """Both dead at the start used to score a loss for both; now that match is void (tried
    again first), while each dead bot still forfeits against the live one and is withdrawn."""
    settings = load_settings(
        {}, database_url=db.url, allow_loopback=True, lease_seconds=30, max_attempts=2
    )
    with house_bots(["greedy"]) as (live,):
        urls = [f"http://127.0.0.1:{free_port()}", f"http://127.0.0.1:{free_port()}", live.url]
        ids = [
            register_bot(db, name=name, owner="t", url=url).bot_id
            for name, url in zip(["dead-1", "dead-2", "live"], urls, strict=True)
        ]
        tid = create_tournament(
            db, name="t", format_name="round_robin", bot_ids=ids, rules=RULES, seed=5
        )
        with LocalExecutor(settings, processes=1, threads=3) as local:
            start_tournament(db, tid, local.submit)
            wait_until(lambda: finished(db, tid), timeout=120, what="the tournament")

    dead = set(ids[:2])
    with db.session() as s:
        matches = list(s.scalars(select(MatchRow).where(MatchRow.tournament_id == tid)))
        both_dead = [m for m in matches if {m.bot_a_id, m.bot_b_id} == dead]
        assert len(both_dead) == 1
        (m,) = both_dead
        assert (m.status, m.winner, m.forfeit_seat) == (MatchStatus.FAILED, None, None)
        assert m.attempt == 2 and m.error is not None
        assert "neither player could be started" in m.error
        against_live = [m for m in matches if m not in both_dead]
        assert len(against_live) == 2
        for m in against_live:
            assert m.status is MatchStatus.FINISHED
            assert m.forfeit_reason is not None
            assert m.forfeit_reason.startswith("unreachable at the start")
            live_seat = "a" if m.bot_a_id == ids[2] else "b"
            assert m.winner == live_seat
        entries = {e.bot_id: e for e in s.scalars(select(TournamentEntryRow))}
        assert entries[ids[0]].withdrawn and entries[ids[1]].withdrawn
        assert not entries[ids[2]].withdrawn
        losses = {row.bot_id: row.losses for row in s.scalars(select(BotStatsRow))}
        assert losses == {ids[0]: 1, ids[1]: 1, ids[2]: 0}  # one loss each, not two
    _, plan = load_plan(db, tid)
    standings = {s.participant: s for s in plan.standings}
    assert standings[str(ids[0])].losses == 1 and standings[str(ids[1])].losses == 1


@pytest.mark.parametrize(
    "reply",
    [
        http_response(b"\x00\xff boom \x00", "500 Internal Server Error"),
        http_response(b'{"action":"pass","x":' + b"[" * 1000 + b"]" * 1000 + b"}"),
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
    ],
    ids=["error_page_with_nul", "nested_1000", "101_upgrade"],
)
def test_hostile_answers_under_celery_are_the_senders_forfeit_recorded_once(
    db: Database, workers: Workers, executor: CeleryExecutor, reply: bytes
) -> None:
    """Through a real worker: the hostile bot forfeits and its opponent wins, once; the match
    is never failed or void (which would deny the opponent its win)."""
    workers.start("w1", concurrency=1)
    with AnswersWith(reply).running() as hostile, house_bots(["greedy"]) as (house,):
        a = register_bot(db, name="hostile", owner="t", url=hostile.url).bot_id
        b = register_bot(db, name="house", owner="t", url=house.url).bot_id
        with db.session() as s:
            match_id = schedule_match(s, a, b, rules=RULES, seed=1).id
        executor.submit([match_id])

        def done() -> bool:
            with db.session() as s:
                return s.get_one(MatchRow, match_id).status in (
                    MatchStatus.FINISHED,
                    MatchStatus.FAILED,
                )

        wait_until(done, timeout=120, what="the match", explain=workers.logs)
    with db.session() as s:
        match = s.get_one(MatchRow, match_id)
        assert (match.status, match.attempt) == (MatchStatus.FINISHED, 1), match.error
        assert (match.forfeit_seat, match.winner) == ("a", "b")
        assert match.forfeit_reason is not None and "\x00" not in match.forfeit_reason
        results = s.scalars(select(MatchResultRow).where(MatchResultRow.match_id == match_id))
        assert len(list(results)) == 1
        losses = {row.bot_id: row.losses for row in s.scalars(select(BotStatsRow))}
        assert losses == {a: 1, b: 0}
