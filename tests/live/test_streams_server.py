"""The streams over real HTTP: ``gin-arena serve``'s server (waitress, its local executor's
worker processes) playing a match between house bots on loopback while clients follow it."""

from __future__ import annotations

import http.client
import json
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from live_api import sqlite_copy
from live_support import SseEvent, read_events
from sqlalchemy import update

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "integration"))
from arena_procs import house_bots

from arena.api.server import ApiServer
from arena.api.views.streams import live_services
from arena.db.models import MatchRow, utcnow
from arena.db.session import Database
from arena.rules.ruleset import RuleSet
from arena.services.bots import RegisteredBot, register_bot
from arena.services.matches import schedule_match
from arena.settings import load_settings
from arena.states import MatchStatus


@dataclass
class Arena:
    server: ApiServer
    db: Database
    bots: list[RegisteredBot]

    def schedule(self, seed: int, target: int = 25) -> int:
        with self.db.session() as s:
            match = schedule_match(
                s, self.bots[0].bot_id, self.bots[1].bot_id, rules=RuleSet(target=target), seed=seed
            )
            return match.id

    def get(
        self, path: str, headers: dict[str, str] | None = None
    ) -> tuple[http.client.HTTPConnection, http.client.HTTPResponse]:
        conn = http.client.HTTPConnection("127.0.0.1", self.server.port, timeout=120)
        conn.request("GET", path, headers=headers or {})
        return conn, conn.getresponse()


@pytest.fixture
def arena(sqlite_template: Path, tmp_path: Path) -> Iterator[Arena]:
    url = sqlite_copy(sqlite_template, tmp_path)
    settings = load_settings(
        {}, database_url=url, allow_loopback=True, rate_limit="", ladder_presets="",
        worker_processes=1, worker_threads=4, admin_token="organiser-token",
    )  # fmt: skip
    db = Database(url)
    with house_bots(["greedy", "strong"]) as bots:
        registered = [register_bot(db, name=b.info.name, owner="t", url=b.url) for b in bots]
        server = ApiServer(settings, port=0, threads=2)
        live_services(server.app).ping_seconds = 1.0  # closed streams free their threads soon
        thread = threading.Thread(target=server.run, name="api", daemon=True)
        thread.start()
        try:
            yield Arena(server, db, registered)
        finally:
            server.stop()
            thread.join(timeout=60)
            db.dispose()


def _all(response: http.client.HTTPResponse) -> list[SseEvent]:
    return [e for e in read_events(response) if e is not None]


def test_a_spectator_follows_a_match_from_pending_to_its_end_then_gets_the_replay(
    arena: Arena,
) -> None:
    match_id = arena.schedule(seed=11)
    conn, response = arena.get(f"/api/v1/matches/{match_id}/events")
    assert response.status == 200
    assert response.getheader("Content-Type", "").startswith("text/event-stream")
    assert response.getheader("Cache-Control") == "no-cache"
    assert response.getheader("X-Accel-Buffering") == "no"
    live = _all(response)
    conn.close()
    names = [e.name for e in live]
    assert names[0] == "match" and live[0].data["view"] == "public"
    assert names[-1] == "end" and live[-1].data["status"] == "finished"
    assert names.count("step") > 20 and "deal" in names
    steps = [e for e in live if e.name == "step"]
    assert all(set(h) == {"count"} for e in steps for h in e.data["step"]["hands"].values())

    conn, response = arena.get(f"/api/v1/matches/{match_id}/events")
    over = _all(response)
    conn.close()
    assert [e.name for e in over] == ["match", "replay", "end"]
    assert over[0].data["status"] == "finished"
    replayed = over[1].data["deals"]
    dealt = [e.data for e in live if e.name == "deal"]
    assert dealt == replayed  # each live deal is exactly the replay's deal
    assert over[2].data == live[-1].data


def test_a_client_reconnecting_with_last_event_id_gets_only_what_followed(arena: Arena) -> None:
    match_id = arena.schedule(seed=12, target=50)
    conn, response = arena.get(f"/api/v1/matches/{match_id}/events")
    seen: list[SseEvent] = []
    for event in read_events(response):
        if event is not None and event.id is not None:
            seen.append(event)
            if len(seen) == 30:
                break
    conn.close()
    conn, response = arena.get(
        f"/api/v1/matches/{match_id}/events", headers={"Last-Event-ID": seen[-1].id or ""}
    )
    rest = [e for e in _all(response) if e.id is not None]
    conn.close()
    attempt, seq = seen[-1].id.split("-")  # type: ignore[union-attr]
    assert rest[0].id == f"{attempt}-{int(seq) + 1}"
    assert rest[-1].name == "end"


def test_a_seat_view_needs_that_seats_owner_token(arena: Arena) -> None:
    match_id = arena.schedule(seed=13)
    path = f"/api/v1/matches/{match_id}/events?seat=a"
    conn, response = arena.get(path)
    assert response.status == 401
    assert response.getheader("Content-Type") == "application/problem+json"
    conn.close()
    other = {"Authorization": f"Bearer {arena.bots[1].token}"}
    conn, response = arena.get(path, headers=other)
    assert response.status == 403
    conn.close()
    mine = {"Authorization": f"Bearer {arena.bots[0].token}"}
    conn, response = arena.get(path, headers=mine)
    assert response.status == 200
    events: list[SseEvent] = []
    for event in read_events(response):
        if event is not None:
            events.append(event)
            if event.name in ("deal", "replay"):
                break
    conn.close()
    assert events[0].data["view"] == "a"
    steps = [e.data["step"] for e in events if e.name == "step"]
    assert all("melds" in s["hands"]["a"] and set(s["hands"]["b"]) == {"count"} for s in steps)


def test_an_unknown_match_is_a_404_problem(arena: Arena) -> None:
    conn, response = arena.get("/api/v1/matches/999/events")
    body: dict[str, Any] = json.loads(response.read())
    conn.close()
    assert response.status == 404
    assert response.getheader("Content-Type") == "application/problem+json"
    assert "999" in body["detail"]


def test_the_tournament_and_ladder_streams(arena: Arena) -> None:
    conn, response = arena.get("/api/v1/tournaments/999/events")
    assert response.status == 404
    conn.close()
    conn, response = arena.get("/api/v1/ladder/events")
    assert response.status == 200
    assert response.getheader("Content-Type", "").startswith("text/event-stream")
    assert response.readline() == b"retry: 2000\n"
    conn.close()


def test_under_waitress_match_streams_go_to_the_one_writer_and_a_closed_one_frees_its_place(
    arena: Arena,
) -> None:
    services = live_services(arena.server.app)
    match_id = arena.schedule(seed=14, target=250)
    opened = [arena.get(f"/api/v1/matches/{match_id}/events") for _ in range(3)]
    for _, response in opened:
        assert response.status == 200
    deadline = time.monotonic() + 120
    while services.writer.streams < 3:  # each is handed off once its match has a feed
        assert time.monotonic() < deadline, services.writer.streams
        time.sleep(0.05)
    assert services.open_streams == 3
    conn, response = opened.pop()
    response.close()
    conn.close()
    while services.open_streams > 2 or services.writer.streams > 2:
        assert time.monotonic() < deadline, (services.open_streams, services.writer.streams)
        time.sleep(0.05)
    for conn, response in opened:  # the others still get the match's steps
        names = []
        for event in read_events(response):
            if event is not None:
                names.append(event.name)
                if names.count("step") >= 3:
                    break
        assert names.count("step") >= 3
        response.close()
        conn.close()
    # Done: fence the match's attempt out (as a takeover would), so it stops after its next
    # lease renewal instead of being played to the end while the server shuts down.
    with arena.db.session() as session:
        session.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(status=MatchStatus.CANCELLED, lease_owner="the-test")
        )


def test_a_finished_matchs_replay_is_not_kept_from_its_stream_while_its_twin_was_open(
    arena: Arena,
) -> None:
    """Stream endings are kept (a crowd arriving at the end builds the replay once), but not
    an ending without its replay: once the twin is over, the next stream gets the replay."""
    twin = arena.schedule(seed=15)
    with arena.db.session() as s:  # held by a live lease elsewhere: nobody here plays it
        s.execute(
            update(MatchRow)
            .where(MatchRow.id == twin)
            .values(
                status=MatchStatus.RUNNING,
                lease_owner="elsewhere",
                lease_expires_at=utcnow() + timedelta(hours=1),
            )
        )
    match_id = arena.schedule(seed=15)
    conn, response = arena.get(f"/api/v1/matches/{match_id}/events")
    assert [e.name for e in _all(response)][-1] == "end"
    conn.close()

    def ending() -> list[str]:
        conn, response = arena.get(f"/api/v1/matches/{match_id}/events")
        names = [e.name for e in _all(response)]
        conn.close()
        return names

    assert ending() == ["match", "end"]  # the twin is open: its deals are embargoed
    with arena.db.session() as s:
        s.execute(update(MatchRow).where(MatchRow.id == twin).values(status=MatchStatus.CANCELLED))
    assert ending() == ["match", "replay", "end"]
    assert ending() == ["match", "replay", "end"]  # kept, and the same
