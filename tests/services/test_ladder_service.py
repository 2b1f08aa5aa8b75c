"""The ladder's rounds through the real service (arena.services.ladder), on SQLite and
PostgreSQL: what a round schedules, that a slot's round runs once (twice in a row, two at once,
after a crash), who is skipped, the day's budget and pace, presets, and what a recorded ladder
match moves (the live Elo, the preset's ladder Elo, the fit, the event). Time is injected
(``now``): no test waits for a slot."""

from __future__ import annotations

import threading
from collections.abc import Iterable
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest
from sqlalchemy import func, select
from tournament_driver import Lineup

from arena.db.models import (
    BotRow,
    EventRow,
    LadderRatingRow,
    LadderRoundRow,
    MatchRow,
    RatingFitRow,
    RatingHistoryRow,
)
from arena.db.session import Database
from arena.events import EventType
from arena.playing.jobs import JobStatus, run_match_job
from arena.rules.ruleset import RuleSet
from arena.services import ladder as ladder_service
from arena.services.bots import register_bot, set_status
from arena.services.challenges import create_challenge
from arena.services.ladder import run_ladder, run_ladder_rounds
from arena.services.sweeper import sweep
from arena.settings import Settings, SettingsError, load_settings
from arena.states import BotStatus, MatchStatus

NOON = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _settings(db: Database, **overrides: Any) -> Settings:
    return load_settings({}, database_url=db.url, lease_seconds=30, **overrides)


def _bots(db: Database, count: int, *, first: int = 1) -> list[int]:
    return [
        register_bot(db, name=f"bot{i}", owner="tests", url=f"http://127.0.0.1:{9000 + i}").bot_id
        for i in range(first, first + count)
    ]


class Submitted(list[int]):
    """A submit that remembers what it was handed, in order."""

    def __call__(self, ids: Iterable[int]) -> None:
        self.extend(ids)


def _matches(db: Database) -> list[MatchRow]:
    with db.session() as s:
        return list(s.scalars(select(MatchRow).order_by(MatchRow.id)))


def _play(db: Database, settings: Settings, ids: Iterable[int]) -> None:
    """Play and record these matches here, with in-process players."""
    lineup = Lineup(db)
    for match_id in ids:
        outcome = run_match_job(db, settings, match_id, "test", make_players=lineup)
        assert outcome.status is JobStatus.RECORDED, outcome


def test_a_round_schedules_rated_duplicate_pairs_on_the_presets_rules(db: Database) -> None:
    bots = _bots(db, 6)
    submitted = Submitted()
    ids = run_ladder(db, _settings(db), submitted, now=NOON)
    assert submitted == ids and len(ids) == 6
    with db.session() as s:
        (round_,) = s.scalars(select(LadderRoundRow)).all()
    assert round_.preset == "standard" and round_.scheduled == 6
    assert round_.slot == int(NOON.timestamp()) // 300
    assert round_.policy["matches_per_day"] == 100 and round_.policy["interval_seconds"] == 300
    matches = _matches(db)
    assert {m.status for m in matches} == {MatchStatus.PENDING}
    assert all(m.rated and m.ladder_round_id == round_.id for m in matches)
    assert all(m.rules == RuleSet.preset("standard").to_dict() for m in matches)
    assert sorted(b for m in matches for b in (m.bot_a_id, m.bot_b_id)) == sorted(bots * 2)
    for first, second in zip(matches[::2], matches[1::2], strict=True):
        assert first.match_key == f"{first.bot_a_id}-{first.bot_b_id}:1"
        assert second.match_key == f"{first.bot_a_id}-{first.bot_b_id}:2"
        assert second.seed == first.seed
        assert (second.bot_a_id, second.bot_b_id) == (first.bot_b_id, first.bot_a_id)
    assert len({m.seed for m in matches}) == 3


def test_a_slots_round_run_twice_schedules_once(db: Database) -> None:
    _bots(db, 4)
    settings = _settings(db)
    first = run_ladder_rounds(db, settings, Submitted(), now=NOON)
    again = Submitted()
    second = run_ladder_rounds(db, settings, again, now=NOON + timedelta(seconds=299))
    assert [o.already_ran for o in first + second] == [False, True]
    assert second[0].round_id == first[0].round_id and second[0].scheduled == 4
    assert again == [] and len(_matches(db)) == 4
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(LadderRoundRow)) == 1


def test_two_runs_of_one_slot_at_once_schedule_its_round_once(db: Database) -> None:
    _bots(db, 10)
    settings = _settings(db)
    barrier = threading.Barrier(2)
    results: list[list[int]] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            barrier.wait(timeout=30)
            results.append(run_ladder(db, settings, Submitted(), now=NOON))
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=run) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    assert not errors, errors
    assert sorted(len(r) for r in results) == [0, 10]
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(LadderRoundRow)) == 1
    assert len(_matches(db)) == 10


def test_a_crash_mid_round_leaves_neither_the_round_nor_its_matches(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    _bots(db, 6)
    settings = _settings(db)
    real = ladder_service.schedule_matches
    inserted: list[int] = []

    def crash_after_the_inserts(*args: Any, **kwargs: Any) -> list[int]:
        inserted.extend(real(*args, **kwargs))
        raise RuntimeError("the worker died mid-round")

    monkeypatch.setattr(ladder_service, "schedule_matches", crash_after_the_inserts)
    submitted = Submitted()
    with pytest.raises(RuntimeError, match="mid-round"):
        run_ladder(db, settings, submitted, now=NOON)
    assert len(inserted) == 6  # written, then rolled back with the round
    assert submitted == [] and _matches(db) == []
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(LadderRoundRow)) == 0
    monkeypatch.setattr(ladder_service, "schedule_matches", real)
    assert len(run_ladder(db, settings, submitted, now=NOON)) == 6  # the next beat runs it


def test_suspended_and_inactive_bots_are_skipped(db: Database) -> None:
    bots = _bots(db, 6)
    set_status(db, bots[0], BotStatus.SUSPENDED)
    set_status(db, bots[1], BotStatus.INACTIVE)
    outcome = run_ladder_rounds(db, _settings(db), Submitted(), now=NOON)[0]
    assert outcome.active_bots == 4
    playing = {b for m in _matches(db) for b in (m.bot_a_id, m.bot_b_id)}
    assert playing == set(bots[2:])


def test_matches_in_flight_of_any_kind_count_against_the_cap(db: Database) -> None:
    bots = _bots(db, 4)
    create_challenge(db, bots[0], bots[1], rules=RuleSet(), rated=False, submit=Submitted())
    run_ladder(db, _settings(db), Submitted(), now=NOON)
    ladder = [m for m in _matches(db) if m.ladder_round_id is not None]
    assert {b for m in ladder for b in (m.bot_a_id, m.bot_b_id)} == set(bots[2:])
    # With room for one more pair each, they all play.
    wide = _settings(db, ladder_max_concurrent_per_bot=3)
    assert len(run_ladder(db, wide, Submitted(), now=NOON + timedelta(minutes=5))) == 2


def test_the_days_budget_is_spread_over_the_day_and_starts_again_the_next(db: Database) -> None:
    _bots(db, 2)
    settings = _settings(db, ladder_interval_seconds=3600.0, ladder_matches_per_day=4)
    midnight = datetime(2026, 12, 1, tzinfo=UTC)
    scheduled = []
    for hours in (0, 1, 11, 12, 13, 23, 24):
        ids = run_ladder(db, settings, Submitted(), now=midnight + timedelta(hours=hours))
        _play(db, settings, ids)
        scheduled.append(len(ids))
    # The pace (ceil(4 x the share of the day over)) allows 1 until 06:00, 2 until 12:00
    # (a pair at 00:00 covers both), 3 from 12:00: the second pair; then the budget is spent.
    assert scheduled == [2, 0, 0, 2, 0, 0, 2]


def test_each_preset_has_its_own_round_and_rules(db: Database) -> None:
    _bots(db, 4)
    settings = _settings(db, ladder_presets="standard,oklahoma", ladder_max_concurrent_per_bot=4)
    outcomes = run_ladder_rounds(db, settings, Submitted(), now=NOON)
    assert [(o.preset, o.scheduled) for o in outcomes] == [("standard", 4), ("oklahoma", 4)]
    with db.session() as s:
        rounds = {r.id: r.preset for r in s.scalars(select(LadderRoundRow))}
    for m in _matches(db):
        assert m.rules == RuleSet.preset(rounds[m.ladder_round_id]).to_dict()


def test_without_presets_the_ladder_schedules_nothing(db: Database) -> None:
    _bots(db, 4)
    assert run_ladder(db, _settings(db, ladder_presets=""), Submitted(), now=NOON) == []
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(LadderRoundRow)) == 0


def test_a_time_without_a_zone_is_refused(db: Database) -> None:
    with pytest.raises(ValueError, match="timezone-aware"):
        run_ladder(db, _settings(db), Submitted(), now=datetime(2026, 12, 1, 12))


def test_a_recorded_ladder_match_moves_the_live_elo_the_ladder_elo_and_reaches_the_fit(
    db: Database,
) -> None:
    bots = _bots(db, 2)
    settings = _settings(db)
    ids = run_ladder(db, settings, Submitted(), now=NOON)
    _play(db, settings, ids)
    with db.session() as s:
        ladder = {r.bot_id: r for r in s.scalars(select(LadderRatingRow))}
        elo = {b.id: b.elo for b in s.scalars(select(BotRow))}
        history = s.scalar(select(func.count()).select_from(RatingHistoryRow))
        finished = EventRow.type == EventType.MATCH_FINISHED
        events = [
            e.data for e in s.scalars(select(EventRow).where(EventRow.match_id.in_(ids), finished))
        ]
    assert set(ladder) == set(bots)
    assert all(r.preset == "standard" and r.matches == 2 for r in ladder.values())
    assert sum(r.elo for r in ladder.values()) == pytest.approx(3000.0)
    assert ladder[bots[0]].elo != 1500.0
    # The ladder's first matches are the bots' first too: both Elos moved alike.
    assert {b: round(r.elo, 6) for b, r in ladder.items()} == {
        b: round(e, 6) for b, e in elo.items()
    }
    assert history == 4
    assert [e["ladder"] for e in events] == ["standard", "standard"]
    # The sweep refits the whole-history fit: results came in since the last one.
    sweep(db, settings, Submitted())
    with db.session() as s:
        fits = {f.bot_id: f.matches for f in s.scalars(select(RatingFitRow))}
    assert fits == {bots[0]: 2, bots[1]: 2}


def test_a_match_outside_the_ladder_leaves_the_ladder_elo_alone(db: Database) -> None:
    bots = _bots(db, 2)
    settings = _settings(db)
    match_id = create_challenge(
        db, bots[0], bots[1], rules=RuleSet(), rated=True, submit=Submitted()
    )
    _play(db, settings, [match_id])
    with db.session() as s:
        assert s.scalar(select(func.count()).select_from(LadderRatingRow)) == 0
        (event,) = s.scalars(
            select(EventRow).where(
                EventRow.match_id == match_id, EventRow.type == EventType.MATCH_FINISHED
            )
        )
    assert event.data["ladder"] is None


def test_a_cap_below_a_pair_is_refused_when_the_settings_load() -> None:
    with pytest.raises(
        SettingsError, match="ARENA_LADDER_MAX_CONCURRENT_PER_BOT must be at least 2"
    ):
        load_settings({"ARENA_LADDER_MAX_CONCURRENT_PER_BOT": "1"})
    single = {"ARENA_LADDER_MAX_CONCURRENT_PER_BOT": "1", "ARENA_LADDER_DUPLICATE_PAIRS": "0"}
    assert load_settings(single).ladder_max_concurrent_per_bot == 1
