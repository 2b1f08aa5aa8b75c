"""Load: 200 matches at once in one worker process while the API takes 200 requests a second.

Everything runs as deployed, on this machine's PostgreSQL and Redis (a scratch database and a
flushed Redis database): one ``gin-arena worker --concurrency 200 --beat`` (Celery's threads
pool: the deployment's one worker process; it publishes every step to the live streams through
Redis as in production; beat sends the sweep), one ``gin-arena serve`` (waitress, 8 threads;
rate limits off), and two house bots (``greedy`` and ``strong``) each behind
``benchmarks/load_bots.py``: an asyncio server in ``--bot-processes`` processes sharing one
port, every ``/act`` answered ``--think-ms`` (50) after it was read. ``--concurrency`` pairs of
bots are registered on those two servers, one pair per match at once. With ``--pool gevent``
the matches run in ``gin-arena worker --pool gevent --queues celery`` (greenlets: still one
process) and beat in a threads worker of its own (``--beat --queues control``), as deployed
(``deploy/README.md``); its CPU is reported as ``beat``.

1. Warm-up (not timed): a round robin of one pair (one match), which the API then reads.
2. Alone: the ``--seeds`` deals of the load, one match at a time, through the same worker: the
   throughput of one match alone, ``1 / mean duration``; the ideal is ``--concurrency`` times it.
3. Load: ``--concurrency x --waves`` matches submitted at once (the deals cycling over the same
   seeds; with ``--ramp-s`` the first ``--concurrency`` one by one over that many seconds),
   while ``benchmarks/load_traffic.py`` sends ``--rate`` requests a second, open loop (latency
   from each request's due time), over a mix of public reads: match lists, a match, replays,
   ratings, tournaments, a bracket, bots. The measured window runs from the moment the
   worker first plays ``--concurrency`` matches at once to the moment the last match starts
   (the queue is empty): all that time it plays exactly that many. Match throughput is the
   matches finished in the window over its length; the API's figures are its requests due in
   the window; CPU is read from ``/proc`` for every process at both ends.

Target: match throughput at least 0.9 of the ideal, with the API's p99 beside it.

    .venv/bin/python benchmarks/bench_load.py          # full run (10 min loaded): load.json
    .venv/bin/python benchmarks/bench_load.py --pool gevent   # full run: load_gevent.json
    .venv/bin/python benchmarks/bench_load.py --quick  # 6 at once, 2 ms bots (~10 s): no file

Needs PostgreSQL (``--pg-admin-url``; a scratch database is created and dropped) and Redis
(``--redis-url``, default db 12, flushed).
"""

from __future__ import annotations

import argparse
import collections
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

from bench_api import healthy, machine_busy, postgres_cpu, process_cpu
from bench_executors import (
    Processes,
    bot_ready,
    free_port,
    fresh_services,
    gin_arena,
    schedule,
    wait_for,
)
from pools import DEFAULT_POOL, POOLS, match_worker_options, results_for_pool
from sqlalchemy import func, select

from arena.db.migrate import upgrade
from arena.db.models import MatchResultRow, MatchRow
from arena.db.session import Database, pool_size_for
from arena.playing.executors import CeleryExecutor
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.tournaments import create_tournament, start_tournament
from arena.settings import load_settings
from arena.states import MatchStatus

HERE = Path(__file__).resolve().parent
#: How often the window's ends (and the end of the load) are looked for: a window of about
#: 100 s is then known to a quarter of a percent.
WINDOW_POLL_S = 0.25
RESULTS = HERE / "results" / "load.json"
BOT_KINDS = ("greedy", "strong")
TARGET_RATIO = 0.9
#: The most connections the worker's pool may hold here (ARENA_DB_POOL_SIZE; see where set).
LOAD_POOL = 60


@dataclass(frozen=True)
class Sizes:
    concurrency: int  # matches at once in the worker
    waves: int  # matches in the load: concurrency x waves
    seeds: int  # distinct deals, cycled; each played alone once
    think_ms: float
    rate: float  # API requests per second
    bot_processes: int  # per bot kind
    connections: int  # the generator's keep-alive connections
    target: int  # one game to this many points (100: bench_api.py's bulk matches)
    #: The first ``concurrency`` matches are sent one by one over this many seconds (0: all at
    #: once), so that they finish, and their slots take the next, at different moments.
    ramp_s: float = 0.0

    @property
    def rules(self) -> RuleSet:
        """One game to ``target``: at 100, ~350 bot calls, ~18 s alone at 50 ms a call."""
        return RuleSet(target=self.target, best_of=1)


FULL = Sizes(concurrency=200, waves=2, seeds=3, think_ms=50.0, rate=200.0, bot_processes=2,
             connections=64, target=100)  # fmt: skip
QUICK = Sizes(concurrency=6, waves=2, seeds=1, think_ms=2.0, rate=50.0, bot_processes=1,
              connections=8, target=25)  # fmt: skip


# --------------------------------------------------------------------------- processes


def start_bots(procs: Processes, sizes: Sizes, tmp: Path) -> tuple[list[str], list[Path]]:
    """Start each bot kind on a port of its own, served by ``bot_processes`` processes: their
    URLs (not yet answering) and where each process writes its figures."""
    urls, stats = [], []
    for kind in BOT_KINDS:
        port = free_port()
        for i in range(sizes.bot_processes):
            path = tmp / f"bot-{kind}-{i}.json"
            argv = [sys.executable, str(HERE / "load_bots.py"), "--kind", kind]
            argv += ["--port", str(port), "--think-ms", str(sizes.think_ms), "--stats", str(path)]
            procs.start(f"bot-{kind}-{i}", argv, {})
            stats.append(path)
        urls.append(f"http://127.0.0.1:{port}")
    return urls, stats


def start_api(procs: Processes, env: dict[str, str]) -> tuple[str, int]:
    """Start ``gin-arena serve`` on the arena's settings (Celery: no executor in it); its
    (URL, pid), before it answers."""
    port = free_port()
    procs.start("serve", [*gin_arena(), "serve", "--port", str(port)], env)
    return f"http://127.0.0.1:{port}", procs.children[-1][0].pid


def start_worker(
    procs: Processes, executor: CeleryExecutor, concurrency: int, pool: str, env: dict[str, str]
) -> tuple[int, int | None]:
    """``gin-arena worker --concurrency N --beat``, as deployed (beat sends the periodic sweep,
    which puts a match whose job died back in the queue once its lease expires); with ``pool``
    gevent, which runs no beat, ``gin-arena worker --pool gevent --queues celery`` for the
    matches beside ``gin-arena worker --beat --queues control`` for the periodic jobs. The
    match worker's pid and the beat process's (None: the same), once each answers a ping."""
    matches = ["--concurrency", str(concurrency), *match_worker_options(pool)]
    started = [("load-0", [*matches, "--beat"])]
    if pool != DEFAULT_POOL:
        started = [
            ("load-0", matches),
            ("beat-0", ["--concurrency", "2", "--beat", "--queues", "control"]),
        ]
    pids = []
    for name, options in started:
        argv = [*gin_arena(), "worker", *options, "--hostname", f"{name}@%h"]
        procs.start(name, [*argv, "--loglevel", "WARNING"], env)
        pids.append(procs.children[-1][0].pid)
    for name, _ in started:
        node = f"{name}@{socket.gethostname()}"
        wait_for(lambda n=node: bool(executor.app.control.ping([n], timeout=0.5)), 120, name)
    return pids[0], (pids[1] if len(pids) > 1 else None)


def redis_pids(redis_url: str) -> list[int]:
    """The ``redis-server`` processes serving the port of ``redis_url``."""
    port = redis_url.split("://", 1)[1].split("/", 1)[0].rsplit(":", 1)[-1]
    out = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if (entry / "comm").read_text().strip() != "redis-server":
                    continue
                if f":{port}" in (entry / "cmdline").read_text():
                    out.append(int(entry.name))
            except OSError:
                continue
    return out


class CpuMeter:
    """CPU seconds of named process groups between two readings."""

    def __init__(self, groups: dict[str, list[int]]) -> None:
        self.groups = groups
        self.first: dict[tuple[str, int], float] = {}
        self.wall = 0.0
        self.busy = (0.0, 0.0)

    def read(self) -> dict[tuple[str, int], float]:
        """CPU seconds so far of each (group, pid) still running."""
        out = {}
        for name, pids in self.groups.items():
            for pid in pids:
                with contextlib.suppress(OSError):  # a process that has exited
                    out[name, pid] = process_cpu(pid)
        # Every process of the PostgreSQL server, other work on this machine included.
        out["postgres", 0] = postgres_cpu()
        out["parent", 0] = time.process_time()
        for pid in self.groups["worker"]:
            fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
            out["worker_system", 0] = int(fields[12]) / os.sysconf("SC_CLK_TCK")
        return out

    def start(self) -> None:
        self.first, self.wall, self.busy = self.read(), time.monotonic(), machine_busy()

    def stop(self) -> dict[str, Any]:
        """Cores used by each group since :meth:`start` (processes running at both readings)."""
        last, seconds, busy = self.read(), time.monotonic() - self.wall, machine_busy()
        used: dict[str, float] = {}
        for key, value in last.items():
            if key in self.first:
                used[key[0]] = used.get(key[0], 0.0) + value - self.first[key]
        cores = {k: round(v / seconds, 3) for k, v in used.items()}
        share = (busy[0] - self.busy[0]) / max(1e-9, busy[1] - self.busy[1])
        return {"cores": cores, "machine_busy_share": round(share, 3), "seconds": seconds}


class Traffic:
    """The open-loop generator (``load_traffic.py``) as a child process."""

    def __init__(self, api_url: str, paths: list[str], sizes: Sizes) -> None:
        host, port = api_url.removeprefix("http://").split(":")
        config = {"host": host, "port": int(port), "rate": sizes.rate, "paths": paths,
                  "connections": sizes.connections, "timeout_s": 10.0}  # fmt: skip
        self.proc = subprocess.Popen(
            [sys.executable, str(HERE / "load_traffic.py"), json.dumps(config)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            env={**os.environ, "PYTHONPATH": str(HERE)},
        )
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != "ready":
            raise RuntimeError(f"the traffic generator did not start ({self.proc.wait()})")

    def __enter__(self) -> Traffic:
        return self

    def __exit__(self, *exc: object) -> None:
        """Ended, if :meth:`stop` did not end it (the run failed)."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.communicate()

    def stop(self) -> dict[str, Any]:
        out, _ = self.proc.communicate("stop\n", timeout=300)
        if self.proc.returncode != 0 or not out:
            raise RuntimeError(f"the traffic generator failed ({self.proc.returncode})")
        result: dict[str, Any] = json.loads(out)
        return result


#: Where the worker's Python time goes: each py-spy sample (the thread holding the GIL) is put
#: in the first group one of its frames belongs to, in this order.
PROFILE_GROUPS = (
    ("live streams (arena/live: events to Redis)", "arena/live/"),
    ("recording the result (arena/services/recording.py)", "arena/services/recording.py"),
    ("claim and lease (arena/services/matches.py)", "arena/services/matches.py"),
    ("other services (tournament advance, events)", "arena/services/"),
    ("signing (arena/protocol/signing.py)", "arena/protocol/signing.py"),
    ("HTTP transport (arena/protocol/transport.py)", "arena/protocol/transport.py"),
    ("wire and player (arena/protocol/wire.py, http_player.py)", "arena/protocol/"),
    ("rules engine (arena/rules)", "arena/rules/"),
    ("match runner and records (arena/playing)", "arena/playing/"),
    ("database driver (sqlalchemy, psycopg)", "sqlalchemy/"),
    ("celery and kombu", "celery/"),
    ("celery and kombu", "kombu/"),
)


class WorkerProfile:
    """py-spy on the worker for the window (``--profile``): GIL-holding samples only."""

    def __init__(self, pid: int, out: Path) -> None:
        found = shutil.which("py-spy") or str(Path(sys.executable).with_name("py-spy"))
        if not Path(found).exists():
            raise SystemExit("--profile needs py-spy: .venv/bin/pip install -e '.[bench]'")
        self.out = out
        argv = [found, "record", "-p", str(pid), "--gil", "--nonblocking", "-r", "50"]
        self.proc = subprocess.Popen(
            [*argv, "-f", "raw", "-o", str(out)],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )

    def stop(self) -> dict[str, Any]:
        """Stop sampling; the share of samples in each of :data:`PROFILE_GROUPS`."""
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=60)
        counts: dict[str, int] = {}
        total = 0
        for line in self.out.read_text().splitlines():
            stack, _, n = line.rpartition(" ")
            if not n.isdigit():
                continue
            total += int(n)
            group = next((g for g, part in PROFILE_GROUPS if part in stack), "other")
            counts[group] = counts.get(group, 0) + int(n)
        shares = {g: round(c / max(1, total), 3) for g, c in counts.items()}
        return {"samples": total, "shares": dict(sorted(shares.items(), key=lambda i: -i[1]))}


# --------------------------------------------------------------------------- the arena


def register_pairs(db: Database, urls: Sequence[str], count: int) -> list[tuple[int, int]]:
    """``count`` pairs of registered bots, each pair the two servers (seat a ``greedy``, seat b
    ``strong``): every match at once has bots of its own, as in an arena of many bots (the
    record of a match updates its two bots' rows; two bots for every match would queue all the
    records on those two rows)."""
    pairs = []
    for i in range(count):
        a, b = (
            register_bot(db, name=f"load-{kind}-{i}", owner="bench", url=url).bot_id
            for kind, url in zip(BOT_KINDS, urls, strict=True)
        )
        pairs.append((a, b))
    return pairs


def schedule_pairs(
    db: Database, pairs: Sequence[tuple[int, int]], rules: RuleSet, seeds: Sequence[int]
) -> list[int]:
    """One match per seed, the pairs taken in turn."""
    with db.session() as s:
        return [
            schedule_match(s, *pairs[i % len(pairs)], rules=rules, seed=seed).id
            for i, seed in enumerate(seeds)
        ]


def api_paths(db: Database, tournament_id: int, bot_ids: Sequence[int]) -> list[str]:
    """The public reads of the mix, in one cycle: what a visitor's pages and a bot owner's
    scripts ask for while matches are played. Replays are the tournament's: the matches played
    alone share their deals with matches of the load, and a replay is withheld (409) while a
    match on the same deals is still to play."""
    with db.session() as s:
        finished = list(
            s.scalars(select(MatchRow.id).where(MatchRow.status == MatchStatus.FINISHED))
        )
        warm = list(s.scalars(select(MatchRow.id).where(MatchRow.tournament_id == tournament_id)))
    replay = [f"/api/v1/matches/{m}/replay" for m in warm]
    mix = (
        ["/api/v1/matches?limit=50"] * 8
        + ["/api/v1/matches?limit=20&status=running"] * 2
        + [f"/api/v1/matches/{m}" for m in finished] * 2
        + ["/api/v1/ratings"] * 8
        + ["/api/v1/tournaments", f"/api/v1/tournaments/{tournament_id}"] * 2
        + [f"/api/v1/tournaments/{tournament_id}/bracket"] * 2
        + [f"/api/v1/tournaments/{tournament_id}/standings"] * 2
        + ["/api/v1/bots"] * 4
        + [f"/api/v1/bots/{b}" for b in bot_ids]
        + [f"/api/v1/ratings/{b}/history" for b in bot_ids]
    )
    mix += replay * 2
    return mix


def wait_finished(db: Database, ids: list[int], timeout: float) -> None:
    """Until every match is finished or void (``failed``: the arena failed on it on every
    attempt; reported, never waited for)."""
    ended = (MatchStatus.FINISHED, MatchStatus.FAILED)

    def done() -> bool:
        with db.session() as s:
            left = s.scalar(
                select(func.count())
                .select_from(MatchRow)
                .where(MatchRow.id.in_(ids), MatchRow.status.not_in(ended))
            )
        return bool(left == 0)

    wait_for(done, timeout, f"{len(ids)} matches to finish", WINDOW_POLL_S)


@dataclass(frozen=True)
class Played:
    match_id: int
    seed: int
    started: float  # unix time
    finished: float
    calls: int
    faults: int
    attempt: int
    fault_kinds: tuple[str, ...] = ()
    forfeit: str | None = None  # the forfeit's kind (a bot unreachable at the start, ...)


def played(db: Database, ids: Sequence[int]) -> list[Played]:
    with db.session() as s:
        rows = s.execute(
            select(MatchRow, MatchResultRow.summary)
            .join(MatchResultRow, MatchResultRow.match_id == MatchRow.id)
            .where(MatchRow.id.in_(list(ids)))
        ).all()
    out = []
    for match, summary in rows:
        calls = sum(summary["latency_ms"][seat]["calls"] for seat in "ab")
        assert match.started_at is not None and match.finished_at is not None
        out.append(
            Played(match.id, int(match.seed), match.started_at.timestamp(),
                   match.finished_at.timestamp(), calls, len(summary.get("faults", [])),
                   match.attempt, tuple(f["kind"] for f in summary.get("faults", [])),
                   None if match.forfeit_kind is None else match.forfeit_kind.value)
        )  # fmt: skip
    return sorted(out, key=lambda p: p.match_id)


def status_counts(db: Database, ids: list[int]) -> dict[MatchStatus, int]:
    with db.session() as s:
        rows = s.execute(
            select(MatchRow.status, func.count())
            .where(MatchRow.id.in_(ids))
            .group_by(MatchRow.status)
        ).all()
    return {status: int(n) for status, n in rows}


# --------------------------------------------------------------------------- figures


def percentiles(values: Sequence[float]) -> dict[str, float | None]:
    if not values:
        return {"p50_ms": None, "p90_ms": None, "p99_ms": None, "max_ms": None}
    ordered = sorted(values)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))], 2)

    return {
        "p50_ms": at(0.5),
        "p90_ms": at(0.9),
        "p99_ms": at(0.99),
        "max_ms": round(ordered[-1], 2),
    }


def api_figures(
    traffic: dict[str, Any], paths: list[str], window: tuple[float, float], rate: float
) -> dict[str, Any]:
    """The requests due in the window (monotonic seconds): rate, latency, errors, by endpoint."""
    lo, hi = window[0] - traffic["t0"], window[1] - traffic["t0"]
    rows = [r for r in traffic["rows"] if lo <= r[0] < hi]
    errors: dict[str, int] = {}
    by_kind: dict[str, list[float]] = {}
    for _, latency, outcome, index in rows:
        kind = endpoint_kind(paths[index])
        if outcome != 200:
            errors[f"{outcome} {kind}"] = errors.get(f"{outcome} {kind}", 0) + 1
        by_kind.setdefault(kind, []).append(latency)
    return {
        "rate": rate,
        "requests": len(rows),
        "due_per_second": round(len(rows) / max(1e-9, hi - lo), 1),
        "errors": errors,
        "latency": percentiles([r[1] for r in rows]),
        "by_endpoint": {
            k: {"requests": len(v), **percentiles(v)} for k, v in sorted(by_kind.items())
        },
        "all_requests": len(traffic["rows"]),
        "generator_cpu_s": traffic["cpu_s"],
    }


def endpoint_kind(path: str) -> str:
    """A path's endpoint, ids and query replaced: ``/api/v1/matches/{id}/replay``."""
    parts = path.split("?", 1)[0].split("/")
    name = "/".join("{id}" if p.isdigit() else p for p in parts)
    return name + ("?status=running" if "status=running" in path else "")


def match_figures(
    alone: list[Played], load: list[Played], window: tuple[float, float], concurrency: int
) -> dict[str, Any]:
    solo_s = statistics.fmean(p.finished - p.started for p in alone)
    solo_calls_per_s = sum(p.calls for p in alone) / sum(p.finished - p.started for p in alone)
    lo, hi = window
    done = [p for p in load if lo <= p.finished < hi]
    per_s = len(done) / (hi - lo)
    ideal = concurrency / solo_s
    # Per bot call, too: matches differ in length, and this does not depend on which finished.
    calls_in = sum(p.calls for p in done)
    by_seed = {p.seed: p.finished - p.started for p in alone}
    stretch = [(p.finished - p.started) / by_seed[p.seed] for p in load if p.seed in by_seed]
    # Matches in play (started, not yet recorded) on average over the window: below
    # ``concurrency``, the pool's slots wait between one match's record and the next's start.
    in_play = sum(max(0.0, min(p.finished, hi) - max(p.started, lo)) for p in load) / (hi - lo)
    return {
        "alone": {
            "matches": len(alone),
            "seconds_mean": round(solo_s, 3),
            "calls_mean": round(statistics.fmean(p.calls for p in alone), 1),
            "ms_per_call": round(1000 / solo_calls_per_s, 2),
            "matches_per_second": round(1 / solo_s, 4),
        },
        "load": {
            "matches": len(load),
            "window_seconds": round(hi - lo, 2),
            "finished_in_window": len(done),
            "matches_per_second": round(per_s, 3),
            "calls_per_second": round(calls_in / (hi - lo), 1),
            "in_play_mean": round(in_play, 1),
            "duration_over_alone": {
                "mean": round(statistics.fmean(stretch), 3),
                "max": round(max(stretch), 3),
            },
            "faults": sum(p.faults for p in load),
            "fault_kinds": dict(
                sorted(collections.Counter(k for p in load for k in p.fault_kinds).items())
            ),
            "forfeits": dict(
                sorted(collections.Counter(p.forfeit for p in load if p.forfeit).items())
            ),
            "max_attempt": max(p.attempt for p in load),
        },
        "ideal_matches_per_second": round(ideal, 3),
        "ratio": round(per_s / ideal, 3),
        "ratio_per_call": round(calls_in / (hi - lo) / (concurrency * solo_calls_per_s), 3),
    }


# --------------------------------------------------------------------------- the run


def run(args: argparse.Namespace, sizes: Sizes) -> dict[str, Any]:
    load_before = os.getloadavg()[0]
    began = time.monotonic()

    def elapsed() -> str:
        return f"[{time.monotonic() - began:6.1f} s]"

    seeds = list(range(1, sizes.seeds + 1))
    with tempfile.TemporaryDirectory(prefix="bench-load-") as tmp:
        tmp_dir = Path(tmp)
        procs = Processes(tmp_dir)
        try:
            with fresh_services(args.pg_admin_url, args.redis_url) as (pg_url, base_env):
                env = {
                    **base_env,
                    "ARENA_RATE_LIMIT": "",
                    "ARENA_READ_CACHE_MS": str(args.read_cache_ms),
                    "ARENA_LADDER_PRESETS": "",
                    # The worker's pool follows its concurrency (2 x 200 + 24 connections),
                    # more than this machine's PostgreSQL accepts (max_connections 100) beside
                    # the API's: capped, the matches share it (a short wait, not a refusal).
                    "ARENA_DB_POOL_SIZE": str(min(pool_size_for(sizes.concurrency), LOAD_POOL)),
                    "ARENA_STATE_DIR": str(tmp_dir / "state"),  # beat's schedule file
                }
                settings = load_settings(env)
                db = Database(pg_url)
                executor = CeleryExecutor(settings)
                stack = contextlib.ExitStack()
                try:
                    urls, bot_stats = start_bots(procs, sizes, tmp_dir)
                    bot_pids = [p.pid for p, _ in procs.children]
                    upgrade(db)  # while the bots start
                    for url in urls:
                        wait_for(lambda u=url: bot_ready(u), 60, f"bot at {url}")
                    pairs = register_pairs(db, urls, sizes.concurrency)
                    bots = list(pairs[0])
                    api_url, api_pid = start_api(procs, env)  # starts while the worker does
                    worker_pid, beat_pid = start_worker(
                        procs, executor, sizes.concurrency, args.pool, env
                    )
                    wait_for(lambda: healthy(api_url), 60, f"gin-arena serve at {api_url}")
                    print(f"{elapsed()} bots {urls}, worker pid {worker_pid}, api {api_url}",
                          file=sys.stderr)  # fmt: skip

                    tid = create_tournament(db, name="load warm-up", format_name="round_robin",
                                            bot_ids=bots, rules=sizes.rules, seed=7)  # fmt: skip
                    start_tournament(db, tid, executor.submit)
                    with db.session() as s:
                        warm = [m for (m,) in s.execute(select(MatchRow.id))]
                    wait_finished(db, warm, 600)
                    print(f"{elapsed()} warm-up played", file=sys.stderr)

                    alone_ids = []
                    for seed in seeds:
                        ids = schedule(db, (bots[0], bots[1]), sizes.rules, [seed])
                        executor.submit(ids)
                        wait_finished(db, ids, 600)
                        alone_ids += ids
                    alone = played(db, alone_ids)
                    took = [round(p.finished - p.started, 2) for p in alone]
                    print(f"{elapsed()} alone: {took} s", file=sys.stderr)

                    paths = api_paths(db, tid, bots)
                    total = sizes.concurrency * sizes.waves
                    load_seeds = [seeds[i % len(seeds)] for i in range(total)]
                    ids = schedule_pairs(db, pairs, sizes.rules, load_seeds)
                    groups = {"worker": [worker_pid], "api": [api_pid], "bots": bot_pids,
                              "redis": redis_pids(args.redis_url)}  # fmt: skip
                    traffic = stack.enter_context(Traffic(api_url, paths, sizes))
                    groups["generator"] = [traffic.proc.pid]
                    if beat_pid is not None:
                        groups["beat"] = [beat_pid]
                    meter = CpuMeter(groups)
                    profiler = None if args.profile is None else (worker_pid, args.profile)
                    time.sleep(0.5)  # the first requests are answered before the matches start
                    submit_load(executor, ids, sizes)
                    mono, wall, cpu = time_window(db, ids, sizes.concurrency, meter, profiler)
                    print(f"{elapsed()} window: {cpu['seconds']:.1f} s", file=sys.stderr)
                    wait_finished(db, ids, 1200)  # a match whose job died: after a sweep
                    traffic_result = traffic.stop()
                    print(f"{elapsed()} load played", file=sys.stderr)
                    load = played(db, ids)
                    load_statuses = {k.value: v for k, v in status_counts(db, ids).items()}
                finally:
                    stack.close()
                    executor.close()
                    db.dispose()
                    procs.stop_all()
            bot_figures = [json.loads(p.read_text()) for p in bot_stats if p.exists()]
            worker_log = (tmp_dir / "load-0.log").read_text(errors="replace")
        finally:
            procs.stop_all()
    matches = match_figures(alone, load, wall, sizes.concurrency)
    api = api_figures(traffic_result, paths, mono, sizes.rate)
    calls_s = matches["load"]["calls_per_second"]
    return {
        "command": "benchmarks/bench_load.py"
        + (" --quick" if args.quick else "")
        + ("" if args.profile is None else " --profile FILE"),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1min_before": round(load_before, 2),
            "loadavg_1min_after": round(os.getloadavg()[0], 2),
        },
        "setup": {
            **asdict(sizes),
            "matches": sizes.concurrency * sizes.waves,
            "rules": f"one game to {sizes.target} (best of 1)",
            "bots": "house greedy (a) v house strong (b), benchmarks/load_bots.py",
            "worker": f"gin-arena worker --concurrency {sizes.concurrency} ({args.pool} pool)"
            + ("" if args.pool == DEFAULT_POOL else "; beat on its own threads worker"),
            "pool": args.pool,
            "api": "gin-arena serve (waitress, 8 threads), rate limits off, "
            + (
                f"public reads cached {args.read_cache_ms} ms (ARENA_READ_CACHE_MS)"
                if args.read_cache_ms
                else "no read cache (the default)"
            ),
            "read_cache_ms": args.read_cache_ms,
            "database": "postgresql",
        },
        "matches": {**matches, "statuses": load_statuses},
        "target": f"ratio >= {TARGET_RATIO}",
        "target_met": matches["ratio"] >= TARGET_RATIO,
        "api": api,
        "cpu": cpu,
        "cpu_ms_per_unit": {
            "worker_per_bot_call": round(cpu["cores"]["worker"] * 1000 / max(1e-9, calls_s), 3),
            "bots_per_bot_call": round(cpu["cores"]["bots"] * 1000 / max(1e-9, calls_s), 3),
            "api_per_request": round(
                cpu["cores"]["api"] * 1000 / max(1e-9, api["due_per_second"]), 3
            ),
        },
        "bot_servers": bot_figures,
        "worker_log": {
            "tasks_failed": worker_log.count("raised unexpected"),
            "pool_timeouts": worker_log.count("QueuePool limit"),
            "thread_exceptions": worker_log.count("Exception in thread"),
            # What the failed tasks raised (Celery's line names the exception), the first few.
            "failures": [
                " ".join(line.split("raised unexpected:", 1)[1].split())[:300]
                for line in worker_log.splitlines()
                if "raised unexpected:" in line
            ][:5],
        },
        "limits": limits(matches, api, cpu, sizes),
    }


def limits(
    matches: dict[str, Any], api: dict[str, Any], cpu: dict[str, Any], sizes: Sizes
) -> dict[str, Any]:
    """What the ideal would cost, from the per-unit CPU measured under the load: the cores it
    needs against the machine's, and the most one worker process can give (it runs Python
    under one GIL: at most one core, so at most ``1000 / worker ms per call`` calls a second)."""
    cores = cpu["cores"]
    calls = max(1e-9, matches["load"]["calls_per_second"])
    ideal_calls = sizes.concurrency * 1000 / matches["alone"]["ms_per_call"]
    worker_ms = cores["worker"] * 1000 / calls
    bots_ms = cores["bots"] * 1000 / calls
    api_ms = cores["api"] * 1000 / max(1e-9, api["due_per_second"])
    rest = cores["postgres"] + cores["redis"]
    need = {
        "worker": round(worker_ms * ideal_calls / 1000, 2),
        "bots": round(bots_ms * ideal_calls / 1000, 2),
        "api": round(api_ms * sizes.rate / 1000, 2),
        "postgres_and_redis": round(rest * ideal_calls / calls, 2),
    }
    return {
        "ideal_calls_per_second": round(ideal_calls, 1),
        "cores_needed_at_ideal": need,
        "cores_needed_total": round(sum(need.values()), 2),
        "cpus": os.cpu_count(),
        "worker_system_share": round(cores["worker_system"] / max(1e-9, cores["worker"]), 3),
        "one_process_bound_ratio": round(1000 / worker_ms / ideal_calls, 3),
    }


def submit_load(executor: CeleryExecutor, ids: list[int], sizes: Sizes) -> None:
    """Send the load's matches: all at once, or the first ``concurrency`` of them spread over
    ``ramp_s`` seconds and then the rest (which wait in the queue for a free slot)."""
    if sizes.ramp_s <= 0:
        executor.submit(ids)
        return
    first = ids[: sizes.concurrency]
    for match_id in first:
        executor.submit([match_id])
        time.sleep(sizes.ramp_s / len(first))
    executor.submit(ids[sizes.concurrency :])


def time_window(
    db: Database,
    ids: list[int],
    concurrency: int,
    meter: CpuMeter,
    profiler: tuple[int, Path] | None = None,
) -> tuple[tuple[float, float], tuple[float, float], dict[str, Any]]:
    """Wait for the worker to play ``concurrency`` matches at once (start the meter), then for
    the last match to start and one to finish since the start (stop it): the window in
    monotonic and in unix seconds, and the CPU figures of the window (with ``profiler``,
    (worker pid, file): where the worker's Python time went, from py-spy)."""

    def counts() -> dict[MatchStatus, int]:
        return status_counts(db, ids)

    # Looked at every WINDOW_POLL_S, not every 20 ms: each look is a query, and this process
    # shares the machine with what it measures (at 20 ms it took 0.16 of a core).
    wait_for(
        lambda: counts().get(MatchStatus.RUNNING, 0) >= concurrency,
        600,
        "the load",
        WINDOW_POLL_S,
    )
    start = (time.monotonic(), time.time())
    meter.start()
    # Read after the start: a match counted beyond these finished inside the window.
    finished_before = counts().get(MatchStatus.FINISHED, 0)
    profile = None if profiler is None else WorkerProfile(*profiler)

    def over() -> bool:
        now = counts()
        # The queue empty, and (for a quick run, whose matches can all start between two
        # looks) at least one match finished in the window, so that it measures something.
        return (
            now.get(MatchStatus.PENDING, 0) == 0
            and now.get(MatchStatus.FINISHED, 0) > finished_before
        )

    try:
        wait_for(over, 1200, "the queue to empty", WINDOW_POLL_S)
        cpu = meter.stop()
    finally:
        shares = None if profile is None else profile.stop()
    if shares is not None:
        cpu["worker_profile"] = shares
    end = (time.monotonic(), time.time())
    return (start[0], end[0]), (start[1], end[1]), cpu


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="6 matches at once; writes nothing")
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--concurrency", type=int, help="matches at once in the worker")
    parser.add_argument("--waves", type=int, help="matches = concurrency x waves")
    parser.add_argument("--seeds", type=int, help="distinct deals (each played alone once)")
    parser.add_argument("--think-ms", type=float, help="each bot answer's delay")
    parser.add_argument("--rate", type=float, help="API requests per second")
    parser.add_argument("--bot-processes", type=int, help="processes per bot")
    parser.add_argument(
        "--ramp-s",
        type=float,
        help="send the first --concurrency matches over this many seconds (default 0: at once)",
    )
    parser.add_argument(
        "--profile", type=Path, help="py-spy the worker in the window; its raw samples go here"
    )
    parser.add_argument(
        "--pg-admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/12")
    parser.add_argument(
        "--pool", choices=POOLS, default=DEFAULT_POOL, help="the worker's Celery pool (threads)"
    )
    parser.add_argument(
        "--read-cache-ms",
        type=int,
        default=0,
        help="the API's ARENA_READ_CACHE_MS (default 0: off, as deployed by default)",
    )
    args = parser.parse_args(argv)
    if not 0 <= args.read_cache_ms <= 60_000:
        parser.error("--read-cache-ms must be 0 to 60000")
    if args.ramp_s is not None and args.ramp_s < 0:
        parser.error("--ramp-s must be 0 or more")
    sizes = QUICK if args.quick else FULL
    for field in ("concurrency", "waves", "seeds", "think_ms", "rate", "bot_processes", "ramp_s"):
        if getattr(args, field) is not None:
            sizes = replace(sizes, **{field: getattr(args, field)})
    result = run(args, sizes)
    print(report(result))
    out = args.json or (None if args.quick else default_results(args.pool, args.read_cache_ms))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


def default_results(pool: str, read_cache_ms: int) -> Path:
    """Where a full run writes: ``load.json``, ``_<pool>`` for a pool other than the default,
    then ``_cached`` with the API's read cache.

    >>> [default_results(p, c).name for p in ("threads", "gevent") for c in (0, 1000)]
    ['load.json', 'load_cached.json', 'load_gevent.json', 'load_gevent_cached.json']
    """
    results = results_for_pool(RESULTS, pool)
    return results.with_name(f"{results.stem}_cached.json") if read_cache_ms else results


def report(result: dict[str, Any]) -> str:
    m, a, s = result["matches"], result["api"], result["setup"]
    load = m["load"]
    lat = a["latency"]
    cores = result["cpu"]["cores"]
    lines = [
        f"Load: {s['matches']} matches ({s['rules']}), {s['concurrency']} at once in one worker, "
        f"bots thinking {s['think_ms']:g} ms; API at {s['rate']:g} requests/s (open loop, "
        + (f"read cache {s['read_cache_ms']} ms)" if s.get("read_cache_ms") else "no read cache)"),
        f"  alone:  {m['alone']['seconds_mean']} s a match ({m['alone']['calls_mean']} bot calls, "
        f"{m['alone']['ms_per_call']} ms each); ideal {m['ideal_matches_per_second']} matches/s",
        f"  load:   {load['matches_per_second']} matches/s over {load['window_seconds']} s "
        f"({load['finished_in_window']} finished), {load['calls_per_second']} bot calls/s; "
        f"in play {load['in_play_mean']} on average, each {load['duration_over_alone']['mean']}x"
        " as long as alone",
        f"  ratio:  {m['ratio']} of the ideal (per bot call {m['ratio_per_call']}): target "
        f">= {TARGET_RATIO} " + ("met" if result["target_met"] else "MISSED"),
        f"  faults: {load['faults']} {load.get('fault_kinds', {})}, forfeits"
        f" {load.get('forfeits', {})}, max attempt"
        f" {load['max_attempt']}, statuses {m['statuses']}",
        f"  API:    {a['due_per_second']} requests/s due, p50 {lat['p50_ms']} ms, p99 "
        f"{lat['p99_ms']} ms, max {lat['max_ms']} ms, errors {a['errors'] or 0}",
    ]
    for kind, row in a["by_endpoint"].items():
        lines.append(
            f"          {kind:<42} {row['requests']:>6}  p50 {row['p50_ms']:>8} "
            f"p99 {row['p99_ms']:>8} max {row['max_ms']:>8}"
        )
    lines.append(
        "  CPU (cores): "
        + ", ".join(f"{k} {v}" for k, v in cores.items())
        + f"; machine busy {result['cpu']['machine_busy_share']}"
    )
    u = result["cpu_ms_per_unit"]
    lines.append(
        f"  CPU ms: worker {u['worker_per_bot_call']} per bot call, bots "
        f"{u['bots_per_bot_call']} per call, API {u['api_per_request']} per request"
    )
    prof = result["cpu"].get("worker_profile")
    if prof:
        lines.append(f"  worker's Python time (py-spy, {prof['samples']} samples holding the GIL):")
        lines += [f"          {share:6.1%}  {group}" for group, share in prof["shares"].items()]
    lim = result["limits"]
    lines.append(
        f"  at the ideal ({lim['ideal_calls_per_second']} bot calls/s) these costs need "
        f"{lim['cores_needed_total']} cores ({lim['cores_needed_at_ideal']}) on "
        f"{lim['cpus']} CPUs; one worker process (one GIL, one core at most) could reach "
        f"{lim['one_process_bound_ratio']} of the ideal"
    )
    lines.append(f"  worker log: {result['worker_log']}")
    for i, b in enumerate(result["bot_servers"]):
        lines.append(f"  bot process {i}: {b}")
    mach = result["machine"]
    lines.append(
        f"load average (1 min): {mach['loadavg_1min_before']} before, "
        f"{mach['loadavg_1min_after']} after on {mach['cpus']} CPUs"
    )
    return "\n".join(lines)


if __name__ == "__main__":
    sys.exit(main())
