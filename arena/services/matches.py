"""Matches as durable jobs: schedule, claim with a lease, record exactly once, sweep.

Every write is a short transaction that begins with a guarded ``UPDATE`` (so on SQLite it takes
the write lock at once and the busy timeout applies). The guards:

* :func:`claim_match` moves ``pending`` (or ``running`` with an expired lease) to ``running``
  and increments ``attempt``; the claim carries that attempt number.
* :func:`renew_lease` and :func:`record_match_result` only touch the row while ``attempt`` is
  still theirs: an older attempt that wakes up late (a slow worker, a redelivered task) changes
  nothing, and the unique keys on results, games, deals and rating history make a second
  result impossible even if a guard were wrong.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, and_, case, literal, or_, select, update
from sqlalchemy.orm import Session

from arena.db.models import (
    Bot,
    BotStats,
    GameRow,
    HandRow,
    Match,
    MatchResult,
    MatchStatus,
    RatingHistory,
    utcnow,
)
from arena.db.session import Database
from arena.ratings import elo_delta
from arena.records import MatchRecord
from arena.rules.ruleset import RuleSet
from arena.stats import merge_histograms, seat_stats

__all__ = [
    "Claim",
    "MatchSpec",
    "claim_match",
    "digested_logs",
    "fail_match",
    "match_status",
    "record_digest",
    "record_match_result",
    "release_match",
    "renew_lease",
    "schedule_match",
    "sweep_stuck",
]


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


@dataclass(frozen=True, slots=True)
class MatchSpec:
    """Everything needed to play a match."""

    match_id: int
    rules: RuleSet
    seed: int
    bots: tuple[BotSpec, BotSpec]
    rated: bool


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
) -> Match:
    """Add a pending match (in the caller's transaction; enqueue it after the commit)."""
    if bot_a == bot_b:
        raise ValueError("a bot cannot play itself")
    match = Match(
        bot_a_id=bot_a,
        bot_b_id=bot_b,
        rules=rules.to_dict(),
        seed=seed,
        rated=rated,
        tournament_id=tournament_id,
        match_key=match_key,
        status=MatchStatus.PENDING,
    )
    session.add(match)
    session.flush()
    return match


def claim_match(
    db: Database, match_id: int, worker: str, *, lease_seconds: int, max_attempts: int
) -> Claim | None:
    """Take a match to run, or None if it is finished, cancelled or held by a live lease.

    A match that has used up ``max_attempts`` claims is marked failed (void) instead; its
    ``error`` keeps the last arena failure, if one released it (:func:`release_match`).
    """
    now = utcnow()
    claimable = or_(
        Match.status == MatchStatus.PENDING,
        and_(Match.status == MatchStatus.RUNNING, Match.lease_expires_at < now),
    )
    gave_up = f"gave up after {max_attempts} attempts"
    with db.session() as session:
        exhausted = session.execute(
            update(Match)
            .where(Match.id == match_id, claimable, Match.attempt >= max_attempts)
            .values(
                status=MatchStatus.FAILED,
                finished_at=now,
                lease_owner=None,
                error=case(
                    (Match.error.is_(None), f"{gave_up} (workers kept dying or timing out)"),
                    else_=literal(f"{gave_up}; the last failed with ") + Match.error,
                ),
            )
        )
        if exhausted.rowcount:  # type: ignore[attr-defined]
            return None
        row = session.execute(
            update(Match)
            .where(Match.id == match_id, claimable)
            .values(
                status=MatchStatus.RUNNING,
                attempt=Match.attempt + 1,
                lease_owner=worker,
                lease_expires_at=now + timedelta(seconds=lease_seconds),
                started_at=now,
            )
            .returning(Match.attempt)
        ).first()
        if row is None:
            return None
        attempt = int(row[0])
        match = session.get_one(Match, match_id)
        bots = tuple(
            BotSpec(b.id, b.name, b.url, b.secret, b.previous_secret, b.previous_secret_expires_at)
            for b in (match.bot_a, match.bot_b)
        )
        spec = MatchSpec(
            match_id, RuleSet.from_dict(match.rules), match.seed, (bots[0], bots[1]), match.rated
        )
    return Claim(match_id, attempt, worker, spec)


def match_status(db: Database, match_id: int) -> MatchStatus | None:
    """A match's status now (None if there is no such match)."""
    with db.session() as session:
        return session.scalar(select(Match.status).where(Match.id == match_id))


def _held_by(claim: Claim) -> tuple[ColumnElement[bool], ...]:
    """The guard of every write a claim makes: the match is still running this attempt."""
    return (
        Match.id == claim.match_id,
        Match.attempt == claim.attempt,
        Match.status == MatchStatus.RUNNING,
    )


def _write_held(db: Database, claim: Claim, **values: Any) -> bool:
    """Set ``values`` on the claimed match in one guarded ``UPDATE``; False if this attempt has
    been fenced out (nothing is written then)."""
    with db.session() as session:
        result = session.execute(update(Match).where(*_held_by(claim)).values(**values))
        return bool(result.rowcount)  # type: ignore[attr-defined]


def renew_lease(db: Database, claim: Claim, *, lease_seconds: int) -> bool:
    """Extend the lease; False if this attempt has been fenced out (stop playing)."""
    return _write_held(db, claim, lease_expires_at=utcnow() + timedelta(seconds=lease_seconds))


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


def record_digest(hand_logs: Sequence[Mapping[str, Any]]) -> str:
    """SHA-256 of the canonical JSON of every deal's log (what replay verification rechecks)."""
    canonical = json.dumps(hand_logs, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()


def digested_logs(logs: list[dict[str, Any]], record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """What the digest covers: every deal's log, and the deal a forfeit cut short."""
    interrupted = record.get("interrupted_deal")
    return [*logs, interrupted] if interrupted else list(logs)


def _summary(record: dict[str, Any]) -> dict[str, Any]:
    """The record without the per-deal logs (those go to the hands table)."""
    out = dict(record)
    out["games"] = [{k: v for k, v in g.items() if k != "hands"} for g in record["games"]]
    if record.get("unfinished_game"):
        out["unfinished_game"] = {
            k: v for k, v in record["unfinished_game"].items() if k != "hands"
        }
    return out


def record_match_result(
    db: Database,
    claim: Claim,
    record: MatchRecord,
    *,
    duration_ms: int,
    bot_time_ms: int,
    elo_k: float,
) -> bool:
    """Record a played match in one transaction; False if this attempt was fenced out.

    Result, games, deals (with their replay logs), bot statistics and (for rated matches)
    both bots' Elo and rating history, all or nothing.
    """
    data = record.to_dict()
    winner = data["winner"]
    forfeit = data["forfeit"]
    now = utcnow()
    with db.session() as session:
        guarded = session.execute(
            update(Match)
            .where(*_held_by(claim))
            .values(
                status=MatchStatus.FINISHED,
                winner=winner,
                games_won_a=data["games_won"]["a"],
                games_won_b=data["games_won"]["b"],
                forfeit_seat=None if forfeit is None else (forfeit["seat"] or "both"),
                forfeit_reason=None if forfeit is None else forfeit["reason"],
                finished_at=now,
                lease_owner=None,
                error=None,
                duration_ms=duration_ms,
                bot_time_ms=bot_time_ms,
            )
        )
        if not guarded.rowcount:  # type: ignore[attr-defined]
            return False
        logs = _store_games(session, claim.match_id, data)
        session.add(
            MatchResult(
                match_id=claim.match_id,
                attempt=claim.attempt,
                summary=_summary(data),
                digest=record_digest(digested_logs(logs, data)),
                recorded_at=now,
            )
        )
        bot_ids = (claim.spec.bots[0].id, claim.spec.bots[1].id)
        # Lock both bots in id order (no deadlock between two matches of the same bots).
        bots = {
            b.id: b
            for b in session.scalars(
                select(Bot).where(Bot.id.in_(bot_ids)).order_by(Bot.id).with_for_update()
            )
        }
        for seat, bot_id in zip(("a", "b"), bot_ids, strict=True):
            _add_stats(session, bot_id, seat, data, record)
        if claim.spec.rated and winner is not None:
            _rate(session, claim.match_id, bots[bot_ids[0]], bots[bot_ids[1]], winner, elo_k)
        session.flush()
    return True


def _store_games(session: Session, match_id: int, data: dict[str, Any]) -> list[dict[str, Any]]:
    logs: list[dict[str, Any]] = []
    games = [(g, True) for g in data["games"]]
    unfinished = data.get("unfinished_game")
    if unfinished is not None and unfinished["hands"]:
        games.append(
            (
                {
                    "index": len(data["games"]),
                    "winner": None,
                    "points": unfinished["points"],
                    "totals": unfinished["points"],
                    "shutout": False,
                    "hands": unfinished["hands"],
                },
                False,
            )
        )
    for game, complete in games:
        row = GameRow(
            match_id=match_id,
            index=game["index"],
            winner=game["winner"],
            points_a=game["points"]["a"],
            points_b=game["points"]["b"],
            totals_a=game["totals"]["a"],
            totals_b=game["totals"]["b"],
            shutout=game["shutout"],
            complete=complete,
        )
        session.add(row)
        session.flush()
        for hand in game["hands"]:
            logs.append(hand)
            session.add(
                HandRow(
                    game_id=row.id,
                    match_id=match_id,
                    index=hand["index"],
                    dealer=hand["dealer"],
                    outcome=hand["outcome"],
                    winner=hand["winner"],
                    points=hand["points"],
                    knocker=hand["knocker"],
                    knocker_deadwood=hand["knocker_deadwood"],
                    defender_deadwood=hand["defender_deadwood"],
                    misknocks=len(hand["misknocks"]),
                    log=hand,
                )
            )
    return logs


def _add_stats(
    session: Session, bot_id: int, seat: str, data: dict[str, Any], record: MatchRecord
) -> None:
    seat_index = 0 if seat == "a" else 1
    delta = seat_stats(data, seat, record.latencies[seat_index])
    stats = session.get(BotStats, bot_id)
    if stats is None:
        stats = BotStats(bot_id=bot_id, latency_histogram=[])
        for name in delta.counters():
            setattr(stats, name, 0)
        session.add(stats)
    for name, value in delta.counters().items():
        setattr(stats, name, getattr(stats, name) + value)
    stats.latency_histogram = merge_histograms(stats.latency_histogram, delta.latency_histogram)


def _rate(session: Session, match_id: int, a: Bot, b: Bot, winner: str, k: float) -> None:
    score_a = 1.0 if winner == "a" else 0.0
    delta = elo_delta(a.elo, b.elo, score_a, k=k)
    for bot, change in ((a, delta), (b, -delta)):
        session.add(
            RatingHistory(bot_id=bot.id, match_id=match_id, before=bot.elo, after=bot.elo + change)
        )
        bot.elo = bot.elo + change


def sweep_stuck(
    db: Database, *, now: datetime | None = None, pending_grace_s: int = 300
) -> list[int]:
    """Matches to resubmit: running with an expired lease (put back to pending), and pending
    matches older than the grace period (their queue message may be lost)."""
    now = now or utcnow()
    with db.session() as session:
        stuck = list(
            session.scalars(
                update(Match)
                .where(Match.status == MatchStatus.RUNNING, Match.lease_expires_at < now)
                .values(status=MatchStatus.PENDING, lease_owner=None)
                .returning(Match.id)
            )
        )
        stale = list(
            session.scalars(
                select(Match.id).where(
                    Match.status == MatchStatus.PENDING,
                    Match.created_at < now - timedelta(seconds=pending_grace_s),
                )
            )
        )
    return sorted(set(stuck) | set(stale))
