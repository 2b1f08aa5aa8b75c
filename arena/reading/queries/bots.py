"""Bots: the leaderboard, the unrated, lists, one bot's detail and rating history, and whose
owner token a token is. Every summary names the bot's current version (``version``: id,
number and label; :mod:`arena.reading.queries.bot_versions` has all of them).

A bot is *rated* once it has a rated, decided match (:data:`_RATED`); the leaderboard ranks the
rated bots only (:data:`_RANKING`), and :func:`ratings_board` lists the others apart. Lists read
the columns a summary shows, never whole rows.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Any

from sqlalchemy import (
    Connection,
    Float,
    Integer,
    Select,
    any_,
    bindparam,
    exists,
    func,
    select,
    union_all,
)
from sqlalchemy.dialects.postgresql import ARRAY
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
    "list_bots",
    "rating_history",
    "ratings_board",
    "token_owner",
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
    """:func:`_bot_summary` of a :data:`_SUMMARIES` row (the same dict).

    The row is unpacked in :data:`_SUMMARY_COLUMNS` order: reading a Row's columns by name
    costs a microsecond each, most of the leaderboard's time after its statements.
    """
    (
        bot_id,
        name,
        status,
        elo,
        fit_bot_id,
        rating,
        ci_low,
        ci_high,
        stderr,
        fit_matches,
        provisional,
        matches,
        wins,
        losses,
        version_id,
        version_number,
        version_label,
    ) = row
    return {
        "id": bot_id,
        "name": name,
        "status": status.value,
        "elo": round(elo, 1),
        "version": version_ref(version_id, version_number, version_label),
        "rating": None
        if fit_bot_id is None
        else {
            "rating": round(rating, 1),
            "ci_low": round(ci_low, 1),
            "ci_high": round(ci_high, 1),
            "stderr": round(stderr, 1),
            "matches": fit_matches,
            "provisional": provisional,
        },
        "record": {"matches": matches or 0, "wins": wins or 0, "losses": losses or 0},
    }


#: A bot is rated once it has a rated, decided match (``rated_at`` is set when the first is
#: recorded): it is in the fit, or its live Elo has moved and the next refit will fit it.
#: Unrated bots are never ranked among them.
_RATED = BotRow.rated_at.is_not(None)
#: The leaderboard's order, documented in api_spec/openapi.yaml (``getLeaderboard``): rating
#: (the fit's; live Elo while not fitted yet) descending, then the fit's rated matches
#: descending, then bot id ascending, so equal ratings always come out in the same order.
_RANKING = (
    func.coalesce(RatingFitRow.rating, BotRow.elo).desc(),
    func.coalesce(RatingFitRow.matches, 0).desc(),
    BotRow.id,
)


#: The bots a leaderboard page keeps: a suspended bot keeps its place (it is down for now,
#: not retired); only inactive ones go, unless asked for.
_KEPT = {False: (BotRow.status != BotStatus.INACTIVE,), True: ()}


def _page_statements(include_inactive: bool) -> dict[str, Select[Any]]:
    """The statements of one leaderboard read, each walking one index from its top.

    * ``fitted``: the summaries of the first ``limit`` bots fitted on rated matches
      (``ix_rating_fits_rank``);
    * ``others``: the bots rated otherwise (by live Elo with no fit yet, or a fit without
      matches), which rank by a value that must reach the ``lowest`` rating of the fitted
      page to make it (they have no rated matches to win a tie): only those above it are
      read (``ix_bots_elo``), not every bot; usually none;
    * ``unrated``: the summaries of the first ``limit`` bots not rated yet
      (``ix_bots_unrated``);
    * ``summaries`` (``summaries_postgresql``): the summaries of given ids, for the others
      that made the page.

    Separate statements with their values bound, not one: given the page's lowest rating as
    a value, the planners walk the indexes; as a subquery, PostgreSQL guessed a third of the
    bots and hashed every fit.
    """
    kept = _KEPT[include_inactive]
    limit = bindparam("limit", type_=Integer)
    lowest = bindparam("lowest", type_=Float)
    fitted = (
        _SUMMARIES.where(RatingFitRow.matches > 0, *kept)
        .order_by(RatingFitRow.rating.desc(), RatingFitRow.matches.desc(), RatingFitRow.bot_id)
        .limit(limit)
    )
    fit_without_matches = (
        select(RatingFitRow.bot_id.label("id"), RatingFitRow.rating.label("value"))
        .join(BotRow, BotRow.id == RatingFitRow.bot_id)
        .where(RatingFitRow.matches <= 0, RatingFitRow.rating >= lowest, _RATED, *kept)
        .order_by(RatingFitRow.rating.desc(), RatingFitRow.bot_id)
        .limit(limit)
    )
    elo_only = (
        select(BotRow.id, BotRow.elo.label("value"))
        .where(
            BotRow.elo >= lowest,
            _RATED,
            ~exists().where(RatingFitRow.bot_id == BotRow.id).correlate(BotRow),
            *kept,
        )
        .order_by(BotRow.elo.desc(), BotRow.id)
        .limit(limit)
    )
    others = union_all(fit_without_matches.subquery().select(), elo_only.subquery().select())
    # Ordered as ``ix_bots_unrated`` (rated_at, id) is, which is by id among the null
    # rated_at: the planners then read the page from the index instead of walking every bot.
    unrated = (
        _SUMMARIES.where(BotRow.rated_at.is_(None), *kept)
        .order_by(BotRow.rated_at, BotRow.id)
        .limit(limit)
    )
    # The ids as one array on PostgreSQL (a list of bound values is rendered anew on every
    # call), as a list elsewhere.
    summaries = _SUMMARIES.where(BotRow.id.in_(bindparam("ids", expanding=True)))
    summaries_pg = _SUMMARIES.where(BotRow.id == any_(bindparam("ids", type_=ARRAY(Integer))))
    return {
        "fitted": fitted,
        "others": select(others.subquery()),
        "unrated": unrated,
        "summaries": summaries,
        "summaries_postgresql": summaries_pg,
    }


#: Built once (the values are bound): the leaderboard is the most read page of all.
_PAGE = {inactive: _page_statements(inactive) for inactive in (False, True)}

#: Where a :data:`_SUMMARIES` row holds the ranking's values: id, rating and rated matches.
_ID, _RATING, _FIT_MATCHES = 0, 5, 9


def _ranked(conn: Connection, limit: int, include_inactive: bool) -> Sequence[Any]:
    """The summary rows of the first ``limit`` rated bots, in :data:`_RANKING` order."""
    statements = _PAGE[include_inactive]
    fitted = conn.execute(statements["fitted"], {"limit": limit}).all()
    # The lowest value still on the page, or none while fewer than ``limit`` bots are fitted.
    lowest = fitted[-1][_RATING] if len(fitted) == limit else -1e308
    others = conn.execute(statements["others"], {"limit": limit, "lowest": lowest}).all()
    if not others:
        return fitted
    # (value, rated matches, id): the ranking's key, best first once sorted.
    page = [(row[_RATING], row[_FIT_MATCHES], row[_ID]) for row in fitted]
    page += [(value, 0, bot_id) for bot_id, value in others]
    page.sort(key=lambda key: (-key[0], -key[1], key[2]))
    ids = [bot_id for _, _, bot_id in page[:limit]]
    rows = {row[_ID]: row for row in fitted}
    missing = [bot_id for bot_id in ids if bot_id not in rows]
    name = "summaries_postgresql" if conn.dialect.name == "postgresql" else "summaries"
    rows.update((row[_ID], row) for row in conn.execute(statements[name], {"ids": missing}))
    return [rows[bot_id] for bot_id in ids]


def ratings_board(
    db: Database, *, limit: int = 100, include_inactive: bool = False
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The leaderboard (rated bots best first, see :data:`_RANKING`, each with its rank,
    interval and record) and, apart and unranked, the bots without a rated match yet by id:
    each up to ``limit``, read in one session; what ``GET /api/v1/ratings`` and the
    leaderboard page show."""
    with db.session() as session:
        # Core statements on the session's connection: no ORM entities are loaded.
        conn = session.connection()
        if conn.dialect.name == "postgresql":
            # The page's data is cached and each statement joins a hundred rows by key; at
            # the default cost of a random read (4, for disks that seek) PostgreSQL hashed
            # all of bot_stats, bot_versions and rating_fits (10,000 rows each) to join 200
            # summaries: 6 ms instead of 2 ms by index. For this transaction only.
            conn.exec_driver_sql("SET LOCAL random_page_cost = 1.1")
        ranked = _ranked(conn, limit, include_inactive)
        unrated = conn.execute(_PAGE[include_inactive]["unrated"], {"limit": limit}).all()
    board = [{"rank": rank, **_summary_row(row)} for rank, row in enumerate(ranked, 1)]
    return board, [_summary_row(row) for row in unrated]


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
