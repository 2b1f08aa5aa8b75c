"""The REST API under load: `gin-arena serve` on PostgreSQL with 200 and with 2,000 matches.

Two scratch PostgreSQL databases hold the same arena, one with 200 finished matches and one
with 2,000: the first is built, copied as the template of the second (so both share the same
bots, tournament, full-length matches and ids), and the copy grows by 1,800 more matches. Every
match is real: scheduled, claimed, played by in-process :class:`HeuristicPlayer` bots through
:func:`arena.playing.jobs.run_match_job` and recorded by the service layer (result, games, hands
with their logs, statistics, Elo); one tournament (a 16-bot double elimination) is played through
the tournament service, and the whole-history rating fit is refreshed at the end, as a closed round
does. Most matches are short (one game to 100); a few dozen are standard (best of five games to
250) for the replay endpoint.

Both databases are then served at once by two ``gin-arena serve`` processes (waitress, 8
threads, local executor idle: nothing is pending; rate limits off with ``ARENA_RATE_LIMIT=""``),
and a load generator in a separate process (Python asyncio on raw sockets, HTTP/1.1 keep-alive,
``Accept-Encoding: gzip`` as a browser sends) measures each endpoint on one server and then on
the other, back to back, so a burst of load on this shared machine hits both alike:

* **open loop** at a fixed arrival rate (200/s; the match list 100/s, replays that miss the
  cache 20/s): request *i* is due at ``start + i / rate`` whatever happened before, and is sent
  on the first free of 32 keep-alive connections; its latency runs from that due time to the
  last byte of the answer, so a stalled server (or a late generator, or every connection busy)
  is counted, not hidden (no coordinated omission);
* **closed loop**: 16 connections each send their next request as soon as the last is answered,
  for the maximum throughput (for the leaderboard once more with ``wrk`` when it is installed,
  as a check that the Python generator is not the limit).

Each measurement follows a short warm-up; the server's, PostgreSQL's and the generator's CPU
time are read from ``/proc`` around it (the generator's own share and lag are reported: it must
not be the bottleneck). Scenarios: the leaderboard, a tournament bracket, the newest match-list
page (``limit=50``), match-list pages anywhere (``before`` a random id), a full replay of a
standard match, always the same (the in-process cache's hit) and cycling over 48 of them (more
than the cache holds: every request reads the database, encodes and gzips).

    .venv/bin/python benchmarks/bench_api.py [--quick] [--json PATH] [--pg-admin-url URL]
                                             [--only leaderboard,bracket,...]

Needs PostgreSQL (``--pg-admin-url``; the two scratch databases are created and dropped).
``--quick`` (30 and 90 matches, runs of half a second) and ``--only`` write no JSON unless
given ``--json``.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import platform
import random
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
import urllib.request
import uuid
from collections import deque
from collections.abc import Iterator, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from bench_executors import Processes, free_port, gin_arena, wait_for
from sqlalchemy import create_engine, func, select, text

from arena.db.migrate import upgrade
from arena.db.models import GameRow, HandRow, MatchRow, RatingHistoryRow, TournamentRow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.players import HeuristicPlayer, Player
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import Claim, schedule_match
from arena.services.ratings import refit_ratings
from arena.services.tournaments import advance_for_match, create_tournament, start_tournament
from arena.settings import Settings, load_settings
from arena.states import MatchStatus

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "api.json"
SEED = 2024
SHORT = RuleSet(target=100, best_of=1)
#: The leaderboard's target: p99 under this many milliseconds at TARGET_RATE requests/s.
TARGET_P99_MS = 50.0
TARGET_RATE = 200.0
#: A figure "grows with the number of stored matches" past this ratio (2,000 vs 200).
GROWTH_LIMIT = 1.5


@dataclass(frozen=True)
class Sizes:
    small: int  # matches in the first database
    large: int  # matches in the second
    bots: int
    tournament_bots: int
    tournament_format: str
    full_length: int  # standard matches (for the replay endpoint)
    warmup_s: float
    open_s: float
    closed_s: float
    closed_connections: int
    open_connections: int


FULL = Sizes(
    small=200,
    large=2000,
    bots=24,
    tournament_bots=16,
    tournament_format="double_elimination",
    full_length=48,
    warmup_s=2.0,
    open_s=15.0,
    closed_s=8.0,
    closed_connections=16,
    open_connections=32,
)
QUICK = Sizes(
    small=30,
    large=90,
    bots=8,
    tournament_bots=4,
    tournament_format="single_elimination",
    full_length=3,
    warmup_s=0.1,
    open_s=0.5,
    closed_s=0.4,
    closed_connections=8,
    open_connections=16,
)


@dataclass(frozen=True)
class Scenario:
    name: str
    label: str
    rate: float  # open-loop arrival rate, requests per second


def scenarios(sizes: Sizes) -> tuple[Scenario, ...]:
    bracket = f"{sizes.tournament_bots}-bot {sizes.tournament_format.replace('_', ' ')}"
    return (
        Scenario("leaderboard", "leaderboard", TARGET_RATE),
        Scenario("bracket", f"bracket ({bracket})", 200.0),
        Scenario("matches", "match list, newest page (limit=50)", 100.0),
        Scenario("matches_deep", "match list, any page (random before)", 100.0),
        Scenario("replay_hit", "full replay, one match (cache hit)", 200.0),
        Scenario("replay_miss", f"full replay, {sizes.full_length} in turn (miss)", 20.0),
    )


# --------------------------------------------------------------------------- the arena's data


def heuristic_players(claim: Claim, _settings: Settings) -> list[Player]:
    """In-process players for both seats (their knock threshold varies with the bot id, so
    some bots are stronger and the ratings spread)."""
    return [HeuristicPlayer(name=bot.name, early_knock=4 + bot.id % 7) for bot in claim.spec.bots]


def _job_settings(url: str) -> Settings:
    return load_settings({}, database_url=url, lease_seconds=60)


def play_chunk(url: str, ids: Sequence[int]) -> int:
    """Play and record these pending matches (in a worker process); returns how many."""
    db = Database(url)
    settings = _job_settings(url)
    recorded = 0
    try:
        for match_id in ids:
            outcome = run_match_job(
                db, settings, match_id, f"bench-{os.getpid()}", make_players=heuristic_players
            )
            if outcome.status is not JobStatus.RECORDED:
                raise RuntimeError(f"match {match_id}: {outcome}")
            recorded += 1
    finally:
        db.dispose()
    return recorded


def play_all(url: str, ids: Sequence[int], processes: int) -> None:
    chunks = [list(ids[i::processes]) for i in range(processes)]
    ctx = multiprocessing.get_context("spawn")
    with ProcessPoolExecutor(processes, mp_context=ctx) as pool:
        done = sum(pool.map(play_chunk, [url] * processes, chunks))
    assert done == len(ids), (done, len(ids))


def schedule_random(
    db: Database, bots: Sequence[int], rules: RuleSet, count: int, rng: random.Random
) -> list[int]:
    with db.session() as s:
        ids = []
        for _ in range(count):
            a, b = rng.sample(list(bots), 2)
            ids.append(schedule_match(s, a, b, rules=rules, seed=rng.randrange(1 << 62)).id)
    return ids


def play_tournament(db: Database, url: str, bots: Sequence[int], fmt: str) -> int:
    """Create, start and play a tournament through the tournament service, in this process."""
    tid = create_tournament(
        db, name=f"bench {fmt}", format_name=fmt, bot_ids=list(bots), rules=SHORT, seed=SEED
    )
    settings = _job_settings(url)
    queue: deque[int] = deque()
    start_tournament(db, tid, queue.extend)

    def after(match_id: int) -> None:
        advance_for_match(db, match_id, queue.extend, min_matches=settings.provisional_matches)

    while queue:
        outcome = run_match_job(
            db, settings, queue.popleft(), "bench", make_players=heuristic_players,
            after_record=after,
        )  # fmt: skip
        assert outcome.status is JobStatus.RECORDED, outcome
    with db.session() as s:
        status = s.get_one(TournamentRow, tid).status.value
    assert status == "finished", f"tournament {tid} is {status}"
    return tid


@dataclass
class Arena:
    """What the scenarios request, identical in both databases."""

    tournament_id: int
    full_length_ids: list[int]


def build_small(url: str, sizes: Sizes) -> tuple[Arena, float]:
    """The first database: bots, a tournament, standard matches, then short ones up to
    ``sizes.small`` finished matches."""
    started = time.perf_counter()
    db = Database(url)
    try:
        upgrade(db)
        rng = random.Random(SEED)
        bots = [
            register_bot(
                db, name=f"bench-{i:02d}", owner="bench", url=f"http://127.0.0.1:{9000 + i}"
            ).bot_id
            for i in range(sizes.bots)
        ]
        # Some history first, so the tournament's seeding by Elo means something.
        warm = schedule_random(db, bots, SHORT, sizes.bots * 2, rng)
        play_all(url, warm, 2)
        tid = play_tournament(db, url, bots[: sizes.tournament_bots], sizes.tournament_format)
        full = schedule_random(db, bots, RuleSet(), sizes.full_length, rng)
        with db.session() as s:
            done = s.scalar(select(func.count()).select_from(MatchRow))
        rest = schedule_random(db, bots, SHORT, sizes.small - (done or 0), rng)
        play_all(url, full + rest, 2)
        finish(db)
    finally:
        db.dispose()
    return Arena(tid, full), time.perf_counter() - started


def grow(url: str, sizes: Sizes) -> float:
    """The second database (a copy of the first): short matches up to ``sizes.large``."""
    started = time.perf_counter()
    db = Database(url)
    try:
        with db.session() as s:
            done = s.scalar(select(func.count()).select_from(MatchRow)) or 0
            bots = [b for (b,) in s.execute(text("SELECT id FROM bots ORDER BY id"))]
        rng = random.Random(SEED + 1)
        ids = schedule_random(db, bots, SHORT, sizes.large - done, rng)
        play_all(url, ids, 2)
        finish(db)
    finally:
        db.dispose()
    return time.perf_counter() - started


def finish(db: Database) -> None:
    """The whole-history rating fit (as a closed round refreshes it), then fresh planner
    statistics (what autovacuum's analyze would soon do)."""
    refit_ratings(db, min_matches=load_settings({}).provisional_matches)
    with db.engine.connect() as conn:
        conn.execution_options(isolation_level="AUTOCOMMIT").execute(text("VACUUM ANALYZE"))


def census(url: str) -> dict[str, Any]:
    db = Database(url)
    try:
        with db.session() as s:

            def count(model: Any) -> int:
                return int(s.scalar(select(func.count()).select_from(model)) or 0)

            statuses = dict(
                s.execute(select(MatchRow.status, func.count()).group_by(MatchRow.status)).all()
            )
            size = s.scalar(text("SELECT pg_database_size(current_database())"))
        return {
            "matches": count(MatchRow),
            "finished": int(statuses.get(MatchStatus.FINISHED, 0)),
            "games": count(GameRow),
            "hands": count(HandRow),
            "rating_history": count(RatingHistoryRow),
            "database_mb": round((size or 0) / 2**20, 1),
        }
    finally:
        db.dispose()


@contextlib.contextmanager
def scratch_databases(admin_url: str) -> Iterator[tuple[str, str, Any]]:
    """Two database names (created later: the second from the first as template), their
    URLs, and the admin engine; both dropped on exit."""
    stem = f"arena_bench_api_{uuid.uuid4().hex[:6]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    base = admin_url.rsplit("/", 1)[0]
    names = (f"{stem}_small", f"{stem}_large")
    try:
        yield f"{base}/{names[0]}", f"{base}/{names[1]}", admin
    finally:
        with admin.connect() as conn:
            for name in names:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
        admin.dispose()


# --------------------------------------------------------------------------- the servers


def healthy(url: str) -> bool:
    try:
        with urllib.request.urlopen(url + "/healthz", timeout=1) as response:
            return bool(response.status == 200)
    except OSError:
        return False


def start_server(procs: Processes, name: str, db_url: str) -> tuple[str, int]:
    """``gin-arena serve`` on a free port; (its URL, its pid) once ``/healthz`` answers."""
    port = free_port()
    env = {
        "ARENA_DATABASE_URL": db_url,
        "ARENA_RATE_LIMIT": "",  # the benchmark is one address sending thousands a minute
        "ARENA_EXECUTOR": "local",
    }
    procs.start(name, [*gin_arena(), "serve", "--port", str(port)], env)
    url = f"http://127.0.0.1:{port}"
    wait_for(lambda: healthy(url), 60, f"{name} at {url}")
    proc = procs.children[-1][0]
    return url, proc.pid


def process_cpu(pid: int) -> float:
    """CPU seconds (user + system) a process has used so far."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def machine_busy() -> tuple[float, float]:
    """(busy, total) CPU seconds of the whole machine so far."""
    parts = [int(x) for x in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:]]
    idle = parts[3] + parts[4]
    total = sum(parts[:8])
    tick = os.sysconf("SC_CLK_TCK")
    return (total - idle) / tick, total / tick


def postgres_cpu() -> float:
    """CPU seconds used so far by every process named postgres (0 if none is visible)."""
    total = 0.0
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            if (entry / "comm").read_text().strip() == "postgres":
                total += process_cpu(int(entry.name))
        except OSError:
            continue
    return total


# --------------------------------------------------------------------------- the load generator


class Connection:
    """One keep-alive HTTP/1.1 connection on raw asyncio streams."""

    def __init__(self, host: str, port: int) -> None:
        self.host, self.port = host, port
        self.reader: asyncio.StreamReader | None = None
        self.writer: asyncio.StreamWriter | None = None

    async def get(self, path: str) -> tuple[int, int]:
        """(status, body bytes) of ``GET path``; reconnects when the server closed."""
        if self.writer is None or self.reader is None:
            self.reader, self.writer = await asyncio.open_connection(self.host, self.port)
        reader, writer = self.reader, self.writer
        writer.write(
            f"GET {path} HTTP/1.1\r\nHost: {self.host}:{self.port}\r\n"
            "Accept-Encoding: gzip\r\nUser-Agent: bench-api\r\n\r\n".encode()
        )
        head = await reader.readuntil(b"\r\n\r\n")
        lines = head.decode("latin-1").split("\r\n")
        status = int(lines[0].split(" ", 2)[1])
        headers = {}
        for line in lines[1:]:
            if line:
                key, _, value = line.partition(":")
                headers[key.strip().lower()] = value.strip()
        if "content-length" in headers:
            size = int(headers["content-length"])
            await reader.readexactly(size)
        elif headers.get("transfer-encoding", "").lower() == "chunked":
            size = 0
            while True:
                chunk = int((await reader.readuntil(b"\r\n")).split(b";")[0], 16)
                await reader.readexactly(chunk + 2)
                size += chunk
                if chunk == 0:
                    break
        else:
            size = 0
        if headers.get("connection", "").lower() == "close":
            self.close()
        return status, size

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()
        self.reader = self.writer = None


def _percentiles(values_s: list[float]) -> dict[str, float | None]:
    if not values_s:
        return {"p50_ms": None, "p90_ms": None, "p99_ms": None, "p999_ms": None, "max_ms": None}
    ordered = sorted(values_s)

    def at(q: float) -> float:
        return round(ordered[min(len(ordered) - 1, int(q * len(ordered)))] * 1000, 2)

    return {
        "p50_ms": at(0.50),
        "p90_ms": at(0.90),
        "p99_ms": at(0.99),
        "p999_ms": at(0.999),
        "max_ms": round(ordered[-1] * 1000, 2),
        "mean_ms": round(statistics.fmean(ordered) * 1000, 2),
    }


async def open_loop(
    host: str, port: int, paths: Sequence[str], rate: float, seconds: float, connections: int
) -> dict[str, Any]:
    """Requests due at a fixed rate, each timed from its due time (see the module docstring)."""
    loop = asyncio.get_running_loop()
    total = max(1, int(rate * seconds))
    queue: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()
    latency = [0.0] * total
    dispatch_lag = [0.0] * total  # the generator's own lateness
    queue_wait = [0.0] * total  # waiting for a free connection (every one busy)
    statuses: dict[int, int] = {}
    body = [0]
    start = loop.time() + 0.05

    async def dispatch() -> None:
        for i in range(total):
            due = start + i / rate
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            dispatch_lag[i] = loop.time() - due
            queue.put_nowait((i, due))
        for _ in range(connections):
            queue.put_nowait(None)

    async def work(conn: Connection) -> None:
        while (item := await queue.get()) is not None:
            i, due = item
            queue_wait[i] = loop.time() - due - dispatch_lag[i]
            status, size = await conn.get(paths[i % len(paths)])
            latency[i] = loop.time() - due
            statuses[status] = statuses.get(status, 0) + 1
            body[0] += size
        conn.close()

    conns = [Connection(host, port) for _ in range(connections)]
    await asyncio.gather(dispatch(), *(work(c) for c in conns))
    elapsed = loop.time() - start
    return {
        "mode": "open",
        "rate": rate,
        "requests": total,
        "seconds": round(elapsed, 3),
        "achieved_rps": round(total / elapsed, 1),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "mean_body_bytes": round(body[0] / total),
        "latency": _percentiles(latency),
        "generator_dispatch_lag": _percentiles(dispatch_lag),
        "connection_wait": _percentiles(queue_wait),
    }


async def closed_loop(
    host: str, port: int, paths: Sequence[str], seconds: float, connections: int
) -> dict[str, Any]:
    """``connections`` clients, each sending its next request when the last is answered."""
    loop = asyncio.get_running_loop()
    latency: list[float] = []
    statuses: dict[int, int] = {}
    counter = [0]
    start = loop.time()
    deadline = start + seconds

    async def work(conn: Connection) -> None:
        while loop.time() < deadline:
            i = counter[0]
            counter[0] += 1
            sent = loop.time()
            status, _ = await conn.get(paths[i % len(paths)])
            latency.append(loop.time() - sent)
            statuses[status] = statuses.get(status, 0) + 1
        conn.close()

    await asyncio.gather(*(work(Connection(host, port)) for _ in range(connections)))
    elapsed = loop.time() - start
    return {
        "mode": "closed",
        "connections": connections,
        "requests": len(latency),
        "seconds": round(elapsed, 3),
        "achieved_rps": round(len(latency) / elapsed, 1),
        "statuses": {str(k): v for k, v in sorted(statuses.items())},
        "latency": _percentiles(latency),
    }


def loadgen_main(config: dict[str, Any]) -> dict[str, Any]:
    """One run of the generator (this is what the child process does)."""
    host, port = config["host"], config["port"]
    paths = config["paths"]
    if config["mode"] == "open":
        work = open_loop(
            host, port, paths, config["rate"], config["seconds"], config["connections"]
        )
    else:
        work = closed_loop(host, port, paths, config["seconds"], config["connections"])
    before = resource.getrusage(resource.RUSAGE_SELF)
    wall = time.perf_counter()
    result = asyncio.run(work)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_SELF)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    result["generator_cpu_share"] = round(cpu / wall, 3)  # of one core
    return result


class LoadGenerator:
    """A child process (this script with ``--loadgen``) that runs one load at a time."""

    def __init__(self) -> None:
        self.proc = subprocess.Popen(
            [sys.executable, __file__, "--loadgen"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
            bufsize=1,
        )

    def run(self, config: dict[str, Any]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps(config) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"the load generator exited ({self.proc.wait()})")
        result: dict[str, Any] = json.loads(line)
        if "error" in result:
            raise RuntimeError(f"the load generator failed: {result['error']}")
        return result

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        if self.proc.stdout is not None:
            self.proc.stdout.close()


def loadgen_loop() -> int:
    """``--loadgen``: read one JSON config a line, answer one JSON result a line."""
    for line in sys.stdin:
        try:
            result = loadgen_main(json.loads(line))
        except Exception as exc:  # reported to the parent, which fails loudly
            result = {"error": f"{type(exc).__name__}: {exc}"}
        sys.stdout.write(json.dumps(result) + "\n")
        sys.stdout.flush()
    return 0


# --------------------------------------------------------------------------- measuring


@dataclass
class Server:
    label: str  # "200" or "2000"
    url: str
    pid: int
    max_match_id: int


def paths_for(scenario: str, arena: Arena, server: Server, rng: random.Random) -> list[str]:
    if scenario == "leaderboard":
        return ["/api/v1/ratings"]
    if scenario == "bracket":
        return [f"/api/v1/tournaments/{arena.tournament_id}/bracket"]
    if scenario == "matches":
        return ["/api/v1/matches?limit=50"]
    if scenario == "matches_deep":
        return [
            f"/api/v1/matches?limit=50&before={rng.randint(2, server.max_match_id)}"
            for _ in range(997)
        ]
    if scenario == "replay_hit":
        return [f"/api/v1/matches/{arena.full_length_ids[0]}/replay"]
    if scenario == "replay_miss":
        return [f"/api/v1/matches/{i}/replay" for i in arena.full_length_ids]
    raise ValueError(scenario)


def measure(
    gen: LoadGenerator, server: Server, paths: list[str], scenario: Scenario, sizes: Sizes
) -> dict[str, Any]:
    host, port = server.url.removeprefix("http://").split(":")
    base = {"host": host, "port": int(port), "paths": paths}
    gen.run({**base, "mode": "closed", "seconds": sizes.warmup_s, "connections": 4})
    out: dict[str, Any] = {}
    for mode in ("open", "closed"):
        config = {**base, "mode": mode}
        if mode == "open":
            config.update(
                rate=scenario.rate, seconds=sizes.open_s, connections=sizes.open_connections
            )
        else:
            config.update(seconds=sizes.closed_s, connections=sizes.closed_connections)
        server_cpu, pg_cpu, busy = process_cpu(server.pid), postgres_cpu(), machine_busy()
        result = gen.run(config)
        seconds = result["seconds"]
        busy_after = machine_busy()
        server_cpu = process_cpu(server.pid) - server_cpu
        result["server_cpu_share"] = round(server_cpu / seconds, 3)
        result["server_cpu_ms_per_request"] = round(server_cpu / result["requests"] * 1000, 2)
        result["postgres_cpu_share"] = round((postgres_cpu() - pg_cpu) / seconds, 3)
        result["machine_busy_share"] = round(
            (busy_after[0] - busy[0]) / max(1e-9, busy_after[1] - busy[1]), 3
        )
        bad = {k: v for k, v in result["statuses"].items() if k != "200"}
        if bad:
            raise RuntimeError(f"{scenario.name} on {server.label}: non-200 answers {bad}")
        out[mode] = result
        print(
            f"  {scenario.name:<13} N={server.label:<5} {mode:<6} "
            f"{result['achieved_rps']:>8.1f} req/s  p50 {result['latency']['p50_ms']:>8.2f} ms"
            f"  p99 {result['latency']['p99_ms']:>8.2f} ms  server cpu "
            f"{result['server_cpu_share']:.2f}  generator cpu {result['generator_cpu_share']:.2f}",
            file=sys.stderr,
        )
    if scenario.name == "leaderboard" and shutil.which("wrk"):
        out["wrk_closed"] = wrk_closed(server.url + paths[0], sizes)
    return out


def wrk_closed(url: str, sizes: Sizes) -> dict[str, Any]:
    """The closed loop again with wrk (C, one thread): a check that the Python generator is
    not what limits the maximum throughput."""
    argv = ["wrk", "-t1", f"-c{sizes.closed_connections}", f"-d{max(1, round(sizes.closed_s))}s"]
    argv += ["--latency", "-H", "Accept-Encoding: gzip", url]
    out = subprocess.run(argv, capture_output=True, text=True, check=True, timeout=120).stdout
    units = {"us": 0.001, "ms": 1.0, "s": 1000.0}

    def ms(text_value: str) -> float:
        number = text_value.rstrip("usm")
        return round(float(number) * units[text_value[len(number) :]], 2)

    result: dict[str, Any] = {"tool": "wrk", "connections": sizes.closed_connections}
    for line in out.splitlines():
        parts = line.split()
        if line.startswith("Requests/sec:"):
            result["achieved_rps"] = float(parts[1])
        elif len(parts) == 2 and parts[0] in ("50%", "99%"):
            result[f"p{parts[0][:-1]}_ms"] = ms(parts[1])
        elif "Non-2xx" in line:
            raise RuntimeError(f"wrk: {line.strip()}")
    return result


def _ratio(new: float | None, old: float | None) -> float | None:
    return None if not new or not old else round(new / old, 2)


def compare(small: dict[str, Any], large: dict[str, Any]) -> dict[str, Any]:
    return {
        "open_p50": _ratio(large["open"]["latency"]["p50_ms"], small["open"]["latency"]["p50_ms"]),
        "open_p99": _ratio(large["open"]["latency"]["p99_ms"], small["open"]["latency"]["p99_ms"]),
        "closed_p50": _ratio(
            large["closed"]["latency"]["p50_ms"], small["closed"]["latency"]["p50_ms"]
        ),
        "closed_rps": _ratio(large["closed"]["achieved_rps"], small["closed"]["achieved_rps"]),
        "cpu_per_request": _ratio(
            large["open"]["server_cpu_ms_per_request"],
            small["open"]["server_cpu_ms_per_request"],
        ),
    }


def overloaded(run: dict[str, Any]) -> bool:
    """An open-loop run the server could not keep up with (its queue only grew)."""
    return bool(run["achieved_rps"] < 0.97 * run["rate"])


def verdicts(endpoints: dict[str, Any], labels: Sequence[str]) -> dict[str, Any]:
    growth = {}
    for name, data in endpoints.items():
        r = data["ratio_large_vs_small"]
        busy = any(overloaded(data["runs"][n]["open"]) for n in labels)
        # An overloaded open loop's latency is its queue's length: judge by the closed loop.
        grows = not busy and (r["open_p50"] or 1) > GROWTH_LIMIT
        grows = grows or (r["closed_p50"] or 1) > GROWTH_LIMIT
        grows = grows or (r["closed_rps"] or 1) < 1 / GROWTH_LIMIT
        grows = grows or (r["cpu_per_request"] or 1) > GROWTH_LIMIT
        growth[name] = ("grows" if grows else "flat") + (" (open loop overloaded)" if busy else "")
    out: dict[str, Any] = {
        "growth_rule": (
            f"grows: 2,000 vs 200 open-loop p50, closed-loop p50 or server CPU per request over"
            f" {GROWTH_LIMIT}x, or closed-loop throughput under 1/{GROWTH_LIMIT}x"
        ),
        "growth": growth,
        "no_growth_target_met": all(v.startswith("flat") for v in growth.values()),
    }
    board = endpoints.get("leaderboard")
    if board is not None:
        p99 = {n: board["runs"][n]["open"]["latency"]["p99_ms"] for n in labels}
        rps = {n: board["runs"][n]["open"]["achieved_rps"] for n in labels}
        out["leaderboard_p99_ms_at_200rps"] = p99
        out["leaderboard_achieved_rps"] = rps
        out["leaderboard_target_met"] = all(
            p99[n] is not None and p99[n] < TARGET_P99_MS and rps[n] >= 0.97 * TARGET_RATE
            for n in labels
        )
    return out


# --------------------------------------------------------------------------- the report


def _cell(run: dict[str, Any]) -> str:
    lat = run["latency"]
    return f"{run['achieved_rps']:>7.1f} {lat['p50_ms']:>7.2f} {lat['p99_ms']:>8.2f}"


def _x(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}x"


def format_report(result: dict[str, Any]) -> str:
    small, large = result["sizes"]["small"], result["sizes"]["large"]
    labels = (str(small), str(large))
    lines = [
        f"API under load: gin-arena serve (waitress, 8 threads) on PostgreSQL, {small} vs "
        f"{large} finished matches; load generator in its own process on loopback",
        "open loop: fixed arrival rate, latency from each request's due time; closed loop: "
        f"{result['load']['closed_connections']} connections back to back (max throughput); "
        "cpu: the server process's CPU ms per request (open loop)",
        f"  {'':<47} {'open loop':^24}  {'closed loop':^24}",
        f"  {'endpoint':<40} {'rate':>4} {'N':>5} {'req/s':>7} {'p50 ms':>7} {'p99 ms':>8}  "
        f"{'req/s':>7} {'p50 ms':>7} {'p99 ms':>8} {'cpu':>6}",
    ]
    for name, data in result["endpoints"].items():
        for i, n in enumerate(labels):
            run = data["runs"][n]
            head = f"{data['label']:<40} {data['rate']:>4.0f}" if i == 0 else " " * 45
            lines.append(
                f"  {head} {n:>5} {_cell(run['open'])}  {_cell(run['closed'])} "
                f"{run['open']['server_cpu_ms_per_request']:>6.2f}"
            )
        r = data["ratio_large_vs_small"]
        lines.append(
            f"  {'':<45} {'ratio':>5} {'':>7} {_x(r['open_p50']):>7} {_x(r['open_p99']):>8}  "
            f"{_x(r['closed_rps']):>7} {_x(r['closed_p50']):>7} {'':>8} "
            f"{_x(r['cpu_per_request']):>6}  {result['verdicts']['growth'][name]}"
        )
    wrk = {
        n: run["wrk_closed"]
        for n, run in result["endpoints"].get("leaderboard", {}).get("runs", {}).items()
        if "wrk_closed" in run
    }
    if wrk:
        lines.append(
            "leaderboard closed loop with wrk instead (same connections): "
            + ", ".join(
                f"N={n}: {w['achieved_rps']:.1f} req/s, p50 {w['p50_ms']} ms, p99 {w['p99_ms']} ms"
                for n, w in wrk.items()
            )
        )
    v = result["verdicts"]
    if "leaderboard_target_met" in v:
        p99 = ", ".join(f"N={n}: {ms} ms" for n, ms in v["leaderboard_p99_ms_at_200rps"].items())
        lines.append(
            f"leaderboard p99 at {TARGET_RATE:.0f} req/s ({p99}): target < {TARGET_P99_MS:.0f} ms "
            + ("met" if v["leaderboard_target_met"] else "MISSED")
        )
    lines.append(
        "latency does not grow with stored matches: "
        + ("met" if v["no_growth_target_met"] else "MISSED")
        + f" ({v['growth_rule']})"
    )
    gen = result["load"]["generator_cpu_share_max"]
    lines.append(
        f"load generator CPU: at most {gen['open']:.2f} of a core (open loop), "
        f"{gen['closed']:.2f} (closed loop); its own lag behind schedule at most "
        f"{result['load']['generator_dispatch_lag_p99_ms_max']:.2f} ms (p99 of a run)"
    )
    m = result["machine"]
    lines.append(
        f"data: {json.dumps(result['data'])}; build {result['build_seconds']} s; load average "
        f"{m['loadavg_1min_before']:.2f} before, {m['loadavg_1min_after']:.2f} after on "
        f"{m['cpus']} CPUs"
    )
    return "\n".join(lines)


# --------------------------------------------------------------------------- main


def run(args: argparse.Namespace) -> dict[str, Any]:
    sizes = QUICK if args.quick else FULL
    labels = (str(sizes.small), str(sizes.large))
    load_before = os.getloadavg()[0]
    with (
        tempfile.TemporaryDirectory(prefix="bench-api-") as tmp,
        scratch_databases(args.pg_admin_url) as (small_url, large_url, admin),
    ):
        small_name, large_name = small_url.rsplit("/", 1)[1], large_url.rsplit("/", 1)[1]
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{small_name}"'))
        arena, build_small_s = build_small(small_url, sizes)
        with admin.connect() as conn:  # a copy: the same first matches, ids and tournament
            conn.execute(text(f'CREATE DATABASE "{large_name}" TEMPLATE "{small_name}"'))
        grow_s = grow(large_url, sizes)
        data = {labels[0]: census(small_url), labels[1]: census(large_url)}
        print(f"data: {data}", file=sys.stderr)
        procs = Processes(Path(tmp))
        gen = None
        try:
            servers = []
            for label, url in zip(labels, (small_url, large_url), strict=True):
                server_url, pid = start_server(procs, f"serve-{label}", url)
                servers.append(Server(label, server_url, pid, data[label]["matches"]))
            gen = LoadGenerator()
            rng = random.Random(SEED)
            endpoints: dict[str, Any] = {}
            for scenario in scenarios(sizes):
                if args.only and scenario.name not in args.only.split(","):
                    continue
                runs = {}
                for server in servers:
                    paths = paths_for(scenario.name, arena, server, rng)
                    runs[server.label] = measure(gen, server, paths, scenario, sizes)
                    runs[server.label]["example_path"] = paths[0]
                endpoints[scenario.name] = {
                    "label": scenario.label,
                    "rate": scenario.rate,
                    "runs": runs,
                    "ratio_large_vs_small": compare(runs[labels[0]], runs[labels[1]]),
                }
        finally:
            if gen is not None:
                gen.close()
            procs.stop_all()
    runs = [r for e in endpoints.values() for r in e["runs"].values()]
    result = {
        "command": "benchmarks/bench_api.py" + (" --quick" if args.quick else ""),
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1min_before": round(load_before, 2),
            "loadavg_1min_after": round(os.getloadavg()[0], 2),
        },
        "sizes": {"small": sizes.small, "large": sizes.large},
        "setup": {
            **asdict(sizes),
            "server": "gin-arena serve (waitress, 8 threads), local executor (idle)",
            "rate_limit": 'off (ARENA_RATE_LIMIT="")',
            "database": "postgresql",
            "bulk_rules": "best of 1, game to 100",
            "full_length_rules": "standard (best of 5, games to 250)",
        },
        "build_seconds": round(build_small_s + grow_s, 1),
        "data": data,
        "load": {
            "generator": "Python asyncio, raw sockets, HTTP/1.1 keep-alive, gzip accepted",
            "open_connections": sizes.open_connections,
            "closed_connections": sizes.closed_connections,
            "generator_cpu_share_max": {
                mode: max(r[mode]["generator_cpu_share"] for r in runs)
                for mode in ("open", "closed")
            },
            "generator_dispatch_lag_p99_ms_max": max(
                r["open"]["generator_dispatch_lag"]["p99_ms"] for r in runs
            ),
        },
        "endpoints": endpoints,
    }
    result["verdicts"] = verdicts(endpoints, labels)
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small data, short runs; no JSON")
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument(
        "--pg-admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    parser.add_argument(
        "--only", help="comma-separated scenarios (a partial run: for profiling; no JSON)"
    )
    parser.add_argument("--loadgen", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.loadgen:
        return loadgen_loop()
    result = run(args)
    print()
    print(format_report(result))
    out = args.json or (None if args.quick or args.only else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
