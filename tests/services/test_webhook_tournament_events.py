"""Tournament events for the entered bots' owners: ``tournament.started`` when it starts,
``tournament.round_started`` once per round (when its first matches are scheduled, never twice
however often or concurrently the tournament is advanced), ``tournament.finished`` with the
final standings; each queued for every entered bot's subscribed endpoint (SQLite and
PostgreSQL)."""

from __future__ import annotations

from typing import Any

import pytest
from sqlalchemy import func, select
from test_tournament_service import _twice_at_once
from tournament_driver import Driver, add_bots, new_tournament

from arena.db.models import EventRow, MatchRow, WebhookDeliveryRow
from arena.db.session import Database
from arena.services.tournaments import advance_tournament, start_tournament
from arena.services.webhook_endpoints import create_endpoint
from arena.settings import load_settings

TOURNAMENT_TYPES = ["tournament.started", "tournament.round_started", "tournament.finished"]


def tournament_events(db: Database, tournament_id: int) -> list[EventRow]:
    with db.session() as session:
        return list(
            session.scalars(
                select(EventRow)
                .where(EventRow.tournament_id == tournament_id, EventRow.type.in_(TOURNAMENT_TYPES))
                .order_by(EventRow.id)
            )
        )


def subscribe(db: Database, bots: list[int]) -> None:
    settings = load_settings({}, allow_loopback=True)
    for bot in bots:
        create_endpoint(
            db, settings, bot, url="http://127.0.0.1:9/hooks", event_types=TOURNAMENT_TYPES
        )


def test_a_swiss_reports_its_start_each_round_once_and_its_end(db: Database) -> None:
    bots = add_bots(db, 6)
    subscribe(db, bots[:4])  # two owners have no endpoint
    tid = new_tournament(db, bots, "swiss", {"rounds": 2})
    driver = Driver(db)
    driver.start(tid)
    assert start_tournament(db, tid, driver.enqueue).scheduled == []  # started once
    assert advance_tournament(db, tid, driver.enqueue).scheduled == []
    driver.drain()
    assert advance_tournament(db, tid, driver.enqueue).scheduled == []
    events = tournament_events(db, tid)
    assert [e.type for e in events] == [
        "tournament.started",
        "tournament.round_started",
        "tournament.round_started",
        "tournament.finished",
    ]
    started, first, second, finished = (e.data for e in events)
    reference = {"id": tid, "name": "swiss test", "format": "swiss"}
    assert started == {"tournament": reference, "bots": bots}
    with db.session() as session:
        by_round: dict[int, list[int]] = {}
        for match in session.scalars(select(MatchRow).where(MatchRow.tournament_id == tid)):
            number = int((match.match_key or "R0").split("-")[0].lstrip("R"))
            by_round.setdefault(number, []).append(match.id)
        deliveries = session.scalar(select(func.count()).select_from(WebhookDeliveryRow))
    for data, number in ((first, 1), (second, 2)):
        assert data["round"] == f"Round {number}" and data["number"] == number
        assert data["section"] == "rounds" and data["tournament"] == reference
        assert sorted(data["matches"]) == sorted(by_round[number])
    table = finished["standings"]
    assert [row["rank"] for row in table] == sorted(row["rank"] for row in table)
    assert {row["bot"]["id"] for row in table} == set(bots)
    assert all(row["bot"]["name"].startswith("bot-") for row in table)
    champion = finished["champion"]
    assert champion is None or champion == table[0]["bot"]
    assert deliveries == 4 * 4  # every event, once to each of the four endpoints


def test_a_knockout_reports_each_round_of_each_section_once(db: Database) -> None:
    bots = add_bots(db, 8)
    tid = new_tournament(db, bots, "single_elimination", {"third_place": True})
    Driver(db).run(tid)
    rounds = [
        (e.data["section"], e.data["number"], e.data["round"])
        for e in tournament_events(db, tid)
        if e.type == "tournament.round_started"
    ]
    assert rounds == [
        ("main", 1, "Quarter-finals"),
        ("main", 2, "Semi-finals"),
        ("main", 3, "Final"),
        ("third_place", 3, "Third place"),
    ]


@pytest.mark.parametrize(
    ("format_name", "options", "n"),
    [("swiss", {"rounds": 3}, 6), ("double_elimination", {"reset": True}, 5)],
    ids=["swiss", "double_elimination"],
)
def test_concurrent_advances_report_each_round_once(
    db: Database, format_name: str, options: dict[str, Any], n: int
) -> None:
    bots = add_bots(db, n)
    tid = new_tournament(db, bots, format_name, options)
    driver = Driver(db)
    lists, _ = _twice_at_once(lambda enqueue: start_tournament(db, tid, enqueue))
    driver.enqueue(lists[0] + lists[1])
    while driver.queue:
        driver.step()
        more, _ = _twice_at_once(lambda enqueue: advance_tournament(db, tid, enqueue))
        driver.enqueue(more[0] + more[1])
    events = tournament_events(db, tid)
    kinds = [e.type for e in events]
    assert kinds.count("tournament.started") == 1
    assert kinds.count("tournament.finished") == 1
    rounds = [(e.data["section"], e.data["number"]) for e in events if e.data.get("section")]
    assert len(rounds) == len(set(rounds)) > 1
