"""The sweep, the safety net under submission: its numbers are settings, each with one
default, the same for every executor and the command line."""

from __future__ import annotations

import inspect
import os
import socket
import subprocess
import sys
from datetime import timedelta

import pytest
import redis
from conftest import REDIS_URL
from sqlalchemy import update

from arena.cli import build_parser
from arena.db.models import MatchRow, RatingFitStateRow, utcnow
from arena.db.session import Database
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.broker import held_match_ids
from arena.services.matches import schedule_match, sweep_stuck
from arena.services.queue_loss import MARKER_KEY, begin_resend, mark_queue, queue_was_lost
from arena.services.sweeper import fit_is_behind, sweep
from arena.settings import Settings, SettingsError, load_settings
from arena.states import MatchStatus
from workers.celery_app import create_app
from workers.tasks import send_matches


def _pending(db: Database, *, age_s: float) -> int:
    """A pending match created ``age_s`` seconds ago, never submitted."""
    a, b = (
        register_bot(db, name=f"b{age_s:g}-{i}", owner="o", url="http://127.0.0.1:9").bot_id
        for i in range(2)
    )
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=RuleSet(target=25), seed=1).id
    with db.session() as session:
        session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(created_at=utcnow() - timedelta(seconds=age_s))
        )
    return match_id


def _orphan(db: Database, match_id: int) -> None:
    """What a worker SIGKILLed mid-match leaves: running, its lease run out."""
    with db.session() as session:
        session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(
                status=MatchStatus.RUNNING,
                attempt=1,
                lease_owner="celery-dead",
                lease_expires_at=utcnow() - timedelta(seconds=1),
            )
        )


def test_every_pending_grace_comes_from_one_setting(db: Database) -> None:
    """``ARENA_PENDING_GRACE_SECONDS`` decides for the sweep (beat and the local sweeper
    call the same function), the services take no default of their own, and ``gin-arena
    sweep`` uses the setting unless told otherwise; beat runs every
    ``ARENA_SWEEP_INTERVAL_SECONDS``."""
    old, fresh = _pending(db, age_s=122), _pending(db, age_s=5)
    settings = load_settings({}, database_url=db.url)
    submitted: list[int] = []
    assert sweep(db, settings.replace(pending_grace_seconds=600), submitted.extend) == []
    assert sweep(db, settings.replace(pending_grace_seconds=60), submitted.extend) == [old]
    assert sweep(db, settings.replace(pending_grace_seconds=0), submitted.extend) == [old, fresh]
    assert submitted == [old, old, fresh]
    grace = inspect.signature(sweep_stuck).parameters["pending_grace_s"]
    assert grace.default is inspect.Parameter.empty
    assert build_parser().parse_args(["sweep"]).pending_grace is None
    assert sweep_stuck(db, pending_grace_s=100) == [old]  # by hand: every one past the grace
    beat = load_settings({"ARENA_BROKER_URL": REDIS_URL, "ARENA_SWEEP_INTERVAL_SECONDS": "7.5"})
    app = create_app(beat)
    try:
        assert app.conf.beat_schedule["sweep"]["schedule"] == 7.5
        assert app.conf.beat_schedule["sweep"]["options"]["queue"] == "control"
    finally:
        app.close()


def test_the_defaults_meet_the_recovery_targets() -> None:
    """A killed worker's match is back within 60 s: its lease runs out (renewed every quarter
    of it) and the next sweep resubmits it; a lost queue is noticed by the next sweep (30 s)."""
    defaults = Settings()
    assert defaults.lease_seconds + defaults.sweep_interval_seconds <= 30
    assert defaults.lease_seconds * defaults.lease_renew_fraction <= defaults.lease_seconds / 2
    assert defaults.sweep_interval_seconds <= 10
    assert defaults.pending_grace_seconds == 300


def test_a_waiting_match_is_resent_once_per_grace_not_every_sweep(db: Database) -> None:
    """A pending match deep in a long queue is resubmitted when its age passes each multiple
    of the grace (within the sweep's window), not on every sweep in between."""
    at_two_graces, between = _pending(db, age_s=603), _pending(db, age_s=450)
    settings = load_settings({}, database_url=db.url, pending_grace_seconds=300)
    assert sweep(db, settings.replace(sweep_interval_seconds=5), lambda ids: None) == [
        at_two_graces
    ]
    assert sweep_stuck(db, pending_grace_s=300) == sorted([between, at_two_graces])


@pytest.mark.parametrize(
    "typo",
    [
        "ARENA_PENDING_GRACE_SECOND",
        "ARENA_PENDNG_GRACE_SECONDS",
        "ARENA_SWEEP_INTREVAL_SECONDS",
        "ARENA_PICKUP_INTERVAL_SECOND",
    ],
)
def test_a_misspelt_sweeper_setting_is_reported_with_the_real_name(typo: str) -> None:
    real = {
        "PENDING": "ARENA_PENDING_GRACE_SECONDS",
        "PENDNG": "ARENA_PENDING_GRACE_SECONDS",
        "SWEEP": "ARENA_SWEEP_INTERVAL_SECONDS",
        "PICKUP": "ARENA_PICKUP_INTERVAL_SECONDS",
    }[typo.split("_")[1]]
    with pytest.raises(SettingsError, match=f"did you mean {real}\\?"):
        load_settings({typo: "5"})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ARENA_SWEEP_INTERVAL_SECONDS", "0"),
        ("ARENA_PENDING_GRACE_SECONDS", "-1"),
        ("ARENA_PICKUP_INTERVAL_SECONDS", "-0.5"),
        ("ARENA_LEASE_RENEW_FRACTION", "0.6"),
        ("ARENA_LEASE_RENEW_FRACTION", "0"),
    ],
)
def test_a_sweeper_setting_out_of_range_is_refused_naming_it(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        load_settings({name: value})


def test_the_sweep_refits_the_ratings_when_rated_results_are_not_in_the_fit(db: Database) -> None:
    """Ladder matches and challenges close no tournament round: the sweep brings them into the
    whole-history fit, and does not refit when nothing new was recorded."""
    a = register_bot(db, name="fit-a", owner="t", url="http://127.0.0.1:9/").bot_id
    b = register_bot(db, name="fit-b", owner="t", url="http://127.0.0.1:9/").bot_id
    assert not fit_is_behind(db)
    with db.session() as s:
        for seed in range(3):
            m = schedule_match(s, a, b, rules=RuleSet(), seed=seed)
            m.status, m.winner = MatchStatus.FINISHED, "a"
    assert fit_is_behind(db)
    settings = load_settings({}, database_url=db.url, pending_grace_seconds=600)
    sweep(db, settings, lambda ids: None)
    assert not fit_is_behind(db)
    with db.session() as s:
        assert s.get_one(RatingFitStateRow, 1).results == 3


@pytest.mark.redis
def test_a_broker_that_lost_its_queue_has_every_pending_match_resubmitted_at_once(
    db: Database, redis_url: str
) -> None:
    """The sweep's marker in the broker: absent means the broker's data is gone (a Redis
    restarted empty), so every pending match is resubmitted by that sweep, not after the
    grace; present, only the grace applies."""
    fresh = _pending(db, age_s=5)
    settings = load_settings(
        {}, database_url=db.url, broker_url=redis_url, pending_grace_seconds=300
    )
    client = redis.Redis.from_url(redis_url)
    try:
        assert not client.exists(MARKER_KEY)
        assert sweep(db, settings, lambda ids: None) == [fresh]  # the first sweep here
        assert client.exists(MARKER_KEY)
        assert sweep(db, settings, lambda ids: None) == []
        client.flushdb()  # what a restart without persistence leaves
        assert sweep(db, settings, lambda ids: None) == [fresh]
        assert sweep(db, settings, lambda ids: None) == []
    finally:
        client.close()


def test_a_broker_out_of_reach_is_not_taken_for_a_lost_queue() -> None:
    """The marker cannot be read: the sweep goes on with the grace alone (the next one asks
    again)."""
    settings = load_settings({}, broker_url="redis://127.0.0.1:1/0")
    assert queue_was_lost(settings) is False


def test_a_sweep_that_dies_before_sending_leaves_the_dead_workers_match_to_the_next(
    db: Database,
) -> None:
    """A match on an expired lease is sent first and put back to pending after: a sweep that
    fails in between (its worker killed, the broker down) changes nothing, and the next sweep
    sends it again."""
    orphan = _pending(db, age_s=5)
    _orphan(db, orphan)
    settings = load_settings({}, database_url=db.url)

    def broken(ids: object) -> None:
        raise ConnectionError("broker down")

    with pytest.raises(ConnectionError):
        sweep(db, settings, broken)
    with db.session() as session:
        assert session.get_one(MatchRow, orphan).status is MatchStatus.RUNNING
    submitted: list[int] = []
    assert sweep(db, settings, submitted.extend) == [orphan]
    assert submitted == [orphan]
    with db.session() as session:
        row = session.get_one(MatchRow, orphan)
        assert (row.status, row.lease_owner) == (MatchStatus.PENDING, None)


def test_a_match_held_by_a_dead_worker_of_this_host_is_resubmitted_before_its_lease_ends(
    db: Database,
) -> None:
    """The holder was a worker process of this host and is gone (SIGKILLed): the sweep need
    not wait out the lease. A live holder, or one of another host, keeps its lease."""
    gone = subprocess.run(
        [sys.executable, "-c", "import os; print(os.getpid())"],
        capture_output=True,
        text=True,
        check=True,
    )
    host = socket.gethostname()
    owners = {
        "dead": f"celery-{host}-{int(gone.stdout)}-task",
        "alive": f"celery-{host}-{os.getpid()}-task",
        "elsewhere": "celery-another-host-1-task",
    }
    ids = {}
    for age, (name, owner) in enumerate(owners.items(), start=5):
        ids[name] = _pending(db, age_s=age)
        with db.session() as session:
            session.execute(
                update(MatchRow)
                .where(MatchRow.id == ids[name])
                .values(
                    status=MatchStatus.RUNNING,
                    attempt=1,
                    lease_owner=owner,
                    lease_expires_at=utcnow() + timedelta(seconds=60),
                )
            )
    settings = load_settings({}, database_url=db.url)
    assert sweep(db, settings, lambda ids: None) == [ids["dead"]]
    with db.session() as session:
        statuses = {n: session.get_one(MatchRow, m).status for n, m in ids.items()}
    assert statuses == {
        "dead": MatchStatus.PENDING,
        "alive": MatchStatus.RUNNING,
        "elsewhere": MatchStatus.RUNNING,
    }


def test_a_dead_worker_has_every_pending_match_sent_again_not_only_its_own(
    db: Database,
) -> None:
    """A worker that dies may hold messages it took and never started (after a broker restart
    it reconnects and takes a whole new prefetch while it still plays): their matches are
    pending, and the broker would give them out again only after its visibility timeout. So a
    sweep that finds a dead worker sends every pending match again, young ones included."""
    young = _pending(db, age_s=5)  # far inside the pending grace
    orphan = _pending(db, age_s=6)
    _orphan(db, orphan)
    settings = load_settings({}, database_url=db.url)
    sent: list[list[int]] = []
    assert sweep(db, settings, lambda ids: sent.append(sorted(ids))) == sorted([young, orphan])
    assert sent == [[orphan], [young]]  # the dead worker's match first, then the pending one
    sent.clear()
    assert sweep(db, settings, lambda ids: sent.append(sorted(ids))) == []  # nobody died since


@pytest.mark.redis
def test_a_match_a_dead_worker_took_and_never_started_is_sent_again_ahead_of_the_backlog(
    db: Database, redis_url: str
) -> None:
    """A worker that reconnected after a broker restart takes a new message while it still
    plays and holds it unstarted; killed, it leaves that message in kombu's hash of delivered
    messages, its match pending. The sweep that finds the death sends it through the urgent
    submit, after the dead worker's own match; the pending matches still queued go through the
    normal one. With no death, nothing is sent."""
    taken, waiting, orphan = (_pending(db, age_s=age) for age in (5, 6, 7))
    _orphan(db, orphan)
    settings = load_settings({}, database_url=db.url, broker_url=redis_url)
    app = create_app(settings)
    send_matches(app, [taken, waiting])
    with app.connection_for_read() as connection:
        # What a worker does with a message it takes: out of the queue, into ``unacked``.
        message = connection.default_channel.basic_get("celery", no_ack=False)
        assert message is not None and message.headers["argsrepr"] in (f"[{taken}]", f"({taken},)")
        assert held_match_ids(settings, [waiting, taken, orphan]) == [taken]
        urgent: list[list[int]] = []
        normal: list[list[int]] = []
        swept = sweep(db, settings, normal.append, urgent.append)
        assert swept == sorted([taken, waiting, orphan])
        assert (urgent, normal) == ([[orphan, taken]], [[waiting]])
        urgent.clear()
        normal.clear()
        mark_queue(settings, begin_resend(settings))  # the broker kept its queue
        assert sweep(db, settings, normal.append, urgent.append) == []  # nobody died since
        assert (urgent, normal) == ([], [])
