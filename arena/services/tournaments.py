"""Tournaments that run themselves: create, start, advance on every result, cancel.

The plan is never stored as state to mutate: :func:`advance_tournament` rebuilds it from the
stored results with the pure planner (:mod:`arena.tournaments`) and schedules whatever is
ready and not yet scheduled. That makes it re-entrant and idempotent: calling it twice, or from
two workers at once, schedules each match once (it takes the tournament's row lock first, and
the unique key on tournament and match key backs that up).

A bot that cannot be reached at the start of one of its matches is withdrawn: its remaining
pairings become walkovers, so it never stalls the event. Should the advance after a recorded
match be lost (its worker killed between the two), the sweeper's
:func:`advance_running_tournaments` makes it up.

The entered bots' owners hear of it (:mod:`arena.services.events`): ``tournament.started``,
``tournament.round_started`` (once per round, when its first matches are scheduled) and
``tournament.finished``, each in the transaction of the change it reports.
"""

from __future__ import annotations

import random
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from arena.db.models import (
    BotRow,
    EventRow,
    GameRow,
    MatchRow,
    TournamentEntryRow,
    TournamentRow,
    utcnow,
)
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.events import EventType
from arena.rules.ruleset import RuleSet
from arena.services.events import emit
from arena.services.matches import Submit, schedule_match
from arena.services.ratings import refit_ratings
from arena.services.sprt_tests import advance_for_test_match
from arena.states import BotStatus, MatchStatus, TournamentStatus
from arena.tournaments import Format, MatchResult, Plan, make_format
from arena.tournaments.model import SETTLED

__all__ = [
    "AdvanceReport",
    "TournamentStateError",
    "advance_for_match",
    "advance_running_tournaments",
    "advance_tournament",
    "cancel_tournament",
    "create_tournament",
    "load_plan",
    "start_tournament",
]

#: The forfeit reason of a bot that could not be reached at the start (see arena.playing.match).
UNREACHABLE = "unreachable at the start"


class TournamentStateError(ValueError):
    """The tournament is not in a state that allows this (e.g. starting a finished one)."""


@dataclass(frozen=True, slots=True)
class AdvanceReport:
    """What one advance did."""

    scheduled: list[int] = field(default_factory=list)
    cancelled: list[int] = field(default_factory=list)
    withdrawn: list[int] = field(default_factory=list)
    finished: bool = False
    #: Rounds (of any section) whose every pairing became settled with this advance.
    rounds_closed: int = 0

    @property
    def needs_refit(self) -> bool:
        """A round closed, new matches were scheduled or the event finished."""
        return bool(self.scheduled or self.finished or self.rounds_closed)


def create_tournament(
    db: Database,
    *,
    name: str,
    format_name: str,
    options: dict[str, Any] | None = None,
    bot_ids: Sequence[int] | None = None,
    rules: RuleSet | None = None,
    seed: int | None = None,
    rated: bool = True,
) -> int:
    """Store a tournament and its entries (seeded by live Elo, best first).

    ``bot_ids`` None means every active bot (not the inactive, not the suspended); bots
    named in ``bot_ids`` may be suspended, not inactive. The format and its options are
    checked now (:class:`arena.tournaments.FormatError` for bad ones), so a bad request fails
    at once.
    """
    options = dict(options or {})
    fmt = make_format(format_name, **options)
    rules = rules or RuleSet()
    if seed is None:
        seed = random.SystemRandom().randrange(1 << 62)
    with db.session() as session:
        query = select(BotRow).where(BotRow.status == BotStatus.ACTIVE)
        if bot_ids is not None:
            wanted = list(dict.fromkeys(int(b) for b in bot_ids))
            query = select(BotRow).where(BotRow.id.in_(wanted))
            found = {b.id: b for b in session.scalars(query)}
            missing = [b for b in wanted if b not in found]
            if missing:
                raise ValueError(f"no such bot(s): {', '.join(map(str, missing))}")
            # A suspended bot may enter: like an unreachable one, it forfeits its first match
            # at the start (and is withdrawn) unless its probes pass before it plays.
            inactive = [b.name for b in found.values() if b.status is BotStatus.INACTIVE]
            if inactive:
                raise ValueError(f"inactive bot(s) cannot enter: {', '.join(inactive)}")
            bots = list(found.values())
        else:
            bots = list(session.scalars(query))
        if len(bots) < 2:
            raise ValueError(f"a tournament needs at least 2 bots, got {len(bots)}")
        bots.sort(key=lambda b: (-b.elo, b.id))
        # Validate the plan now (e.g. a gauntlet's challenger must be a participant).
        fmt.plan([str(b.id) for b in bots], {}, (), seed)
        tournament = TournamentRow(
            name=name,
            format=format_name,
            options=fmt.options(),
            rules=rules.to_dict(),
            seed=seed,
            rated=rated,
            status=TournamentStatus.CREATED,
        )
        session.add(tournament)
        session.flush()
        session.add_all(
            TournamentEntryRow(tournament_id=tournament.id, bot_id=b.id, seed_rank=i + 1)
            for i, b in enumerate(bots)
        )
        return tournament.id


def start_tournament(db: Database, tournament_id: int, submit: Submit) -> AdvanceReport:
    """Start a created tournament: schedule its first matches."""
    with db.session() as session:
        started = session.execute(
            update(TournamentRow)
            .where(
                TournamentRow.id == tournament_id, TournamentRow.status == TournamentStatus.CREATED
            )
            .values(status=TournamentStatus.RUNNING, started_at=utcnow())
        )
        if not started.rowcount:  # type: ignore[attr-defined]
            t = session.get(TournamentRow, tournament_id)
            if t is None:
                raise NotFoundError("tournament", tournament_id)
            if t.status is not TournamentStatus.RUNNING:
                raise TournamentStateError(f"tournament {tournament_id} is {t.status.value}")
        else:
            t = session.get_one(TournamentRow, tournament_id)
            entered = [e.bot_id for e in t.entries]
            emit(
                session,
                EventType.TOURNAMENT_STARTED,
                {"tournament": _event_ref(t), "bots": entered},
                audience=entered,
                tournament_id=tournament_id,
            )
    return advance_tournament(db, tournament_id, submit)


def _format(t: TournamentRow) -> Format:
    return make_format(t.format, **t.options)


def _results(
    session: Session, tournament_id: int
) -> tuple[dict[str, MatchResult], dict[str, MatchRow]]:
    matches = {
        m.match_key: m
        for m in session.scalars(select(MatchRow).where(MatchRow.tournament_id == tournament_id))
    }
    points = {
        row[0]: (int(row[1] or 0), int(row[2] or 0))
        for row in session.execute(
            select(GameRow.match_id, func.sum(GameRow.totals_a), func.sum(GameRow.totals_b))
            .join(MatchRow, MatchRow.id == GameRow.match_id)
            .where(MatchRow.tournament_id == tournament_id)
            .group_by(GameRow.match_id)
        )
    }
    results: dict[str, MatchResult] = {}
    for key, m in matches.items():
        if key is None:
            continue
        ids = {"a": str(m.bot_a_id), "b": str(m.bot_b_id)}
        if m.status is MatchStatus.FINISHED:
            forfeited = frozenset(ids[s] for s in ("a", "b") if m.forfeit_seat in (s, "both"))
            results[key] = MatchResult(
                ids[m.winner] if m.winner else None,
                (m.games_won_a, m.games_won_b),
                points.get(m.id, (0, 0)),
                forfeited,
            )
        elif m.status is MatchStatus.FAILED:
            # Void (the arena failed on it every attempt): a drawn match with no games, so
            # nobody is scored a loss for the arena's failure and nothing stalls; a knockout
            # applies its tie rule (the better seed goes through).
            results[key] = MatchResult(None, (0, 0), (0, 0), frozenset())
    return results, {k: m for k, m in matches.items() if k is not None}


def _lock(session: Session, tournament_id: int) -> TournamentRow | None:
    """Take the tournament's row lock (a no-op UPDATE: the write lock on SQLite too)."""
    session.execute(
        update(TournamentRow)
        .where(TournamentRow.id == tournament_id)
        .values(status=TournamentRow.status)
    )
    return session.get(TournamentRow, tournament_id, populate_existing=True)


def advance_tournament(db: Database, tournament_id: int, submit: Submit) -> AdvanceReport:
    """Schedule every ready match not yet scheduled; finish the event when the plan is done.

    Re-entrant and idempotent (see the module docstring). New matches are submitted only after
    the transaction that created them has committed.
    """
    with db.session() as session:
        t = _lock(session, tournament_id)
        if t is None:
            raise NotFoundError("tournament", tournament_id)
        if t.status is not TournamentStatus.RUNNING:
            return AdvanceReport()
        results, matches = _results(session, tournament_id)
        entries = list(t.entries)
        withdrawn_now = _withdraw_unreachable(entries, matches)
        withdrawn = [
            str(e.bot_id)
            for e in sorted(
                (e for e in entries if e.withdrawn), key=lambda e: e.withdrawn_order or 0
            )
        ]
        plan = _format(t).plan([str(e.bot_id) for e in entries], results, withdrawn, t.seed)
        rules = RuleSet.from_dict(t.rules)
        new: list[MatchRow] = []
        for m in plan.to_play():
            if m.key in matches:
                continue
            new.append(
                schedule_match(
                    session,
                    int(m.seats[0]),
                    int(m.seats[1]),
                    rules=rules,
                    seed=m.seed,
                    rated=t.rated,
                    tournament_id=tournament_id,
                    match_key=m.key,
                )
            )
        wanted = {m.key for m in plan.to_play()}
        open_ = (MatchStatus.PENDING, MatchStatus.RUNNING)
        cancelled = [m.id for key, m in matches.items() if m.status in open_ and key not in wanted]
        if cancelled:
            # Walkovers: a withdrawn bot's queued or running matches are not played on. A
            # running one is fenced out (its lease renewal and its record need "running"),
            # so a late result can never turn an issued walkover back into a match.
            session.execute(
                update(MatchRow)
                .where(MatchRow.id.in_(cancelled), MatchRow.status.in_(open_))
                .values(status=MatchStatus.CANCELLED, finished_at=utcnow(), lease_owner=None)
            )
        closed_before = _closed_rounds(t.summary or {})
        t.summary = plan.to_dict()
        rounds_closed = len(_closed_rounds(t.summary) - closed_before)
        _emit_round_starts(session, t, plan, new)
        if plan.finished:
            t.status = TournamentStatus.FINISHED
            t.finished_at = utcnow()
            _emit_finished(session, t, plan)
        session.flush()
        report = AdvanceReport(
            [m.id for m in new],
            cancelled,
            [e.bot_id for e in withdrawn_now],
            plan.finished,
            rounds_closed,
        )
    if report.scheduled:
        submit(report.scheduled)
    return report


def _event_ref(t: TournamentRow) -> dict[str, Any]:
    """How a tournament event names its tournament."""
    return {"id": t.id, "name": t.name, "format": t.format}


def _emit_round_starts(
    session: Session, t: TournamentRow, plan: Plan, new: Sequence[MatchRow]
) -> None:
    """``tournament.round_started`` for each round whose first matches ``new`` are, once per
    round: the rounds already reported are read back from the outbox, under the tournament's
    row lock, so an advance run twice reports nothing twice."""
    if not new:
        return
    round_of = {m.key: (p.section, p.round) for p in plan.pairings for m in p.matches}
    names = {(s.name, r.number): r.name for s in plan.bracket for r in s.rounds}
    reported = {
        (e.data["section"], e.data["number"])
        for e in session.scalars(
            select(EventRow).where(
                EventRow.tournament_id == t.id,
                EventRow.type == EventType.TOURNAMENT_ROUND_STARTED.value,
            )
        )
    }
    started: dict[tuple[str, int], list[int]] = {}
    for match in new:
        key = round_of.get(match.match_key or "")
        if key is not None and key not in reported:
            started.setdefault(key, []).append(match.id)
    entered = [e.bot_id for e in t.entries]
    for (section, number), match_ids in started.items():
        emit(
            session,
            EventType.TOURNAMENT_ROUND_STARTED,
            {
                "tournament": _event_ref(t),
                "round": names.get((section, number), f"Round {number}"),
                "section": section,
                "number": number,
                "matches": match_ids,
            },
            audience=entered,
            tournament_id=t.id,
        )


def _emit_finished(session: Session, t: TournamentRow, plan: Plan) -> None:
    """``tournament.finished`` with the final standings, best first."""
    entries = {str(e.bot_id): e for e in t.entries}
    standings = [
        {
            "rank": s.rank,
            "bot": {"id": int(s.participant), "name": entries[s.participant].bot.name},
            "score": s.score,
            "played": s.played,
            "wins": s.wins,
            "draws": s.draws,
            "losses": s.losses,
            "withdrawn": s.withdrawn,
        }
        for s in plan.standings
    ]
    champion = None if plan.champion is None else standings[0]["bot"]
    emit(
        session,
        EventType.TOURNAMENT_FINISHED,
        {"tournament": _event_ref(t), "champion": champion, "standings": standings},
        audience=[e.bot_id for e in t.entries],
        tournament_id=t.id,
    )


def _closed_rounds(summary: Mapping[str, Any]) -> set[tuple[str, int]]:
    """The rounds of a stored plan summary whose every pairing is settled."""
    settled = {s.value for s in SETTLED}
    return {
        (section["name"], r["number"])
        for section in summary.get("sections", ())
        for r in section["rounds"]
        if all(p["status"] in settled for p in r["pairings"])
    }


def _withdraw_unreachable(
    entries: list[TournamentEntryRow], matches: dict[str, MatchRow]
) -> list[TournamentEntryRow]:
    """Mark entries withdrawn whose bot forfeited a match because it could not be started
    (unreachable, or refusing the arena's signature, at the start: ``forfeit_kind``)."""
    by_bot = {e.bot_id: e for e in entries}
    order = max((e.withdrawn_order or 0 for e in entries), default=0)
    newly: list[TournamentEntryRow] = []
    for m in sorted(matches.values(), key=lambda m: (m.finished_at or utcnow(), m.id)):
        kind = m.forfeit_kind
        if m.status is not MatchStatus.FINISHED or kind is None or not kind.is_at_start:
            continue
        seats = {"a": m.bot_a_id, "b": m.bot_b_id}
        losers = (
            [seats["a"], seats["b"]]
            if m.forfeit_seat == "both"
            else [seats.get(m.forfeit_seat or "")]
        )
        for bot_id in losers:
            entry = by_bot.get(bot_id) if bot_id is not None else None
            if entry is not None and not entry.withdrawn:
                order += 1
                entry.withdrawn = True
                entry.withdrawn_order = order
                newly.append(entry)
    return newly


def advance_for_match(
    db: Database, match_id: int, submit: Submit, *, min_matches: int = 10
) -> None:
    """After a recorded match: advance its tournament; refit ratings when a round closes (a
    match of an SPRT test advances its test instead: :mod:`arena.services.sprt_tests`)."""
    if advance_for_test_match(db, match_id, submit):
        return
    with db.session() as session:
        tournament_id = session.scalar(
            select(MatchRow.tournament_id).where(MatchRow.id == match_id)
        )
    if tournament_id is None:
        return
    report = advance_tournament(db, tournament_id, submit)
    if report.needs_refit:
        refit_ratings(db, min_matches=min_matches)


def advance_running_tournaments(
    db: Database, submit: Submit, *, min_matches: int = 10
) -> dict[int, AdvanceReport]:
    """Advance every running tournament (the sweeper's pass), refitting if any moved.

    Each advance normally follows its match's record; if a worker died between the two (or the
    advance failed), the redelivered task finds the match finished and does nothing, so without
    this pass the event would wait forever.
    """
    with db.session() as session:
        ids = list(
            session.scalars(
                select(TournamentRow.id).where(TournamentRow.status == TournamentStatus.RUNNING)
            )
        )
    reports = {
        tournament_id: advance_tournament(db, tournament_id, submit) for tournament_id in ids
    }
    if any(r.needs_refit for r in reports.values()):
        refit_ratings(db, min_matches=min_matches)
    return reports


def cancel_tournament(db: Database, tournament_id: int) -> list[int]:
    """Stop a tournament: no new matches, pending ones cancelled, finished ones kept."""
    with db.session() as session:
        t = _lock(session, tournament_id)
        if t is None:
            raise NotFoundError("tournament", tournament_id)
        if t.status in (TournamentStatus.FINISHED, TournamentStatus.CANCELLED):
            raise TournamentStateError(f"tournament {tournament_id} is already {t.status.value}")
        t.status = TournamentStatus.CANCELLED
        t.finished_at = utcnow()
        cancelled = list(
            session.scalars(
                update(MatchRow)
                .where(
                    MatchRow.tournament_id == tournament_id, MatchRow.status == MatchStatus.PENDING
                )
                .values(status=MatchStatus.CANCELLED, finished_at=utcnow())
                .returning(MatchRow.id)
            )
        )
    return cancelled


def load_plan(db: Database, tournament_id: int) -> tuple[TournamentRow, Plan]:
    """The tournament and its plan as of now (read-only; standings and bracket at any moment)."""
    with db.session() as session:
        t = session.get(TournamentRow, tournament_id)
        if t is None:
            raise NotFoundError("tournament", tournament_id)
        results, _ = _results(session, tournament_id)
        entries = list(t.entries)
        withdrawn = [
            str(e.bot_id)
            for e in sorted(
                (e for e in entries if e.withdrawn), key=lambda e: e.withdrawn_order or 0
            )
        ]
        plan = _format(t).plan([str(e.bot_id) for e in entries], results, withdrawn, t.seed)
        session.expunge(t)
    return t, plan
