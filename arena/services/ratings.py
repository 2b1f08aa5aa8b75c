"""The whole-history rating fit, written to ``rating_fits`` and ``version_rating_fits`` (a
rewrite, never an increment), and the ``rating.changed`` events it gives.

Refits run from any worker at any time (after a tournament round closes, by the sweeper, at
the end of ``tournament start``), so two may overlap. Each stored fit is stamped with the number
of rated results it covers, kept in the one row of ``rating_fit_state``: the fit is written only
by a conditional update of that row that succeeds while the stored fit covers no more results
than the new one. The update also takes the row's write lock, so overlapping writes are
serialised (never a unique violation on ``rating_fits``), and a slow refit over older results
finds a newer fit in place and writes nothing (never a stale leaderboard). Results only grow
(a match is recorded once), so more results means a newer fit.

Bots without a rated, decided match are not fitted at all: they would add nothing but the
prior's pull to everyone's interval, and the leaderboard lists them apart as unrated.

**Versions.** The same fit (:func:`arena.measures.ratings.fit_ratings`) is made a second time
with each bot version a player of its own, over the matches that recorded both sides' versions
(matches recorded before versions existed count for their bots, not for any version), into
``version_rating_fits``.

**Events.** In the transaction that writes the fit, each bot whose fitted rating or either end
of its interval moved by at least :data:`RATING_CHANGE_POINTS` since the fit it replaces (or
that is fitted for the first time, or whose rating stopped being provisional) gets a
``rating.changed`` event (:class:`arena.events.EventType`).
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import Any, Final

from sqlalchemy import delete, insert, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Session

from arena.db.models import (
    BotRow,
    MatchRow,
    RatingFitRow,
    RatingFitStateRow,
    VersionRatingFitRow,
    utcnow,
)
from arena.db.session import Database
from arena.events import EventType
from arena.measures.ratings import FittedRating, fit_ratings
from arena.services.events import emit_per_bot
from arena.states import MatchStatus

__all__ = ["RATING_CHANGE_POINTS", "has_changed", "refit_ratings"]

_STATE_ID = 1

#: A refit reports a bot's rating as changed when its rating, or either end of its interval,
#: moved by at least this many points. Ratings are shown in whole points, so a smaller move is
#: invisible; and every refit nudges every connected bot by fractions of a point (the fit is
#: anchored at the field's mean), so without a threshold each refit would tell every owner.
RATING_CHANGE_POINTS: Final = 1.0


def refit_ratings(db: Database, *, min_matches: int) -> int:
    """Fit the rating of every bot, and of every bot version, with rated, decided matches over
    all of them, and report the bots whose rating changed (see the module docstring).

    Returns the number of bots fitted and stored, or 0 if a fit over more results was stored
    meanwhile by another refit (this one is then older and is dropped).
    """
    with db.session() as session:
        rows = session.execute(
            select(
                MatchRow.bot_a_id,
                MatchRow.bot_b_id,
                MatchRow.version_a_id,
                MatchRow.version_b_id,
                MatchRow.winner,
            ).where(
                MatchRow.status == MatchStatus.FINISHED,
                MatchRow.rated.is_(True),
                MatchRow.winner.is_not(None),
            )
        ).all()
    results = [(a, b, 1.0 if winner == "a" else 0.0) for a, b, _, _, winner in rows]
    versioned = [
        (va, vb, 1.0 if winner == "a" else 0.0)
        for _, _, va, vb, winner in rows
        if va is not None and vb is not None
    ]
    version_bots = {v: bot for a, b, va, vb, _ in rows for v, bot in ((va, a), (vb, b))}
    fitted = fit_ratings(results, min_matches=min_matches) if results else {}
    fitted_versions = fit_ratings(versioned, min_matches=min_matches) if versioned else {}
    now = utcnow()
    with db.session() as session:
        if not _take_newer_fit(session, len(results), now):
            return 0
        previous = _stored_fits(session)
        # Core inserts of plain rows (one batched statement each): the ORM's unit of work
        # costs seconds for tens of thousands of fits and gives nothing here. In id order, so
        # their foreign-key checks lock the bots in the order a recording locks them.
        session.execute(delete(RatingFitRow))
        if fitted:
            session.execute(
                insert(RatingFitRow),
                [
                    {"bot_id": int(bot_id), **_columns(fit, now)}
                    for bot_id, fit in sorted(fitted.items())
                ],
            )
        # A bot fitted on rated matches is rated (recording sets ``rated_at`` with its first
        # rating-history row; this covers results that have none, e.g. loaded directly).
        session.execute(
            update(BotRow)
            .where(
                BotRow.rated_at.is_(None),
                BotRow.id.in_(select(RatingFitRow.bot_id).where(RatingFitRow.matches > 0)),
            )
            .values(rated_at=now)
        )
        session.execute(delete(VersionRatingFitRow))
        if fitted_versions:
            session.execute(
                insert(VersionRatingFitRow),
                [
                    {
                        "version_id": int(version_id),
                        "bot_id": int(version_bots[version_id]),
                        **_columns(fit, now),
                    }
                    for version_id, fit in sorted(fitted_versions.items())
                ],
            )
        _report_changes(session, previous, fitted)
    return len(fitted)


def _columns(fit: FittedRating[int], now: datetime) -> dict[str, Any]:
    """The columns a stored fit (a bot's or a version's) takes from ``fit``."""
    return {
        "rating": fit.rating,
        "ci_low": fit.ci_low,
        "ci_high": fit.ci_high,
        "stderr": fit.stderr,
        "matches": fit.matches,
        "provisional": fit.is_provisional,
        "fitted_at": now,
    }


def _stored_fits(session: Session) -> dict[int, FittedRating[int]]:
    """The bots' fits stored now (the ones a refit replaces), by bot id."""
    rows = session.execute(
        select(
            RatingFitRow.bot_id,
            RatingFitRow.rating,
            RatingFitRow.ci_low,
            RatingFitRow.ci_high,
            RatingFitRow.stderr,
            RatingFitRow.matches,
            RatingFitRow.provisional,
        )
    )
    return {row[0]: FittedRating(*row) for row in rows}


def has_changed(previous: FittedRating[int] | None, fit: FittedRating[int]) -> bool:
    """Whether ``fit`` is news to the bot's owner against the fit it replaces (None: the bot
    was not fitted before): see :data:`RATING_CHANGE_POINTS`.

    >>> old = FittedRating(1, 1500.0, 1400.0, 1600.0, 51.0, 29, False)
    >>> has_changed(old, FittedRating(1, 1500.4, 1399.5, 1600.9, 51.0, 30, False))
    False
    >>> has_changed(old, FittedRating(1, 1500.4, 1399.0, 1600.9, 51.0, 30, False))
    True
    >>> has_changed(None, old)
    True
    """
    if previous is None or previous.is_provisional != fit.is_provisional:
        return True
    moves = (
        fit.rating - previous.rating,
        fit.ci_low - previous.ci_low,
        fit.ci_high - previous.ci_high,
    )
    return any(abs(move) >= RATING_CHANGE_POINTS for move in moves)


def _report_changes(
    session: Session,
    previous: Mapping[int, FittedRating[int]],
    fitted: Mapping[int, FittedRating[int]],
) -> None:
    """A ``rating.changed`` event for each bot whose fit :func:`has_changed`."""
    changed = {
        bot_id: fit for bot_id, fit in fitted.items() if has_changed(previous.get(bot_id), fit)
    }
    if not changed:
        return
    names = dict.fromkeys(changed, "")
    ids = sorted(changed)
    for start in range(0, len(ids), 1000):
        rows = session.execute(
            select(BotRow.id, BotRow.name).where(BotRow.id.in_(ids[start : start + 1000]))
        )
        names.update({bot_id: name for bot_id, name in rows})  # noqa: C416 - no mapping
    data: dict[int, dict[str, Any]] = {}
    for bot_id in ids:
        fit, before = changed[bot_id], previous.get(bot_id)
        data[bot_id] = {
            "bot": {"id": bot_id, "name": names[bot_id]},
            "rating": round(fit.rating, 1),
            "ci_low": round(fit.ci_low, 1),
            "ci_high": round(fit.ci_high, 1),
            "previous": None if before is None else round(before.rating, 1),
            "matches": fit.matches,
            "provisional": fit.is_provisional,
        }
    emit_per_bot(session, EventType.RATING_CHANGED, data)


def _take_newer_fit(session: Session, results: int, now: datetime) -> bool:
    """Stamp the stored fit with ``results`` if it covers no more; True if stamped.

    The conditional update locks the state row until the transaction ends. Without a row yet
    (a fresh database) it is inserted, once: a concurrent insert waits on the key and does
    nothing, and then the update is tried again against the row the other one committed.
    """
    move = (
        update(RatingFitStateRow)
        .where(RatingFitStateRow.id == _STATE_ID, RatingFitStateRow.results <= results)
        .values(results=results, fitted_at=now)
        .returning(RatingFitStateRow.id)
    )
    if session.execute(move).first() is not None:
        return True
    dialect = postgresql if session.get_bind().dialect.name == "postgresql" else sqlite
    inserted = session.execute(
        dialect.insert(RatingFitStateRow)
        .values(id=_STATE_ID, results=results, fitted_at=now)
        .on_conflict_do_nothing(index_elements=["id"])
        .returning(RatingFitStateRow.id)
    )
    if inserted.first() is not None:
        return True
    return session.execute(move).first() is not None
