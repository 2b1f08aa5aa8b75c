"""The periodic jobs: one list, run on a timer thread each by the local executor and sent by
Celery beat on the control queue; a job that fails is logged and run again at its next tick."""

from __future__ import annotations

import threading
from collections import Counter

import pytest
from arena_procs import wait_until
from conftest import REDIS_URL

from arena.db.session import Database
from arena.playing import executors
from arena.playing.executors import LocalExecutor
from arena.services.matches import Submit
from arena.services.periodic import CONTROL_QUEUE, PERIODIC_JOBS, PeriodicJob
from arena.settings import Settings, load_settings
from workers.celery_app import create_app
from workers.tasks import periodic_task_name


def test_every_periodic_job_is_a_celery_task_sent_by_beat_on_the_control_queue() -> None:
    settings = load_settings({"ARENA_BROKER_URL": REDIS_URL})
    app = create_app(settings)
    try:
        for job in PERIODIC_JOBS:
            assert periodic_task_name(job) in app.tasks
            entry = app.conf.beat_schedule[job.name]
            assert entry["task"] == periodic_task_name(job)
            assert entry["schedule"] == job.interval(settings)
            assert entry["options"]["queue"] == CONTROL_QUEUE
    finally:
        app.close()
    assert [job.name for job in PERIODIC_JOBS] == ["sweep", "ladder", "health", "webhooks"]


def test_the_ladder_is_not_scheduled_when_no_preset_has_a_ladder() -> None:
    settings = load_settings({"ARENA_BROKER_URL": REDIS_URL, "ARENA_LADDER_PRESETS": ""})
    app = create_app(settings)
    try:
        assert "ladder" not in app.conf.beat_schedule
        assert {"sweep", "health", "webhooks"} <= set(app.conf.beat_schedule)
    finally:
        app.close()


def _counting(runs: Counter[str], lock: threading.Lock, name: str, *, fail: bool) -> PeriodicJob:
    def run(_db: Database, _settings: Settings, _submit: Submit) -> None:
        with lock:
            runs[name] += 1
        if fail:
            raise RuntimeError(f"{name} broke")

    return PeriodicJob(name, run, lambda _s: 0.05)


def test_the_local_executor_runs_each_job_on_its_own_timer_and_survives_a_failing_one(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: Counter[str] = Counter()
    lock = threading.Lock()
    jobs = (
        _counting(runs, lock, "steady", fail=False),
        _counting(runs, lock, "broken", fail=True),
        PeriodicJob("off", lambda *_: runs.update(["off"]), lambda _s: 0.05, lambda _s: False),
    )
    monkeypatch.setattr(executors, "PERIODIC_JOBS", jobs)
    settings = load_settings({}, database_url=db.url, pickup_interval_seconds=0)
    with LocalExecutor(settings, processes=1, threads=1):
        wait_until(
            lambda: runs["steady"] >= 3 and runs["broken"] >= 3,
            timeout=60,
            what="both jobs to run three times",
        )
    assert runs["off"] == 0


def test_a_local_executor_without_periodic_jobs_runs_none(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: Counter[str] = Counter()
    monkeypatch.setattr(
        executors, "PERIODIC_JOBS", (_counting(runs, threading.Lock(), "job", fail=False),)
    )
    settings = load_settings({}, database_url=db.url)
    with LocalExecutor(settings, processes=1, threads=1, periodic=False) as executor:
        assert not any(t.name == "job" for t in executor._timers)
    assert runs["job"] == 0


def test_a_local_executor_given_job_names_runs_only_those(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    runs: Counter[str] = Counter()
    lock = threading.Lock()
    jobs = (
        _counting(runs, lock, "sweep", fail=False),
        _counting(runs, lock, "ladder", fail=False),
    )
    monkeypatch.setattr(executors, "PERIODIC_JOBS", jobs)
    settings = load_settings({}, database_url=db.url, pickup_interval_seconds=0)
    with LocalExecutor(settings, processes=1, threads=1, periodic=("sweep",)):
        wait_until(lambda: runs["sweep"] >= 3, timeout=60, what="the sweep to run three times")
    assert runs["ladder"] == 0
