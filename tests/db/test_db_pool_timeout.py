"""A connection pool run dry is a transient error, and the lease keeper outlives it.

The failure pinned here (``benchmarks/bench_load.py``, one worker playing 200 matches): the pool
ran out of connections, SQLAlchemy's ``TimeoutError`` (``QueuePool limit ... reached``) is no
``OperationalError``, so the heartbeat, which caught only ``DatabaseUnavailableError``, died on
it and the lease was never renewed again (the heartbeat was a thread per match then; the
process's lease keeper, :mod:`arena.playing.leases`, renews every lease now). Each test
exhausts a real pool of one connection with a tiny wait, on SQLite (a file database has a pool
too) and on PostgreSQL.
"""

from __future__ import annotations

import logging
import threading
import time
from datetime import datetime, timedelta

import pytest
from db_support import add_bots, add_match, match_row
from sqlalchemy import text

from arena.db.errors import TRANSIENT_ERRORS, DatabaseUnavailableError, database_error_reason
from arena.db.models import utcnow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.players import (
    Fault,
    HeuristicPlayer,
    MatchContext,
    Player,
    RandomPlayer,
    Turn,
)
from arena.rules.actions import Action
from arena.services.matches import Claim
from arena.settings import Settings, load_settings

#: A pool of one connection; a thread finding it taken gives up at once.
TINY_WAIT_S = 0.05
#: Long enough for anything this test waits on, on a loaded machine (never a pass condition).
PATIENCE_S = 60.0


def dry_pool(url: str) -> Database:
    return Database(url, pool_size=1, pool_timeout=TINY_WAIT_S)


def test_a_dry_pool_is_a_transient_database_error(db_url: str) -> None:
    db = dry_pool(db_url)
    try:
        with (
            db.engine.connect(),  # the pool's only connection, held
            pytest.raises(DatabaseUnavailableError) as caught,
            db.session() as session,
        ):
            session.execute(text("SELECT 1"))
        assert isinstance(caught.value, TRANSIENT_ERRORS)
        assert "QueuePool limit of size 1 overflow 0 reached" in str(caught.value)
        reason = database_error_reason(caught.value)
        assert reason is not None and "QueuePool limit" in reason and "\n" not in reason
        with db.session() as session:  # the connection back: the same work succeeds
            assert session.execute(text("SELECT 1")).scalar_one() == 1
    finally:
        db.dispose()


class _RenewalFailures(logging.Handler):
    """Keeps the lease keeper's failed renewals and sets ``seen`` at the first."""

    def __init__(self) -> None:
        super().__init__(logging.WARNING)
        self.seen = threading.Event()
        self.records: list[logging.LogRecord] = []

    def emit(self, record: logging.LogRecord) -> None:
        if record.getMessage().startswith("lease renewal for match"):
            self.records.append(record)
            self.seen.set()


class _HoldsThePool:
    """Seat A's player: at the match's start, while the lease keeper beats, it takes the pool's
    only connection and keeps it until a renewal has failed, then gives it back and waits for
    the lease to be renewed after that (``renewed_after_release``)."""

    def __init__(
        self, inner: Player, db: Database, failures: _RenewalFailures, match_id: int, lease_s: int
    ) -> None:
        self.name = inner.name
        self.inner = inner
        self.db = db
        self.observer = Database(db.url)
        self.failures = failures
        self.match_id = match_id
        self.lease_s = lease_s
        self.renewed_after_release: datetime | None = None

    def start(self, context: MatchContext) -> Fault | None:
        try:
            with self.db.engine.connect():
                assert self.failures.seen.wait(PATIENCE_S), "no renewal met the dry pool"
                released = utcnow()
            # A renewal after the release sets the lease at least ``lease_s`` past it.
            wanted = released + timedelta(seconds=self.lease_s)
            deadline = time.monotonic() + PATIENCE_S
            while time.monotonic() < deadline and self.renewed_after_release is None:
                expires = match_row(self.observer, self.match_id).lease_expires_at
                if expires is not None and expires >= wanted:
                    self.renewed_after_release = expires
                time.sleep(0.02)
        finally:
            self.observer.dispose()
        return self.inner.start(context)

    def act(self, turn: Turn) -> Action | Fault:
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        self.inner.end(summary)


def test_a_lease_renewal_that_finds_the_pool_dry_renews_at_the_next_beat(db_url: str) -> None:
    lease_s = 2  # renewed every 0.1 s (the smallest fraction, 0.05)
    settings = load_settings(
        {},
        database_url=db_url,
        lease_seconds=lease_s,
        lease_renew_fraction=0.05,
        max_attempts=1,  # a failed attempt is not played again: the test fails at once
    )
    setup = Database(db_url)
    a, b = add_bots(setup, 2)
    match_id = add_match(setup, a, b)
    setup.dispose()
    db = dry_pool(db_url)
    failures = _RenewalFailures()
    holders: list[_HoldsThePool] = []

    def players(claim: Claim, _settings: Settings) -> list[Player]:
        holders.append(
            _HoldsThePool(
                HeuristicPlayer(name=claim.spec.bots[0].name), db, failures, match_id, lease_s
            )
        )
        return [holders[-1], RandomPlayer(seed=claim.spec.seed, name=claim.spec.bots[1].name)]

    leases_log = logging.getLogger("arena.playing.leases")
    leases_log.addHandler(failures)
    try:
        outcome = run_match_job(db, settings, match_id, "pool-test", make_players=players)
    finally:
        leases_log.removeHandler(failures)
        db.dispose()
    assert outcome.status is JobStatus.RECORDED, outcome
    assert len(holders) == 1, "the match was played more than once"
    assert holders[0].renewed_after_release is not None, "no renewal once the pool was free"
    assert failures.records, "the failed renewal was not logged"
    assert all(r.levelno == logging.WARNING for r in failures.records)  # transient: no traceback
    assert "QueuePool limit" in failures.records[0].getMessage()
