"""A 16-bot round robin of house bots over HTTP, through the local executor and through Celery.

One run plays the same tournament twice (same bots, same event seed, so the same 120 matches
with the same deals and seats): once with :class:`LocalExecutor` (2 worker processes) and once
with two ``gin-arena worker`` processes on Redis, both recording into one PostgreSQL database.
Each tournament runs itself: started once, it ends when its last match is recorded.

Figures, for each executor:

* wall time from ``start_tournament`` to the tournament's ``finished`` status, and matches per
  minute;
* the time per match, split into **bot time** (``Match.bot_time_ms``: the sum of both bots'
  latencies, HTTP round trips included), **arena time** (``duration_ms - bot_time_ms``: the
  engine, observations, signing and JSON in the runner), **database time**
  (``record_match_result``: the one transaction writing the result, games, deals, statistics
  and Elo) and **advance time** (``advance_for_match`` after it: plan, schedule, rating refit).

The last two are timed inside the worker processes by ``benchmarks/probe/sitecustomize.py``
(put on their ``PYTHONPATH``). Each bot is a ``gin-arena bot serve`` process of its own, so its
CPU is not the arena's (the machine's CPUs are shared by everything, as in a real deployment
on one host). Each executor plays one unrated warm-up match after its processes start, so
start-up is not timed.

    .venv/bin/python benchmarks/bench_tournament.py [--quick] [--target N] [--json PATH]

Needs PostgreSQL (``--pg-admin-url``; a scratch database is created and dropped) and Redis
(``--redis-url``, default db 13, flushed).
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import redis
from bench_executors import (
    Processes,
    fresh_services,
    serve_house_bots,
    start_celery_workers,
    wait_for,
)
from sqlalchemy import func, select

from arena.bots.house import HOUSE_KINDS
from arena.db.migrate import upgrade
from arena.db.models import BotRow, HandRow, MatchRow, TournamentRow
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor, LocalExecutor
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.tournaments import create_tournament, load_plan, start_tournament
from arena.settings import Settings, load_settings
from arena.states import MatchStatus, TournamentStatus

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "tournament.json"
PROBE = ROOT / "benchmarks" / "probe"
EVENT_SEED = 2024


@dataclass(frozen=True)
class Sizes:
    bots: int
    rules: RuleSet
    threads: int  # matches at once per worker process


FULL = Sizes(bots=16, rules=RuleSet(), threads=8)
QUICK = Sizes(bots=4, rules=RuleSet(target=100, best_of=1), threads=4)


@contextlib.contextmanager
def probed_environ(timings: Path) -> Iterator[dict[str, str]]:
    """This process's environment, changed for the worker processes started inside."""
    changes = {
        "PYTHONPATH": os.pathsep.join(filter(None, [str(PROBE), os.environ.get("PYTHONPATH")])),
        "ARENA_BENCH_TIMINGS": str(timings),
    }
    saved = {k: os.environ.get(k) for k in changes}
    os.environ.update(changes)
    try:
        yield changes
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def register_field(db: Database, prefix: str, urls: Sequence[str]) -> list[int]:
    """One registration per bot server (each executor gets its own, all starting at 1500)."""
    kinds = [HOUSE_KINDS[i % len(HOUSE_KINDS)] for i in range(len(urls))]
    return [
        register_bot(db, name=f"{prefix}-{i:02d}-{kind}", owner="bench", url=url).bot_id
        for i, (kind, url) in enumerate(zip(kinds, urls, strict=True))
    ]


def warm_up(db: Database, submit: Any, bots: Sequence[int], rules: RuleSet) -> None:
    """One unrated match (ratings, and so the seeding, stay untouched)."""
    with db.session() as s:
        match_id = schedule_match(s, bots[0], bots[1], rules=rules, seed=1, rated=False).id
    submit([match_id])

    def done() -> bool:
        with db.session() as s:
            return s.get_one(MatchRow, match_id).status is MatchStatus.FINISHED

    wait_for(done, 300, "the warm-up match")


def play_tournament(
    db: Database, submit: Any, bots: Sequence[int], rules: RuleSet, name: str
) -> tuple[int, float]:
    """Create and start the round robin, wait for it to finish; (tournament id, seconds)."""
    tid = create_tournament(
        db,
        name=name,
        format_name="round_robin",
        bot_ids=list(bots),
        rules=rules,
        seed=EVENT_SEED,
    )
    started = time.perf_counter()
    start_tournament(db, tid, submit)

    def finished() -> bool:
        with db.session() as s:
            return s.get_one(TournamentRow, tid).status is TournamentStatus.FINISHED

    wait_for(finished, 3600, f"tournament {name} to finish")
    return tid, time.perf_counter() - started


def local_run(
    settings: Settings, db: Database, bots: Sequence[int], sizes: Sizes, timings: Path
) -> tuple[int, float]:
    with probed_environ(timings):
        executor = LocalExecutor(settings, processes=2, threads=sizes.threads)
    with executor:
        warm_up(db, executor.submit, bots, sizes.rules)
        return play_tournament(db, executor.submit, bots, sizes.rules, "bench local")


def celery_run(
    settings: Settings,
    db: Database,
    bots: Sequence[int],
    sizes: Sizes,
    env: dict[str, str],
    log_dir: Path,
    timings: Path,
) -> tuple[int, float]:
    procs = Processes(log_dir)
    executor = CeleryExecutor(settings)
    try:
        with probed_environ(timings) as probe:
            start_celery_workers(procs, executor, "benchtour", sizes.threads, {**env, **probe})
        warm_up(db, executor.submit, bots, sizes.rules)
        return play_tournament(db, executor.submit, bots, sizes.rules, "bench celery")
    finally:
        executor.close()
        procs.stop_all()


def read_timings(directory: Path) -> dict[str, dict[int, float]]:
    """kind -> match id -> milliseconds (the last call, should a match be recorded twice)."""
    out: dict[str, dict[int, float]] = {"record": {}, "advance": {}}
    for path in directory.glob("*.tsv"):
        for line in path.read_text().splitlines():
            kind, match_id, ms = line.split("\t")
            out[kind][int(match_id)] = float(ms)
    return out


def summarise(db: Database, tid: int, wall: float, timings: Path) -> dict[str, Any]:
    with db.session() as s:
        rows = list(s.scalars(select(MatchRow).where(MatchRow.tournament_id == tid)))
        deals = s.scalar(
            select(func.count())
            .select_from(HandRow)
            .join(MatchRow, MatchRow.id == HandRow.match_id)
            .where(MatchRow.tournament_id == tid)
        )
    assert {m.status for m in rows} == {MatchStatus.FINISHED}, "every match finished"
    assert max(m.attempt for m in rows) == 1
    probe = read_timings(timings)
    missing = [m.id for m in rows if m.id not in probe["record"]]
    assert not missing, f"no database timing for matches {missing[:5]}"
    bot = [float(m.bot_time_ms or 0) for m in rows]
    arena = [float((m.duration_ms or 0) - (m.bot_time_ms or 0)) for m in rows]
    record = [probe["record"][m.id] for m in rows]
    advance = [probe["advance"].get(m.id, 0.0) for m in rows]
    _, plan = load_plan(db, tid)
    assert plan.finished
    with db.session() as s:
        champion = s.get_one(BotRow, int(plan.champion)).name if plan.champion else None

    def stats(values: list[float]) -> dict[str, float]:
        return {
            "mean": round(statistics.mean(values), 1),
            "median": round(statistics.median(values), 1),
        }

    parts = {"bot": bot, "arena": arena, "database": record, "advance": advance}
    total = sum(sum(v) for v in parts.values())
    return {
        "matches": len(rows),
        "seconds": round(wall, 2),
        "matches_per_minute": round(len(rows) / wall * 60, 1),
        "ms_per_match": {
            "bot": stats(bot),
            "arena": stats(arena),
            "database": stats(record),
            "advance": stats(advance),
        },
        "share_of_match_time": {k: round(sum(v) / total, 3) for k, v in parts.items()},
        "deals_per_match_mean": round((deals or 0) / len(rows), 1),
        "champion": champion,
    }


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="4 bots, short games; no JSON")
    parser.add_argument("--target", type=int, help="game target (default 250: standard rules)")
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument(
        "--pg-admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/13")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.target:
        sizes = Sizes(sizes.bots, sizes.rules.replace(target=args.target), sizes.threads)
    load_before = os.getloadavg()[0]

    with tempfile.TemporaryDirectory(prefix="bench-tournament-") as tmp:
        tmp_dir = Path(tmp)
        bot_procs = Processes(tmp_dir)
        try:
            kinds = [HOUSE_KINDS[i % len(HOUSE_KINDS)] for i in range(sizes.bots)]
            urls = serve_house_bots(
                bot_procs, [(f"bot-{i:02d}-{k}", k) for i, k in enumerate(kinds)]
            )
            with fresh_services(args.pg_admin_url, args.redis_url) as (pg_url, env):
                settings = load_settings(env)
                db = Database(pg_url)
                try:
                    upgrade(db)
                    runs: dict[str, dict[str, Any]] = {}
                    local_dir = tmp_dir / "timings-local"
                    local_dir.mkdir()
                    bots = register_field(db, "local", urls)
                    tid, wall = local_run(settings, db, bots, sizes, local_dir)
                    runs["local"] = summarise(db, tid, wall, local_dir)
                    print(f"local : {runs['local']}", file=sys.stderr)
                    celery_dir = tmp_dir / "timings-celery"
                    celery_dir.mkdir()
                    bots = register_field(db, "celery", urls)
                    tid, wall = celery_run(settings, db, bots, sizes, env, tmp_dir, celery_dir)
                    runs["celery"] = summarise(db, tid, wall, celery_dir)
                    print(f"celery: {runs['celery']}", file=sys.stderr)
                finally:
                    db.dispose()
            client = redis.Redis.from_url(args.redis_url)
            client.flushdb()
            client.close()
        finally:
            bot_procs.stop_all()

    load_after = os.getloadavg()[0]
    rules = sizes.rules
    rules_text = (
        "standard (best of 5, games to 250)"
        if rules == RuleSet()
        else f"best of {rules.best_of}, games to {rules.target}"
    )
    result = {
        "command": "benchmarks/bench_tournament.py"
        + (" --quick" if args.quick else "")
        + (f" --target {args.target}" if args.target else ""),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1min_before": round(load_before, 2),
            "loadavg_1min_after": round(load_after, 2),
        },
        "tournament": {
            "format": "round_robin",
            "bots": sizes.bots,
            "kinds": [HOUSE_KINDS[i % len(HOUSE_KINDS)] for i in range(sizes.bots)],
            "matches": sizes.bots * (sizes.bots - 1) // 2,
            "event_seed": EVENT_SEED,
            "rules": rules_text,
            "bot_servers": "one `gin-arena bot serve` process per bot",
            "worker_processes": 2,
            "matches_at_once_per_process": sizes.threads,
            "database": "postgresql",
        },
        "local": runs["local"],
        "celery": runs["celery"],
    }
    print()
    print(format_report(result))
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


def _mean_median(figures: dict[str, float]) -> str:
    return f"{figures['mean']:.0f} ({figures['median']:.0f})"


def format_report(result: dict[str, Any]) -> str:
    t = result["tournament"]
    lines = [
        f"Tournament: {t['bots']}-bot round robin ({t['matches']} matches), {t['rules']}, "
        f"house bots over HTTP (one process each), 2 worker processes x "
        f"{t['matches_at_once_per_process']} matches at once, PostgreSQL",
        f"  {'':<8} {'':>8} {'':>12}  {'ms per match, mean (median)':^64}",
        f"  {'executor':<8} {'seconds':>8} {'matches/min':>12}  "
        + " ".join(f"{k:>15}" for k in ("bot", "arena", "database", "advance")),
    ]
    for name in ("local", "celery"):
        run = result[name]
        per = run["ms_per_match"]
        cells = " ".join(
            f"{_mean_median(per[k]):>15}" for k in ("bot", "arena", "database", "advance")
        )
        lines.append(
            f"  {name:<8} {run['seconds']:>8.1f} {run['matches_per_minute']:>12.1f}  {cells}"
        )
    for name in ("local", "celery"):
        share = result[name]["share_of_match_time"]
        lines.append(
            f"  {name} share of match time: " + ", ".join(f"{k} {v:.1%}" for k, v in share.items())
        )
    m = result["machine"]
    lines.append(
        f"  champion: {result['local']['champion']} (local), "
        f"{result['celery']['champion']} (celery)"
    )
    lines.append(
        f"deals per match: {result['local']['deals_per_match_mean']} (local), "
        f"{result['celery']['deals_per_match_mean']} (celery); load average (1 min): "
        f"{m['loadavg_1min_before']:.2f} before, {m['loadavg_1min_after']:.2f} after on "
        f"{m['cpus']} CPUs"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
