"""Chaos: a round robin played clean, then again on the same seeds while workers are SIGKILLed
and Redis and PostgreSQL restarted; every match must be recorded once, with the same results.

The run starts its own Redis (``redis-server --save "" --appendonly no`` on a free port: a
restart loses the queue) and its own PostgreSQL (a throwaway cluster made by ``initdb`` in a
temporary directory, on a free port, run as the ``postgres`` user when started as root), or
uses ``--redis-url`` / ``--database-url`` (an admin URL: two scratch databases are created on
it and dropped). A server it was given is never restarted unless told how
(``--redis-restart-cmd``, ``--pg-restart-cmd``); without, the given Redis's database is
flushed instead (the queue lost as by a restart) and PostgreSQL is not restarted.

House bots serve over HTTP in this process; two ``gin-arena worker`` processes play the
round robin, and a third (``--beat --queues control``) runs beat, as ``deploy/compose.yaml``
does; one that exits on its own is started again (compose's ``restart: unless-stopped``) and
reported (``worker_exits``). The clean run and the chaos run each get a fresh database, so
matches get the same ids and the house bots (whose answers depend on the match id and the
request alone) the same requests. During the chaos run, at seeded random moments: each of
``--kills`` times a worker holding a match is SIGKILLed and started again at once; Redis is
restarted once; PostgreSQL is restarted once (``pg_ctl stop -m immediate``, then start). Then
it compares:

* exactly once: every match finished, one result, its games, deals and rating changes, and the
  same number of rows in every table as the clean run (but ``events``, which has a
  ``match.started`` per attempt, compared without those, and ``health_probes``: see
  :data:`TIMING_TABLES`);
* identical results: each match's record (every action, every score) but the latencies, the
  tournament's standings and the whole-history fit;
* recovery: for a kill, the time from the kill to each of its matches being claimed again;
  for the broker, per match that was pending at the restart, the time to its being sent again
  (its message back in the broker: waiting in a list of any priority, or delivered to a worker,
  kombu's ``unacked`` hash; or the match claimed again), median and worst, and the time to the
  first of them being claimed; for PostgreSQL, to the first claim or record after the restart.

A full run fails past the targets (a kill recovered within 60 s, every pending match sent again
within 30 s of a broker restart); a quick run prints its times without judging them.

    .venv/bin/python benchmarks/chaos.py            # full run: results/chaos.json
    .venv/bin/python benchmarks/chaos.py --quick    # smoke run (one of each fault), no JSON

Full run defaults: the arena's default lease and sweep settings (the recovery they give is the
figure); ``--quick`` shortens them (a few seconds) to fit in the test suite.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import redis
from pools import DEFAULT_POOL, POOLS, match_worker_options, results_for_pool
from sqlalchemy import create_engine, func, select, text
from sqlalchemy.exc import SQLAlchemyError

from arena.bots.house import start_house_bots
from arena.bots.sdk import BotServer
from arena.db.errors import DatabaseUnavailableError
from arena.db.migrate import upgrade
from arena.db.models import Base, EventRow, MatchRow, RatingFitRow, TournamentRow
from arena.db.session import Database
from arena.playing.executors import CeleryExecutor
from arena.reading.replay import load_stored_json
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.broker import delivered_match_ids, message_match_id
from arena.services.tournaments import create_tournament, load_plan, start_tournament
from arena.settings import load_settings
from arena.states import MatchStatus, TournamentStatus

RESULTS = Path(__file__).parent / "results" / "chaos.json"
README = Path(__file__).parent / "README.md"
#: Kinds in the field (``random`` too: its answers come from its seed and the match id).
KINDS = ("strong", "greedy", "lazy", "random", "expert", "cautious", "aggressive", "balanced")
EVENT_SEED = 14
DB_ERRORS = (DatabaseUnavailableError, SQLAlchemyError)
#: The recovery targets (issue 14): a killed worker's match running again, and every match
#: pending at a broker restart sent again, within this many seconds; the run fails past them.
KILL_TARGET_S = 60
BROKER_TARGET_S = 30
#: Events whose number depends on timing, not on results: one ``match.started`` per attempt,
#: and a ``rating.changed`` per bot each time a refit moves it (how many refits run while
#: results arrive depends on when they arrive; the final fit is compared instead).
TIMING_EVENTS = ("match.started", "rating.changed")
#: Tables whose row count depends on how long a run lasts, not on its results: the health
#: sweep probes every bot each ``ARENA_HEALTH_INTERVAL_SECONDS``, so a chaos run longer than
#: that interval has a round of probes the clean run does not.
TIMING_TABLES = ("events", "health_probes")


@dataclass(frozen=True)
class Sizes:
    bots: int
    rules: RuleSet
    threads: int  # matches at once per worker
    delay_s: float  # each bot's thinking time per action
    kills: int
    #: Settings for the workers (the full run keeps the arena's defaults).
    env: dict[str, str]


#: The bots' deadline is raised to 10 s: on a loaded machine a slow answer would be a timeout
#: fault, which changes the match between the two runs for reasons that are not the faults'.
DEADLINE_MS = 10_000
#: A match killed ARENA_MAX_ATTEMPTS times is void by policy (the default 5 is reached when
#: the seeded kills keep hitting one long match): raised, so every match must be recorded.
ATTEMPTS = {"ARENA_MAX_ATTEMPTS": "20"}
FULL = Sizes(
    bots=10,
    rules=RuleSet(deadline_ms=DEADLINE_MS),
    threads=4,
    delay_s=0.004,
    kills=8,
    env=ATTEMPTS,
)
QUICK = Sizes(
    bots=6,
    rules=RuleSet(target=100, best_of=1, deadline_ms=DEADLINE_MS),
    threads=2,
    delay_s=0.002,
    kills=1,
    env={
        **ATTEMPTS,
        "ARENA_LEASE_SECONDS": "3",
        "ARENA_SWEEP_INTERVAL_SECONDS": "1",
        "ARENA_TASK_SOFT_TIME_LIMIT": "100",
        "ARENA_TASK_TIME_LIMIT": "110",
        "ARENA_VISIBILITY_TIMEOUT": "3000",
    },
)


_T0 = time.monotonic()


def note(text: str) -> None:
    """Progress on stderr, with the seconds since the start."""
    print(f"[{time.monotonic() - _T0:6.1f} s] {text}", file=sys.stderr, flush=True)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def wait_for(predicate: Callable[[], object], timeout: float, what: str) -> None:
    deadline = time.monotonic() + timeout
    while True:
        with contextlib.suppress(*DB_ERRORS, redis.RedisError, OSError):
            if predicate():
                return
        if time.monotonic() > deadline:
            raise RuntimeError(f"timed out after {timeout:.0f} s waiting for {what}")
        time.sleep(0.1)


def gin_arena() -> list[str]:
    script = Path(sys.executable).with_name("gin-arena")
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


# --- the servers -------------------------------------------------------------------------------


class OwnRedis:
    """A redis-server of this run, with nothing persisted (a restart empties it)."""

    def __init__(self, work: Path) -> None:
        self.port = free_port()
        self.work = work
        self.url = f"redis://127.0.0.1:{self.port}/0"
        self.proc: subprocess.Popen[bytes] | None = None
        self.start()

    def start(self) -> None:
        argv = ["redis-server", "--port", str(self.port), "--bind", "127.0.0.1"]
        argv += ["--save", "", "--appendonly", "no", "--dir", str(self.work)]
        with (self.work / "redis.log").open("ab") as log:
            self.proc = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT)
        wait_for(lambda: redis.Redis.from_url(self.url).ping(), 30, "redis-server")

    def restart(self) -> None:
        """SIGKILL and start again on the same port: everything queued is gone."""
        assert self.proc is not None
        self.proc.kill()
        self.proc.wait()
        self.start()

    def stop(self) -> None:
        if self.proc is not None and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class OwnPostgres:
    """A throwaway PostgreSQL cluster in a temporary directory, on a free port."""

    def __init__(self, work: Path) -> None:
        bins = sorted(Path("/usr/lib/postgresql").glob("*/bin/initdb"))
        found = shutil.which("initdb")
        if not bins and not found:
            raise SystemExit("chaos: no initdb found (install PostgreSQL, or pass --database-url)")
        self.bin = bins[-1].parent if bins else Path(str(found)).parent
        self.port = free_port()
        self.data = work / "pg"
        self.sockets = work / "pg-sockets"
        self.log = work / "postgres.log"
        self.sockets.mkdir()
        self.as_user = ["runuser", "-u", "postgres", "--"] if os.geteuid() == 0 else []
        if self.as_user:
            shutil.chown(work, "postgres")
            shutil.chown(self.sockets, "postgres")
        self._run("initdb", "-D", str(self.data), "-U", "postgres", "--auth=trust", "--no-sync")
        self.admin_url = f"postgresql+psycopg://postgres@127.0.0.1:{self.port}/postgres"
        self.start()

    def _run(self, tool: str, *args: str) -> None:
        argv = [*self.as_user, str(self.bin / tool), *args]
        done = subprocess.run(argv, capture_output=True, text=True, check=False)
        if done.returncode != 0:
            raise SystemExit(f"chaos: {tool} failed: {done.stderr.strip() or done.stdout.strip()}")

    def start(self) -> None:
        options = f"-p {self.port} -k {self.sockets} -c listen_addresses=127.0.0.1 -c fsync=off"
        self._run("pg_ctl", "-D", str(self.data), "-l", str(self.log), "-o", options, "-w", "start")

    def restart(self) -> None:
        """Stop at once (as a crash would: no checkpoint) and start again."""
        self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")
        self.start()

    def stop(self) -> None:
        with contextlib.suppress(SystemExit):
            self._run("pg_ctl", "-D", str(self.data), "-m", "immediate", "-w", "stop")


@dataclass
class Services:
    """The broker and the database server of the run, and how each is restarted."""

    redis_url: str
    pg_admin_url: str
    restart_redis: Callable[[], None]
    restart_pg: Callable[[], None] | None
    how: dict[str, str] = field(default_factory=dict)


def _shell(command: str) -> Callable[[], None]:
    def run() -> None:
        subprocess.run(command, shell=True, check=True)

    return run


def _flush(url: str) -> Callable[[], None]:
    def run() -> None:
        client = redis.Redis.from_url(url)
        try:
            client.flushdb()
        finally:
            client.close()

    return run


@contextlib.contextmanager
def services(args: argparse.Namespace, work: Path) -> Iterator[Services]:
    """Own servers (stopped and removed on exit), or the given ones."""
    own: list[OwnRedis | OwnPostgres] = []
    try:
        if args.redis_url:
            restart = _shell(args.redis_restart_cmd) if args.redis_restart_cmd else None
            redis_url, how_redis = (
                args.redis_url,
                "given; "
                + ("restarted by --redis-restart-cmd" if restart else "its database flushed"),
            )
            restart_redis = restart or _flush(redis_url)
        else:
            server = OwnRedis(work)
            own.append(server)
            redis_url, restart_redis = server.url, server.restart
            how_redis = "own redis-server (no persistence), SIGKILLed and started again"
        if args.database_url:
            pg_admin_url = args.database_url
            restart_pg = _shell(args.pg_restart_cmd) if args.pg_restart_cmd else None
            how_pg = "given; " + (
                "restarted by --pg-restart-cmd" if restart_pg else "not restarted"
            )
        else:
            pg = OwnPostgres(work)
            own.append(pg)
            pg_admin_url, restart_pg = pg.admin_url, pg.restart
            how_pg = "own cluster (initdb), pg_ctl stop -m immediate, then start"
        yield Services(
            redis_url, pg_admin_url, restart_redis, restart_pg, {"redis": how_redis, "pg": how_pg}
        )
    finally:
        for owned in reversed(own):
            owned.stop()


@contextlib.contextmanager
def scratch_database(admin_url: str, label: str) -> Iterator[str]:
    name = f"chaos_{label}_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            yield admin_url.rsplit("/", 1)[0] + "/" + name
        finally:
            with contextlib.suppress(SQLAlchemyError), admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


# --- the arena ---------------------------------------------------------------------------------


class Worker:
    """A ``gin-arena worker`` process (its output in a log file), that can be killed and
    started again; one that exits on its own is started again too (:meth:`restart_if_exited`,
    what compose's ``restart: unless-stopped`` does), and its exit is recorded."""

    def __init__(self, name: str, argv: list[str], env: dict[str, str], work: Path) -> None:
        self.name, self.argv, self.env, self.work = name, argv, env, work
        self.proc: subprocess.Popen[bytes] | None = None
        self.lock = threading.Lock()
        self.stopping = False
        #: When it exited on its own, and its exit status.
        self.exits: list[tuple[datetime, int]] = []
        self.start()

    def start(self) -> None:
        with (self.work / f"{self.name}.log").open("ab") as log:
            self.proc = subprocess.Popen(
                self.argv,
                env={**os.environ, **self.env},
                cwd=self.work,
                stdout=log,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,
            )

    @property
    def pid(self) -> int:
        assert self.proc is not None
        return self.proc.pid

    def kill(self) -> None:
        assert self.proc is not None
        self.proc.send_signal(signal.SIGKILL)
        self.proc.wait()

    def kill_and_start(self) -> None:
        """SIGKILL, and start again at once (a fault of the run, not an exit of its own)."""
        with self.lock:
            self.kill()
            self.start()

    def restart_if_exited(self) -> bool:
        """Start it again if it exited on its own (recorded in :attr:`exits`)."""
        with self.lock:
            if self.stopping or self.proc is None or self.proc.poll() is None:
                return False
            self.exits.append((now_utc(), self.proc.returncode))
            note(f"{self.name} exited on its own ({self.proc.returncode}): started again")
            self.start()
            return True

    def stop(self) -> None:
        """Cold shutdown (the run is over: nothing left to finish)."""
        with self.lock:
            self.stopping = True
        if self.proc is not None and self.proc.poll() is None:
            self.proc.send_signal(signal.SIGQUIT)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()


def start_workers(
    env: dict[str, str], threads: int, work: Path, pool: str = DEFAULT_POOL
) -> list[Worker]:
    """Two match workers and beat (on the control queue), as deploy/compose.yaml runs them;
    with ``pool`` gevent the match workers run the gevent pool on the match queue alone, as
    deploy/README.md runs them."""
    host = socket.gethostname()
    common = [*gin_arena(), "worker", "--loglevel", "INFO"]
    green = match_worker_options(pool)
    workers = [
        Worker(
            f"w{i}",
            [*common, "--concurrency", str(threads), *green, "--hostname", f"w{i}@{host}"],
            env,
            work,
        )
        for i in (1, 2)
    ]
    beat = [*common, "--beat", "--queues", "control", "--concurrency", "2"]
    workers.append(Worker("beat", [*beat, "--hostname", f"beat@{host}"], env, work))
    for w in workers:
        log = work / f"{w.name}.log"
        wait_for(lambda log=log: " ready." in log.read_text(), 120, w.name)  # type: ignore[misc]
    return workers


def slowed(server: BotServer, delay_s: float) -> BotServer:
    """A bot that thinks ``delay_s`` per action (so a match lasts long enough to be hit)."""
    inner = server.act

    def act(request: Any) -> Any:
        time.sleep(delay_s)
        return inner(request)

    server.act = act
    return server


def now_utc() -> datetime:
    return datetime.now(UTC)


def seconds_since(start: datetime, moment: datetime | None) -> float | None:
    return None if moment is None else round((moment - start).total_seconds(), 2)


# --- the faults --------------------------------------------------------------------------------


@dataclass
class Fault:
    kind: str  # kill, broker, database
    at: datetime
    detail: dict[str, Any] = field(default_factory=dict)
    recovery_s: list[float] = field(default_factory=list)


class Chaos:
    """Injects the faults at seeded moments and measures the recovery from each."""

    def __init__(
        self, sizes: Sizes, svc: Services, db: Database, workers: list[Worker], seed: int
    ) -> None:
        self.sizes, self.svc, self.db, self.workers = sizes, svc, db, workers
        self.rng = random.Random(seed)
        self.faults: list[Fault] = []
        #: Faults the plan had but the round robin ended first.
        self.missed: list[str] = []
        self.watchers: list[threading.Thread] = []

    def plan(self, span_s: float) -> list[tuple[float, str]]:
        """Moments (seconds after the start) and kinds, from the seed, within the first
        two thirds of ``span_s`` (the clean run's length), at least a tenth of it (at most
        2 s) apart."""
        kinds = ["kill"] * self.sizes.kills + ["broker", "database"]
        self.rng.shuffle(kinds)
        moments = sorted(self.rng.uniform(0.05, 0.65) * span_s for _ in kinds)
        gap = min(2.0, span_s / 10)
        spaced: list[float] = []
        for m in moments:
            spaced.append(max(m, spaced[-1] + gap) if spaced else m)
        return list(zip(spaced, kinds, strict=True))

    def held(self) -> dict[int, tuple[int, str]]:
        """Running matches: id -> (attempt, lease owner)."""
        with self.db.session() as s:
            rows = s.execute(
                select(MatchRow.id, MatchRow.attempt, MatchRow.lease_owner).where(
                    MatchRow.status == MatchStatus.RUNNING
                )
            ).all()
        return {m: (a, owner or "") for m, a, owner in rows}

    def kill(self) -> Fault | None:
        """SIGKILL a worker that holds a match (seeded choice), start it again at once."""
        held = self.held()
        targets = [w for w in self.workers[:2] if any(f"-{w.pid}-" in o for _, o in held.values())]
        if not targets:
            return None
        victim = self.rng.choice(targets)
        lost = {m: a for m, (a, o) in held.items() if f"-{victim.pid}-" in o}
        fault = Fault("kill", now_utc(), {"worker": victim.name, "matches": sorted(lost)})
        victim.kill_and_start()
        self._watch(fault, lambda: self._reclaimed(fault, lost))
        return fault

    def _reclaimed(self, fault: Fault, lost: dict[int, int]) -> bool:
        with self.db.session() as s:
            rows = s.execute(
                select(MatchRow.id, MatchRow.attempt, MatchRow.started_at).where(
                    MatchRow.id.in_(list(lost))
                )
            ).all()
        for match_id, attempt, started in rows:
            if attempt > lost[match_id] and match_id not in fault.detail.setdefault("seen", {}):
                fault.detail["seen"][match_id] = seconds_since(fault.at, started)
        return len(fault.detail.get("seen", {})) == len(lost)

    def broker(self) -> Fault:
        """Restart Redis: every queued match is lost."""
        with self.db.session() as s:
            pending = dict(
                s.execute(
                    select(MatchRow.id, MatchRow.attempt).where(
                        MatchRow.status == MatchStatus.PENDING
                    )
                ).all()
            )
        fault = Fault("broker", now_utc(), {"pending": sorted(pending)})
        self.svc.restart_redis()
        self._watch(fault, lambda: self._requeued(fault, pending))
        return fault

    def _requeued(self, fault: Fault, pending: dict[int, int]) -> bool:
        """Each match pending at the restart, once it is sent again since: its message in the
        broker (waiting in a list of any priority, or delivered to a worker and not yet
        acknowledged: kombu's ``unacked`` hash, which the restart emptied too), or the match
        claimed again (a message a worker held in memory across the restart, or one taken and
        acknowledged between two looks). Per match, the seconds from the restart
        (``resent``); done when every one was sent again and the first was claimed."""
        sent = sent_match_ids(self.svc.redis_url)
        seen_at = seconds_since(fault.at, now_utc())
        with self.db.session() as s:
            rows = s.execute(
                select(MatchRow.id, MatchRow.attempt, MatchRow.started_at).where(
                    MatchRow.id.in_(list(pending))
                )
            ).all()
        claimed = {m: started for m, a, started in rows if a > pending[m] and started}
        if claimed and "first_claimed_s" not in fault.detail:
            fault.detail["first_claimed_s"] = seconds_since(fault.at, min(claimed.values()))
        resent: dict[int, float | None] = fault.detail.setdefault("resent", {})
        for match_id in pending:
            if match_id in resent:
                continue
            if match_id in claimed:
                resent[match_id] = seconds_since(fault.at, claimed[match_id])
            elif match_id in sent:
                resent[match_id] = seen_at
        return len(resent) == len(pending) and ("first_claimed_s" in fault.detail or not pending)

    def database(self) -> Fault | None:
        if self.svc.restart_pg is None:
            return None
        fault = Fault("database", now_utc())
        self.svc.restart_pg()
        fault.detail["restarted_s"] = seconds_since(fault.at, now_utc())
        self._watch(fault, lambda: self._moving(fault))
        return fault

    def _moving(self, fault: Fault) -> bool:
        """A match claimed or recorded after the restart."""
        with self.db.session() as s:
            started, finished = s.execute(
                select(func.max(MatchRow.started_at), func.max(MatchRow.finished_at))
            ).one()
        later = [t for t in (started, finished) if t is not None and t > fault.at]
        if later:
            fault.detail["first_progress_s"] = seconds_since(fault.at, min(later))
        return bool(later)

    def _watch(self, fault: Fault, done: Callable[[], bool]) -> None:
        self.faults.append(fault)

        def watch() -> None:
            with contextlib.suppress(RuntimeError):
                wait_for(done, 300, f"recovery from {fault.kind}")

        thread = threading.Thread(target=watch, daemon=True)
        thread.start()
        self.watchers.append(thread)

    def run(
        self, moments: list[tuple[float, str]], started: float, finished: Callable[[], bool]
    ) -> None:
        for at, kind in moments:
            while time.monotonic() - started < at:
                time.sleep(0.05)
            if finished():
                self.missed.append(kind)
                continue
            inject = {"kill": self.kill, "broker": self.broker, "database": self.database}[kind]
            if kind == "database" and self.svc.restart_pg is None:
                continue
            # A kill waits for a worker holding a match; every fault waits out a database
            # that is still coming back from its own restart.
            before = len(self.faults)
            with contextlib.suppress(RuntimeError):  # nobody held a match for a minute
                wait_for(lambda: inject() is not None or finished(), 60, kind)  # noqa: B023
            if len(self.faults) == before:
                self.missed.append(kind)
        for thread in self.watchers:
            thread.join(timeout=300)


def match_messages(redis_url: str) -> tuple[set[int], set[int]]:
    """The match ids of the ``run_match`` messages in the broker: those waiting in the default
    queue's list of every priority, and those delivered to a worker and not yet acknowledged
    (kombu's ``unacked`` hash: a worker holds the message, the match is not necessarily
    claimed yet)."""
    client = redis.Redis.from_url(redis_url)
    try:
        waiting = {
            message_match_id(json.loads(raw))
            for key in client.scan_iter("celery*")
            for raw in client.lrange(key, 0, -1)
        }
        delivered = delivered_match_ids(client)
    finally:
        client.close()
    return {m for m in waiting if m is not None}, delivered


def sent_match_ids(redis_url: str) -> set[int]:
    """The match ids of every ``run_match`` message in the broker, waiting or delivered."""
    waiting, delivered = match_messages(redis_url)
    return waiting | delivered


# --- one run -----------------------------------------------------------------------------------


@dataclass
class Run:
    started_at: datetime
    seconds: float
    tournament: int
    snapshot: dict[str, Any]
    faults: list[Fault]
    missed: list[str]
    #: Workers that exited on their own (and were started again): when, and their status.
    exits: list[dict[str, Any]] = field(default_factory=list)


def play(
    label: str,
    sizes: Sizes,
    svc: Services,
    bots: Sequence[BotServer],
    work: Path,
    chaos_seed: int | None = None,
    span_s: float = 0.0,
    pool: str = DEFAULT_POOL,
) -> Run:
    """Play the round robin on a fresh database (faults if ``chaos_seed`` is given), the match
    workers in ``pool``."""
    run_dir = work / label
    run_dir.mkdir()
    with scratch_database(svc.pg_admin_url, label) as url:
        redis.Redis.from_url(svc.redis_url).flushdb()
        env = {
            **sizes.env,
            "ARENA_DATABASE_URL": url,
            "ARENA_BROKER_URL": svc.redis_url,
            "ARENA_ALLOW_LOOPBACK": "true",
            "ARENA_LADDER_PRESETS": "",
            "ARENA_HEALTH_INTERVAL_SECONDS": "3600",
        }
        settings = load_settings(env)
        db = Database(url)
        upgrade(db)
        ids = [
            register_bot(
                db, name=f"bot-{i:02d}-{KINDS[i % len(KINDS)]}", owner="chaos", url=b.url
            ).bot_id
            for i, b in enumerate(bots)
        ]
        tid = create_tournament(
            db,
            name=f"chaos {label}",
            format_name="round_robin",
            bot_ids=ids,
            rules=sizes.rules,
            seed=EVENT_SEED,
        )
        t_workers = time.monotonic()
        workers = start_workers(env, sizes.threads, run_dir, pool)
        note(f"{label}: workers ready in {time.monotonic() - t_workers:.1f} s")
        executor = CeleryExecutor(settings)
        chaos = None if chaos_seed is None else Chaos(sizes, svc, db, workers, chaos_seed)
        supervising = threading.Event()

        def supervise() -> None:
            while not supervising.wait(0.5):
                for w in workers:
                    w.restart_if_exited()

        supervisor = threading.Thread(target=supervise, name="supervisor", daemon=True)
        supervisor.start()
        try:
            started, started_at = time.monotonic(), now_utc()
            start_tournament(db, tid, executor.submit)

            def finished() -> bool:
                with contextlib.suppress(*DB_ERRORS):
                    with db.session() as s:
                        status = s.get_one(TournamentRow, tid).status
                    return status is TournamentStatus.FINISHED
                return False

            if chaos is not None:
                chaos.run(chaos.plan(span_s), started, finished)
            wait_for(finished, 1800, f"the {label} round robin to finish")
            seconds = time.monotonic() - started
            wait_for(lambda: fit_covers_all(db), 120, "the final rating fit")
            snapshot = take_snapshot(db, tid)
            note(f"{label}: finished and read")
        finally:
            supervising.set()
            supervisor.join(timeout=10)
            executor.close()
            for w in workers:
                w.stop()
            db.dispose()
            note(f"{label}: workers stopped")
    faults, missed = ([], []) if chaos is None else (chaos.faults, chaos.missed)
    exits = [
        {"worker": w.name, "at_s": seconds_since(started_at, at), "returncode": code}
        for w in workers
        for at, code in w.exits
    ]
    return Run(started_at, round(seconds, 1), tid, snapshot, faults, missed, exits)


def fit_covers_all(db: Database) -> bool:
    from arena.services.sweeper import fit_is_behind  # noqa: PLC0415

    return not fit_is_behind(db)


_VOLATILE = {"latency_ms", "digest", "status", "previous_rtt_ms"}


def _without_timing(value: Any) -> Any:
    """A record's JSON without what depends on the clock: latencies (the third item of each
    action entry ``[seat, action, latency_ms, ...]``, and the summaries), the digest over them."""
    if isinstance(value, dict):
        return {k: _without_timing(v) for k, v in value.items() if k not in _VOLATILE}
    if isinstance(value, list):
        if len(value) >= 3 and value[0] in (0, 1) and isinstance(value[1], dict):
            value = [value[0], value[1], *value[3:]]
        return [_without_timing(v) for v in value]
    return value


def take_snapshot(db: Database, tid: int) -> dict[str, Any]:
    """What the two runs must agree on, and the row counts that show nothing was doubled."""
    with db.session() as s:
        matches = list(s.execute(select(MatchRow.id, MatchRow.status, MatchRow.attempt)).all())
        fits = {
            bot: [round(r, 6), round(lo, 6), round(hi, 6), n]
            for bot, r, lo, hi, n in s.execute(
                select(
                    RatingFitRow.bot_id,
                    RatingFitRow.rating,
                    RatingFitRow.ci_low,
                    RatingFitRow.ci_high,
                    RatingFitRow.matches,
                )
            ).all()
        }
        rows = {
            name: int(s.scalar(select(func.count()).select_from(table)) or 0)
            for name, table in sorted(Base.metadata.tables.items())
        }
        events = dict(s.execute(select(EventRow.type, func.count()).group_by(EventRow.type)).all())
        per_match: dict[str, dict[int, int]] = {
            name: dict(
                s.execute(select(table.c.match_id, func.count()).group_by(table.c.match_id)).all()
            )
            for name, table in sorted(Base.metadata.tables.items())
            if "match_id" in table.c and name not in ("events",)
        }
    _, plan = load_plan(db, tid)
    return {
        "statuses": {m: str(st.value) for m, st, _ in matches},
        "attempts": {m: a for m, _, a in matches},
        "records": {
            m: _without_timing(load_stored_json(db, m))
            for m, st, _ in matches
            if st is MatchStatus.FINISHED
        },
        "standings": [st.to_dict() for st in plan.standings],
        "fit": fits,
        "rows": rows,
        "events": {str(k): v for k, v in events.items()},
        "per_match": per_match,
    }


# --- the comparison ----------------------------------------------------------------------------


def compare(clean: dict[str, Any], chaos: dict[str, Any]) -> dict[str, Any]:
    """Lost, duplicated and differing matches, and whether standings and fit agree."""
    lost = sorted(m for m, st in chaos["statuses"].items() if st != "finished")
    lost += sorted(set(clean["statuses"]) - set(chaos["statuses"]))
    doubled = sorted(
        f"{name}: match {m} has {n} rows, not {clean['per_match'][name].get(m, 0)}"
        for name, counts in chaos["per_match"].items()
        for m, n in counts.items()
        if n != clean["per_match"][name].get(m, 0)
    )
    tables = {
        name: (clean["rows"][name], n)
        for name, n in chaos["rows"].items()
        if name not in TIMING_TABLES and n != clean["rows"].get(name)
    }
    events = {
        kind: (clean["events"].get(kind, 0), n)
        for kind, n in chaos["events"].items()
        if kind not in TIMING_EVENTS and n != clean["events"].get(kind, 0)
    }
    differing = sorted(m for m, r in chaos["records"].items() if clean["records"].get(m) != r)
    return {
        "matches": len(clean["statuses"]),
        "lost": lost,
        "duplicated": doubled,
        "tables_differing": {k: list(v) for k, v in tables.items()},
        "events_differing": {k: list(v) for k, v in events.items()},
        "records_differing": differing,
        "results_identical": not differing and not lost,
        "standings_identical": clean["standings"] == chaos["standings"],
        "fit_identical": clean["fit"] == chaos["fit"],
        "replayed_matches": sum(1 for a in chaos["attempts"].values() if a > 1),
    }


def summary(values: Sequence[float]) -> dict[str, float | int | None]:
    if not values:
        return {"count": 0, "median_s": None, "worst_s": None}
    return {
        "count": len(values),
        "median_s": round(statistics.median(values), 1),
        "worst_s": round(max(values), 1),
    }


def recovery(faults: Sequence[Fault]) -> dict[str, Any]:
    kills = [v for f in faults if f.kind == "kill" for v in f.detail.get("seen", {}).values()]
    unrecovered = [
        m
        for f in faults
        if f.kind == "kill"
        for m in f.detail["matches"]
        if m not in f.detail.get("seen", {})
    ]
    broker = [f.detail for f in faults if f.kind == "broker"]
    database = [f.detail for f in faults if f.kind == "database"]
    return {
        "kill_to_running_again": {**summary(kills), "unrecovered": unrecovered},
        "broker_restart": [_broker_recovery(d) for d in broker],
        "database_restart": [
            {"restart_took_s": d.get("restarted_s"), "first_progress_s": d.get("first_progress_s")}
            for d in database
        ],
    }


def _broker_recovery(detail: dict[str, Any]) -> dict[str, Any]:
    """A broker restart's figures: per match pending at it, the time to its being sent again
    (median and worst; ``requeued_s`` is the worst, when every one was), and those never sent
    again while the run watched (300 s)."""
    resent = detail.get("resent", {})
    times = [float(v) for v in resent.values() if v is not None]
    everyone = len(resent) == len(detail["pending"])
    return {
        "pending_lost": len(detail["pending"]),
        "requeued_median_s": round(statistics.median(times), 2) if times else None,
        "requeued_s": (round(max(times), 2) if times else 0.0) if everyone else None,
        "not_requeued": sorted(m for m in detail["pending"] if m not in resent),
        "first_claimed_s": detail.get("first_claimed_s"),
    }


def format_report(result: dict[str, Any]) -> str:
    c, r, t = result["checks"], result["recovery"], result["tournament"]
    kill = r["kill_to_running_again"]
    lines = [
        f"Chaos: {t['bots']}-bot round robin ({t['matches']} matches), {t['rules']},"
        f" 2 workers x {t['matches_at_once_per_worker']} + beat;"
        f" clean {result['clean_seconds']:.0f} s, chaos {result['chaos_seconds']:.0f} s",
        f"  faults: {len(result['faults'])} ("
        + ", ".join(f"{f['kind']} at {f['at_s']:.1f} s" for f in result["faults"])
        + ")"
        + (
            f"; missed (the round robin ended first): {result['faults_missed']}"
            if result["faults_missed"]
            else ""
        ),
        f"  lost {len(c['lost'])}, duplicated {len(c['duplicated'])},"
        f" records differing {len(c['records_differing'])}, tables differing"
        f" {len(c['tables_differing'])}, events differing {len(c['events_differing'])};"
        f" standings identical {c['standings_identical']}, fit identical {c['fit_identical']};"
        f" {c['replayed_matches']} matches played again",
        f"  kill -> match running again: median {kill['median_s']} s, worst {kill['worst_s']} s"
        f" over {kill['count']} matches ({len(kill['unrecovered'])} unrecovered;"
        f" target {KILL_TARGET_S} s)",
    ]
    for b in r["broker_restart"]:
        lines.append(
            f"  broker restart: {b['pending_lost']} pending matches lost, each queued again after"
            f" median {b['requeued_median_s']} s, all after {b['requeued_s']} s"
            f" ({len(b['not_requeued'])} never; target {BROKER_TARGET_S} s),"
            f" the first running again after {b['first_claimed_s']} s"
        )
    for label, exits in result["worker_exits"].items():
        if exits:
            lines.append(
                f"  {label} run: workers that exited on their own, started again (as compose's"
                " restart: unless-stopped): "
                + ", ".join(f"{e['worker']} at {e['at_s']} s ({e['returncode']})" for e in exits)
            )
    for d in r["database_restart"]:
        lines.append(
            f"  database restart: took {d['restart_took_s']} s, first claim or record after"
            f" {d['first_progress_s']} s"
        )
    m = result["machine"]
    lines.append(
        f"  settings: lease {result['settings']['lease_seconds']} s (renewed every"
        f" {result['settings']['lease_renew_fraction']}), sweep every"
        f" {result['settings']['sweep_interval_seconds']} s; load average (1 min)"
        f" {m['loadavg_1min_before']:.2f} before, {m['loadavg_1min_after']:.2f} after on"
        f" {m['cpus']} CPUs"
    )
    return "\n".join(lines)


def passed(result: dict[str, Any]) -> bool:
    """Every check, every fault recovered from, and (a full run: the arena's default settings,
    whose recovery is the promise) within the targets. A quick run's shortened settings make
    its times no promise, and the suite asserts no timing: they are printed, not judged."""
    c = result["checks"]
    kill = result["recovery"]["kill_to_running_again"]
    brokers = result["recovery"]["broker_restart"]
    in_time = result["mode"] != "full" or (
        (kill["worst_s"] or 0) <= KILL_TARGET_S
        and all((b["requeued_s"] or 0) <= BROKER_TARGET_S for b in brokers)
    )
    return bool(
        not result["faults_missed"]
        and not c["lost"]
        and not c["duplicated"]
        and not c["tables_differing"]
        and not c["events_differing"]
        and c["results_identical"]
        and c["standings_identical"]
        and c["fit_identical"]
        and not kill["unrecovered"]
        and all(b["requeued_s"] is not None for b in brokers)
        and in_time
    )


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="small round robin; no JSON")
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--seed", type=int, default=1, help="seed of the fault moments")
    parser.add_argument("--kills", type=int, help="workers SIGKILLed (default 8; quick 1)")
    parser.add_argument("--bots", type=int, help="bots in the round robin (default 10; quick 6)")
    parser.add_argument("--redis-url", help="use this Redis database (flushed) instead of our own")
    parser.add_argument("--database-url", help="use this PostgreSQL (admin URL) instead")
    parser.add_argument("--redis-restart-cmd", help="how to restart the given Redis (shell)")
    parser.add_argument("--pg-restart-cmd", help="how to restart the given PostgreSQL (shell)")
    parser.add_argument(
        "--keep-logs", type=Path, help="keep the servers' and workers' logs under this directory"
    )
    parser.add_argument(
        "--pool",
        choices=POOLS,
        default=DEFAULT_POOL,
        help="the match workers' pool (beat stays on a threads worker); gevent writes"
        " results/chaos_gevent.json",
    )
    args = parser.parse_args(argv)
    sizes = QUICK if args.quick else FULL
    if args.kills is not None or args.bots is not None:
        sizes = Sizes(
            args.bots or sizes.bots,
            sizes.rules,
            sizes.threads,
            sizes.delay_s,
            sizes.kills if args.kills is None else args.kills,
            sizes.env,
        )
    settings = load_settings(sizes.env)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="chaos-") as tmp:
        work = Path(tmp)
        if args.keep_logs:
            args.keep_logs.mkdir(parents=True, exist_ok=True)
            work = Path(tempfile.mkdtemp(prefix="chaos-", dir=args.keep_logs))
        with services(args, work) as svc:
            note("services up")
            bots = [
                slowed(b, sizes.delay_s)
                for b in start_house_bots([KINDS[i % len(KINDS)] for i in range(sizes.bots)])
            ]
            try:
                clean = play("clean", sizes, svc, bots, work, pool=args.pool)
                note(f"clean run: {clean.seconds} s")
                chaos = play("chaos", sizes, svc, bots, work, args.seed, clean.seconds, args.pool)
                note(f"chaos run: {chaos.seconds} s")
            finally:
                for b in bots:
                    b.stop()
    load_after = os.getloadavg()[0]
    rules = sizes.rules
    result = {
        "command": "benchmarks/chaos.py"
        + (" --quick" if args.quick else "")
        + ("" if args.seed == 1 else f" --seed {args.seed}"),
        "mode": "quick" if args.quick else "full",
        "machine": {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "loadavg_1min_before": round(load_before, 2),
            "loadavg_1min_after": round(load_after, 2),
        },
        "services": svc.how,
        "settings": {
            "lease_seconds": settings.lease_seconds,
            "lease_renew_fraction": settings.lease_renew_fraction,
            "sweep_interval_seconds": settings.sweep_interval_seconds,
            "pending_grace_seconds": settings.pending_grace_seconds,
        },
        "tournament": {
            "format": "round_robin",
            "bots": sizes.bots,
            "matches": sizes.bots * (sizes.bots - 1) // 2,
            "rules": (
                "standard (best of 5, games to 250)"
                if rules.replace(deadline_ms=1000) == RuleSet()
                else f"best of {rules.best_of}, games to {rules.target}"
            )
            + f", bot deadline {rules.deadline_ms / 1000:g} s",
            "bot_delay_ms": sizes.delay_s * 1000,
            "matches_at_once_per_worker": sizes.threads,
            "worker_pool": args.pool,
            "event_seed": EVENT_SEED,
            "fault_seed": args.seed,
        },
        "clean_seconds": clean.seconds,
        "chaos_seconds": chaos.seconds,
        "faults": [
            {
                "kind": f.kind,
                "at_s": round((f.at - chaos.started_at).total_seconds(), 1),
                **{k: v for k, v in f.detail.items() if k not in ("pending",)},
                **({"pending_lost": len(f.detail["pending"])} if "pending" in f.detail else {}),
            }
            for f in chaos.faults
        ],
        "faults_missed": chaos.missed,
        "worker_exits": {"clean": clean.exits, "chaos": chaos.exits},
        "checks": compare(clean.snapshot, chaos.snapshot),
        "recovery": recovery(chaos.faults),
        "targets": {
            "kill_to_running_again_s": KILL_TARGET_S,
            "broker_restart_requeued_s": BROKER_TARGET_S,
            "judged": not args.quick,
        },
    }
    result["passed"] = passed(result)
    print(format_report(result))
    out = args.json or (None if args.quick else results_for_pool(RESULTS, args.pool))
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2, default=str) + "\n")
        print(f"wrote {out}")
    return 0 if result["passed"] else 1


if __name__ == "__main__":
    sys.exit(main())
