"""The leaderboard at 10,000 bots: the query and ``GET /api/v1/ratings``, p50 and p99.

A scratch database (SQLite, and PostgreSQL when reachable) is migrated and filled directly with
synthetic rows: 10,000 bots, each with a current version and statistics; 9,000 of them with a
whole-history fit, 500 rated by live Elo only (a rating-history row, no fit yet) and 500 not
rated at all (the ``unrated`` list); one in twenty inactive, one in fifty suspended. Then:

* ``query``: :func:`arena.reading.queries.bots.ratings_board` (the first 100 of the leaderboard
  and of the unrated list, what the API reads), called directly;
* ``api``: ``GET /api/v1/ratings`` through the Flask test client (no network, rate limits off):
  the leaderboard, the unrated list and the JSON;

each many times after a warm-up, timed one by one (``time.perf_counter``). Target: the API's p99
under 10 ms at 10,000 bots.

    .venv/bin/python benchmarks/bench_leaderboard.py           # full run, writes results
    .venv/bin/python benchmarks/bench_leaderboard.py --quick   # 1,000 bots, SQLite, no JSON

``--pg-admin-url`` names the PostgreSQL server (a scratch database is created and dropped);
``--databases sqlite`` skips it. A full run writes ``benchmarks/results/leaderboard.json``;
``--quick`` writes nothing unless given ``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

import numpy as np
from sqlalchemy import create_engine, insert, text, update

from arena.api import close_app, create_app
from arena.db.migrate import upgrade
from arena.db.models import (
    BotRow,
    BotStatsRow,
    BotVersionRow,
    MatchRow,
    RatingFitRow,
    RatingHistoryRow,
)
from arena.db.session import Database
from arena.reading.queries import bots as bot_queries
from arena.settings import Settings
from arena.states import BotStatus

RESULTS = Path(__file__).parent / "results" / "leaderboard.json"
PG_ADMIN_URL = "postgresql+psycopg://postgres@127.0.0.1:5432/test"
TARGET_P99_MS: Final = 10.0


def fill(db: Database, bots: int, seed: int) -> dict[str, int]:
    """Insert the synthetic arena (see the module docstring); returns what was inserted."""
    rng = np.random.default_rng(seed)
    fitted, elo_only = int(bots * 0.9), int(bots * 0.05)
    status = np.where(
        rng.random(bots) < 0.05,
        BotStatus.INACTIVE.value,
        np.where(rng.random(bots) < 0.02, BotStatus.SUSPENDED.value, BotStatus.ACTIVE.value),
    )
    ratings = rng.normal(1500.0, 250.0, bots)
    stderr = rng.uniform(15.0, 120.0, bots)
    matches = rng.integers(1, 400, bots)
    rated_at = datetime(2026, 1, 1, tzinfo=UTC)
    with db.session() as session:
        session.execute(
            insert(BotRow),
            [
                {
                    "id": k + 1,
                    "name": f"bot-{k + 1:05d}",
                    "owner": f"owner-{k % 997}",
                    "url": f"https://bots.example/{k + 1}",
                    "protocol_version": "1",
                    "token_hash": f"{k:064x}",
                    "secret": "whsec_" + "x" * 32,
                    "status": BotStatus(status[k]),
                    "elo": float(ratings[k] + rng.normal(0.0, 30.0)),
                    "current_version_id": k + 1,
                    # Rated (fitted, or by Elo alone) once a rated match was recorded.
                    "rated_at": rated_at + timedelta(seconds=k) if k < fitted + elo_only else None,
                }
                for k in range(bots)
            ],
        )
        session.execute(
            insert(BotVersionRow),
            [
                {
                    "id": k + 1,
                    "bot_id": k + 1,
                    "number": 1,
                    "label": f"v{k % 7}.{k % 11}",
                    "url": f"https://bots.example/{k + 1}",
                    "reason": "registered",
                }
                for k in range(bots)
            ],
        )
        session.execute(
            insert(BotStatsRow),
            [
                {
                    "bot_id": k + 1,
                    "matches": int(matches[k]),
                    "wins": int(matches[k]) // 2,
                    "losses": int(matches[k]) - int(matches[k]) // 2,
                    "latency_histogram": [0] * 40,
                }
                for k in range(bots)
            ],
        )
        session.execute(
            insert(RatingFitRow),
            [
                {
                    "bot_id": k + 1,
                    "rating": float(ratings[k]),
                    "ci_low": float(ratings[k] - 1.96 * stderr[k]),
                    "ci_high": float(ratings[k] + 1.96 * stderr[k]),
                    "stderr": float(stderr[k]),
                    "matches": int(matches[k]),
                    "provisional": bool(matches[k] < 10),
                }
                for k in range(fitted)
            ],
        )
    _add_elo_only(db, range(fitted, fitted + elo_only))
    return {
        "bots": bots,
        "fitted": fitted,
        "elo_only": elo_only,
        "unrated": bots - fitted - elo_only,
    }


def _add_elo_only(db: Database, bots: range) -> None:
    """Rating-history rows (rated by Elo, not fitted yet) need a match to point at."""
    with db.session() as session:
        session.execute(
            insert(MatchRow),
            [
                {
                    "id": 1,
                    "bot_a_id": 1,
                    "bot_b_id": 2,
                    "rules": {},
                    "seed": 0,
                    "rated": True,
                }
            ],
        )
        session.execute(
            insert(RatingHistoryRow),
            [{"bot_id": k + 1, "match_id": 1, "before": 1500.0, "after": 1512.0} for k in bots],
        )
    with db.session() as session:
        session.execute(
            update(BotRow).where(BotRow.id.in_([k + 1 for k in bots])).values(elo=1512.0)
        )


def time_calls(call: Callable[[], object], *, requests: int, warmup: int) -> dict[str, float]:
    """Latency of ``call`` in milliseconds: p50, p99, max and mean over ``requests`` calls."""
    for _ in range(warmup):
        call()
    samples = []
    for _ in range(requests):
        started = time.perf_counter()
        call()
        samples.append((time.perf_counter() - started) * 1000.0)
    samples.sort()
    return {
        "requests": requests,
        "p50_ms": samples[len(samples) // 2],
        "p99_ms": samples[min(len(samples) - 1, int(len(samples) * 0.99))],
        "max_ms": samples[-1],
        "mean_ms": statistics.fmean(samples),
    }


def measure(url: str, *, bots: int, requests: int, seed: int) -> dict[str, Any]:
    """Fill a migrated database at ``url`` and time the query and the API on it."""
    db = Database(url)
    try:
        upgrade(db)
        counts = fill(db, bots, seed)
        if db.dialect == "postgresql":
            with db.engine.connect().execution_options(isolation_level="AUTOCOMMIT") as conn:
                conn.execute(text("VACUUM ANALYZE"))
        elif db.dialect == "sqlite":
            with db.engine.begin() as conn:
                conn.execute(text("ANALYZE"))
        query = time_calls(
            lambda: bot_queries.ratings_board(db, limit=100), requests=requests, warmup=50
        )
        settings = Settings(database_url=url, rate_limit="")
        app = create_app(settings, db=db)
        client = app.test_client()
        first = client.get("/api/v1/ratings")
        assert first.status_code == 200, first.get_data(as_text=True)
        body = first.get_json()
        assert len(body["items"]) == 100 and body["unrated"], "the lists are filled"

        def get() -> None:
            response = client.get("/api/v1/ratings")
            assert response.status_code == 200

        try:
            api = time_calls(get, requests=requests, warmup=50)
        finally:
            close_app(app)
        return {"database": db.dialect, **counts, "query": query, "api": api}
    finally:
        db.dispose()


@contextmanager
def sqlite_url() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="bench-leaderboard-") as folder:
        yield f"sqlite:///{Path(folder) / 'arena.db'}"


@contextmanager
def postgresql_url(admin_url: str) -> Iterator[str]:
    name = f"arena_bench_leaderboard_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    with admin.connect() as conn:
        conn.execute(text(f'CREATE DATABASE "{name}"'))
    try:
        yield admin_url.rsplit("/", 1)[0] + "/" + name
    finally:
        with admin.connect() as conn:
            conn.execute(
                text("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = :n"),
                {"n": name},
            )
            conn.execute(text(f'DROP DATABASE IF EXISTS "{name}"'))
        admin.dispose()


def format_report(results: dict[str, Any]) -> str:
    lines = [
        f"{'database':<11} {'bots':>7} {'what':<6} {'requests':>8} {'p50 ms':>8} {'p99 ms':>8} "
        f"{'max ms':>8} {'mean ms':>8}"
    ]
    for row in results["runs"]:
        for what in ("query", "api"):
            t = row[what]
            lines.append(
                f"{row['database']:<11} {row['bots']:>7,} {what:<6} {t['requests']:>8,} "
                f"{t['p50_ms']:>8.2f} {t['p99_ms']:>8.2f} {t['max_ms']:>8.2f} {t['mean_ms']:>8.2f}"
            )
    for row in results["runs"]:
        p99 = row["api"]["p99_ms"]
        met = "met" if p99 < TARGET_P99_MS else "NOT met"
        lines.append(
            f"target ({row['database']}, {row['bots']:,} bots): GET /api/v1/ratings p99 under "
            f"{TARGET_P99_MS:.0f} ms: {p99:.2f} ms, {met}"
        )
    return "\n".join(lines)


def readme_table(results: dict[str, Any]) -> str:
    """The README's table, made from a full run's JSON."""
    rows = [
        "| database | bots | measured | requests | p50 ms | p99 ms | max ms |",
        "|---|---|---|---|---|---|---|",
    ]
    names = {"query": "`ratings_board()` query", "api": "`GET /api/v1/ratings`"}
    for row in results["runs"]:
        for what in ("query", "api"):
            t = row[what]
            rows.append(
                f"| {row['database']} | {row['bots']:,} | {names[what]} | {t['requests']:,} | "
                f"{t['p50_ms']:.2f} | {t['p99_ms']:.2f} | {t['max_ms']:.2f} |"
            )
    return "\n".join(rows)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="1,000 bots on SQLite; no JSON")
    parser.add_argument("--bots", type=int, default=None, help="default 10000 (quick: 1000)")
    parser.add_argument("--requests", type=int, default=None, help="default 2000 (quick: 200)")
    parser.add_argument(
        "--databases", default=None, help="sqlite,postgresql (default; quick: sqlite)"
    )
    parser.add_argument("--pg-admin-url", default=PG_ADMIN_URL)
    parser.add_argument("--seed", type=int, default=20261201)
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    args = parser.parse_args(argv)
    bots = args.bots or (1000 if args.quick else 10_000)
    requests = args.requests or (200 if args.quick else 2000)
    databases = (args.databases or ("sqlite" if args.quick else "sqlite,postgresql")).split(",")
    unknown = set(databases) - {"sqlite", "postgresql"}
    if unknown:
        parser.error(f"unknown database: {', '.join(sorted(unknown))}")
    results: dict[str, Any] = {
        "schema": 1,
        "mode": "quick" if args.quick else "full",
        "machine": {
            "python": platform.python_version(),
            "cpu_count": os.cpu_count(),
            "load_1min_at_start": round(os.getloadavg()[0], 2),
            "date": time.strftime("%Y-%m-%d"),
        },
        "runs": [],
    }
    for name in databases:
        print(f"{name}: {bots:,} bots, {requests:,} requests each ...", flush=True)
        place = sqlite_url() if name == "sqlite" else postgresql_url(args.pg_admin_url)
        with place as url:
            results["runs"].append(measure(url, bots=bots, requests=requests, seed=args.seed))
    results["machine"]["load_1min_at_end"] = round(os.getloadavg()[0], 2)
    print(format_report(results))
    path = args.json or (None if args.quick else RESULTS)
    if path is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
