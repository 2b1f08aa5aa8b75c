"""The embedded default under load: several processes recording matches into one SQLite file
at once lose nothing and never fail with "database is locked" (WAL, busy timeout, short
transactions that take the write lock with their first statement)."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

from db_support import add_bots, add_match, count, counts, record_matches_worker, stats_of
from sqlalchemy import func, select

from arena.db.models import BotRow, MatchRow
from arena.db.session import Database
from arena.reading.replay import load_record, verify_record
from arena.states import MatchStatus

PROCESSES = 4
THREADS = 3
MATCHES_PER_PROCESS = 6


def test_four_processes_recording_at_once_lose_nothing(
    sqlite_template: Path, tmp_path: Path
) -> None:
    path = tmp_path / "busy.db"
    path.write_bytes(sqlite_template.read_bytes())
    url = f"sqlite:///{path}"
    db = Database(url)
    try:
        bots = add_bots(db, 4)
        pairs = [(bots[i % 4], bots[(i + 1) % 4]) for i in range(PROCESSES * MATCHES_PER_PROCESS)]
        match_ids = [add_match(db, a, b, seed=i) for i, (a, b) in enumerate(pairs)]
        ctx = multiprocessing.get_context("spawn")
        start = ctx.Event()
        out = ctx.Queue()
        procs = [
            ctx.Process(
                target=record_matches_worker,
                args=(url, match_ids[p::PROCESSES], f"p{p}", THREADS, start, out),
            )
            for p in range(PROCESSES)
        ]
        for proc in procs:
            proc.start()
        try:
            start.set()
            results = [item for _ in procs for item in out.get(timeout=240)]
        finally:
            for proc in procs:
                proc.join(timeout=60)
                if proc.is_alive():
                    proc.kill()
                    proc.join()
            out.close()
            out.join_thread()
        errors = [detail for _, status, detail in results if status != "recorded"]
        assert errors == [], errors[0]
        assert sorted(m for m, _, _ in results) == sorted(match_ids)

        with db.session() as s:
            statuses = s.scalars(select(MatchRow.status).distinct()).all()
            elo_sum = s.scalar(select(func.sum(BotRow.elo)))
        assert statuses == [MatchStatus.FINISHED]
        totals = counts(db)
        assert totals["results"] == len(match_ids)
        assert totals["rating_history"] == 2 * len(match_ids)
        assert totals["hands"] == sum(
            len(g.hands) for m in match_ids for g in load_record(db, m).games
        )
        # Every bot played its share; the statistics count each match exactly once.
        assert sum(stats_of(db, b)["matches"] for b in bots) == 2 * len(match_ids)
        assert elo_sum is not None and abs(elo_sum - 4 * 1500.0) < 1e-6
        assert count(db, MatchRow, MatchRow.attempt != 1) == 0
        for match_id in match_ids[:: len(match_ids) // 4]:
            assert verify_record(load_record(db, match_id)) == []
    finally:
        db.dispose()
