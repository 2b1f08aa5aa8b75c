"""Matches as durable jobs: schedule, hand to the executor, claim with a lease, sweep.

A service that schedules matches does it in its own transaction and, once that has committed,
hands their ids to the executor (a :data:`Submit`, e.g. ``executor.submit``): the only way a
match reaches a worker. :func:`expired_lease_ids`, :func:`pending_to_resend`,
:func:`release_expired`, :func:`sweep_stuck` and :func:`pending_match_ids` are the sweeper's
safety net for submissions that were lost or
made by another process.

Every write is a short transaction that begins with a guarded ``UPDATE`` (so on SQLite it takes
the write lock at once and the busy timeout applies). The guards:

* :func:`claim_match` moves ``pending`` (or ``running`` with an expired lease) to ``running``
  and increments ``attempt``; the claim carries that attempt number.
* :func:`renew_leases` and :func:`record_match_result` only touch the row while ``attempt`` is
  still theirs: an older attempt that wakes up late (a slow worker, a redelivered task) changes
  nothing, and the unique keys on results, games, deals and rating history make a second
  result impossible even if a guard were wrong.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, case, insert, literal, or_, select, tuple_, update
from sqlalchemy.orm import Session

from arena.db.models import LadderRoundRow, MatchRow, utcnow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.events import EventType
from arena.rules.ruleset import RuleSet
from arena.services.events import emit
from arena.states import BotStatus, MatchStatus

__all__ = [
    "Claim",
    "MatchSpec",
    "Submit",
    "claim_match",
    "end_leases",
    "expired_lease_ids",
    "fail_match",
    "match_status",
    "pending_match_ids",
    "pending_to_resend",
    "release_expired",
    "release_match",
    "renew_lease",
    "renew_leases",
    "running_leases",
    "schedule_match",
    "schedule_matches",
    "stuck_match_ids",
    "sweep_stuck",
]

#: Hands the ids of matches to the executor that plays them (``executor.submit``), called only
#: after the transaction that created them has committed.
Submit = Callable[[Iterable[int]], None]


@dataclass(frozen=True, slots=True)
class BotSpec:
    """What a worker needs to call a bot (the previous secret signs too until it expires:
    :func:`arena.services.bots.signing_secrets`)."""

    id: int
    name: str
    url: str
    secret: str
    previous_secret: str | None = None
    previous_secret_expires_at: datetime | None = None
    #: The bot's status when the match was claimed (a suspended bot is not called: it
    #: forfeits at the start as unreachable) and the version the match records for it.
    status: BotStatus = BotStatus.ACTIVE
    version_id: int | None = None
    #: Its health probes failed in a row when the match was claimed (a suspended bot's forfeit
    #: reason says how many).
    failed_probes: int = 0


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Everything needed to play a match."""

    match_id: int
    rules: RuleSet
    seed: int
    bots: tuple[BotSpec, BotSpec]
    rated: bool
    #: The ladder round that scheduled it (None: a tournament's or a challenge's match).
    ladder_round_id: int | None = None


@dataclass(frozen=True, slots=True)
class Claim:
    """A worker's hold on a match: the attempt number fences out every other attempt."""

    match_id: int
    attempt: int
    worker: str
    spec: MatchSpec


def schedule_match(
    session: Session,
    bot_a: int,
    bot_b: int,
    *,
    rules: RuleSet,
    seed: int,
    rated: bool = True,
    tournament_id: int | None = None,
    match_key: str | None = None,
    ladder_round_id: int | None = None,
    test_id: int | None = None,
) -> MatchRow:
    """Add a pending match (in the caller's transaction; submit it after the commit).

    A bot plays itself only in an SPRT test (:mod:`arena.services.sprt_tests`: the null test,
    a bot against itself, must accept H0)."""
    if bot_a == bot_b and test_id is None:
        raise ValueError("a bot cannot play itself")
    match = MatchRow(
        bot_a_id=bot_a,
        bot_b_id=bot_b,
        rules=rules.to_dict(),
        seed=seed,
        rated=rated,
        tournament_id=tournament_id,
        match_key=match_key,
        ladder_round_id=ladder_round_id,
        test_id=test_id,
        status=MatchStatus.PENDING,
    )
    session.add(match)
    session.flush()
    return match


def schedule_matches(
    session: Session,
    matches: Iterable[tuple[int, int, int, str]],
    *,
    rules: RuleSet,
    rated: bool = True,
    ladder_round_id: int | None = None,
) -> list[int]:
    """Add many pending matches at once, each ``(bot_a, bot_b, seed, match_key)``, in one
    statement (in the caller's transaction; submit them after the commit): their ids, in the
    order given. What :func:`schedule_match` does for one, at a fraction of the cost per match
    (a ladder round of 10,000 bots inserts 10,000)."""
    shared = {
        "rules": rules.to_dict(),
        "rated": rated,
        "ladder_round_id": ladder_round_id,
        "status": MatchStatus.PENDING,
    }
    rows = []
    for bot_a, bot_b, seed, key in matches:
        if bot_a == bot_b:
            raise ValueError("a bot cannot play itself")
        rows.append(
            {**shared, "bot_a_id": bot_a, "bot_b_id": bot_b, "seed": seed, "match_key": key}
        )
    if not rows:
        return []
    returning = insert(MatchRow).returning(MatchRow.id, sort_by_parameter_order=True)
    return list(session.scalars(returning, rows))


def claim_match(
    db: Database, match_id: int, worker: str, *, lease_seconds: int, max_attempts: int
) -> Claim | None:
    """Take a match to run, or None if it is finished, cancelled or held by a live lease.

    A match that has used up ``max_attempts`` claims is marked failed (void) instead; its
    ``error`` keeps the last arena failure, if one released it (:func:`release_match`).
    """
    now = utcnow()
    claimable = or_(
        MatchRow.status == MatchStatus.PENDING,
        and_(MatchRow.status == MatchStatus.RUNNING, MatchRow.lease_expires_at < now),
    )
    gave_up = f"gave up after {max_attempts} attempts"
    with db.session() as session:
        exhausted = session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id, claimable, MatchRow.attempt >= max_attempts)
            .values(
                status=MatchStatus.FAILED,
                finished_at=now,
                lease_owner=None,
                error=case(
                    (MatchRow.error.is_(None), f"{gave_up} (workers kept dying or timing out)"),
                    else_=literal(f"{gave_up}; the last failed with ") + MatchRow.error,
                ),
            )
        )
        if exhausted.rowcount:  # type: ignore[attr-defined]
            return None
        row = session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id, claimable)
            .values(
                status=MatchStatus.RUNNING,
                attempt=MatchRow.attempt + 1,
                lease_owner=worker,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                started_at=now,
            )
            .returning(MatchRow.attempt)
        ).first()
        if row is None:
            return None
        attempt = int(row[0])
        match = session.get_one(MatchRow, match_id)
        bots = tuple(
            BotSpec(
                b.id,
                b.name,
                b.url,
                b.secret,
                b.previous_secret,
                b.previous_secret_expires_at,
                b.status,
                b.current_version_id,
                b.failed_probes,
            )
            for b in (match.bot_a, match.bot_b)
        )
        # The versions that play (a version reported at the start may still replace them).
        match.version_a_id, match.version_b_id = bots[0].version_id, bots[1].version_id
        spec = MatchSpec(
            match_id,
            RuleSet.from_dict(match.rules),
            match.seed,
            (bots[0], bots[1]),
            match.rated,
            match.ladder_round_id,
        )
        _emit_started(session, match, bots, attempt)
    return Claim(match_id, attempt, worker, spec)


def _emit_started(
    session: Session, match: MatchRow, bots: tuple[BotSpec, ...], attempt: int
) -> None:
    """``match.started`` (every attempt: a restart starts the match again) in the claim's
    transaction."""
    ladder = None
    if match.ladder_round_id is not None:
        ladder = session.scalar(
            select(LadderRoundRow.preset).where(LadderRoundRow.id == match.ladder_round_id)
        )
    emit(
        session,
        EventType.MATCH_STARTED,
        {
            "match": match.id,
            "attempt": attempt,
            "bots": {
                seat: {"id": bot.id, "name": bot.name, "version": bot.version_id}
                for seat, bot in zip(("a", "b"), bots, strict=True)
            },
            "tournament": match.tournament_id,
            "ladder": ladder,
            "links": {"api": f"/api/v1/matches/{match.id}", "page": f"/matches/{match.id}"},
        },
        audience=[bot.id for bot in bots],
        match_id=match.id,
        tournament_id=match.tournament_id,
    )


def match_status(db: Database, match_id: int) -> MatchStatus:
    """A match's status now (:class:`~arena.errors.NotFoundError` if there is no such match)."""
    with db.session() as session:
        status = session.scalar(select(MatchRow.status).where(MatchRow.id == match_id))
    if status is None:
        raise NotFoundError("match", match_id)
    return status


def _held_by(claim: Claim) -> tuple[ColumnElement[bool], ...]:
    """The guard of every write a claim makes: the match is still running this attempt."""
    return (
        MatchRow.id == claim.match_id,
        MatchRow.attempt == claim.attempt,
        MatchRow.status == MatchStatus.RUNNING,
    )


def _write_held(db: Database, claim: Claim, **values: Any) -> bool:
    """Set ``values`` on the claimed match in one guarded ``UPDATE``; False if this attempt has
    been fenced out (nothing is written then)."""
    with db.session() as session:
        result = session.execute(update(MatchRow).where(*_held_by(claim)).values(**values))
        return bool(result.rowcount)  # type: ignore[attr-defined]


def renew_lease(db: Database, claim: Claim, *, lease_seconds: int) -> bool:
    """Extend the lease; False if this attempt has been fenced out (stop playing)."""
    return (claim.match_id, claim.attempt) in renew_leases(db, [claim], lease_seconds=lease_seconds)


#: Claims renewed by one statement at most (the rest in the next, same transaction).
RENEW_BATCH = 500


def renew_leases(
    db: Database, claims: Iterable[Claim], *, lease_seconds: int
) -> set[tuple[int, int]]:
    """Extend the leases of ``claims`` in one transaction (one guarded ``UPDATE`` per
    :data:`RENEW_BATCH`); the ``(match_id, attempt)`` of those still held. A claim missing from
    the answer has been fenced out: its attempt must stop playing."""
    keys = sorted({(c.match_id, c.attempt) for c in claims})
    held: set[tuple[int, int]] = set()
    if not keys:
        return held
    expires = utcnow() + timedelta(seconds=lease_seconds)
    with db.session() as session:
        for start in range(0, len(keys), RENEW_BATCH):
            rows = session.execute(
                update(MatchRow)
                .where(
                    tuple_(MatchRow.id, MatchRow.attempt).in_(keys[start : start + RENEW_BATCH]),
                    MatchRow.status == MatchStatus.RUNNING,
                )
                .values(lease_expires_at=expires)
                .returning(MatchRow.id, MatchRow.attempt)
            )
            held.update((row.id, row.attempt) for row in rows)
    return held


def release_match(db: Database, claim: Claim, error: str) -> bool:
    """Give the claimed match back (``pending``) after the arena failed on it, keeping the
    error; the next claim plays it again from the start (see :func:`claim_match` for the
    bound). False if this attempt has been fenced out."""
    return _write_held(
        db,
        claim,
        status=MatchStatus.PENDING,
        error=error[:4000],
        lease_owner=None,
        lease_expires_at=None,
    )


def fail_match(db: Database, claim: Claim, error: str) -> bool:
    """Mark the claimed match failed, i.e. void: no result and no loss for either bot (the
    arena's failure, never a bot's behaviour)."""
    return _write_held(
        db,
        claim,
        status=MatchStatus.FAILED,
        error=error[:4000],
        finished_at=utcnow(),
        lease_owner=None,
    )


def expired_lease_ids(db: Database, *, now: datetime) -> list[int]:
    """Running matches whose lease has run out (their worker died): to resubmit."""
    with db.session() as session:
        return sorted(
            session.scalars(
                select(MatchRow.id).where(
                    MatchRow.status == MatchStatus.RUNNING, MatchRow.lease_expires_at < now
                )
            )
        )


def pending_to_resend(
    db: Database,
    *,
    pending_grace_s: int,
    now: datetime,
    window_s: float | None = None,
    all_pending: bool = False,
) -> list[int]:
    """Pending matches to resubmit: every one with ``all_pending`` (the broker lost its
    queue); else those older than the grace period (``ARENA_PENDING_GRACE_SECONDS``: their
    submission may have been lost) or, with ``window_s`` (the sweep), only those whose age
    passed a multiple of the grace in the last ``window_s`` seconds, so a match waiting in a
    long queue is sent again once per grace, not on every sweep. A grace of 0 takes every
    pending match."""
    with db.session() as session:
        pending = select(MatchRow.id, MatchRow.created_at).where(
            MatchRow.status == MatchStatus.PENDING
        )
        if not all_pending:
            pending = pending.where(MatchRow.created_at <= now - timedelta(seconds=pending_grace_s))
        return sorted(
            match_id
            for match_id, created in session.execute(pending)
            if all_pending
            or window_s is None
            or pending_grace_s == 0
            or (now - created).total_seconds() % pending_grace_s < window_s
        )


def stuck_match_ids(
    db: Database, *, pending_grace_s: int, now: datetime | None = None
) -> list[int]:
    """Matches on an expired lease and pending ones past the grace (nothing is changed)."""
    now = now or utcnow()
    expired = expired_lease_ids(db, now=now)
    return sorted({*expired, *pending_to_resend(db, pending_grace_s=pending_grace_s, now=now)})


def running_leases(db: Database) -> list[tuple[int, str]]:
    """Every running match with its lease owner (the sweep looks for owners that are dead)."""
    with db.session() as session:
        rows = session.execute(
            select(MatchRow.id, MatchRow.lease_owner).where(
                MatchRow.status == MatchStatus.RUNNING, MatchRow.lease_owner.is_not(None)
            )
        ).all()
    return [(int(match_id), str(owner)) for match_id, owner in rows]


def end_leases(db: Database, leases: Iterable[tuple[int, str]], *, now: datetime) -> None:
    """Expire these leases now (each only if the match is still running under that owner): a
    lease whose holder is known dead need not be waited out."""
    with db.session() as session:
        for match_id, owner in leases:
            session.execute(
                update(MatchRow)
                .where(
                    MatchRow.id == match_id,
                    MatchRow.status == MatchStatus.RUNNING,
                    MatchRow.lease_owner == owner,
                )
                .values(lease_expires_at=now - timedelta(microseconds=1))
            )


def release_expired(db: Database, match_ids: Iterable[int], *, now: datetime | None = None) -> None:
    """Put these matches back to pending if they are still running on an expired lease (what
    the sweep does once it has resubmitted them: a claim takes an expired lease either way, so
    a sweep that dies before this line loses nothing)."""
    ids = list(match_ids)
    if not ids:
        return
    with db.session() as session:
        session.execute(
            update(MatchRow)
            .where(
                MatchRow.id.in_(ids),
                MatchRow.status == MatchStatus.RUNNING,
                MatchRow.lease_expires_at < (now or utcnow()),
            )
            .values(status=MatchStatus.PENDING, lease_owner=None)
        )


def sweep_stuck(db: Database, *, pending_grace_s: int, now: datetime | None = None) -> list[int]:
    """``gin-arena sweep``: the matches of :func:`stuck_match_ids` (every pending one past the
    grace), those on an expired lease put back to pending, for the caller to resubmit."""
    now = now or utcnow()
    ids = stuck_match_ids(db, pending_grace_s=pending_grace_s, now=now)
    release_expired(db, ids, now=now)
    return ids


def pending_match_ids(db: Database) -> set[int]:
    """Every pending match (the local executor's pickup of matches another process created)."""
    with db.session() as session:
        return set(
            session.scalars(select(MatchRow.id).where(MatchRow.status == MatchStatus.PENDING))
        )
