"""The embedded default: LocalExecutor's worker processes play matches between real HTTP house
bots on loopback and record each exactly once (SQLite and PostgreSQL)."""

from __future__ import annotations

from arena_procs import house_bots, wait_until
from sqlalchemy import func, select

from arena.db.models import BotStats, Match, MatchResult, MatchStatus
from arena.db.session import Database
from arena.executors import LocalExecutor
from arena.replay import load_record, verify_record
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.settings import load_settings


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
                    statuses = s.scalars(select(Match.status).where(Match.id.in_(match_ids)))
                    return set(statuses) == {MatchStatus.FINISHED}

            wait_until(finished, timeout=120, what="the local executor to finish the matches")
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(MatchResult)) == len(match_ids)
        assert sorted(s.scalars(select(BotStats.matches))) == [4, 4, 4]
        assert set(s.scalars(select(Match.attempt))) == {1}
    for match_id in match_ids:
        assert verify_record(load_record(db, match_id)) == []
