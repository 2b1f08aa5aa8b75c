"""The ladder's matchmaking round: the pure policy at 1,000 and 10,000 bots, and the whole
service round on SQLite at 10,000.

1. **Pure round.** :func:`arena.ladder.plan_round` on synthetic entrants: ratings ~ N(1500,
   300), rated matches 0-40 (about a quarter provisional), matches today 0, 2 or 4, one in ten
   with a pair in flight, one in twenty suspended; the default policy at midday. Each repeat
   has its own seed; CPU milliseconds (``time.process_time``), median and worst of the
   repeats. Target: 10,000 bots well under 1 s.
2. **Service round.** :func:`arena.services.ladder.run_round` on a scratch SQLite file with
   10,000 active bots: the round's row, its inputs read in its transaction (active bots, rated
   matches, today's ladder matches per bot, matches in flight), the plan and every match
   inserted, one commit. Three rounds in successive slots; before each of the later two, the
   previous round's matches are marked finished (so the bots are free again and today's
   counts hold 10,000 and then 20,000 matches). Then the day's last round (23:55 UTC) on a
   fresh file whose 10,000 bots have each played 98 of their 100 matches today (490,000
   finished ladder matches in today's rounds, inserted directly): the cost of reading today's
   counts grows with them. Wall milliseconds per round, and the inputs' share of it (the same
   reads timed alone, just before).

    .venv/bin/python benchmarks/bench_ladder.py            # full run (~1 min), writes results
    .venv/bin/python benchmarks/bench_ladder.py --quick    # small sizes (~5 s), writes nothing

A full run writes ``benchmarks/results/ladder.json``; ``--quick`` writes nothing unless given
``--json``.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import random
import statistics
import sys
import tempfile
import time
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any, Final

from sqlalchemy import insert, update

from arena.db.migrate import upgrade
from arena.db.models import BotRow, LadderRoundRow, MatchRow
from arena.db.session import Database
from arena.ladder import Entrant, LadderPolicy, RoundTime, plan_round, slot_of
from arena.rules.ruleset import RuleSet
from arena.services.ladder import _entrants, run_round
from arena.settings import load_settings
from arena.states import BotStatus, MatchStatus

RESULTS = Path(__file__).parent / "results" / "ladder.json"
TARGET_MS: Final = 1000.0
NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)

FULL = {
    "pure_sizes": [1000, 10_000],
    "pure_repeats": 15,
    "service_bots": 10_000,
    "rounds": 3,
    "late_per_bot": 98,
}
QUICK = {
    "pure_sizes": [200, 1000],
    "pure_repeats": 3,
    "service_bots": 500,
    "rounds": 2,
    "late_per_bot": 10,
}


def entrants(n: int, seed: int) -> list[Entrant]:
    """``n`` synthetic entrants (see the module docstring)."""
    rng = random.Random(seed)
    return [
        Entrant(
            bot,
            rng.gauss(1500.0, 300.0),
            rated_matches=rng.randrange(41),
            today=rng.choice((0, 2, 4)),
            in_flight=2 if rng.random() < 0.1 else 0,
            active=rng.random() >= 0.05,
        )
        for bot in range(1, n + 1)
    ]


def bench_pure(sizes: list[int], repeats: int) -> list[dict[str, Any]]:
    """Figure 1: CPU ms of one round per size."""
    policy = LadderPolicy()
    rows = []
    for n in sizes:
        field = entrants(n, seed=n)
        times, matches = [], 0
        for seed in range(repeats):
            start = time.process_time()
            planned = plan_round(field, policy, day_elapsed=0.5, seed=seed)
            times.append((time.process_time() - start) * 1000)
            matches = len(planned)
        rows.append(
            {
                "bots": n,
                "matches": matches,
                "ms_median": round(statistics.median(times), 2),
                "ms_max": round(max(times), 2),
                "repeats": repeats,
            }
        )
    return rows


def _seed_bots(db: Database, n: int) -> None:
    rng = random.Random(7)
    with db.session() as session:
        session.execute(
            insert(BotRow),
            [
                {
                    "name": f"bot{i}",
                    "owner": "bench",
                    "url": f"http://127.0.0.1:{1024 + i % 60000}",
                    "protocol_version": "1.0",
                    "token_hash": f"hash{i}",
                    "secret": "whsec_bench",
                    "status": BotStatus.ACTIVE,
                    "elo": rng.gauss(1500.0, 300.0),
                }
                for i in range(1, n + 1)
            ],
        )


def _seed_today(db: Database, bots: int, per_bot: int, day: datetime, interval: float) -> None:
    """Finished ladder matches in the day's first rounds: ``per_bot`` for every bot (one
    duplicate pair per bot and round, random opponents)."""
    rng = random.Random(11)
    rules = RuleSet.preset("standard").to_dict()
    first = slot_of(day.timestamp(), interval)
    with db.session() as session:
        ids = session.scalars(
            insert(LadderRoundRow).returning(LadderRoundRow.id, sort_by_parameter_order=True),
            [
                {"preset": "standard", "slot": first + k, "scheduled": bots, "policy": {}}
                for k in range(per_bot // 2)
            ],
        ).all()
    order = list(range(1, bots + 1))
    for round_id in ids:
        rng.shuffle(order)
        rows = [
            {
                "bot_a_id": x,
                "bot_b_id": y,
                "rules": rules,
                "seed": 1,
                "rated": True,
                "match_key": f"{x}-{y}:{leg}",
                "ladder_round_id": round_id,
                "status": MatchStatus.FINISHED,
                "winner": "a",
            }
            for a, b in zip(order[::2], order[1::2], strict=True)
            for leg, (x, y) in enumerate(((a, b), (b, a)), start=1)
        ]
        with db.session() as session:
            session.execute(insert(MatchRow), rows)


def _timed_round(db: Database, now: datetime) -> dict[str, Any]:
    """One service round at ``now``, and its inputs read alone just before."""
    settings = load_settings({}, database_url=db.url)
    interval = settings.ladder_interval_seconds
    when = RoundTime(slot_of(now.timestamp(), interval), interval)
    start = time.perf_counter()
    with db.session() as session:
        inputs = _entrants(session, "standard", when)
    inputs_ms = (time.perf_counter() - start) * 1000
    start = time.perf_counter()
    outcome = run_round(db, settings, "standard", now=now)
    total_ms = (time.perf_counter() - start) * 1000
    return {
        "round": now.strftime("%H:%M UTC"),
        "ms": round(total_ms, 1),
        "inputs_ms": round(inputs_ms, 1),
        "entrants": len(inputs),
        "today_matches_before": sum(e.today for e in inputs) // 2,
        "scheduled": len(outcome.match_ids),
    }


def bench_service(bots: int, rounds: int, late_per_bot: int) -> dict[str, Any]:
    """Figure 2: wall ms of each service round on a scratch SQLite file."""
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        db = Database(f"sqlite:///{Path(tmp) / 'ladder.db'}")
        try:
            upgrade(db)
            _seed_bots(db, bots)
            for k in range(rounds):
                with db.session() as session:
                    session.execute(
                        update(MatchRow)
                        .where(MatchRow.status == MatchStatus.PENDING)
                        .values(status=MatchStatus.FINISHED)
                    )
                rows.append(_timed_round(db, NOON + timedelta(minutes=5 * k)))
        finally:
            db.dispose()
        db = Database(f"sqlite:///{Path(tmp) / 'late.db'}")
        try:
            upgrade(db)
            _seed_bots(db, bots)
            midnight = NOON - timedelta(hours=12)
            _seed_today(db, bots, late_per_bot, midnight, 300.0)
            rows.append(_timed_round(db, midnight + timedelta(hours=23, minutes=55)))
        finally:
            db.dispose()
    return {"bots": bots, "database": "sqlite", "rounds": rows}


def machine_info() -> dict[str, Any]:
    return {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "load_1min_at_start": round(os.getloadavg()[0], 2),
    }


def readme_table(results: dict[str, Any]) -> str:
    """The README's table of a run (``benchmarks/README.md``, "Latest full run")."""
    lines = [
        "| figure | bots | ms (median) | ms (worst) | matches | target |",
        "|---|---|---|---|---|---|",
    ]
    for row in results["pure"]:
        target = ""
        if row["bots"] == 10_000:
            met = "met" if row["ms_max"] < TARGET_MS else "missed"
            target = f"< {TARGET_MS:,.0f} ms: {met}"
        lines.append(
            f"| pure round (`plan_round`), CPU | {row['bots']:,} | {row['ms_median']} |"
            f" {row['ms_max']} | {row['matches']:,} | {target} |"
        )
    service = results["service"]
    for row in service["rounds"]:
        lines.append(
            f"| service round at {row['round']} on SQLite, wall ({row['today_matches_before']:,}"
            f" ladder matches today before it; its inputs {row['inputs_ms']} ms) |"
            f" {service['bots']:,} | {row['ms']} | | {row['scheduled']:,} | |"
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small sizes (a smoke test); writes no JSON"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    results: dict[str, Any] = {
        "schema": 1,
        "date": datetime.now(UTC).date().isoformat(),
        "mode": "quick" if args.quick else "full",
        "command": "benchmarks/bench_ladder.py" + (" --quick" if args.quick else ""),
        "machine": machine_info(),
    }
    results["pure"] = bench_pure(sizes["pure_sizes"], sizes["pure_repeats"])
    results["service"] = bench_service(
        sizes["service_bots"], sizes["rounds"], sizes["late_per_bot"]
    )
    print(readme_table(results))
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
