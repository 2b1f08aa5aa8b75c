"""Bots: the leaderboard, the unrated, lists, one bot's detail and rating history, and whose
owner token a token is. Every summary names the bot's current version (``version``: id,
number and label; :mod:`arena.reading.queries.bot_versions` has all of them).

A bot is *rated* once it has a rated, decided match (:data:`_RATED`); the leaderboard ranks the
rated bots only (:data:`_RANKING`), and :func:`unrated_bots` lists the others apart. Lists read
the columns a summary shows, never whole rows.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from sqlalchemy import (
    Integer,
    Select,
    bindparam,
    case,
    exists,
    func,
    literal,
    or_,
    select,
    union_all,
)
from sqlalchemy.orm import Session

from arena.db.models import (
    BotRow,
    BotStatsRow,
    BotVersionRow,
    RatingFitRow,
    RatingHistoryRow,
    VersionRatingFitRow,
)
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.measures.stats import percentile
from arena.reading.queries._rows import iso, names_by_id
from arena.states import BotStatus

__all__ = [
    "bot_detail",
    "bot_names",
    "fit_summary",
    "leaderboard",
    "list_bots",
    "rating_history",
    "token_owner",
    "unrated_bots",
    "version_ref",
]


def _rate(part: int, whole: int) -> float | None:
    return None if not whole else round(part / whole, 4)


def fit_summary(fit: RatingFitRow | VersionRatingFitRow | None) -> dict[str, Any] | None:
    """A stored whole-history fit (a bot's or a version's) as the API shows it."""
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


def _stats(s: BotStatsRow | None) -> dict[str, Any]:
    if s is None:
        s = BotStatsRow(
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


def version_ref(
    version_id: int | None, number: int | None, label: str | None
) -> dict[str, Any] | None:
    """A version as summaries name it: ``{"id", "number", "label"}``, or None (no version)."""
    if version_id is None:
        return None
    return {"id": version_id, "number": number, "label": label}


def _bot_summary(
    bot: BotRow,
    fit: RatingFitRow | None,
    stats: BotStatsRow | None,
    version: BotVersionRow | None,
) -> dict[str, Any]:
    return {
        "id": bot.id,
        "name": bot.name,
        "status": bot.status.value,
        "elo": round(bot.elo, 1),
        "version": None
        if version is None
        else version_ref(version.id, version.number, version.label),
        "rating": fit_summary(fit),
        "record": {
            "matches": stats.matches if stats else 0,
            "wins": stats.wins if stats else 0,
            "losses": stats.losses if stats else 0,
        },
    }


def _bots_query() -> Select[BotRow, RatingFitRow, BotStatsRow, BotVersionRow]:
    """Bots with their fitted rating, statistics and current version (any may be missing:
    outer joins)."""
    return (
        select(BotRow, RatingFitRow, BotStatsRow, BotVersionRow)
        .outerjoin(RatingFitRow, RatingFitRow.bot_id == BotRow.id)
        .outerjoin(BotStatsRow, BotStatsRow.bot_id == BotRow.id)
        .outerjoin(BotVersionRow, BotVersionRow.id == BotRow.current_version_id)
    )


#: What a bot's summary shows, as columns: lists read these, never whole rows (a bot's
#: statistics row carries a latency histogram that would be decoded for nothing).
_SUMMARY_COLUMNS = (
    BotRow.id,
    BotRow.name,
    BotRow.status,
    BotRow.elo,
    RatingFitRow.bot_id.label("fit_bot_id"),
    RatingFitRow.rating,
    RatingFitRow.ci_low,
    RatingFitRow.ci_high,
    RatingFitRow.stderr,
    RatingFitRow.matches.label("fit_matches"),
    RatingFitRow.provisional,
    BotStatsRow.matches,
    BotStatsRow.wins,
    BotStatsRow.losses,
    BotVersionRow.id.label("version_id"),
    BotVersionRow.number.label("version_number"),
    BotVersionRow.label.label("version_label"),
)
_SUMMARIES = (
    select(*_SUMMARY_COLUMNS)
    .outerjoin(RatingFitRow, RatingFitRow.bot_id == BotRow.id)
    .outerjoin(BotStatsRow, BotStatsRow.bot_id == BotRow.id)
    .outerjoin(BotVersionRow, BotVersionRow.id == BotRow.current_version_id)
)


def _summary_row(row: Any) -> dict[str, Any]:
    """:func:`_bot_summary` of a :data:`_SUMMARIES` row (the same dict)."""
    return {
        "id": row.id,
        "name": row.name,
        "status": row.status.value,
        "elo": round(row.elo, 1),
        "version": version_ref(row.version_id, row.version_number, row.version_label),
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
    func.coalesce(RatingFitRow.matches, 0) > 0,
    exists().where(RatingHistoryRow.bot_id == BotRow.id).correlate(BotRow),
)
#: The leaderboard's order, documented in api_spec/openapi.yaml (``getLeaderboard``): rating
#: (the fit's; live Elo while not fitted yet) descending, then the fit's rated matches
#: descending, then bot id ascending, so equal ratings always come out in the same order.
_RANKING = (
    func.coalesce(RatingFitRow.rating, BotRow.elo).desc(),
    func.coalesce(RatingFitRow.matches, 0).desc(),
    BotRow.id,
)


def _leaderboard_query(include_inactive: bool, rated: bool) -> Select[*tuple[Any, ...]]:
    # A suspended bot keeps its place (it is down for now, not retired): only inactive ones go.
    kept = () if include_inactive else (BotRow.status != BotStatus.INACTIVE,)
    # Rank the bots on their fits alone, then read the rest of the summaries (statistics,
    # current version) for the ``limit`` bots of the page only: joining them for every bot
    # before ranking cost more than the ranking itself.
    page = _rated_page(kept) if rated else _unrated_page(kept)
    order = _RANKING if rated else (BotRow.id,)
    return _SUMMARIES.join(page, page.c.id == BotRow.id).order_by(*order)


def _unrated_page(kept: tuple[Any, ...]) -> Any:
    chosen = select(BotRow.id).outerjoin(RatingFitRow, RatingFitRow.bot_id == BotRow.id)
    chosen = chosen.where(~_RATED, *kept).order_by(BotRow.id)
    return chosen.limit(bindparam("limit", type_=Integer)).subquery()


def _rated_page(kept: tuple[Any, ...]) -> Any:
    """The ids of the first ``limit`` rated bots in :data:`_RANKING` order, by index.

    The fitted bots come from walking ``ix_rating_fits_rank`` from the top; a bot rated
    otherwise (Elo only, or a fit without matches) ranks by a value that must reach the
    ``limit``-th fitted rating to make the page (it has no rated matches to win a tie), so
    only those above it are looked at (``ix_bots_elo``), not every bot.
    """
    limit = bindparam("limit", type_=Integer)
    fitted = (
        select(
            RatingFitRow.bot_id.label("id"),
            RatingFitRow.rating.label("value"),
            RatingFitRow.matches.label("rated"),
        )
        .join(BotRow, BotRow.id == RatingFitRow.bot_id)
        .where(RatingFitRow.matches > 0, *kept)
        .order_by(RatingFitRow.rating.desc(), RatingFitRow.matches.desc(), RatingFitRow.bot_id)
        .limit(limit)
        .cte("fitted")
    )
    # The lowest value still on the page, or none while fewer than ``limit`` bots are fitted.
    lowest = select(
        case((func.count() < limit, literal(-1e308)), else_=func.min(fitted.c.value))
    ).scalar_subquery()
    history = exists().where(RatingHistoryRow.bot_id == BotRow.id).correlate(BotRow)
    fit_without_matches = select(
        RatingFitRow.bot_id, RatingFitRow.rating, literal(0, type_=Integer)
    ).join(BotRow, BotRow.id == RatingFitRow.bot_id)
    fit_without_matches = fit_without_matches.where(
        RatingFitRow.matches <= 0, RatingFitRow.rating >= lowest, history, *kept
    )
    elo_only = select(BotRow.id, BotRow.elo, literal(0, type_=Integer)).where(
        BotRow.elo >= lowest,
        ~exists().where(RatingFitRow.bot_id == BotRow.id).correlate(BotRow),
        history,
        *kept,
    )
    candidates = union_all(select(fitted), fit_without_matches, elo_only).subquery()
    return (
        select(candidates.c.id)
        .order_by(candidates.c.value.desc(), candidates.c.rated.desc(), candidates.c.id)
        .limit(limit)
        .subquery()
    )


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
        query = query.where(BotRow.status == BotStatus(status))
    if owner is not None:
        query = query.where(BotRow.owner == owner)
    orders = {
        "rating": (_RATED.desc(), *_RANKING),
        "elo": (BotRow.elo.desc(), BotRow.id),
        "name": (BotRow.name, BotRow.id),
        "id": (BotRow.id,),
    }
    if sort not in orders:
        raise ValueError(f"sort must be one of {', '.join(orders)}")
    with db.session() as session:
        rows = session.execute(query.order_by(*orders[sort]).limit(limit).offset(offset)).all()
    return [_summary_row(row) for row in rows]


def bot_detail(db: Database, bot_id: int, *, history: int = 50) -> dict[str, Any]:
    """One bot: identity, ratings, statistics and recent rating history (no secrets).

    :class:`~arena.errors.NotFoundError` if there is no such bot.
    """
    with db.session() as session:
        row = session.execute(_bots_query().where(BotRow.id == bot_id)).first()
        if row is None:
            raise NotFoundError("bot", bot_id)
        bot, fit, stats, version = row
        return {
            **_bot_summary(bot, fit, stats, version),
            "owner": bot.owner,
            "url": bot.url,
            "protocol_version": bot.protocol_version,
            "created_at": iso(bot.created_at),
            "updated_at": iso(bot.updated_at),
            "statistics": _stats(stats),
            "rating_history": _history(session, bot_id, history),
        }


def _history(session: Session, bot_id: int, limit: int) -> list[dict[str, Any]]:
    rows = session.scalars(
        select(RatingHistoryRow)
        .where(RatingHistoryRow.bot_id == bot_id)
        .order_by(RatingHistoryRow.id.desc())
        .limit(limit)
    ).all()
    return [
        {
            "match_id": r.match_id,
            "version_id": r.version_id,
            "before": round(r.before, 2),
            "after": round(r.after, 2),
            "at": iso(r.recorded_at),
        }
        for r in rows
    ]


def rating_history(db: Database, bot_id: int, *, limit: int = 200) -> list[dict[str, Any]]:
    """A bot's live Elo history, newest first (:class:`~arena.errors.NotFoundError` if there is
    no such bot)."""
    with db.session() as session:
        if session.get(BotRow, bot_id) is None:
            raise NotFoundError("bot", bot_id)
        return _history(session, bot_id, limit)


def bot_names(db: Database, ids: Iterable[int]) -> dict[int, str]:
    """The names of the bots ``ids`` (a bot that does not exist is left out)."""
    with db.session() as session:
        return names_by_id(session, ids)


def token_owner(db: Database, token_hash: str) -> int | None:
    """The bot whose owner token has the SHA-256 ``token_hash``, or None when no bot's has.

    Not a :class:`~arena.errors.NotFoundError`: a token that names no bot is not a resource
    that does not exist but a caller who is not who they claim (a 401, never a 404).
    """
    with db.session() as session:
        bot_id = session.scalar(select(BotRow.id).where(BotRow.token_hash == token_hash))
    return bot_id
