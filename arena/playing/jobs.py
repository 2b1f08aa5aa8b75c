"""The one function that plays a stored match: what every executor runs for a match id.

``run_match_job`` claims the match (or finds it is not its to play), plays it over HTTP while the
process's lease keeper renews the lease (:mod:`arena.playing.leases`), and records the result
exactly once. It is safe to call twice, at once or one after the other, for the same id: the
claim and the guarded record decide.
Infrastructure errors (the database unreachable) propagate, so Celery can retry; bots'
misbehaviour never does (it is in the record).

A failure of the arena's own (an exception in its code while a match is played) never scores
the match: the attempt is released and the match played again from the start, up to
``ARENA_MAX_ATTEMPTS`` claims in all; when they are used up the match is **void**
(status ``failed``): no result, no rating change, no statistics for either bot, and a
tournament counts it as a drawn match with no games (see ``deploy/README.md``). Neither bot
answering at the start is such a failure too (two bots down at once points at the arena's own
network or settings: :class:`~arena.playing.match.NeitherStartedError`); one bot unreachable while
the other answers forfeits. A bot's misbehaviour is a fault in the record, never an exception here.
A suspended bot (:mod:`arena.services.health`) is not called at all: its seat forfeits at the
start as unreachable; a ladder match a bot forfeited as unreachable at the start has that bot
probed at once, after the record.
"""

from __future__ import annotations

import logging
import time
import traceback
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from enum import StrEnum

from arena.bots.health import SuspendedPlayer
from arena.db.errors import DatabaseUnavailableError
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.live.publish import LiveSink, MatchLive
from arena.playing.leases import Lease, keeper_for
from arena.playing.match import MatchProgress, MatchRunner, NeitherStartedError
from arena.playing.players import Player
from arena.playing.records import MatchRecord
from arena.protocol.http_player import HttpPlayer
from arena.services.bots import signing_secrets
from arena.services.health import ProbeTrigger, probe_now
from arena.services.matches import (
    Claim,
    claim_match,
    fail_match,
    match_status,
    release_match,
)
from arena.services.recording import record_match_result
from arena.settings import Settings
from arena.states import BotStatus, ForfeitKind, MatchStatus

__all__ = [
    "JobOutcome",
    "JobStatus",
    "LeaseLostError",
    "MatchTimeLimitError",
    "players_for",
    "run_match_job",
]

log = logging.getLogger(__name__)


class JobStatus(StrEnum):
    RECORDED = "recorded"  # this call played and recorded the match
    SKIPPED = "skipped"  # finished, cancelled or failed: nothing to do
    BUSY = "busy"  # being played by a live attempt elsewhere (its lease has not run out)
    FENCED = "fenced"  # this attempt lost its lease; another attempt owns the match now
    #: The arena itself failed on this match (a bug) on every attempt, or it ran out of time:
    #: marked failed, i.e. void (no result and no loss for either bot).
    FAILED = "failed"


@dataclass(frozen=True, slots=True)
class JobOutcome:
    match_id: int
    status: JobStatus
    detail: str = ""


class LeaseLostError(Exception):
    """The lease could not be renewed: another attempt owns the match."""


class MatchTimeLimitError(Exception):
    """The match ran past ``ARENA_TASK_SOFT_TIME_LIMIT``: it is stopped and marked failed."""


class _Watch:
    """An attempt's lease, kept by the process's :class:`~arena.playing.leases.LeaseKeeper`
    while it plays (renewed every ``renew_fraction`` of its length,
    ``ARENA_LEASE_RENEW_FRACTION``). Its :meth:`check`, run after every deal, stops the match
    if the lease was lost or the match ran past its time limit."""

    def __init__(
        self,
        db: Database,
        claim: Claim,
        lease_seconds: int,
        time_limit: float,
        renew_fraction: float,
    ) -> None:
        self.keeper = keeper_for(db)
        self.claim = claim
        self.lease_seconds = lease_seconds
        self.renew_every = lease_seconds * renew_fraction
        self.time_limit = time_limit
        self.started = time.monotonic()
        self.lease: Lease | None = None

    def __enter__(self) -> _Watch:
        self.lease = self.keeper.hold(
            self.claim, lease_seconds=self.lease_seconds, renew_every=self.renew_every
        )
        return self

    def __exit__(self, *exc: object) -> None:
        if self.lease is not None:
            self.keeper.drop(self.lease)

    @property
    def lost(self) -> bool:
        """A renewal found this attempt fenced out."""
        return self.lease is not None and self.lease.lost.is_set()

    def check(self, _progress: MatchProgress) -> None:
        """After every deal: stop if the lease was lost or the match ran out of time.

        The time limit is the job's own, so it holds in every pool and executor (Celery's
        ``threads`` pool, which workers use, does not enforce ``task_time_limit``). It is read
        between deals; a deal is bounded by ``max_actions_per_deal`` answers, each bounded by
        the bot's deadline.
        """
        if self.lost:
            raise LeaseLostError(f"match {self.claim.match_id} attempt {self.claim.attempt}")
        elapsed = time.monotonic() - self.started
        if elapsed > self.time_limit:
            raise MatchTimeLimitError(
                f"match {self.claim.match_id} ran {elapsed:.0f} s, past the time limit of"
                f" {self.time_limit:g} s (ARENA_TASK_SOFT_TIME_LIMIT); stopped after a deal"
            )


def _both(
    first: Callable[[MatchProgress], None], second: Callable[[MatchProgress], None]
) -> Callable[[MatchProgress], None]:
    """One ``on_progress`` calling two."""

    def call(progress: MatchProgress) -> None:
        first(progress)
        second(progress)

    return call


def players_for(claim: Claim, settings: Settings, *, now: datetime | None = None) -> list[Player]:
    """HTTP players for both seats of a claimed match, signing with each bot's secret (and
    its previous one while a rotation window is open at ``now``, default the clock); a
    suspended bot's seat is a :class:`~arena.bots.health.SuspendedPlayer`, which forfeits at
    the start as unreachable without calling it."""
    return [
        SuspendedPlayer(bot.name, bot.failed_probes)
        if bot.status is BotStatus.SUSPENDED
        else HttpPlayer(
            bot.url,
            name=bot.name,
            secret=signing_secrets(bot, now=now),
            allow_loopback=settings.allow_loopback,
        )
        for bot in claim.spec.bots
    ]


def _probe_after_ladder_forfeit(
    db: Database, settings: Settings, claim: Claim, record: MatchRecord
) -> None:
    """A ladder match a bot forfeited because it was unreachable at the start: probe that bot
    at once (not a suspended one, which was not called). The match is recorded already: a
    probe that fails to run is logged, never the job's failure."""
    forfeit = record.forfeit
    if (
        claim.spec.ladder_round_id is None
        or forfeit is None
        or forfeit.seat is None
        or forfeit.kind is not ForfeitKind.UNREACHABLE_AT_START
    ):
        return
    bot = claim.spec.bots[forfeit.seat]
    if bot.status is BotStatus.SUSPENDED:
        return
    try:
        probe_now(db, settings, bot.id, trigger=ProbeTrigger.FORFEIT)
    except Exception:
        log.exception("probing bot %s after match %s failed", bot.id, claim.match_id)


def _reported_versions(players: list[Player]) -> tuple[str | None, str | None]:
    """The ``version`` each seat's ``GET /`` reported at the match's start (None: it never
    answered, or the seat is not an HTTP bot)."""
    a, b = (p.info.version if isinstance(p, HttpPlayer) and p.info else None for p in players)
    return a, b


def run_match_job(
    db: Database,
    settings: Settings,
    match_id: int,
    worker: str,
    *,
    make_players: Callable[[Claim, Settings], list[Player]] = players_for,
    after_record: Callable[[int], None] | None = None,
    live: LiveSink | None = None,
) -> JobOutcome:
    """Claim, play and record one match (see the module docstring).

    An arena failure releases the attempt and plays the match again here, until it is
    recorded or ``settings.max_attempts`` claims are used up (then it is void).
    ``after_record(match_id)`` runs once the match is recorded or void. With ``live``, every
    step of each attempt is published there (:mod:`arena.live.publish`).
    """
    last_error = ""
    while True:
        claim = claim_match(
            db,
            match_id,
            worker,
            lease_seconds=settings.lease_seconds,
            max_attempts=settings.max_attempts,
        )
        if claim is None:
            try:
                status = match_status(db, match_id)
            except NotFoundError as exc:  # e.g. a task left queued over a database reset
                return JobOutcome(match_id, JobStatus.SKIPPED, str(exc))
            if status is MatchStatus.RUNNING:
                return JobOutcome(match_id, JobStatus.BUSY, "held by a live lease elsewhere")
            if last_error and status is MatchStatus.FAILED:
                outcome = JobOutcome(match_id, JobStatus.FAILED, last_error)
                break
            return JobOutcome(match_id, JobStatus.SKIPPED, f"status {status}")
        played = _play(db, settings, claim, make_players, after_record, live)
        if isinstance(played, JobOutcome):
            outcome = played
            break
        last_error = played
    if outcome.status is JobStatus.FAILED and after_record is not None:
        after_record(match_id)  # void: its tournament moves on (a drawn match, no games)
    return outcome


def _winner_and_score(record: MatchRecord) -> tuple[str | None, tuple[int, int]]:
    """The winning seat's letter and the games won, as ``end`` reports them."""
    won = [sum(1 for g in record.games if g.result.winner == s) for s in (0, 1)]
    winner = None if record.winner is None else "ab"[record.winner]
    return winner, (won[0], won[1])


def _play(
    db: Database,
    settings: Settings,
    claim: Claim,
    make_players: Callable[[Claim, Settings], list[Player]],
    after_record: Callable[[int], None] | None,
    live_sink: LiveSink | None = None,
) -> JobOutcome | str:
    """Play and record one claimed attempt; a str is an arena failure (the match released)."""
    match_id, spec = claim.match_id, claim.spec
    live = None if live_sink is None else MatchLive(live_sink, match_id, claim.attempt, spec.rules)
    try:
        players = make_players(claim, settings)
        with _Watch(
            db,
            claim,
            settings.lease_seconds,
            settings.task_soft_time_limit,
            settings.lease_renew_fraction,
        ) as watch:
            on_progress: Callable[[MatchProgress], None] = watch.check
            if live is not None:
                live.started()
                on_progress = _both(live.dealt, watch.check)
            runner = MatchRunner(
                players,
                spec.rules,
                spec.seed,
                match_id=f"m{match_id}",
                on_progress=on_progress,
                on_step=None if live is None else live.step,
            )
            started = time.perf_counter()
            record = runner.run()
            duration_ms = int((time.perf_counter() - started) * 1000)
            if watch.lost:
                raise LeaseLostError(f"match {match_id} attempt {claim.attempt}")
    except LeaseLostError:
        return JobOutcome(match_id, JobStatus.FENCED, f"attempt {claim.attempt} lost its lease")
    except MatchTimeLimitError as exc:  # retrying would only run out of time again: void
        log.warning("%s", exc)
        fail_match(db, claim, str(exc))
        if live is not None:
            live.ended(MatchStatus.FAILED.value, None, (0, 0), None)
        return JobOutcome(match_id, JobStatus.FAILED, str(exc))
    except DatabaseUnavailableError:
        raise  # infrastructure: let the executor retry; the lease will expire if it cannot
    except NeitherStartedError as exc:  # the arena's network or settings, most likely: again
        log.warning("match %s attempt %s: %s", match_id, claim.attempt, exc)
        error = f"{type(exc).__name__}: {exc}"
        if not release_match(db, claim, f"attempt {claim.attempt}: {error}"):
            return JobOutcome(match_id, JobStatus.FENCED, f"attempt {claim.attempt} was fenced out")
        return error
    except Exception as exc:  # a bug in the arena: keep the evidence, play it again (bounded)
        log.exception("match %s attempt %s failed", match_id, claim.attempt)
        error = f"{type(exc).__name__}: {exc}"
        detail = f"attempt {claim.attempt}: {error}\n{traceback.format_exc()}"
        if not release_match(db, claim, detail):
            return JobOutcome(match_id, JobStatus.FENCED, f"attempt {claim.attempt} was fenced out")
        return error
    bot_time_ms = int(sum(record.latencies[0]) + sum(record.latencies[1]))
    recorded = record_match_result(
        db,
        claim,
        record,
        duration_ms=duration_ms,
        bot_time_ms=bot_time_ms,
        elo_k=settings.elo_k,
        reported_versions=_reported_versions(players),
        record_json=runner.record_json,
    )
    if not recorded:
        return JobOutcome(match_id, JobStatus.FENCED, f"attempt {claim.attempt} was fenced out")
    if live is not None:
        winner, score = _winner_and_score(record)
        forfeit = record.forfeit
        live.ended(
            MatchStatus.FINISHED.value,
            winner,
            score,
            None
            if forfeit is None
            else {
                "seat": None if forfeit.seat is None else "ab"[forfeit.seat],
                "reason": forfeit.reason,
            },
        )
    if after_record is not None:
        after_record(match_id)
    _probe_after_ladder_forfeit(db, settings, claim, record)
    return JobOutcome(match_id, JobStatus.RECORDED)
