"""One lease keeper per process renews every lease it holds together (SQLite and PostgreSQL,
real threads): one statement a beat for all of them, a fenced-out attempt marked lost, and no
renewal of a dropped lease under way once ``drop`` returns."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import timedelta

from db_support import add_bots, add_match, match_row
from health_support import wait_until
from sqlalchemy import update

from arena.db.models import MatchRow, utcnow
from arena.db.session import Database
from arena.playing.leases import LeaseKeeper
from arena.services.matches import Claim, claim_match, renew_leases

LEASE_S = 60
BEAT_S = 0.05
PATIENCE_S = 60.0  # a bound on a hung test, never what makes one pass


class CountingRenew:
    """The real renewal, counting its calls and the claims in each."""

    def __init__(self) -> None:
        self.calls: list[list[int]] = []

    def __call__(
        self, db: Database, claims: Iterable[Claim], lease_seconds: int
    ) -> set[tuple[int, int]]:
        claims = list(claims)
        self.calls.append(sorted(c.match_id for c in claims))
        return renew_leases(db, claims, lease_seconds=lease_seconds)


def claims(db: Database, n: int) -> list[Claim]:
    a, b = add_bots(db, 2)
    out = []
    for seed in range(n):
        claim = claim_match(
            db, add_match(db, a, b, seed=seed), "w1", lease_seconds=1, max_attempts=5
        )
        assert claim is not None
        out.append(claim)
    return out


def lease_left(db: Database, match_id: int) -> timedelta:
    expires = match_row(db, match_id).lease_expires_at
    assert expires is not None
    return expires - utcnow()


def test_one_beat_renews_every_lease_the_process_holds_in_one_statement(db: Database) -> None:
    held = claims(db, 3)
    ids = sorted(c.match_id for c in held)
    renew = CountingRenew()
    keeper = LeaseKeeper(db, renew=renew)
    leases = [keeper.hold(c, lease_seconds=LEASE_S, renew_every=BEAT_S) for c in held]
    try:
        wait_until(lambda: ids in renew.calls, timeout=PATIENCE_S, what="a beat renewing all")
    finally:
        for lease in leases:
            keeper.drop(lease)
    assert all(lease_left(db, c.match_id) > timedelta(seconds=30) for c in held)
    assert all(set(call) <= set(ids) for call in renew.calls)
    assert not any(lease.lost.is_set() for lease in leases)


def test_a_lease_fenced_out_is_marked_lost_and_renewed_no_more(db: Database) -> None:
    fenced, kept = claims(db, 2)
    renew = CountingRenew()
    keeper = LeaseKeeper(db, renew=renew)
    with db.session() as session:  # the sweep gave the match to another attempt
        session.execute(update(MatchRow).where(MatchRow.id == fenced.match_id).values(attempt=2))
    lost = keeper.hold(fenced, lease_seconds=LEASE_S, renew_every=BEAT_S)
    alive = keeper.hold(kept, lease_seconds=LEASE_S, renew_every=BEAT_S)
    try:
        assert lost.lost.wait(PATIENCE_S)
        calls_then = len(renew.calls)
        wait_until(lambda: len(renew.calls) > calls_then, timeout=PATIENCE_S, what="a later beat")
    finally:
        keeper.drop(lost)
        keeper.drop(alive)
    assert not alive.lost.is_set()
    assert renew.calls[-1] == [kept.match_id]  # the lost lease is no longer in the beats


def test_once_drop_returns_no_renewal_of_the_lease_is_under_way(db: Database) -> None:
    (held,) = claims(db, 1)
    inside, release = threading.Event(), threading.Event()
    finished: list[str] = []

    def slow_renew(
        db: Database, claims: Iterable[Claim], lease_seconds: int
    ) -> set[tuple[int, int]]:
        inside.set()
        assert release.wait(PATIENCE_S)
        answer = renew_leases(db, claims, lease_seconds=lease_seconds)
        finished.append("renewed")
        return answer

    keeper = LeaseKeeper(db, renew=slow_renew)
    lease = keeper.hold(held, lease_seconds=LEASE_S, renew_every=BEAT_S)
    assert inside.wait(PATIENCE_S)  # a beat is renewing it now
    dropper = threading.Thread(target=keeper.drop, args=(lease,), daemon=True)
    dropper.start()
    dropper.join(0.2)
    assert dropper.is_alive(), "drop returned while its lease was being renewed"
    release.set()
    dropper.join(PATIENCE_S)
    assert not dropper.is_alive() and finished == ["renewed"]


def test_the_keeper_thread_ends_when_it_holds_no_lease(db: Database) -> None:
    (held,) = claims(db, 1)
    keeper = LeaseKeeper(db)
    lease = keeper.hold(held, lease_seconds=LEASE_S, renew_every=BEAT_S)
    assert [t.name for t in threading.enumerate()].count("leases") >= 1
    keeper.drop(lease)
    wait_until(lambda: keeper._thread is None, timeout=PATIENCE_S, what="the thread to end")
    again = keeper.hold(held, lease_seconds=LEASE_S, renew_every=BEAT_S)  # starts anew
    try:
        wait_until(
            lambda: lease_left(db, held.match_id) > timedelta(seconds=30),
            timeout=PATIENCE_S,
            what="the lease renewed by the new thread",
        )
    finally:
        keeper.drop(again)
