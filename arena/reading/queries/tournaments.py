"""Tournaments: the list, one tournament's detail, bracket and standings (replanned from its
results, see :func:`arena.services.tournaments.load_plan`), and the cheaper reads made while one
runs: its state for the embargo on seeds, and its progress for the terminal.

Each raises :class:`~arena.errors.NotFoundError` for a tournament that does not exist. A
tournament's fingerprint (to reuse what is computed from its plan) is
:mod:`arena.reading.queries.versions`.
"""

from __future__ import annotations

from collections.abc import Collection
from typing import Any

from sqlalchemy import exists, func, select

from arena.db.models import BotRow, MatchRow, RatingFitRow, TournamentRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries._rows import iso, names_by_id
from arena.services.tournaments import load_plan
from arena.states import MatchStatus, TournamentStatus

__all__ = [
    "standings_with_ratings",
    "tournament_bracket",
    "tournament_detail",
    "tournament_list",
    "tournament_progress",
    "tournament_standings",
    "tournament_state",
]


def tournament_detail(db: Database, tournament_id: int) -> dict[str, Any]:
    """A tournament: format, options, rules, status, entries, match counts, champion."""
    t, plan = load_plan(db, tournament_id)
    with db.session() as session:
        rows = session.execute(
            select(MatchRow.status, func.count())
            .where(MatchRow.tournament_id == tournament_id)
            .group_by(MatchRow.status)
        )
        counts = {status: n for status, n in rows}  # noqa: C416 - a Result is not a mapping
        names = names_by_id(session, [int(p) for p in plan.participants])
    champion = plan.champion
    return {
        "id": t.id,
        "name": t.name,
        "format": t.format,
        "options": t.options,
        "rules": t.rules,
        "seed": t.seed,
        "rated": t.rated,
        "status": t.status.value,
        "created_at": iso(t.created_at),
        "started_at": iso(t.started_at),
        "finished_at": iso(t.finished_at),
        "participants": [
            {
                "seed": i + 1,
                "bot_id": int(p),
                "name": names.get(int(p)),
                "withdrawn": p in plan.withdrawn,
            }
            for i, p in enumerate(plan.participants)
        ],
        "matches": {status.value: counts.get(status, 0) for status in MatchStatus},
        "champion": None
        if champion is None
        else {"bot_id": int(champion), "name": names.get(int(champion))},
    }


def _with_names(
    plan_dict: dict[str, Any], names: dict[int, str], match_ids: dict[str, int]
) -> dict[str, Any]:
    def who(pid: str | None) -> dict[str, Any] | None:
        return None if pid is None else {"bot_id": int(pid), "name": names.get(int(pid))}

    sections = []
    for section in plan_dict["sections"]:
        rounds = []
        for r in section["rounds"]:
            pairings = []
            for raw in r["pairings"]:
                p = dict(raw)
                p["a"], p["b"] = who(p.get("a")), who(p.get("b"))
                for m in p.get("matches", []):
                    m["match_id"] = match_ids.get(m["key"])
                pairings.append(p)
            rounds.append({**r, "pairings": pairings})
        sections.append({**section, "rounds": rounds})
    return {"format": plan_dict["format"], "finished": plan_dict["finished"], "sections": sections}


def tournament_bracket(db: Database, tournament_id: int) -> dict[str, Any]:
    """Sections, rounds and pairings (seeds, byes, winners advancing, match ids) to draw."""
    _, plan = load_plan(db, tournament_id)
    with db.session() as session:
        names = names_by_id(session, [int(p) for p in plan.participants])
        match_ids = {
            key: match_id
            for key, match_id in session.execute(
                select(MatchRow.match_key, MatchRow.id).where(
                    MatchRow.tournament_id == tournament_id
                )
            )
            if key
        }
    return _with_names(plan.to_dict(), names, match_ids)


def tournament_standings(db: Database, tournament_id: int) -> list[dict[str, Any]]:
    """Standings now (ranks, scores, records, tie-breaks), with bot names."""
    _, plan = load_plan(db, tournament_id)
    with db.session() as session:
        names = names_by_id(session, [int(p) for p in plan.participants])
    out = []
    for s in plan.standings:
        row = s.to_dict()
        row["bot_id"] = int(s.participant)
        row["name"] = names.get(int(s.participant))
        out.append(row)
    return out


def tournament_list(
    db: Database, *, status: str | None = None, limit: int = 50, before: int | None = None
) -> list[dict[str, Any]]:
    """Tournaments, newest first (``before``: only ids below it, the keyset cursor)."""
    query = select(TournamentRow)
    if status is not None:
        query = query.where(TournamentRow.status == status)
    if before is not None:
        query = query.where(TournamentRow.id < before)
    with db.session() as session:
        rows = session.scalars(query.order_by(TournamentRow.id.desc()).limit(limit)).all()
        return [
            {
                "id": t.id,
                "name": t.name,
                "format": t.format,
                "status": t.status.value,
                "created_at": iso(t.created_at),
            }
            for t in rows
        ]


def tournament_state(
    db: Database, tournament_id: int, statuses: Collection[MatchStatus]
) -> tuple[TournamentStatus, bool]:
    """A tournament's status, and whether any of its matches has one of ``statuses``, in one
    query."""
    with db.session() as session:
        row = session.execute(
            select(
                TournamentRow.status,
                exists().where(
                    MatchRow.tournament_id == tournament_id, MatchRow.status.in_(statuses)
                ),
            ).where(TournamentRow.id == tournament_id)
        ).first()
    if row is None:
        raise NotFoundError("tournament", tournament_id)
    status, any_in = row
    return status, bool(any_in)


def tournament_progress(db: Database, tournament_id: int) -> dict[str, Any]:
    """Where a running tournament stands, cheap enough to poll: its status, its match counts by
    status (only statuses it has) and its leader's name (the first of the standings stored with
    it, once that bot has played; None before)."""
    with db.session() as session:
        t = session.get(TournamentRow, tournament_id)
        if t is None:
            raise NotFoundError("tournament", tournament_id)
        counts = {
            status.value: n
            for status, n in session.execute(
                select(MatchRow.status, func.count())
                .where(MatchRow.tournament_id == tournament_id)
                .group_by(MatchRow.status)
            )
        }
        standings = (t.summary or {}).get("standings") or []
        leader = None
        if standings and standings[0].get("played"):
            bot = session.get(BotRow, int(standings[0]["participant"]))
            leader = bot.name if bot else standings[0]["participant"]
        return {"status": t.status.value, "matches": counts, "leader": leader}


def standings_with_ratings(db: Database, tournament_id: int) -> dict[str, Any]:
    """A tournament's name, format and status, and its standings now, each line with its bot's
    name, live ``elo`` and fitted ``rating`` (None if not fitted), unrounded: for a table that
    formats them (a bot that does not exist has None for both)."""
    tournament, plan = load_plan(db, tournament_id)
    ids = [int(p) for p in plan.participants]
    with db.session() as session:
        bots = {
            row.id: row
            for row in session.execute(
                select(BotRow.id, BotRow.name, BotRow.elo).where(BotRow.id.in_(ids))
            )
        }
        fits = {
            row.bot_id: row
            for row in session.execute(
                select(
                    RatingFitRow.bot_id,
                    RatingFitRow.rating,
                    RatingFitRow.ci_low,
                    RatingFitRow.ci_high,
                    RatingFitRow.provisional,
                ).where(RatingFitRow.bot_id.in_(ids))
            )
        }
    lines = []
    for s in plan.standings:
        bot, fit = bots.get(int(s.participant)), fits.get(int(s.participant))
        lines.append(
            {
                **s.to_dict(),
                "bot_id": int(s.participant),
                "name": None if bot is None else bot.name,
                "elo": None if bot is None else bot.elo,
                "rating": None
                if fit is None
                else {
                    "rating": fit.rating,
                    "ci_low": fit.ci_low,
                    "ci_high": fit.ci_high,
                    "provisional": fit.provisional,
                },
            }
        )
    return {
        "name": tournament.name,
        "format": tournament.format,
        "status": tournament.status.value,
        "standings": lines,
    }
