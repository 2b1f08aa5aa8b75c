"""The embedded default: LocalExecutor's worker processes play matches between real HTTP house
bots on loopback and record each exactly once (SQLite and PostgreSQL); a match reaches them
because a service submitted it, and the pickup finds those another process made."""

from __future__ import annotations

from arena_procs import house_bots, wait_until
from sqlalchemy import func, select

from arena.api import close_app, create_app
from arena.db.models import BotStatsRow, MatchResultRow, MatchRow
from arena.db.session import Database
from arena.playing.executors import LocalExecutor
from arena.reading.replay import load_record, verify_record
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.settings import load_settings
from arena.states import MatchStatus


def test_local_executor_plays_and_records_every_match_once(db: Database) -> None:
    settings = load_settings({}, database_url=db.url, allow_loopback=True, lease_seconds=30)
    with house_bots(["greedy", "strong", "random"]) as bots:
        ids = [register_bot(db, name=b.info.name, owner="t", url=b.url).bot_id for b in bots]
        pairs = [(0, 1), (1, 2), (2, 0), (1, 0), (2, 1), (0, 2)]
        with db.session() as s:
            match_ids = [
                schedule_match(s, ids[a], ids[b], rules=RuleSet(target=100), seed=i).id
                for i, (a, b) in enumerate(pairs)
            ]
        with LocalExecutor(settings, processes=2, threads=4) as executor:
            executor.submit(match_ids)

            def finished() -> bool:
                with db.session() as s:
                    statuses = s.scalars(select(MatchRow.status).where(MatchRow.id.in_(match_ids)))
                    return set(statuses) == {MatchStatus.FINISHED}

            wait_until(finished, timeout=120, what="the local executor to finish the matches")
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(MatchResultRow)) == len(match_ids)
        assert sorted(s.scalars(select(BotStatsRow.matches))) == [4, 4, 4]
        assert set(s.scalars(select(MatchRow.attempt))) == {1}
    for match_id in match_ids:
        assert verify_record(load_record(db, match_id)) == []


def _statuses(db: Database, match_ids: list[int]) -> dict[int, MatchStatus]:
    with db.session() as s:
        rows = s.execute(select(MatchRow.id, MatchRow.status).where(MatchRow.id.in_(match_ids)))
        return {row[0]: row[1] for row in rows}


def test_a_match_created_through_the_api_is_handed_to_the_executor_after_commit(
    db: Database,
) -> None:
    """No poll: with the sweeper's pickup off (and no sweep due), the challenge the API's
    service made is played, because it was handed to the executor; a match nobody submitted
    stays pending."""
    settings = load_settings(
        {},
        database_url=db.url,
        allow_loopback=True,
        rate_limit="",
        pickup_interval_seconds=0,
        sweep_interval_seconds=3600,
    )
    with house_bots(["greedy", "strong"]) as bots:
        me, you = (register_bot(db, name=b.info.name, owner="t", url=b.url) for b in bots)
        with db.session() as s:
            forgotten = schedule_match(
                s, me.bot_id, you.bot_id, rules=RuleSet(target=50), seed=1
            ).id
        with LocalExecutor(settings, processes=1, threads=2) as executor:
            app = create_app(settings, db=db, executor=executor)
            try:
                response = app.test_client().post(
                    "/api/v1/challenges",
                    json={
                        "bot_id": me.bot_id,
                        "opponent_id": you.bot_id,
                        "rules": {"fields": {"target": 50, "best_of": 1}},
                    },
                    headers={"Authorization": f"Bearer {me.token}"},
                )
                assert response.status_code == 201, response.json
                challenge = response.json["id"]
                wait_until(
                    lambda: _statuses(db, [challenge])[challenge] is MatchStatus.FINISHED,
                    timeout=60,
                    what="the challenge to be played",
                )
            finally:
                close_app(app)
    assert _statuses(db, [forgotten]) == {forgotten: MatchStatus.PENDING}


def test_the_local_executor_picks_up_pending_matches_another_process_created(
    db: Database,
) -> None:
    """``gin-arena tournament start`` in another shell, or an API with no executor of its
    own, leaves matches pending: the pickup (ARENA_PICKUP_INTERVAL_SECONDS, 1 s by default)
    finds them."""
    settings = load_settings({}, database_url=db.url, allow_loopback=True)
    assert settings.pickup_interval_seconds == 1.0
    with house_bots(["greedy", "random"]) as bots:
        ids = [register_bot(db, name=b.info.name, owner="t", url=b.url).bot_id for b in bots]
        with db.session() as s:
            elsewhere = [
                schedule_match(s, ids[0], ids[1], rules=RuleSet(target=50), seed=seed).id
                for seed in (1, 2)
            ]
        with LocalExecutor(settings, processes=1, threads=2):
            wait_until(
                lambda: set(_statuses(db, elsewhere).values()) == {MatchStatus.FINISHED},
                timeout=60,
                what="the local executor to pick up and play the matches",
            )
