"""Matches: the list (filters, keyset pages), one match's detail, and what the embargo on its
deals needs to know (:mod:`arena.reading.embargo` decides; this only reads).

A match's full record (every deal's log) is :func:`arena.reading.replay.load_record`.
"""

from __future__ import annotations

from collections.abc import Collection
from datetime import datetime
from typing import Any

from sqlalchemy import exists, or_, select
from sqlalchemy.orm import aliased

from arena.db.models import BotRow, BotVersionRow, GameRow, HandRow, MatchResultRow, MatchRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries._rows import iso, names_by_id
from arena.reading.queries.bot_versions import seat_versions
from arena.reading.queries.bots import version_ref
from arena.states import MatchStatus

__all__ = ["list_matches", "match_detail", "match_state", "seed_twin_in", "stream_head"]


def _match_summary(m: Any, names: dict[int, str]) -> dict[str, Any]:
    """A match (a row, or a :data:`_MATCH_SUMMARIES` result) as the API shows it in lists."""
    return {
        "id": m.id,
        "status": m.status.value,
        "tournament_id": m.tournament_id,
        "test_id": m.test_id,
        "match_key": m.match_key,
        "rated": m.rated,
        "bots": {
            "a": {"id": m.bot_a_id, "name": names.get(m.bot_a_id)},
            "b": {"id": m.bot_b_id, "name": names.get(m.bot_b_id)},
        },
        "winner": m.winner,
        "games_won": {"a": m.games_won_a, "b": m.games_won_b},
        "forfeit": None
        if m.forfeit_seat is None
        else {
            "seat": None if m.forfeit_seat == "both" else m.forfeit_seat,
            "reason": m.forfeit_reason,
        },
        "created_at": iso(m.created_at),
        "finished_at": iso(m.finished_at),
    }


#: What a match's summary shows, as columns, with both bots' names (one query; a whole row
#: would also decode the rules' JSON and the lease and error columns for nothing).
_BOT_A, _BOT_B = aliased(BotRow), aliased(BotRow)
_MATCH_SUMMARIES = (
    select(
        MatchRow.id,
        MatchRow.status,
        MatchRow.tournament_id,
        MatchRow.test_id,
        MatchRow.match_key,
        MatchRow.rated,
        MatchRow.bot_a_id,
        MatchRow.bot_b_id,
        MatchRow.winner,
        MatchRow.games_won_a,
        MatchRow.games_won_b,
        MatchRow.forfeit_seat,
        MatchRow.forfeit_reason,
        MatchRow.created_at,
        MatchRow.finished_at,
        _BOT_A.name.label("name_a"),
        _BOT_B.name.label("name_b"),
    )
    .join(_BOT_A, _BOT_A.id == MatchRow.bot_a_id)
    .join(_BOT_B, _BOT_B.id == MatchRow.bot_b_id)
)


def list_matches(
    db: Database,
    *,
    tournament_id: int | None = None,
    bot_id: int | None = None,
    status: str | None = None,
    since: datetime | None = None,
    until: datetime | None = None,
    before: int | None = None,
    limit: int = 50,
) -> tuple[list[dict[str, Any]], int | None]:
    """A page of matches, newest first, and the cursor of the next page (or None)."""
    query = _MATCH_SUMMARIES
    if tournament_id is not None:
        query = query.where(MatchRow.tournament_id == tournament_id)
    if bot_id is not None:
        query = query.where(or_(MatchRow.bot_a_id == bot_id, MatchRow.bot_b_id == bot_id))
    if status is not None:
        query = query.where(MatchRow.status == MatchStatus(status))
    if since is not None:
        query = query.where(MatchRow.created_at >= since)
    if until is not None:
        query = query.where(MatchRow.created_at < until)
    if before is not None:
        query = query.where(MatchRow.id < before)
    with db.session() as session:
        rows = session.execute(query.order_by(MatchRow.id.desc()).limit(limit + 1)).all()
    more = len(rows) > limit
    rows = rows[:limit]
    page = [_match_summary(m, {m.bot_a_id: m.name_a, m.bot_b_id: m.name_b}) for m in rows]
    return page, (rows[-1].id if more and rows else None)


#: What a match's detail shows of each deal, in play order.
_HAND_OUTCOMES = select(
    HandRow.game_id,
    HandRow.index,
    HandRow.dealer,
    HandRow.outcome,
    HandRow.winner,
    HandRow.points,
    HandRow.knocker,
    HandRow.knocker_deadwood,
    HandRow.defender_deadwood,
    HandRow.misknocks,
).order_by(HandRow.game_id, HandRow.index)


def match_detail(db: Database, match_id: int) -> dict[str, Any]:
    """One match: summary, the version each side played, rules, games, every hand's outcome,
    faults and timings.

    :class:`~arena.errors.NotFoundError` if there is no such match.
    """
    with db.session() as session:
        m = session.get(MatchRow, match_id)
        if m is None:
            raise NotFoundError("match", match_id)
        names = names_by_id(session, [m.bot_a_id, m.bot_b_id])
        summary = session.scalar(
            select(MatchResultRow.summary).where(MatchResultRow.match_id == match_id)
        )
        games = session.scalars(
            select(GameRow).where(GameRow.match_id == match_id).order_by(GameRow.index)
        ).all()
        # The outcome columns only: a whole row would also decode each deal's log (its deck
        # and every action), most of a finished match's bytes, for nothing shown here.
        hands = session.execute(_HAND_OUTCOMES.where(HandRow.match_id == match_id)).all()
        by_game: dict[int, list[Any]] = {}
        for h in hands:
            by_game.setdefault(h.game_id, []).append(h)
        summary = summary or {}
        return {
            **_match_summary(m, names),
            "versions": seat_versions(session, m),
            "rules": m.rules,
            "seed": m.seed,
            "attempt": m.attempt,
            "error": m.error,
            "timings": {
                "started_at": iso(m.started_at),
                "finished_at": iso(m.finished_at),
                "duration_ms": m.duration_ms,
                "bot_time_ms": m.bot_time_ms,
            },
            "games": [
                {
                    "index": g.index,
                    "complete": g.complete,
                    "winner": g.winner,
                    "points": {"a": g.points_a, "b": g.points_b},
                    "totals": {"a": g.totals_a, "b": g.totals_b},
                    "shutout": g.shutout,
                    "hands": [
                        {
                            "index": h.index,
                            "dealer": h.dealer,
                            "outcome": h.outcome,
                            "winner": h.winner,
                            "points": h.points,
                            "knocker": h.knocker,
                            "knocker_deadwood": h.knocker_deadwood,
                            "defender_deadwood": h.defender_deadwood,
                            "misknocks": h.misknocks,
                        }
                        for h in by_game.get(g.id, [])
                    ],
                }
                for g in games
            ],
            "faults": summary.get("faults", []),
            "latency_ms": summary.get("latency_ms"),
        }


_VERSION_A, _VERSION_B = aliased(BotVersionRow), aliased(BotVersionRow)
#: A stream's head in one statement: the match's columns a ``match`` event shows, both bots'
#: names and the versions the seats played.
_STREAM_HEAD = (
    select(
        MatchRow.id,
        MatchRow.status,
        MatchRow.attempt,
        MatchRow.rules,
        MatchRow.bot_a_id,
        MatchRow.bot_b_id,
        _BOT_A.name,
        _BOT_B.name,
        MatchRow.version_a_id,
        _VERSION_A.number,
        _VERSION_A.label,
        MatchRow.version_b_id,
        _VERSION_B.number,
        _VERSION_B.label,
    )
    .outerjoin(_BOT_A, _BOT_A.id == MatchRow.bot_a_id)
    .outerjoin(_BOT_B, _BOT_B.id == MatchRow.bot_b_id)
    .outerjoin(_VERSION_A, _VERSION_A.id == MatchRow.version_a_id)
    .outerjoin(_VERSION_B, _VERSION_B.id == MatchRow.version_b_id)
)


def stream_head(db: Database, match_id: int) -> dict[str, Any]:
    """What a match stream's ``match`` event needs (id, status, attempt, both bots with their
    names, the version each seat played, the rules), in one statement: not the games, hands
    and result of :func:`match_detail`, which a stream never shows and which hundreds of
    clients joining at once would each read. :class:`~arena.errors.NotFoundError` if there is
    no such match."""
    with db.session() as session:
        row = session.execute(_STREAM_HEAD.where(MatchRow.id == match_id)).first()
    if row is None:
        raise NotFoundError("match", match_id)
    (mid, status, attempt, rules, bot_a, bot_b, name_a, name_b,
     va, va_number, va_label, vb, vb_number, vb_label) = row  # fmt: skip
    return {
        "id": mid,
        "status": status.value,
        "attempt": attempt,
        "bots": {"a": {"id": bot_a, "name": name_a}, "b": {"id": bot_b, "name": name_b}},
        "versions": {  # as seat_versions: None when the version row is not found
            "a": None if va_number is None else version_ref(va, va_number, va_label),
            "b": None if vb_number is None else version_ref(vb, vb_number, vb_label),
        },
        "rules": rules,
    }


def match_state(db: Database, match_id: int) -> dict[str, Any]:
    """A match's id, status, tournament and seed, in one cheap query (all the embargo needs;
    :class:`~arena.errors.NotFoundError` if there is no such match)."""
    with db.session() as session:
        row = session.execute(
            select(MatchRow.id, MatchRow.status, MatchRow.tournament_id, MatchRow.seed).where(
                MatchRow.id == match_id
            )
        ).first()
    if row is None:
        raise NotFoundError("match", match_id)
    return {
        "id": row.id,
        "status": row.status.value,
        "tournament_id": row.tournament_id,
        "seed": row.seed,
    }


def seed_twin_in(db: Database, match: dict[str, Any], statuses: Collection[MatchStatus]) -> bool:
    """Whether another match of ``match``'s tournament (of none, for a match of none: a ladder
    pair's other leg), on the same seed (a duplicate twin), has one of ``statuses``
    (``match``: a :func:`match_state` or :func:`match_detail` dict)."""
    with db.session() as session:
        found = session.scalar(
            select(
                exists().where(
                    MatchRow.tournament_id == match["tournament_id"],
                    MatchRow.seed == match["seed"],
                    MatchRow.id != match["id"],
                    MatchRow.status.in_(statuses),
                )
            )
        )
    return bool(found)
