"""Bot health: probe the bots between matches, keep each probe, suspend and resume them.

:func:`health_sweep` is the periodic job (:mod:`arena.services.periodic`; every
``ARENA_HEALTH_INTERVAL_SECONDS``): it probes every active or suspended bot whose last probe
is older than the interval, or that was never probed (:func:`arena.bots.health.probe_health`:
``GET /`` and one signed ``/act``, within ``ARENA_HEALTH_TIMEOUT_SECONDS`` each), on a bounded
pool of :data:`PROBE_THREADS` threads, so a dead bot holds up only its own thread.
:func:`probe_now` probes one bot at once (after a ladder match it forfeited as unreachable).

Each probe is recorded in ONE transaction: a ``health_probes`` row; the bot's counters and
status as :func:`arena.measures.health.next_health` says (``ARENA_HEALTH_FAILURES_TO_SUSPEND``
failed in a row suspend it, ``ARENA_HEALTH_SUCCESSES_TO_RESUME`` passed in a row resume it);
the ``version`` string its ``GET /`` reported
(:func:`arena.services.versions.observe_reported_version`); and on a transition the event
``bot.suspended`` or ``bot.resumed`` to the bot's owner (:func:`arena.services.events.emit`).

Safe to run twice at once: a probe first *claims* the bot by setting ``last_probed_at`` in a
guarded ``UPDATE`` (a sweep claims every due bot in one statement), and its result is written
only while ``last_probed_at`` is still that claim and the status still the one it read. So two
sweeps never probe a bot twice in one interval, a later claim (:func:`probe_now`) voids an
earlier probe still in flight, and an owner's deactivation during a probe is never undone.
"""

from __future__ import annotations

import enum
import logging
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from sqlalchemy import ColumnElement, or_, update
from sqlalchemy.orm import Session

from arena.bots.health import HealthProbe, probe_health
from arena.db.models import BotRow, HealthProbeRow, utcnow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.events import EventType
from arena.measures.health import HealthState, Thresholds, Transition, next_health
from arena.protocol.urlguard import Resolver
from arena.services.bots import signing_secrets
from arena.services.events import emit
from arena.services.matches import Submit
from arena.services.versions import observe_reported_version
from arena.settings import Settings
from arena.states import BotStatus

__all__ = [
    "PROBE_THREADS",
    "ProbeOutcome",
    "ProbeTrigger",
    "health_sweep",
    "probe_now",
    "thresholds",
]

log = logging.getLogger(__name__)

#: Probes of one sweep run at once, at most (each is bounded by the probe timeout).
PROBE_THREADS = 16
#: The statuses a probe looks at (an inactive bot is not probed).
_PROBED = (BotStatus.ACTIVE, BotStatus.SUSPENDED)


class ProbeTrigger(enum.StrEnum):
    """What set a probe off (``health_probes.trigger``)."""

    #: The periodic sweep.
    SWEEP = "sweep"
    #: A ladder match the bot forfeited as unreachable at the start.
    FORFEIT = "forfeit"
    #: Asked for by hand (an operator's or a test's :func:`probe_now`).
    CLI = "cli"


@dataclass(frozen=True, slots=True)
class ProbeOutcome:
    """A recorded probe: what it saw, and the bot's status after it."""

    bot_id: int
    probed_at: datetime
    probe: HealthProbe
    status: BotStatus
    failed_probes: int
    passed_probes: int
    transition: Transition


@dataclass(frozen=True, slots=True)
class _Claimed:
    """A bot claimed for one probe, as it was when claimed."""

    id: int
    name: str
    url: str
    secrets: tuple[str, ...]
    status: BotStatus
    failed: int
    passed: int
    claimed_at: datetime


def thresholds(settings: Settings) -> Thresholds:
    """The state machine's thresholds in these settings."""
    return Thresholds(settings.health_failures_to_suspend, settings.health_successes_to_resume)


_RETURNED = (
    BotRow.id,
    BotRow.name,
    BotRow.url,
    BotRow.secret,
    BotRow.previous_secret,
    BotRow.previous_secret_expires_at,
    BotRow.status,
    BotRow.failed_probes,
    BotRow.passed_probes,
)


def _claimed(row: Any, now: datetime) -> _Claimed:
    return _Claimed(
        row.id,
        row.name,
        row.url,
        signing_secrets(row, now=now),
        row.status,
        row.failed_probes,
        row.passed_probes,
        now,
    )


def _claim(db: Database, *where: ColumnElement[bool], now: datetime) -> list[_Claimed]:
    """Set ``last_probed_at`` to ``now`` on the probed bots matching ``where``, in one guarded
    ``UPDATE``; the bots claimed, by id. ``updated_at`` stays: a probe changes no setting."""
    with db.session() as session:
        rows = session.execute(
            update(BotRow)
            .where(BotRow.status.in_(_PROBED), *where)
            .values(last_probed_at=now, updated_at=BotRow.updated_at)
            .returning(*_RETURNED)
        ).all()
    return sorted((_claimed(r, now) for r in rows), key=lambda c: c.id)


def health_sweep(
    db: Database,
    settings: Settings,
    submit: Submit,
    *,
    now: datetime | None = None,
    resolver: Resolver | None = None,
) -> list[int]:
    """One sweep: probe every bot due for a probe (module docstring) and record each; the ids
    of the bots whose status changed (suspended or resumed). ``submit`` is unused (a sweep
    schedules no match): it is the periodic jobs' signature."""
    now = now or utcnow()
    cutoff = now - timedelta(seconds=settings.health_interval_seconds)
    due = _claim(db, or_(BotRow.last_probed_at.is_(None), BotRow.last_probed_at <= cutoff), now=now)
    if not due:
        return []
    with ThreadPoolExecutor(min(PROBE_THREADS, len(due)), thread_name_prefix="health") as pool:
        outcomes = list(
            pool.map(lambda bot: _probe(db, settings, bot, ProbeTrigger.SWEEP, resolver), due)
        )
    return [o.bot_id for o in outcomes if o is not None and o.transition is not Transition.NONE]


def probe_now(
    db: Database,
    settings: Settings,
    bot_id: int,
    *,
    trigger: ProbeTrigger = ProbeTrigger.CLI,
    now: datetime | None = None,
    resolver: Resolver | None = None,
) -> ProbeOutcome | None:
    """Probe one bot now, whenever it was last probed, and record it.

    None when it was not recorded: the bot is inactive (inactive bots are not probed), or
    another probe claimed it meanwhile (its result stands instead). Raises
    :class:`~arena.errors.NotFoundError` if there is no such bot.
    """
    claimed = _claim(db, BotRow.id == bot_id, now=now or utcnow())
    if not claimed:
        with db.session() as session:
            if session.get(BotRow, bot_id) is None:
                raise NotFoundError("bot", bot_id)
        return None
    return _probe(db, settings, claimed[0], trigger, resolver)


def _probe(
    db: Database,
    settings: Settings,
    bot: _Claimed,
    trigger: ProbeTrigger,
    resolver: Resolver | None,
) -> ProbeOutcome | None:
    probe = probe_health(
        bot.url,
        match_id=f"health-{bot.id}-{int(bot.claimed_at.timestamp())}",
        secrets=bot.secrets,
        allow_loopback=settings.allow_loopback,
        timeout_s=settings.health_timeout_seconds,
        resolver=resolver,
    )
    outcome = _record(db, settings, bot, probe, trigger)
    if outcome is None:
        log.info("health probe of bot %s at %s was superseded", bot.id, bot.claimed_at)
    elif outcome.transition is not Transition.NONE:
        log.warning(
            "bot %s (%s) %s after probe: %s", bot.id, bot.name, outcome.transition, probe.reason
        )
    return outcome


def _record(
    db: Database, settings: Settings, bot: _Claimed, probe: HealthProbe, trigger: ProbeTrigger
) -> ProbeOutcome | None:
    """Write one probe's result in one transaction (module docstring); None if the claim was
    superseded or the bot's status changed meanwhile (nothing is written then)."""
    before = HealthState(bot.status is BotStatus.SUSPENDED, bot.failed, bot.passed)
    step = next_health(before, probe.passed, thresholds(settings))
    state = step.state
    status = BotStatus.SUSPENDED if state.suspended else BotStatus.ACTIVE
    changed = step.transition is not Transition.NONE
    with db.session() as session:
        written = session.execute(
            update(BotRow)
            .where(
                BotRow.id == bot.id,
                BotRow.last_probed_at == bot.claimed_at,
                BotRow.status == bot.status,
            )
            .values(
                status=status,
                failed_probes=state.failed,
                passed_probes=state.passed,
                updated_at=utcnow() if changed else BotRow.updated_at,
            )
        )
        if not written.rowcount:  # type: ignore[attr-defined]
            return None
        session.add(
            HealthProbeRow(
                bot_id=bot.id,
                probed_at=bot.claimed_at,
                passed=probe.passed,
                latency_ms=probe.latency_ms,
                reason=probe.reason,
                trigger=trigger.value,
                status_after=status,
            )
        )
        if probe.info is not None:
            observe_reported_version(session, bot.id, probe.version)
        if changed:
            _emit_transition(session, bot, step.transition, state, probe)
    return ProbeOutcome(
        bot.id, bot.claimed_at, probe, status, state.failed, state.passed, step.transition
    )


def _emit_transition(
    session: Session,
    bot: _Claimed,
    transition: Transition,
    state: HealthState,
    probe: HealthProbe,
) -> None:
    """``bot.suspended`` or ``bot.resumed`` (data as :class:`arena.events.EventType` lists)."""
    ref = {"id": bot.id, "name": bot.name}
    if transition is Transition.SUSPENDED:
        data: dict[str, Any] = {"bot": ref, "reason": probe.reason, "failed_probes": state.failed}
        emit(session, EventType.BOT_SUSPENDED, data, bot_id=bot.id)
    else:
        data = {"bot": ref, "passed_probes": state.passed}
        emit(session, EventType.BOT_RESUMED, data, bot_id=bot.id)
