"""The sweep, the safety net under submission: its numbers are settings, each with one
default, the same for every executor and the command line."""

from __future__ import annotations

import inspect
from datetime import timedelta

import pytest
from conftest import REDIS_URL
from sqlalchemy import update

from arena.cli import build_parser
from arena.db.models import MatchRow, RatingFitStateRow, utcnow
from arena.db.session import Database
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match, sweep_stuck
from arena.services.sweeper import fit_is_behind, sweep
from arena.settings import Settings, SettingsError, load_settings
from arena.states import MatchStatus
from workers.celery_app import create_app


def _pending(db: Database, *, age_s: float) -> int:
    """A pending match created ``age_s`` seconds ago, never submitted."""
    a, b = (
        register_bot(db, name=f"b{age_s:g}-{i}", owner="o", url="http://127.0.0.1:9").bot_id
        for i in range(2)
    )
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=RuleSet(target=25), seed=1).id
    with db.session() as session:
        session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(created_at=utcnow() - timedelta(seconds=age_s))
        )
    return match_id


def test_every_pending_grace_comes_from_one_setting(db: Database) -> None:
    """``ARENA_PENDING_GRACE_SECONDS`` decides for the sweep (beat and the local sweeper
    call the same function), the services take no default of their own, and ``gin-arena
    sweep`` uses the setting unless told otherwise; beat runs every
    ``ARENA_SWEEP_INTERVAL_SECONDS``."""
    old, fresh = _pending(db, age_s=120), _pending(db, age_s=5)
    settings = load_settings({}, database_url=db.url)
    submitted: list[int] = []
    assert sweep(db, settings.replace(pending_grace_seconds=600), submitted.extend) == []
    assert sweep(db, settings.replace(pending_grace_seconds=60), submitted.extend) == [old]
    assert sweep(db, settings.replace(pending_grace_seconds=0), submitted.extend) == [old, fresh]
    assert submitted == [old, old, fresh]
    grace = inspect.signature(sweep_stuck).parameters["pending_grace_s"]
    assert grace.default is inspect.Parameter.empty
    assert build_parser().parse_args(["sweep"]).pending_grace is None
    assert Settings().pending_grace_seconds == 600
    beat = load_settings({"ARENA_BROKER_URL": REDIS_URL, "ARENA_SWEEP_INTERVAL_SECONDS": "7.5"})
    app = create_app(beat)
    try:
        assert app.conf.beat_schedule["sweep"]["schedule"] == 7.5
        assert app.conf.beat_schedule["sweep"]["options"]["queue"] == "control"
    finally:
        app.close()


@pytest.mark.parametrize(
    "typo",
    [
        "ARENA_PENDING_GRACE_SECOND",
        "ARENA_PENDNG_GRACE_SECONDS",
        "ARENA_SWEEP_INTREVAL_SECONDS",
        "ARENA_PICKUP_INTERVAL_SECOND",
    ],
)
def test_a_misspelt_sweeper_setting_is_reported_with_the_real_name(typo: str) -> None:
    real = {
        "PENDING": "ARENA_PENDING_GRACE_SECONDS",
        "PENDNG": "ARENA_PENDING_GRACE_SECONDS",
        "SWEEP": "ARENA_SWEEP_INTERVAL_SECONDS",
        "PICKUP": "ARENA_PICKUP_INTERVAL_SECONDS",
    }[typo.split("_")[1]]
    with pytest.raises(SettingsError, match=f"did you mean {real}\\?"):
        load_settings({typo: "5"})


@pytest.mark.parametrize(
    ("name", "value"),
    [
        ("ARENA_SWEEP_INTERVAL_SECONDS", "0"),
        ("ARENA_PENDING_GRACE_SECONDS", "-1"),
        ("ARENA_PICKUP_INTERVAL_SECONDS", "-0.5"),
    ],
)
def test_a_sweeper_setting_out_of_range_is_refused_naming_it(name: str, value: str) -> None:
    with pytest.raises(SettingsError, match=name):
        load_settings({name: value})


def test_the_sweep_refits_the_ratings_when_rated_results_are_not_in_the_fit(db: Database) -> None:
    """Ladder matches and challenges close no tournament round: the sweep brings them into the
    whole-history fit, and does not refit when nothing new was recorded."""
    a = register_bot(db, name="fit-a", owner="t", url="http://127.0.0.1:9/").bot_id
    b = register_bot(db, name="fit-b", owner="t", url="http://127.0.0.1:9/").bot_id
    assert not fit_is_behind(db)
    with db.session() as s:
        for seed in range(3):
            m = schedule_match(s, a, b, rules=RuleSet(), seed=seed)
            m.status, m.winner = MatchStatus.FINISHED, "a"
    assert fit_is_behind(db)
    settings = load_settings({}, database_url=db.url, pending_grace_seconds=600)
    sweep(db, settings, lambda ids: None)
    assert not fit_is_behind(db)
    with db.session() as s:
        assert s.get_one(RatingFitStateRow, 1).results == 3
