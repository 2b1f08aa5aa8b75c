"""The health sweep (:mod:`arena.services.health`) with real loopback bots, on SQLite and
PostgreSQL: what a probe records, which bots a sweep probes, signatures and the URL policy as
in a match, suspension with its event in the outbox, a hanging bot holding up nobody, and the
guards that keep two sweeps (or a sweep and an owner) from double-counting or undoing."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from datetime import timedelta

import pytest
from health_support import (
    T0,
    HeldBot,
    bot_row,
    events_of,
    health_settings,
    probes_of,
    register,
    tick,
    wait_until,
)
from loopback import free_port
from sqlalchemy import select

from arena.bots.house import start_house_bots
from arena.bots.sdk import BotServer
from arena.db.models import BotVersionRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.measures.health import Transition
from arena.protocol.signing import generate_secret
from arena.protocol.wire import ActRequest, WireAction
from arena.services.bots import set_status
from arena.services.health import ProbeTrigger, health_sweep, probe_now
from arena.states import BotStatus

SECRET = generate_secret()


def _nothing(_ids: object) -> None:
    raise AssertionError("a health sweep schedules no match")


@pytest.fixture(scope="module")
def house() -> Iterator[list[BotServer]]:
    bots = start_house_bots(["greedy", "random", "strong"], secret=SECRET)
    yield bots
    for bot in bots:
        bot.stop()


@pytest.fixture
def held() -> Iterator[HeldBot]:
    bot = HeldBot().start()
    yield bot
    bot.release.set()
    bot.stop()


def test_a_healthy_bot_passes_a_signed_probe_and_it_is_recorded(
    db: Database, house: list[BotServer]
) -> None:
    settings = health_settings(db)
    bot = register(db, "alice", house[0].url, SECRET)
    assert health_sweep(db, settings, _nothing, now=T0) == []
    (probe,) = probes_of(db, bot)
    assert probe.passed and probe.reason is None
    assert probe.latency_ms is not None and 0 < probe.latency_ms < 10_000
    assert probe.trigger == "sweep" and probe.status_after is BotStatus.ACTIVE
    assert probe.probed_at == T0
    row = bot_row(db, bot)
    assert (row.status, row.failed_probes, row.passed_probes) == (BotStatus.ACTIVE, 0, 1)
    assert row.last_probed_at == T0


def test_a_sweep_probes_bots_due_or_never_probed_and_never_inactive_ones(
    db: Database, house: list[BotServer]
) -> None:
    settings = health_settings(db)
    due = register(db, "due", house[0].url, SECRET)
    retired = register(db, "retired", house[1].url, SECRET)
    set_status(db, retired, BotStatus.INACTIVE)
    health_sweep(db, settings, _nothing, now=T0)
    half = T0 + timedelta(seconds=settings.health_interval_seconds / 2)
    health_sweep(db, settings, _nothing, now=half)  # not due yet
    health_sweep(db, settings, _nothing, now=tick(1, settings))
    assert [p.probed_at for p in probes_of(db, due)] == [T0, tick(1, settings)]
    assert probes_of(db, retired) == []
    assert bot_row(db, retired).last_probed_at is None


def test_a_bot_refusing_the_probes_signature_fails_with_a_reason_saying_so(
    db: Database, house: list[BotServer]
) -> None:
    bot = register(db, "wrong-secret", house[0].url, generate_secret())
    health_sweep(db, health_settings(db), _nothing, now=T0)
    (probe,) = probes_of(db, bot)
    assert not probe.passed
    assert probe.reason is not None and probe.reason.startswith("POST /act: status: HTTP 401")
    assert "refused the arena's signed request" in probe.reason
    assert probe.latency_ms is not None


def test_production_url_rules_apply_and_the_reason_never_shows_the_url(
    db: Database, house: list[BotServer]
) -> None:
    url = house[0].url
    bot = register(db, "loopback", url, SECRET)
    health_sweep(db, health_settings(db, allow_loopback=False), _nothing, now=T0)
    (probe,) = probes_of(db, bot)
    assert not probe.passed and probe.latency_ms is None
    assert probe.reason is not None and probe.reason.startswith("URL refused")
    assert "ARENA_ALLOW_LOOPBACK" in probe.reason
    assert url not in probe.reason and "127.0.0.1" not in probe.reason


def test_three_failed_sweeps_suspend_a_bot_with_its_event_in_the_outbox(db: Database) -> None:
    settings = health_settings(db)
    bot = register(db, "gone", f"http://127.0.0.1:{free_port()}")
    changed = [health_sweep(db, settings, _nothing, now=tick(n, settings)) for n in range(4)]
    assert changed == [[], [], [bot], []]
    assert [p.status_after for p in probes_of(db, bot)] == [BotStatus.ACTIVE] * 2 + [
        BotStatus.SUSPENDED
    ] * 2
    row = bot_row(db, bot)
    assert (row.status, row.failed_probes, row.passed_probes) == (BotStatus.SUSPENDED, 4, 0)
    (event,) = events_of(db, bot, "bot.suspended", "bot.resumed")
    assert event.type == "bot.suspended"
    assert event.data == {
        "bot": {"id": bot, "name": "gone"},
        "reason": "GET /: connection: connection refused",
        "failed_probes": 3,
    }


def test_a_hanging_bot_does_not_hold_up_the_others(
    db: Database, house: list[BotServer], held: HeldBot
) -> None:
    settings = health_settings(db, health_timeout_seconds=120.0)
    healthy = [register(db, f"ok-{i}", b.url, SECRET) for i, b in enumerate(house)]
    stuck = register(db, "stuck", held.url)
    sweep = threading.Thread(target=health_sweep, args=(db, settings, _nothing), kwargs={"now": T0})
    sweep.start()
    try:
        wait_until(
            lambda: held.asked.is_set() and all(probes_of(db, b) for b in healthy),
            timeout=60,
            what="the healthy bots' probes while one bot hangs",
        )
        assert probes_of(db, stuck) == []
    finally:
        held.release.set()
        sweep.join(timeout=60)
    assert not sweep.is_alive()
    (probe,) = probes_of(db, stuck)
    assert not probe.passed and probe.reason is not None and probe.reason.startswith("GET /")


def test_two_sweeps_at_once_probe_each_bot_once(db: Database, house: list[BotServer]) -> None:
    settings = health_settings(db)
    bots = [register(db, f"b{i}", b.url, SECRET) for i, b in enumerate(house)]
    start = threading.Barrier(2)
    results: list[list[int]] = []

    def sweep() -> None:
        start.wait(timeout=30)
        results.append(health_sweep(db, settings, _nothing, now=T0))

    threads = [threading.Thread(target=sweep) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert results == [[], []]
    for bot in bots:
        assert len(probes_of(db, bot)) == 1
        assert bot_row(db, bot).passed_probes == 1


def test_an_owner_deactivating_a_bot_during_its_probe_is_not_undone(
    db: Database, held: HeldBot
) -> None:
    settings = health_settings(db, health_timeout_seconds=120.0)
    bot = register(db, "leaving", held.url)
    outcome: list[list[int]] = []
    sweep = threading.Thread(
        target=lambda: outcome.append(health_sweep(db, settings, _nothing, now=T0))
    )
    sweep.start()
    try:
        wait_until(held.asked.is_set, timeout=60, what="the probe to reach the bot")
        set_status(db, bot, BotStatus.INACTIVE)
    finally:
        held.release.set()
        sweep.join(timeout=60)
    assert outcome == [[]]
    row = bot_row(db, bot)
    assert (row.status, row.failed_probes, row.passed_probes) == (BotStatus.INACTIVE, 0, 0)
    assert probes_of(db, bot) == []


def test_a_later_claim_voids_a_probe_still_in_flight(db: Database, held: HeldBot) -> None:
    settings = health_settings(db, health_timeout_seconds=120.0)
    bot = register(db, "twice", held.url)
    sweep = threading.Thread(target=health_sweep, args=(db, settings, _nothing), kwargs={"now": T0})
    later = T0 + timedelta(seconds=1)
    now_probe = threading.Thread(target=probe_now, args=(db, settings, bot), kwargs={"now": later})
    sweep.start()
    try:
        wait_until(held.asked.is_set, timeout=60, what="the sweep's probe to reach the bot")
        now_probe.start()
        wait_until(lambda: held.connections >= 2, timeout=60, what="the second probe")
    finally:
        held.release.set()
        sweep.join(timeout=60)
        now_probe.join(timeout=60)
    (probe,) = probes_of(db, bot)
    assert probe.probed_at == later and probe.trigger == "cli"
    assert bot_row(db, bot).failed_probes == 1


def test_probe_now_probes_one_bot_whenever_it_was_last_probed(
    db: Database, house: list[BotServer]
) -> None:
    settings = health_settings(db)
    bot = register(db, "asked", house[1].url, SECRET)
    first = probe_now(db, settings, bot, now=T0)
    second = probe_now(db, settings, bot, trigger=ProbeTrigger.FORFEIT, now=T0)
    assert first is not None and second is not None
    assert (second.status, second.passed_probes, second.transition) == (
        BotStatus.ACTIVE,
        2,
        Transition.NONE,
    )
    assert [p.trigger for p in probes_of(db, bot)] == ["cli", "forfeit"]


def test_probe_now_leaves_an_inactive_bot_alone_and_names_a_missing_one(
    db: Database, house: list[BotServer]
) -> None:
    settings = health_settings(db)
    bot = register(db, "retired", house[0].url, SECRET)
    set_status(db, bot, BotStatus.INACTIVE)
    assert probe_now(db, settings, bot, now=T0) is None
    assert probes_of(db, bot) == []
    with pytest.raises(NotFoundError, match="bot 999"):
        probe_now(db, settings, 999, now=T0)


def test_a_probe_notes_the_version_string_the_bot_reports(db: Database) -> None:
    server = BotServer(lambda obs: obs.legal_actions[0], name="versioned", version="2.0").start()
    try:
        bot = register(db, "versioned", server.url)
        probe_now(db, health_settings(db), bot, now=T0)
        server.info.version = "2.1"
        probe_now(db, health_settings(db), bot, now=tick(1, health_settings(db)))
    finally:
        server.stop()
    with db.session() as session:
        labels = list(
            session.scalars(
                select(BotVersionRow.label)
                .where(BotVersionRow.bot_id == bot)
                .order_by(BotVersionRow.number)
            )
        )
    assert labels == ["2.0", "2.1"]
    assert [p.passed for p in probes_of(db, bot)] == [True, True]


def test_a_probe_is_get_and_one_act_with_health_ids_and_no_start_or_end(db: Database) -> None:
    seen: list[tuple[str, str, str, int]] = []
    starts: list[object] = []

    def act(request: ActRequest) -> WireAction:
        seen.append((request.match_id, request.request_id, request.phase, request.deadline_ms))
        return request.legal_actions[0]

    server = BotServer(act, name="observer", on_start=starts.append, on_end=starts.append)
    server.start()
    try:
        bot = register(db, "observer", server.url)
        probe_now(db, health_settings(db, health_timeout_seconds=4.0), bot, now=T0)
    finally:
        server.stop()
    ((match_id, request_id, phase, deadline_ms),) = seen
    assert match_id == f"health-{bot}-{int(T0.timestamp())}"
    assert request_id.startswith(f"{match_id}-r") and request_id[len(match_id) + 2 :].isdigit()
    assert (phase, deadline_ms) == ("discard", 4000)
    assert starts == []
