"""The leaderboard's index-backed ranking (arena/reading/queries/bots.py ``_rated_page``) ranks
exactly as the plain definition does: every rated bot (fitted with matches, or with a rating
history) by fitted rating, else live Elo, then rated matches, then id; on SQLite and PostgreSQL,
over random arenas with ties, fits without matches, Elo-only bots above and below the page's
last fitted rating, inactive bots and every page size. The unrated list (read from
``ix_bots_unrated`` by ``rated_at``) is every bot without a rating history, by id."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Any

import numpy as np
import pytest
from sqlalchemy import exists, func, insert, or_, select

from arena.db.models import BotRow, MatchRow, RatingFitRow, RatingHistoryRow
from arena.db.session import Database
from arena.reading.queries import bots as bot_queries
from arena.states import BotStatus

RATED_AT = datetime(2026, 1, 1, tzinfo=UTC)


def fill(db: Database, seed: int, bots: int = 40) -> None:
    rng = np.random.default_rng(seed)
    # Coarse values, so that ratings and Elo tie often.
    values = rng.choice(np.arange(1300.0, 1700.0, 25.0), bots)
    kind = rng.choice(["fitted", "fit_without_matches", "elo_only", "unrated"], bots)
    status = rng.choice(
        [BotStatus.ACTIVE, BotStatus.SUSPENDED, BotStatus.INACTIVE], bots, p=[0.7, 0.15, 0.15]
    )
    # A fit with matches rests on rated results, so its bot has a rating history; a fit
    # without matches may or may not (a bot whose rated matches were all void).
    with_history = {
        k
        for k in range(bots)
        if kind[k] in ("fitted", "elo_only")
        or (kind[k] == "fit_without_matches" and rng.random() < 0.5)
    }
    with db.session() as session:
        session.execute(
            insert(BotRow),
            [
                {
                    "id": k + 1,
                    "name": f"b{k + 1}",
                    "owner": "o",
                    "url": f"https://b.example/{k}",
                    "protocol_version": "1",
                    "token_hash": f"{k:064x}",
                    "secret": "whsec_x",
                    "status": status[k],
                    "elo": float(rng.choice(values)),
                    # What recording sets with the first rating-history row.
                    "rated_at": RATED_AT if k in with_history else None,
                }
                for k in range(bots)
            ],
        )
        session.execute(
            insert(MatchRow), [{"id": 1, "bot_a_id": 1, "bot_b_id": 2, "rules": {}, "seed": 0}]
        )
        fits = [k for k in range(bots) if kind[k] in ("fitted", "fit_without_matches")]
        if fits:
            session.execute(
                insert(RatingFitRow),
                [
                    {
                        "bot_id": k + 1,
                        "rating": float(values[k]),
                        "ci_low": 0.0,
                        "ci_high": 3000.0,
                        "stderr": 50.0,
                        "matches": int(rng.integers(1, 4)) if kind[k] == "fitted" else 0,
                        "provisional": False,
                    }
                    for k in fits
                ],
            )
        if with_history:
            session.execute(
                insert(RatingHistoryRow),
                [
                    {"bot_id": k + 1, "match_id": 1, "before": 1500.0, "after": 1500.0}
                    for k in with_history
                ],
            )


def plain_unrated(db: Database, *, include_inactive: bool) -> list[int]:
    """Every bot without a rating history, by id."""
    query = select(BotRow.id).where(
        ~exists().where(RatingHistoryRow.bot_id == BotRow.id).correlate(BotRow)
    )
    if not include_inactive:
        query = query.where(BotRow.status != BotStatus.INACTIVE)
    with db.session() as session:
        return list(session.scalars(query.order_by(BotRow.id)))


def plain_ranking(db: Database, *, include_inactive: bool) -> list[int]:
    """Every rated bot, ranked by the definition, with no shortcut."""
    rated = or_(
        func.coalesce(RatingFitRow.matches, 0) > 0,
        exists().where(RatingHistoryRow.bot_id == BotRow.id).correlate(BotRow),
    )
    query = (
        select(BotRow.id)
        .outerjoin(RatingFitRow, RatingFitRow.bot_id == BotRow.id)
        .where(rated)
        .order_by(
            func.coalesce(RatingFitRow.rating, BotRow.elo).desc(),
            func.coalesce(RatingFitRow.matches, 0).desc(),
            BotRow.id,
        )
    )
    if not include_inactive:
        query = query.where(BotRow.status != BotStatus.INACTIVE)
    with db.session() as session:
        return list(session.scalars(query))


def ids(rows: list[dict[str, Any]]) -> list[int]:
    return [row["id"] for row in rows]


@pytest.mark.parametrize("seed", range(12))
def test_the_leaderboard_ranks_as_the_plain_definition(db: Database, seed: int) -> None:
    fill(db, seed)
    for include_inactive in (False, True):
        expected = plain_ranking(db, include_inactive=include_inactive)
        for limit in (1, 3, 8, 20, 100):
            page, unrated = bot_queries.ratings_board(
                db, limit=limit, include_inactive=include_inactive
            )
            assert ids(page) == expected[:limit], (include_inactive, limit)
            assert [row["rank"] for row in page] == list(range(1, len(page) + 1))
            assert ids(unrated) == plain_unrated(db, include_inactive=include_inactive)[:limit]
