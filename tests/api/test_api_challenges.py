"""Challenges: an owner's bot against another, rated on the standard rules or unrated on
rules of the owner's choosing (within bounds), the seed always drawn by the arena."""

from __future__ import annotations

import json
from collections.abc import Iterable

import pytest
import redis
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, settings_for

from arena.api import close_app, create_app
from arena.db.models import MatchRow
from arena.db.session import Database
from arena.services.bots import RegisteredBot, register_bot, set_status
from arena.services.matches import match_status
from arena.states import BotStatus, MatchStatus
from workers.tasks import MATCH_PRIORITY


@pytest.fixture
def two(api: Api) -> tuple[RegisteredBot, RegisteredBot]:
    return (
        register_bot(api.db, name="me", owner="o", url="http://127.0.0.1:9001"),
        register_bot(api.db, name="you", owner="p", url="http://127.0.0.1:9002"),
    )


def test_challenge_schedules_one_match_and_submits_it(api: Api, two):
    me, you = two
    response = api.post(
        "/api/v1/challenges", {"bot_id": me.bot_id, "opponent_id": you.bot_id}, token=me.token
    )
    assert response.status_code == 201
    body = response.json
    assert body["status"] == "pending" and body["rated"] is False and body["seed"] is None
    assert body["bots"]["a"]["id"] == me.bot_id and body["bots"]["b"]["id"] == you.bot_id
    assert api.enqueued == [body["id"]]
    assert response.headers["Location"].endswith(f"/api/v1/matches/{body['id']}")


def test_rated_challenge_plays_the_standard_rules(api: Api, two):
    me, you = two
    body = api.post(
        "/api/v1/challenges",
        {"bot_id": me.bot_id, "opponent_id": you.bot_id, "rated": True},
        token=me.token,
    ).json
    assert body["rated"] is True and body["rules"]["target"] == 250
    response = api.post(
        "/api/v1/challenges",
        {"bot_id": me.bot_id, "opponent_id": you.bot_id, "rated": True, "rules": {}},
        token=me.token,
    )
    assert response.status_code == 422 and response.json["errors"][0]["field"] == "rules"


def test_unrated_challenge_rules_within_bounds(api: Api, two):
    me, you = two
    ok = api.post(
        "/api/v1/challenges",
        {
            "bot_id": me.bot_id,
            "opponent_id": you.bot_id,
            "rules": {"preset": "straight", "fields": {"best_of": 1, "target": 100}},
        },
        token=me.token,
    )
    assert ok.status_code == 201 and ok.json["rules"]["knock_limit"] == 0
    with api.db.session() as session:
        assert session.get_one(MatchRow, ok.json["id"]).seed >= 0
    too_slow = api.post(
        "/api/v1/challenges",
        {
            "bot_id": me.bot_id,
            "opponent_id": you.bot_id,
            "rules": {"fields": {"deadline_ms": 60000}},
        },
        token=me.token,
    )
    assert too_slow.status_code == 422
    assert too_slow.json["errors"][0]["field"] == "rules.fields.deadline_ms"


@pytest.mark.parametrize("case", ["self", "unknown", "inactive", "seed"])
def test_challenge_errors(api: Api, two, case: str):
    me, you = two
    body = {"bot_id": me.bot_id, "opponent_id": you.bot_id}
    field = "opponent_id"
    if case == "self":
        body["opponent_id"] = me.bot_id
    elif case == "unknown":
        body["opponent_id"] = 4242
    elif case == "inactive":
        set_status(api.db, you.bot_id, BotStatus.INACTIVE)
    else:
        body["seed"], field = 1, "(body)"
    response = api.post("/api/v1/challenges", body, token=me.token)
    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == field
    assert api.enqueued == []


class SeesCommitted:
    """An executor that looks each match up through a connection of its own when handed it:
    it finds the match only if the transaction that made it has committed."""

    def __init__(self, url: str) -> None:
        self.db = Database(url)
        self.seen: list[tuple[int, MatchStatus]] = []

    def submit(self, match_ids: Iterable[int]) -> None:
        self.seen += [(m, match_status(self.db, m)) for m in match_ids]

    def close(self) -> None:
        self.db.dispose()


def test_a_challenge_is_submitted_only_once_its_transaction_has_committed(db_url: str):
    db = Database(db_url)
    me = register_bot(db, name="me", owner="o", url="http://127.0.0.1:9001")
    you = register_bot(db, name="you", owner="p", url="http://127.0.0.1:9002")
    executor = SeesCommitted(db_url)
    app = create_app(settings_for(db_url), db=db, executor=executor)
    try:
        response = app.test_client().post(
            "/api/v1/challenges",
            json={"bot_id": me.bot_id, "opponent_id": you.bot_id},
            headers={"Authorization": f"Bearer {me.token}"},
        )
    finally:
        close_app(app)
        executor.close()
        db.dispose()
    assert response.status_code == 201
    assert executor.seen == [(response.json["id"], MatchStatus.PENDING)]


def test_with_celery_the_match_is_sent_to_the_broker(db_url: str, redis_url: str):
    db = Database(db_url)
    me = register_bot(db, name="me", owner="o", url="http://127.0.0.1:9001")
    you = register_bot(db, name="you", owner="p", url="http://127.0.0.1:9002")
    app = create_app(settings_for(db_url, broker_url=redis_url, executor="celery"), db=db)
    try:
        response = app.test_client().post(
            "/api/v1/challenges",
            json={"bot_id": me.bot_id, "opponent_id": you.bot_id},
            headers={"Authorization": f"Bearer {me.token}"},
        )
        assert response.status_code == 201
    finally:
        close_app(app)
        db.dispose()
    client = redis.Redis.from_url(redis_url)
    try:
        # The default queue is one list per priority step (``celery``, ``celery\x06\x165``...).
        queues = [k for k in client.scan_iter("celery*") if client.type(k) == b"list"]
        bodies = [json.loads(m) for k in queues for m in client.lrange(k, 0, -1)]
    finally:
        client.close()
    assert [b["headers"]["task"] for b in bodies] == ["workers.tasks.run_match"]
    assert bodies[0]["properties"]["priority"] == MATCH_PRIORITY  # behind any resubmission
    assert bodies[0]["headers"]["argsrepr"] == f"[{response.json['id']}]"
