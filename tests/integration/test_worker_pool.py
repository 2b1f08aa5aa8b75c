"""A worker's database pool follows its concurrency, a task that finds it dry is retried, and
beat keeps its schedule in the state directory.

The failures pinned here, from ``benchmarks/bench_load.py`` (one ``gin-arena worker
--concurrency 200 --beat``): the pool stayed at 10 connections and 20 overflow whatever the
concurrency; a pool timeout (``QueuePool limit ... reached``, no ``OperationalError``) failed
the task instead of retrying it; and beat wrote ``celerybeat-schedule*`` into the working
directory it was started from.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from arena_procs import gin_arena_argv, house_bots, wait_until
from celery import signals

from arena.cli import build_parser
from arena.cli.options import UsageError
from arena.cli.worker import beat_schedule_path, pool_report, worker_app
from arena.db.session import (
    PERIODIC_CONNECTIONS,
    Database,
    connection_room,
    kept_open,
    pool_size_for,
)
from arena.live.redis_bus import live_redis_url
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.health import PROBE_THREADS
from arena.services.matches import match_status, schedule_match
from arena.services.webhooks import SENDING_THREADS
from arena.settings import Settings, load_settings
from arena.states import MatchStatus
from workers import tasks
from workers.celery_app import create_app
from workers.tasks import RUN_MATCH, task_database

PG = "postgresql+psycopg://127.0.0.1:5432/test"  # never connected to by the pool-size test
BROKER = "redis://127.0.0.1:6379/15"


def worker_settings(**values: Any) -> Settings:
    return load_settings({}, broker_url=BROKER, **values)


def worker_pool(argv: list[str], settings: Settings) -> Database:
    """The database the tasks of ``gin-arena <argv>`` would use (no worker started)."""
    app, celery_argv = worker_app(build_parser().parse_args(argv), settings)
    assert celery_argv[celery_argv.index("--concurrency") + 1] == str(app.conf.worker_concurrency)
    return task_database(app)


def test_a_worker_of_200_threads_gets_a_pool_for_200_matches_and_their_lease_keeper() -> None:
    db = worker_pool(["worker", "--concurrency", "200"], worker_settings(database_url=PG))
    assert db.pool_limit == pool_size_for(200) == 200 + 1 + 24
    pool: Any = db.engine.pool  # the engine's own QueuePool agrees
    assert (pool.size(), pool._max_overflow) == (kept_open(225), 225 - kept_open(225)) == (112, 113)
    default = worker_pool(["worker"], worker_settings(database_url=PG))  # ARENA_WORKER_THREADS
    assert default.pool_limit == pool_size_for(16) == 41
    fixed = worker_pool(
        ["worker", "--concurrency", "200"], worker_settings(database_url=PG, db_pool_size=90)
    )
    assert fixed.pool_limit == 90
    with pytest.raises(UsageError, match="must be at least 1"):
        worker_pool(["worker", "--concurrency", "0"], worker_settings(database_url=PG))


def test_a_gevent_worker_runs_celerys_gevent_pool_with_a_database_pool_for_its_matches() -> None:
    argv = ["worker", "--pool", "gevent", "--concurrency", "200", "--queues", "celery"]
    app, celery_argv = worker_app(build_parser().parse_args(argv), worker_settings(database_url=PG))
    # The pool goes to Celery's command line (-P), which patches early; never to the app's
    # ``worker_pool`` setting, from which Celery warns it would patch too late.
    assert celery_argv[celery_argv.index("--pool") + 1] == "gevent"
    assert task_database(app).pool_limit == pool_size_for(200)
    _, default_argv = worker_app(build_parser().parse_args(["worker"]), worker_settings())
    assert default_argv[default_argv.index("--pool") + 1] == "threads"


def test_the_periodic_jobs_share_of_the_pool_covers_their_threads() -> None:
    """A worker running the health sweep or the webhook sender must not find its pool dry for
    their threads (each may hold a connection while it records)."""
    assert PERIODIC_CONNECTIONS >= PROBE_THREADS + SENDING_THREADS


#: Run in a process of its own: a Celery ``Worker`` made in a process marks it as a worker's
#: (``result.get()`` then refuses to block there), which other tests of this process would meet.
PLAIN_CELERY_WORKER = textwrap.dedent(
    """
    import warnings

    from arena.db.session import pool_size_for
    from arena.settings import load_settings
    from workers.celery_app import create_app
    from workers.tasks import task_database

    warnings.simplefilter("ignore")  # Celery's warning about running as root
    settings = load_settings({}, broker_url=%r, database_url=%r, worker_threads=16)
    app, other = create_app(settings), create_app(settings)
    worker = app.Worker(concurrency=7, hostname="plain-celery@test", quiet=True)
    print(worker.pool_cls.__module__)
    print(app.conf.worker_concurrency, task_database(app).pool_limit == pool_size_for(7))
    print(other.conf.worker_concurrency)
    """
)


def test_a_worker_started_by_celerys_own_command_line_sizes_its_pool_from_its_c() -> None:
    """``celery -A workers.celery_app worker -c 7`` (what Celery's command line builds: the
    app's ``Worker`` with that concurrency) plays 7 matches at once on threads, and its tasks'
    pool is sized for 7, not for ``ARENA_WORKER_THREADS`` (it was before); another app's
    worker is not this one."""
    done = subprocess.run(
        [sys.executable, "-c", PLAIN_CELERY_WORKER % (BROKER, PG)],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == ["celery.concurrency.thread", "7 True", "None"]


@pytest.mark.postgres
def test_a_worker_bigger_than_max_connections_is_warned_of_at_start(pg_server_url: str) -> None:
    settings = worker_settings(database_url=pg_server_url)
    app, _ = worker_app(build_parser().parse_args(["worker", "--concurrency", "200"]), settings)
    probe = Database(pg_server_url)
    try:
        room = connection_room(probe)
    finally:
        probe.dispose()
    assert room is not None
    if room >= pool_size_for(200):
        pytest.skip(f"this PostgreSQL has room for {room} more connections")
    line = pool_report(app, settings)
    assert line.startswith("database pool: up to 225 connections, for 200 matches at once;")
    assert "warning: PostgreSQL accepts only" in line and "ARENA_DB_POOL_SIZE" in line
    assert connection_room(Database("sqlite://")) is None


def test_a_sqlite_worker_keeps_its_default_pool(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    db = worker_pool(["worker", "--concurrency", "200"], worker_settings(database_url=url))
    assert db.pool_limit is None
    assert db.engine.pool.size() == Database(url).engine.pool.size()  # type: ignore[attr-defined]


@pytest.mark.redis
def test_a_match_task_that_finds_the_pool_dry_is_retried_not_failed(
    db_url: str, redis_url: str
) -> None:
    settings = load_settings(
        {},
        database_url=db_url,
        broker_url=redis_url,
        allow_loopback=True,
        db_pool_size=1,
        db_pool_timeout_seconds=0.05,
    )
    app = create_app(settings)
    db = task_database(app)  # the one the task uses: its only connection is held below
    runs: list[int] = []
    setup = Database(db_url)
    with house_bots(["greedy", "strong"]) as bots:
        ids = [
            register_bot(setup, name=f"house-{i}", owner="tests", url=b.url).bot_id
            for i, b in enumerate(bots)
        ]
        with setup.session() as session:
            match_id = schedule_match(session, ids[0], ids[1], rules=RuleSet(target=50), seed=3).id
        held = db.engine.connect()

        def prerun(task: Any, **_: Any) -> None:
            runs.append(task.request.retries)
            if len(runs) == 2:  # the retry: the connection is free again
                held.close()

        signals.task_prerun.connect(prerun, weak=False)
        try:
            result = app.tasks[RUN_MATCH].apply(args=[match_id])
        finally:
            signals.task_prerun.disconnect(prerun)
            held.close()
            tasks._live(live_redis_url(settings)).close()  # the sink the task opened
            tasks._live.cache_clear()
    try:
        assert result.get() == "recorded"
        assert runs == [0, 1], "the dry pool was not met, or the task was not retried"
        assert match_status(setup, match_id) is MatchStatus.FINISHED
    finally:
        setup.dispose()
        db.dispose()


def test_beat_state_dir_defaults_to_the_xdg_state_home(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert load_settings({}).state_path == tmp_path / "state" / "gin-arena"
    monkeypatch.setenv("XDG_STATE_HOME", "relative/state")  # ignored, as the spec says
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    assert load_settings({}).state_path == tmp_path / "home" / ".local" / "state" / "gin-arena"
    chosen = load_settings({"ARENA_STATE_DIR": str(tmp_path / "mine")})
    assert beat_schedule_path(chosen, "beat@host/1") == (
        tmp_path / "mine" / "celerybeat-schedule-beat@host_1"
    )


@pytest.fixture
def beat_worker(pg_server_url: str, redis_url: str, tmp_path: Path) -> Iterator[dict[str, Path]]:
    """``gin-arena worker --beat`` started in an empty working directory, with the state
    directory and the home directory elsewhere; stopped (its process group) at the end."""
    paths = {name: tmp_path / name for name in ("cwd", "state", "home")}
    for path in paths.values():
        path.mkdir()
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(
        ARENA_DATABASE_URL=pg_server_url,
        ARENA_BROKER_URL=redis_url,
        ARENA_STATE_DIR=str(paths["state"]),
        HOME=str(paths["home"]),
    )
    env.pop("XDG_STATE_HOME", None)
    log = tmp_path / "worker.log"
    argv = [*gin_arena_argv(), "worker", "--beat", "--queues", "control", "--concurrency", "1"]
    argv += ["--hostname", "beat-test@%h", "--loglevel", "INFO"]
    with log.open("wb") as out:
        proc = subprocess.Popen(
            argv,
            cwd=paths["cwd"],
            env=env,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
        )
    paths["log"] = log
    try:
        yield paths
    finally:
        if proc.poll() is None:
            proc.send_signal(signal.SIGTERM)  # warm shutdown: beat stops with the worker
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait(timeout=30)
        with contextlib.suppress(ProcessLookupError):  # beat's process, should it outlive it
            os.killpg(proc.pid, signal.SIGKILL)


@pytest.mark.postgres
@pytest.mark.redis
def test_beat_keeps_its_schedule_in_the_state_dir_not_the_working_directory(
    beat_worker: dict[str, Path],
) -> None:
    state, cwd, log = beat_worker["state"], beat_worker["cwd"], beat_worker["log"]
    wait_until(
        lambda: any(p.name.startswith("celerybeat-schedule-beat-test@") for p in state.iterdir()),
        timeout=90,
        what="beat's schedule in ARENA_STATE_DIR",
        explain=lambda: log.read_text(errors="replace")[-4000:],
    )
    assert list(cwd.iterdir()) == [], "beat wrote into the working directory"
    assert not (beat_worker["home"] / ".local").exists()
    text = log.read_text(errors="replace")
    assert f"database pool: up to {pool_size_for(1)} connections, for 1 match at once" in text
