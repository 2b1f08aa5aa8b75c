"""Ratings per version (SQLite and PostgreSQL): the whole-history fit rates every bot version
as a player of its own, beside the bots' own fit, and a refit reports ``rating.changed`` for
the bots whose rating moved by at least a point, in the fit's transaction."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import select, update

from arena.db.models import (
    BotRow,
    EventRow,
    MatchRow,
    RatingFitRow,
    VersionRatingFitRow,
    WebhookDeliveryRow,
    WebhookEndpointRow,
)
from arena.db.session import Database
from arena.measures.ratings import FittedRating
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot, rotate_secret
from arena.services.matches import schedule_match
from arena.services.ratings import RATING_CHANGE_POINTS, has_changed, refit_ratings

SHORT = RuleSet(target=50, best_of=1)


def current_version(db: Database, bot_id: int) -> int:
    with db.session() as session:
        version = session.get_one(BotRow, bot_id).current_version_id
    assert version is not None
    return version


def finished(
    db: Database, a: int, b: int, winner: str, *, seed: int, versioned: bool = True
) -> int:
    """A rated match of ``a`` v ``b`` marked finished with ``winner``, recording the bots'
    current versions (or none, as a match recorded before versions existed)."""
    va, vb = (current_version(db, a), current_version(db, b)) if versioned else (None, None)
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=SHORT, seed=seed).id
        session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(status="finished", winner=winner, version_a_id=va, version_b_id=vb)
        )
    return match_id


def version_fits(db: Database) -> dict[int, VersionRatingFitRow]:
    with db.session() as session:
        return {f.version_id: f for f in session.scalars(select(VersionRatingFitRow))}


def rating_events(db: Database) -> list[dict[str, Any]]:
    with db.session() as session:
        rows = session.scalars(
            select(EventRow).where(EventRow.type == "rating.changed").order_by(EventRow.id)
        )
        return [e.data for e in rows]


def two_bots(db: Database) -> tuple[int, int]:
    return tuple(  # type: ignore[return-value]
        register_bot(db, name=name, owner="o", url="http://127.0.0.1:9").bot_id
        for name in ("ann", "bob")
    )


def test_the_fit_rates_each_version_as_a_player_of_its_own(db: Database) -> None:
    ann, bob = two_bots(db)
    old = current_version(db, ann)
    for seed in range(6):  # version 1 of ann loses every match
        finished(db, ann, bob, "b", seed=seed)
    rotate_secret(db, ann, window_hours=0)
    new = current_version(db, ann)
    for seed in range(6, 12):  # version 2 wins every match
        finished(db, ann, bob, "a", seed=seed)
    assert refit_ratings(db, min_matches=3) == 2
    fits = version_fits(db)
    bob_version = current_version(db, bob)
    assert set(fits) == {old, new, bob_version}
    assert fits[old].matches == 6 and fits[new].matches == 6 and fits[bob_version].matches == 12
    assert fits[new].rating > fits[bob_version].rating > fits[old].rating
    assert fits[old].ci_low < fits[old].rating < fits[old].ci_high
    assert {f.bot_id for f in fits.values()} == {ann, bob}
    with db.session() as session:
        ann_fit = session.get_one(RatingFitRow, ann)
    # ann as one player won half: the versions' fit sees what the bot's fit averages away.
    assert fits[old].rating < ann_fit.rating < fits[new].rating


def test_matches_recorded_before_versions_count_for_their_bots_only(db: Database) -> None:
    ann, bob = two_bots(db)
    for seed in range(4):
        finished(db, ann, bob, "ab"[seed % 2], seed=seed, versioned=False)
    assert refit_ratings(db, min_matches=3) == 2
    assert version_fits(db) == {}
    finished(db, ann, bob, "a", seed=9)
    refit_ratings(db, min_matches=3)
    assert [f.matches for f in version_fits(db).values()] == [1, 1]


def test_a_refit_reports_new_and_moved_fits_and_nothing_when_nothing_moved(
    db: Database,
) -> None:
    ann, bob = two_bots(db)
    carol = register_bot(db, name="carol", owner="o", url="http://127.0.0.1:9").bot_id
    for seed in range(5):
        finished(db, ann, bob, "a", seed=seed)
    refit_ratings(db, min_matches=3)
    first = rating_events(db)
    assert [e["bot"]["id"] for e in first] == [ann, bob], "new fits; carol is not fitted"
    assert all(e["previous"] is None for e in first)
    with db.session() as session:
        fit = session.get_one(RatingFitRow, ann)
        assert first[0] == {
            "bot": {"id": ann, "name": "ann"},
            "rating": round(fit.rating, 1),
            "ci_low": round(fit.ci_low, 1),
            "ci_high": round(fit.ci_high, 1),
            "previous": None,
            "matches": 5,
            "provisional": False,
        }
        events = session.scalars(select(EventRow).where(EventRow.type == "rating.changed"))
        assert all(e.bot_id in (ann, bob) for e in events)

    refit_ratings(db, min_matches=3)
    assert rating_events(db) == first, "the same results: nothing moved, nothing reported"

    finished(db, bob, carol, "a", seed=20)
    refit_ratings(db, min_matches=3)
    later = rating_events(db)[len(first) :]
    with db.session() as session:
        stored = {f.bot_id: f for f in session.scalars(select(RatingFitRow))}
    reported = {e["bot"]["id"]: e for e in later}
    assert carol in reported and reported[carol]["previous"] is None
    assert reported[bob]["previous"] == round(
        next(e for e in first if e["bot"]["id"] == bob)["rating"], 1
    )
    for bot_id, event in reported.items():
        assert event["rating"] == round(stored[bot_id].rating, 1)


def endpoint(db: Database, bot_id: int, types: list[str], *, enabled: bool = True) -> int:
    with db.session() as session:
        row = WebhookEndpointRow(
            bot_id=bot_id, url="https://hooks.example/x", event_types=types, secret="whsec_x",
            enabled=enabled,
        )  # fmt: skip
        session.add(row)
        session.flush()
        return row.id


def test_rating_changed_goes_to_each_endpoint_of_the_bot_that_wants_it(db: Database) -> None:
    """A disabled endpoint that wants it gets it too, paused until it is enabled again."""
    ann, bob = two_bots(db)
    wants = endpoint(db, ann, ["rating.changed", "match.finished"])
    paused = endpoint(db, ann, ["rating.changed"], enabled=False)
    endpoint(db, bob, ["match.finished"])
    for seed in range(3):
        finished(db, ann, bob, "a", seed=seed)
    refit_ratings(db, min_matches=3)
    with db.session() as session:
        deliveries = session.execute(
            select(WebhookDeliveryRow.endpoint_id, EventRow.type, EventRow.bot_id).join(
                EventRow, EventRow.id == WebhookDeliveryRow.event_id
            )
        ).all()
    assert sorted(tuple(d) for d in deliveries) == sorted(
        [(wants, "rating.changed", ann), (paused, "rating.changed", ann)]
    )


OLD = FittedRating(1, 1500.0, 1400.0, 1600.0, 51.0, 20, False)


@pytest.mark.parametrize(
    ("new", "news"),
    [
        pytest.param(FittedRating(1, 1500.9, 1400.9, 1600.9, 51.0, 21, False), False, id="under"),
        pytest.param(FittedRating(1, 1501.0, 1400.0, 1600.0, 51.0, 21, False), True, id="rating"),
        pytest.param(FittedRating(1, 1500.0, 1398.9, 1600.0, 51.0, 21, False), True, id="ci-low"),
        pytest.param(FittedRating(1, 1500.0, 1400.0, 1601.5, 51.0, 21, False), True, id="ci-high"),
        pytest.param(
            FittedRating(1, 1500.0, 1400.0, 1600.0, 51.0, 21, True), True, id="provisional"
        ),
    ],
)
def test_a_rating_is_news_from_a_point_of_movement_or_a_change_of_provisional(
    new: FittedRating[int], news: bool
) -> None:
    assert RATING_CHANGE_POINTS == 1.0
    assert has_changed(OLD, new) is news
