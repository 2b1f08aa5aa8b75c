"""Read-side queries: what the API and the pages show, as JSON-ready dicts.

Nothing here writes. Every list is ordered by a unique key and paginated by keyset (``before``
an id), so pages are stable while matches are added and no query's cost grows with the number
of stored matches beyond an index lookup.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import Integer, Select, bindparam, exists, func, or_, select
from sqlalchemy.orm import Session, aliased

from arena.db.models import (
    Bot,
    BotStats,
    BotStatus,
    GameRow,
    HandRow,
    Match,
    MatchResult,
    MatchStatus,
    RatingFit,
    RatingHistory,
    Tournament,
)
from arena.db.session import Database
from arena.replay import load_record
from arena.services.tournaments import load_plan
from arena.stats import percentile

__all__ = [
    "bot_detail",
    "leaderboard",
    "list_bots",
    "list_matches",
    "match_detail",
    "match_replay",
    "rating_history",
    "tournament_bracket",
    "tournament_detail",
    "tournament_standings",
    "unrated_bots",
]


def _iso(value: datetime | None) -> str | None:
    return None if value is None else value.isoformat()


def _rate(part: int, whole: int) -> float | None:
    return None if not whole else round(part / whole, 4)


def _fit(fit: RatingFit | None) -> dict[str, Any] | None:
    if fit is None:
        return None
    return {
        "rating": round(fit.rating, 1),
        "ci_low": round(fit.ci_low, 1),
        "ci_high": round(fit.ci_high, 1),
        "stderr": round(fit.stderr, 1),
        "matches": fit.matches,
        "provisional": fit.provisional,
    }


def _stats(s: BotStats | None) -> dict[str, Any]:
    if s is None:
        s = BotStats(
            matches=0, wins=0, losses=0, games_won=0, games_lost=0, hands_played=0, hands_won=0,
            knocks=0, gins=0, big_gins=0, undercut=0, undercuts=0, misknocks=0,
            deadwood_at_knock=0, faults=0, forfeits=0, calls=0, latency_histogram=[],
        )  # fmt: skip
    hands = s.hands_played
    finishes = s.knocks + s.gins + s.big_gins
    hist = s.latency_histogram or []
    p50, p99 = percentile(hist, 0.5), percentile(hist, 0.99)
    return {
        "matches": s.matches,
        "wins": s.wins,
        "losses": s.losses,
        "games_won": s.games_won,
        "games_lost": s.games_lost,
        "hands_played": hands,
        "hands_won": s.hands_won,
        "knocks": s.knocks,
        "gins": s.gins,
        "big_gins": s.big_gins,
        "undercut": s.undercut,
        "undercuts": s.undercuts,
        "misknocks": s.misknocks,
        "knock_rate": _rate(s.knocks, hands),
        "gin_rate": _rate(s.gins, hands),
        "big_gin_rate": _rate(s.big_gins, hands),
        "undercut_rate": _rate(s.undercut, s.knocks),
        "misknock_rate": _rate(s.misknocks, hands),
        "average_deadwood_at_knock": None
        if not s.knocks
        else round(s.deadwood_at_knock / s.knocks, 2),
        "finishes": finishes,
        "faults": s.faults,
        "forfeits": s.forfeits,
        "calls": s.calls,
        "latency_ms": {
            "p50": None if p50 is None else round(p50, 3),
            "p99": None if p99 is None else round(p99, 3),
        },
    }


def _bot_summary(bot: Bot, fit: RatingFit | None, stats: BotStats | None) -> dict[str, Any]:
    return {
        "id": bot.id,
        "name": bot.name,
        "status": bot.status.value,
        "elo": round(bot.elo, 1),
        "rating": _fit(fit),
        "record": {
            "matches": stats.matches if stats else 0,
            "wins": stats.wins if stats else 0,
            "losses": stats.losses if stats else 0,
        },
    }


def _bots_query() -> Select[Bot, RatingFit, BotStats]:
    """Bots with their fitted rating and statistics (either may be missing: outer joins)."""
    return (
        select(Bot, RatingFit, BotStats)
        .outerjoin(RatingFit, RatingFit.bot_id == Bot.id)
        .outerjoin(BotStats, BotStats.bot_id == Bot.id)
    )


#: What a bot's summary shows, as columns: lists read these, never whole rows (a bot's
#: statistics row carries a latency histogram that would be decoded for nothing).
_SUMMARY_COLUMNS = (
    Bot.id,
    Bot.name,
    Bot.status,
    Bot.elo,
    RatingFit.bot_id.label("fit_bot_id"),
    RatingFit.rating,
    RatingFit.ci_low,
    RatingFit.ci_high,
    RatingFit.stderr,
    RatingFit.matches.label("fit_matches"),
    RatingFit.provisional,
    BotStats.matches,
    BotStats.wins,
    BotStats.losses,
)
_SUMMARIES = (
    select(*_SUMMARY_COLUMNS)
    .outerjoin(RatingFit, RatingFit.bot_id == Bot.id)
    .outerjoin(BotStats, BotStats.bot_id == Bot.id)
)


def _summary_row(row: Any) -> dict[str, Any]:
    """:func:`_bot_summary` of a :data:`_SUMMARIES` row (the same dict)."""
    return {
        "id": row.id,
        "name": row.name,
        "status": row.status.value,
        "elo": round(row.elo, 1),
        "rating": None
        if row.fit_bot_id is None
        else {
            "rating": round(row.rating, 1),
            "ci_low": round(row.ci_low, 1),
            "ci_high": round(row.ci_high, 1),
            "stderr": round(row.stderr, 1),
            "matches": row.fit_matches,
            "provisional": row.provisional,
        },
        "record": {
            "matches": row.matches or 0,
            "wins": row.wins or 0,
            "losses": row.losses or 0,
        },
    }


#: A bot is rated once it has a rated, decided match: it is in the fit (with matches), or its
#: live Elo has moved and the next refit will fit it. Unrated bots are never ranked among them.
_RATED = or_(
    func.coalesce(RatingFit.matches, 0) > 0,
    exists().where(RatingHistory.bot_id == Bot.id).correlate(Bot),
)
#: The leaderboard's order, documented in api_spec/openapi.yaml (``getLeaderboard``): rating
#: (the fit's; live Elo while not fitted yet) descending, then the fit's rated matches
#: descending, then bot id ascending, so equal ratings always come out in the same order.
_RANKING = (
    func.coalesce(RatingFit.rating, Bot.elo).desc(),
    func.coalesce(RatingFit.matches, 0).desc(),
    Bot.id,
)


def _leaderboard_query(include_inactive: bool, rated: bool) -> Select[*tuple[Any, ...]]:
    query = _SUMMARIES if include_inactive else _SUMMARIES.where(Bot.status == BotStatus.ACTIVE)
    if rated:
        query = query.where(_RATED).order_by(*_RANKING)
    else:
        query = query.where(~_RATED).order_by(Bot.id)
    return query.limit(bindparam("limit", type_=Integer))


#: Built once (the limit is bound): the leaderboard is the most read page of all.
_LEADERBOARD = {
    (inactive, rated): _leaderboard_query(inactive, rated)
    for inactive in (False, True)
    for rated in (False, True)
}


def leaderboard(
    db: Database, *, limit: int = 100, include_inactive: bool = False
) -> list[dict[str, Any]]:
    """Rated bots best first (see :data:`_RANKING`), each with its rank, interval and record.

    Bots without a rated match are not here: see :func:`unrated_bots`.
    """
    with db.session() as session:
        rows = session.execute(_LEADERBOARD[include_inactive, True], {"limit": limit}).all()
    return [{"rank": rank, **_summary_row(row)} for rank, row in enumerate(rows, start=1)]


def unrated_bots(
    db: Database, *, limit: int = 100, include_inactive: bool = False
) -> list[dict[str, Any]]:
    """Bots without a rated match yet, by id: listed apart from the leaderboard, unranked."""
    with db.session() as session:
        rows = session.execute(_LEADERBOARD[include_inactive, False], {"limit": limit}).all()
    return [_summary_row(row) for row in rows]


def list_bots(
    db: Database,
    *,
    status: str | None = None,
    owner: str | None = None,
    sort: str = "rating",
    limit: int = 50,
    offset: int = 0,
) -> list[dict[str, Any]]:
    """Bots filtered by status and owner, sorted by ``rating``, ``elo``, ``name`` or ``id``."""
    query = _SUMMARIES
    if status is not None:
        query = query.where(Bot.status == BotStatus(status))
    if owner is not None:
        query = query.where(Bot.owner == owner)
    orders = {
        "rating": (_RATED.desc(), *_RANKING),
        "elo": (Bot.elo.desc(), Bot.id),
        "name": (Bot.name, Bot.id),
        "id": (Bot.id,),
    }
    if sort not in orders:
        raise ValueError(f"sort must be one of {', '.join(orders)}")
    with db.session() as session:
        rows = session.execute(query.order_by(*orders[sort]).limit(limit).offset(offset)).all()
    return [_summary_row(row) for row in rows]


def bot_detail(db: Database, bot_id: int, *, history: int = 50) -> dict[str, Any] | None:
    """One bot: identity, ratings, statistics and recent rating history (no secrets)."""
    with db.session() as session:
        row = session.execute(_bots_query().where(Bot.id == bot_id)).first()
        if row is None:
            return None
        bot, fit, stats = row
        return {
            **_bot_summary(bot, fit, stats),
            "owner": bot.owner,
            "url": bot.url,
            "protocol_version": bot.protocol_version,
            "created_at": _iso(bot.created_at),
            "updated_at": _iso(bot.updated_at),
            "statistics": _stats(stats),
            "rating_history": _history(session, bot_id, history),
        }


def _history(session: Session, bot_id: int, limit: int) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(RatingHistory)
        .where(RatingHistory.bot_id == bot_id)
        .order_by(RatingHistory.id.desc())
        .limit(limit)
    ).all()
    return [
        {
            "match_id": r.match_id,
            "before": round(r.before, 2),
            "after": round(r.after, 2),
            "at": _iso(r.recorded_at),
        }
        for r in rows
    ]


def rating_history(db: Database, bot_id: int, *, limit: int = 200) -> list[dict[str, Any]] | None:
    """A bot's live Elo history, newest first (None if there is no such bot)."""
    with db.session() as session:
        if session.get(Bot, bot_id) is None:
            return None
        return _history(session, bot_id, limit)


def _names(session: Session, ids: Sequence[int]) -> dict[int, str]:
    if not ids:
        return {}
    rows = session.execute(select(Bot.id, Bot.name).where(Bot.id.in_(set(ids))))
    # Not dict(rows): a Result has keys(), so dict() would read it as a mapping.
    return {bot_id: name for bot_id, name in rows}  # noqa: C416


def _match_summary(m: Any, names: dict[int, str]) -> dict[str, Any]:
    """A match (a row, or a :data:`_MATCH_SUMMARIES` result) as the API shows it in lists."""
    return {
        "id": m.id,
        "status": m.status.value,
        "tournament_id": m.tournament_id,
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
        "created_at": _iso(m.created_at),
        "finished_at": _iso(m.finished_at),
    }


#: What a match's summary shows, as columns, with both bots' names (one query; a whole row
#: would also decode the rules' JSON and the lease and error columns for nothing).
_BOT_A, _BOT_B = aliased(Bot), aliased(Bot)
_MATCH_SUMMARIES = (
    select(
        Match.id,
        Match.status,
        Match.tournament_id,
        Match.match_key,
        Match.rated,
        Match.bot_a_id,
        Match.bot_b_id,
        Match.winner,
        Match.games_won_a,
        Match.games_won_b,
        Match.forfeit_seat,
        Match.forfeit_reason,
        Match.created_at,
        Match.finished_at,
        _BOT_A.name.label("name_a"),
        _BOT_B.name.label("name_b"),
    )
    .join(_BOT_A, _BOT_A.id == Match.bot_a_id)
    .join(_BOT_B, _BOT_B.id == Match.bot_b_id)
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
        query = query.where(Match.tournament_id == tournament_id)
    if bot_id is not None:
        query = query.where(or_(Match.bot_a_id == bot_id, Match.bot_b_id == bot_id))
    if status is not None:
        query = query.where(Match.status == MatchStatus(status))
    if since is not None:
        query = query.where(Match.created_at >= since)
    if until is not None:
        query = query.where(Match.created_at < until)
    if before is not None:
        query = query.where(Match.id < before)
    with db.session() as session:
        rows = session.execute(query.order_by(Match.id.desc()).limit(limit + 1)).all()
    more = len(rows) > limit
    rows = rows[:limit]
    page = [_match_summary(m, {m.bot_a_id: m.name_a, m.bot_b_id: m.name_b}) for m in rows]
    return page, (rows[-1].id if more and rows else None)


def match_detail(db: Database, match_id: int) -> dict[str, Any] | None:
    """One match: summary, rules, games, every hand's outcome, faults and timings."""
    with db.session() as session:
        m = session.get(Match, match_id)
        if m is None:
            return None
        names = _names(session, [m.bot_a_id, m.bot_b_id])
        result = session.get(MatchResult, match_id)
        games = session.scalars(
            select(GameRow).where(GameRow.match_id == match_id).order_by(GameRow.index)
        ).all()
        hands = session.scalars(
            select(HandRow)
            .where(HandRow.match_id == match_id)
            .order_by(HandRow.game_id, HandRow.index)
        ).all()
        by_game: dict[int, list[HandRow]] = {}
        for h in hands:
            by_game.setdefault(h.game_id, []).append(h)
        summary = result.summary if result else {}
        return {
            **_match_summary(m, names),
            "rules": m.rules,
            "seed": m.seed,
            "attempt": m.attempt,
            "error": m.error,
            "timings": {
                "started_at": _iso(m.started_at),
                "finished_at": _iso(m.finished_at),
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


def match_replay(db: Database, match_id: int) -> dict[str, Any]:
    """The full (omniscient) record of a finished match; LookupError if there is none."""
    return load_record(db, match_id)


def tournament_detail(db: Database, tournament_id: int) -> dict[str, Any] | None:
    """A tournament: format, options, rules, status, entries, match counts, champion."""
    try:
        t, plan = load_plan(db, tournament_id)
    except LookupError:
        return None
    with db.session() as session:
        rows = session.execute(
            select(Match.status, func.count())
            .where(Match.tournament_id == tournament_id)
            .group_by(Match.status)
        )
        counts = {status: n for status, n in rows}  # noqa: C416 - a Result is not a mapping
        names = _names(session, [int(p) for p in plan.participants])
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
        "created_at": _iso(t.created_at),
        "started_at": _iso(t.started_at),
        "finished_at": _iso(t.finished_at),
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


def tournament_bracket(db: Database, tournament_id: int) -> dict[str, Any] | None:
    """Sections, rounds and pairings (seeds, byes, winners advancing, match ids) to draw."""
    try:
        _, plan = load_plan(db, tournament_id)
    except LookupError:
        return None
    with db.session() as session:
        names = _names(session, [int(p) for p in plan.participants])
        match_ids = {
            key: match_id
            for key, match_id in session.execute(
                select(Match.match_key, Match.id).where(Match.tournament_id == tournament_id)
            )
            if key
        }
    return _with_names(plan.to_dict(), names, match_ids)


def tournament_standings(db: Database, tournament_id: int) -> list[dict[str, Any]] | None:
    """Standings now (ranks, scores, records, tie-breaks), with bot names."""
    try:
        _, plan = load_plan(db, tournament_id)
    except LookupError:
        return None
    with db.session() as session:
        names = _names(session, [int(p) for p in plan.participants])
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
    query = select(Tournament)
    if status is not None:
        query = query.where(Tournament.status == status)
    if before is not None:
        query = query.where(Tournament.id < before)
    with db.session() as session:
        rows = session.scalars(query.order_by(Tournament.id.desc()).limit(limit)).all()
        return [
            {
                "id": t.id,
                "name": t.name,
                "format": t.format,
                "status": t.status.value,
                "created_at": _iso(t.created_at),
            }
            for t in rows
        ]
