"""Executors and the database write path, in one run.

1. Throughput: the same batch of matches (same seeds, the same two house bots served over HTTP
   by separate ``gin-arena bot serve`` processes) through :class:`LocalExecutor` (2 worker
   processes) and through Celery (2 ``gin-arena worker`` processes on Redis), both recording
   into the same PostgreSQL database: matches per minute each, and the ratio.
   Target: Celery within 10% of the local executor.
2. Write cost: ``record_match_result`` for the same match records on SQLite and PostgreSQL:
   milliseconds per match, statements, and rows written (inserted and updated).

Each executor gets a warm-up batch (not timed) after its processes start, so start-up is not
counted; each round runs both executors, local first in odd rounds and Celery first in even
ones, and each executor's best round is reported (with every round's figure).

    .venv/bin/python benchmarks/bench_executors.py [--quick] [--json PATH]

``--quick`` is a smoke run: 4 matches of one game to 100 a round, and no JSON.

Needs PostgreSQL (``--pg-admin-url``, default the test server) and Redis (``--redis-url``,
default db 13, flushed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from sqlalchemy import create_engine, event, func, select, text

from arena.db.migrate import upgrade
from arena.db.models import GameRow, HandRow, MatchResultRow, MatchRow, RatingHistoryRow
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor, LocalExecutor
from arena.playing.match import MatchRunner
from arena.playing.records import MatchRecord
from arena.protocol.http_player import HttpPlayer
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import claim_match, schedule_match
from arena.services.recording import record_match_result
from arena.settings import Settings, load_settings
from arena.states import MatchStatus

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "executors.json"
BOT_KINDS = ("greedy", "strong")
INSERT_TABLES = {
    "match_results": MatchResultRow,
    "games": GameRow,
    "hands": HandRow,
    "rating_history": RatingHistoryRow,
}


@dataclass(frozen=True)
class Sizes:
    matches: int  # timed batch per round
    warmup: int
    rounds: int
    threads: int  # matches at once per worker process
    write_records: int  # records timed per database


FULL = Sizes(matches=40, warmup=4, rounds=4, threads=8, write_records=20)
QUICK = Sizes(matches=4, warmup=1, rounds=1, threads=4, write_records=3)


def gin_arena() -> list[str]:
    script = Path(sys.executable).with_name("gin-arena")
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Any, timeout: float, what: str, interval: float = 0.02) -> None:
    deadline = time.monotonic() + timeout
    while not predicate():
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out waiting for {what}")
        time.sleep(interval)


class Processes:
    """Child processes, each killed (and its log closed) on exit."""

    def __init__(self, log_dir: Path) -> None:
        self.log_dir = log_dir
        self.children: list[tuple[subprocess.Popen[bytes], Any]] = []

    def start(self, name: str, argv: Sequence[str], env: dict[str, str]) -> Path:
        log_path = self.log_dir / f"{name}.log"
        log = log_path.open("wb")
        proc = subprocess.Popen(
            list(argv),
            env={**os.environ, **env},
            stdout=log,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
        self.children.append((proc, log))
        return log_path

    def stop_all(self) -> None:
        for proc, _ in self.children:
            if proc.poll() is None:
                proc.send_signal(signal.SIGTERM)
        for proc, log in self.children:
            try:
                proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            log.close()
        self.children.clear()


def bot_ready(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/", timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


@contextlib.contextmanager
def pg_database(admin_url: str) -> Iterator[str]:
    name = f"arena_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield admin_url.rsplit("/", 1)[0] + "/" + name
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def serve_house_bots(procs: Processes, bots: Sequence[tuple[str, str]]) -> list[str]:
    """Start one ``gin-arena bot serve`` process per (label, kind); their URLs once ready."""
    urls = []
    for label, kind in bots:
        port = free_port()
        procs.start(label, [*gin_arena(), "bot", "serve", "--kind", kind, "--port", str(port)], {})
        urls.append(f"http://127.0.0.1:{port}")
    for url in urls:
        wait_for(lambda u=url: bot_ready(u), 60, f"bot at {url}")
    return urls


@contextlib.contextmanager
def fresh_services(admin_url: str, redis_url: str) -> Iterator[tuple[str, dict[str, str]]]:
    """An empty Redis database and a scratch PostgreSQL database, with the arena's env."""
    client = redis.Redis.from_url(redis_url)
    client.flushdb()
    client.close()
    with pg_database(admin_url) as pg_url:
        env = {
            "ARENA_DATABASE_URL": pg_url,
            "ARENA_BROKER_URL": redis_url,
            "ARENA_ALLOW_LOOPBACK": "true",
        }
        yield pg_url, env


def schedule(
    db: Database, bots: tuple[int, int], rules: RuleSet, seeds: Sequence[int]
) -> list[int]:
    with db.session() as s:
        return [schedule_match(s, *bots, rules=rules, seed=seed).id for seed in seeds]


def wait_finished(db: Database, ids: list[int], timeout: float) -> None:
    def done() -> bool:
        with db.session() as s:
            left = s.scalar(
                select(func.count())
                .select_from(MatchRow)
                .where(MatchRow.id.in_(ids), MatchRow.status != MatchStatus.FINISHED)
            )
        return left == 0

    wait_for(done, timeout, f"{len(ids)} matches to finish")


def run_batch(
    db: Database, submit: Any, bots: tuple[int, int], rules: RuleSet, seeds: Sequence[int]
) -> dict[str, float]:
    ids = schedule(db, bots, rules, seeds)
    started = time.perf_counter()
    submit(ids)
    wait_finished(db, ids, timeout=600)
    wall = time.perf_counter() - started
    with db.session() as s:
        first, last = s.execute(
            select(func.min(MatchRow.started_at), func.max(MatchRow.finished_at)).where(
                MatchRow.id.in_(ids)
            )
        ).one()
        attempts = s.scalar(select(func.max(MatchRow.attempt)).where(MatchRow.id.in_(ids)))
    span = (last - first).total_seconds()
    return {
        "matches": len(ids),
        "seconds": round(wall, 3),
        "matches_per_minute": round(len(ids) / wall * 60, 1),
        "db_span_seconds": round(span, 3),
        "max_attempt": int(attempts or 0),
    }


def start_celery_workers(
    procs: Processes,
    executor: CeleryExecutor,
    prefix: str,
    threads: int,
    env: dict[str, str],
    count: int = 2,
) -> None:
    """Start ``count`` ``gin-arena worker`` processes and wait until each answers a ping."""
    names = [f"{prefix}-{w}" for w in range(count)]
    for name in names:
        argv = [*gin_arena(), "worker", "--concurrency", str(threads)]
        argv += ["--hostname", f"{name}@%h", "--loglevel", "WARNING"]
        procs.start(name, argv, env)
    for name in names:
        # "ready" is logged at INFO; at WARNING the worker prints its banner only, so ask the
        # worker itself.
        wait_for(
            lambda n=name: bool(
                executor.app.control.ping([f"{n}@{socket.gethostname()}"], timeout=0.5)
            ),
            120,
            f"worker {name}",
        )


def local_round(
    settings: Settings,
    db: Database,
    bots: tuple[int, int],
    rules: RuleSet,
    sizes: Sizes,
    seeds: Sequence[int],
) -> dict[str, float]:
    with LocalExecutor(settings, processes=2, threads=sizes.threads) as executor:
        run_batch(db, executor.submit, bots, rules, range(10_000, 10_000 + sizes.warmup))
        return run_batch(db, executor.submit, bots, rules, seeds)


def celery_round(
    settings: Settings,
    db: Database,
    bots: tuple[int, int],
    rules: RuleSet,
    sizes: Sizes,
    seeds: Sequence[int],
    env: dict[str, str],
    log_dir: Path,
    index: int,
) -> dict[str, float]:
    procs = Processes(log_dir)
    executor = CeleryExecutor(settings)
    try:
        start_celery_workers(procs, executor, f"bench{index}", sizes.threads, env)
        run_batch(db, executor.submit, bots, rules, range(10_000, 10_000 + sizes.warmup))
        return run_batch(db, executor.submit, bots, rules, seeds)
    finally:
        executor.close()
        procs.stop_all()


def play_records(urls: Sequence[str], rules: RuleSet, seeds: Sequence[int]) -> list[MatchRecord]:
    out = []
    for seed in seeds:
        players = [
            HttpPlayer(u, name=k, allow_loopback=True) for u, k in zip(urls, BOT_KINDS, strict=True)
        ]
        out.append(MatchRunner(players, rules, seed, match_id=f"w{seed}").run())
    return out


def write_cost(url: str, records: Sequence[MatchRecord]) -> dict[str, Any]:
    """Time record_match_result for each record on a freshly migrated database."""
    db = Database(url)
    try:
        upgrade(db)
        bots = tuple(
            register_bot(
                db, name=f"w-{k}", owner="bench", url=f"http://127.0.0.1:{9000 + i}"
            ).bot_id
            for i, k in enumerate(BOT_KINDS)
        )
        statements = {"n": 0, "updated": 0}

        def count(_conn: Any, cursor: Any, statement: str, *_: Any) -> None:
            statements["n"] += 1
            if statement.lstrip().upper().startswith("UPDATE") and cursor.rowcount > 0:
                statements["updated"] += cursor.rowcount

        ms: list[float] = []
        rows_inserted: list[int] = []
        stmts: list[int] = []
        updated: list[int] = []
        for i, record in enumerate(records):
            (match_id,) = schedule(db, (bots[0], bots[1]), record.rules, [int(record.seed)])
            claim = claim_match(db, match_id, "bench", lease_seconds=600, max_attempts=5)
            assert claim is not None
            before = table_rows(db)
            statements.update(n=0, updated=0)
            event.listen(db.engine, "after_cursor_execute", count)
            started = time.perf_counter()
            ok = record_match_result(db, claim, record, duration_ms=1, bot_time_ms=1, elo_k=24.0)
            elapsed = (time.perf_counter() - started) * 1000
            event.remove(db.engine, "after_cursor_execute", count)
            assert ok
            if i == 0:
                continue  # first write warms caches (statement compilation, pages)
            ms.append(elapsed)
            rows_inserted.append(sum(table_rows(db).values()) - sum(before.values()))
            stmts.append(statements["n"])
            updated.append(statements["updated"])
        hands = statistics.mean(
            sum(len(g.hands) for g in r.games) + len(r.unfinished) for r in records[1:]
        )
        return {
            "records": len(ms),
            "ms_median": round(statistics.median(ms), 2),
            "ms_mean": round(statistics.mean(ms), 2),
            "ms_max": round(max(ms), 2),
            "rows_inserted_mean": round(statistics.mean(rows_inserted), 1),
            "rows_updated_mean": round(statistics.mean(updated), 1),
            "statements_mean": round(statistics.mean(stmts), 1),
            "deals_per_match_mean": round(hands, 1),
        }
    finally:
        db.dispose()


def table_rows(db: Database) -> dict[str, int]:
    with db.session() as s:
        return {
            name: int(s.scalar(select(func.count()).select_from(model)) or 0)
            for name, model in INSERT_TABLES.items()
        }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="tiny counts, one game to 100; writes nothing"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--matches", type=int, help="matches in the timed batch")
    parser.add_argument("--rounds", type=int, help="rounds per executor (alternating)")
    parser.add_argument(
        "--pg-admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.matches:
        sizes = Sizes(args.matches, sizes.warmup, sizes.rounds, sizes.threads, sizes.write_records)
    if args.rounds:
        sizes = Sizes(sizes.matches, sizes.warmup, args.rounds, sizes.threads, sizes.write_records)
    # Standard (best of five games to 250) for the figures; the smoke run plays one game to 100.
    rules = RuleSet(target=100, best_of=1) if args.quick else RuleSet()
    rules_label = "one game to 100" if args.quick else "standard (best of 5, games to 250)"
    seeds = list(range(sizes.matches))
    load_before = os.getloadavg()[0]
    cpu_before = time.process_time()

    with tempfile.TemporaryDirectory(prefix="bench-executors-") as tmp:
        tmp_dir = Path(tmp)
        bot_procs = Processes(tmp_dir)
        try:
            urls = serve_house_bots(bot_procs, [(f"bot-{k}", k) for k in BOT_KINDS])
            with fresh_services(args.pg_admin_url, args.redis_url) as (pg_url, env):
                settings = load_settings(env)
                db = Database(pg_url)
                try:
                    upgrade(db)
                    bots = tuple(
                        register_bot(db, name=f"house-{k}", owner="bench", url=u).bot_id
                        for k, u in zip(BOT_KINDS, urls, strict=True)
                    )
                    pair = (bots[0], bots[1])
                    local_runs, celery_runs = [], []
                    for r in range(sizes.rounds):
                        # Each executor goes first in every other round, so neither always
                        # meets the machine (or the database) as the other one left it.
                        order = ("local", "celery") if r % 2 == 0 else ("celery", "local")
                        for kind in order:
                            if kind == "local":
                                run = local_round(settings, db, pair, rules, sizes, seeds)
                                local_runs.append(run)
                            else:
                                run = celery_round(
                                    settings, db, pair, rules, sizes, seeds, env, tmp_dir, r
                                )
                                celery_runs.append(run)
                            print(f"round {r + 1} {kind:<6}: {run}", file=sys.stderr)
                finally:
                    db.dispose()

                records = play_records(urls, rules, seeds[: sizes.write_records])
                with pg_database(args.pg_admin_url) as write_url:
                    pg_cost = write_cost(write_url, records)
            sqlite_cost = write_cost(f"sqlite:///{tmp_dir / 'write.db'}", records)
            client = redis.Redis.from_url(args.redis_url)
            client.flushdb()
            client.close()
        finally:
            bot_procs.stop_all()

    def best_run(runs: list[dict[str, float]]) -> dict[str, Any]:
        """The fastest round (other load on the machine only ever slows a round down)."""
        out: dict[str, Any] = dict(max(runs, key=lambda r: r["matches_per_minute"]))
        out["rounds_matches_per_minute"] = [r["matches_per_minute"] for r in runs]
        return out

    local = best_run(local_runs)
    celery = best_run(celery_runs)
    ratio = celery["matches_per_minute"] / local["matches_per_minute"]
    load_after = os.getloadavg()[0]
    result = {
        "command": "benchmarks/bench_executors.py" + (" --quick" if args.quick else ""),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1min_before": round(load_before, 2),
            "loadavg_1min_after": round(load_after, 2),
        },
        "batch": {
            "matches": sizes.matches,
            "seeds": f"0..{sizes.matches - 1}",
            "rules": rules_label,
            "bots": "house greedy (a) v house strong (b), each a `gin-arena bot serve` process",
            "worker_processes": 2,
            "matches_at_once_per_process": sizes.threads,
            "database": "postgresql",
            "rounds": sizes.rounds,
        },
        "local": local,
        "celery": celery,
        "celery_over_local": round(ratio, 3),
        "target": "celery_over_local >= 0.9",
        "write_cost": {"sqlite": sqlite_cost, "postgresql": pg_cost},
        "driver_cpu_seconds": round(time.process_time() - cpu_before, 2),
    }
    print()
    print(
        f"Executors: {sizes.matches} matches ({rules_label}), greedy v strong over HTTP, "
        f"2 processes x {sizes.threads} matches at once, PostgreSQL (best of "
        f"{sizes.rounds} round(s))"
    )
    print(f"  {'executor':<10} {'matches/min':>12} {'seconds':>9} {'rounds (matches/min)':>24}")
    for name, run in (("local", local), ("celery", celery)):
        rounds = ", ".join(str(x) for x in run["rounds_matches_per_minute"])
        print(f"  {name:<10} {run['matches_per_minute']:>12} {run['seconds']:>9} {rounds:>24}")
    verdict = "meets" if ratio >= 0.9 else "MISSES"
    print(f"  celery / local = {ratio:.3f} ({verdict} the target >= 0.90)")
    print()
    print(
        f"record_match_result ({sizes.write_records - 1} records timed; one match's result, "
        "games, deals, statistics, Elo)"
    )
    print(
        f"  {'database':<11} {'ms median':>10} {'ms mean':>8} {'inserted':>9} "
        f"{'updated':>8} {'statements':>11} {'deals':>6}"
    )
    for name, c in (("sqlite", sqlite_cost), ("postgresql", pg_cost)):
        print(
            f"  {name:<11} {c['ms_median']:>10} {c['ms_mean']:>8} {c['rows_inserted_mean']:>9} "
            f"{c['rows_updated_mean']:>8} {c['statements_mean']:>11} "
            f"{c['deals_per_match_mean']:>6}"
        )
    print(
        f"\nload average (1 min): {load_before:.2f} before, {load_after:.2f} after "
        f"on {os.cpu_count()} CPUs"
    )
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
