"""Matches through the API: filters and stable pages, one match, and its replays (omniscient
and per seat), cached as the immutable documents they are, and withheld while they could help
a bot."""

from __future__ import annotations

import gzip
import json
from datetime import UTC, datetime, timedelta

from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api
from api_world import World

from arena.playing.stored import parse_record
from arena.reading.replay import LoadedMatch, verify_record


def test_list_is_newest_first_and_filters(reader: Api, world: World):
    items = reader.get("/api/v1/matches").json["items"]
    ids = [m["id"] for m in items]
    assert ids == sorted(ids, reverse=True)
    t = world.finished_tournament
    by_t = reader.get(f"/api/v1/matches?tournament_id={t}").json["items"]
    assert {m["id"] for m in by_t} == set(world.finished_matches[:3])
    delta = world.bots["delta"]
    by_bot = reader.get(f"/api/v1/matches?bot_id={delta}").json["items"]
    assert by_bot and all(delta in (m["bots"]["a"]["id"], m["bots"]["b"]["id"]) for m in by_bot)
    pending = reader.get("/api/v1/matches?status=pending").json["items"]
    assert world.pending_match in {m["id"] for m in pending}
    assert all(m["status"] == "pending" for m in pending)


def test_list_date_filters(reader: Api):
    future = (datetime.now(UTC) + timedelta(days=1)).isoformat()
    assert reader.get("/api/v1/matches", query_string={"since": future}).json["items"] == []
    assert reader.get("/api/v1/matches", query_string={"until": future}).json["items"]
    assert reader.get("/api/v1/matches?since=2000-01-01").json["items"]
    response = reader.get("/api/v1/matches?since=yesterday")
    assert response.status_code == 422 and response.json["errors"][0]["field"] == "query.since"


def test_pages_are_stable_and_complete(reader: Api):
    everything = [m["id"] for m in reader.get("/api/v1/matches?limit=200").json["items"]]
    seen, cursor = [], ""
    while True:
        page = reader.get(f"/api/v1/matches?limit=2{cursor}").json
        seen += [m["id"] for m in page["items"]]
        if page["next_before"] is None:
            break
        cursor = f"&before={page['next_before']}"
    assert seen == everything


def test_detail_has_games_hands_scores_faults_and_timings(reader: Api, world: World):
    body = reader.get(f"/api/v1/matches/{world.challenge_match}").json
    assert body["status"] == "finished" and body["seed"] == 99
    assert body["games"] and body["games"][0]["hands"]
    assert body["faults"] and body["faults"][0]["seat"] == "b"
    assert body["timings"]["duration_ms"] is not None
    assert set(body["latency_ms"]) == {"a", "b"}


def test_pending_and_embargoed_matches_hide_their_seed(reader: Api, world: World):
    assert reader.get(f"/api/v1/matches/{world.pending_match}").json["seed"] is None
    assert reader.get(f"/api/v1/matches/{world.embargoed_match}").json["seed"] is None


def test_unknown_match_is_404(reader: Api):
    assert reader.get("/api/v1/matches/77777").status_code == 404
    assert reader.get("/api/v1/matches/77777/replay").status_code == 404


def test_omniscient_replay_is_the_full_verified_record(reader: Api, world: World):
    response = reader.get(f"/api/v1/matches/{world.challenge_match}/replay")
    assert response.status_code == 200
    record = response.json
    assert record["id"] == world.challenge_match
    assert all(h["deck"] and h["actions"] for g in record["games"] for h in g["hands"])
    assert verify_record(parse_record(record, LoadedMatch)) == []


def test_replay_is_immutable_with_an_etag_and_304(reader: Api, world: World):
    path = f"/api/v1/matches/{world.challenge_match}/replay"
    first = reader.get(path)
    assert first.headers["Cache-Control"] == "public, max-age=31536000, immutable"
    etag = first.headers["ETag"]
    assert etag.startswith('W/"')
    again = reader.client.get(path, headers={"If-None-Match": etag})
    assert again.status_code == 304 and again.data == b""
    seat = reader.get(path + "?seat=a")
    assert seat.headers["ETag"] != etag


def test_large_replays_are_gzipped_for_clients_that_accept_it(reader: Api, world: World):
    path = f"/api/v1/matches/{world.challenge_match}/replay?seat=a"
    plain = reader.get(path)
    zipped = reader.client.get(path, headers={"Accept-Encoding": "gzip"})
    assert zipped.headers["Content-Encoding"] == "gzip"
    assert json.loads(gzip.decompress(zipped.data)) == plain.json
    assert len(zipped.data) < len(plain.data) / 3
    assert "Accept-Encoding" in zipped.headers["Vary"]


def test_other_large_bodies_are_gzipped_too(reader: Api, world: World):
    response = reader.client.get(
        f"/api/v1/tournaments/{world.finished_tournament}/bracket",
        headers={"Accept-Encoding": "gzip"},
    )
    assert response.headers["Content-Encoding"] == "gzip"


def test_seat_view_shows_what_the_bot_was_sent_and_answered(reader: Api, world: World):
    path = f"/api/v1/matches/{world.challenge_match}/replay"
    record = reader.get(path).json
    view = reader.get(path + "?seat=b").json
    assert view["seat"] == "b" and view["bot"] == record["players"]["b"]
    deals = [h for g in record["games"] for h in g["hands"]]
    if record["unfinished_game"]:
        deals += record["unfinished_game"]["hands"]
    if record["interrupted_deal"]:
        deals.append(record["interrupted_deal"])
    mine = [a for h in deals for a in h["actions"] if a[0] == 1]
    assert len(view["steps"]) == len(mine)
    for step, entry in zip(view["steps"], mine, strict=True):
        assert step["applied"] == entry[1]
        assert step["latency_ms"] == entry[2]
        assert step["request"]["match_id"] == record["match_id"]
        assert step["applied"] in step["request"]["legal_actions"] or step["applied"]["action"] in (
            "knock",
            "big_gin",
        )
    faulted = [s for s in view["steps"] if s["fault"]]
    assert len(faulted) == len(record["faults"])
    assert all(s["answer"] is None and s["fault"]["kind"] == "timeout" for s in faulted)
    # Nothing of the other side's hidden cards: the requests carry no deck and no seed.
    text = json.dumps(view["steps"])
    assert '"deck"' not in text and '"seed"' not in text


def test_seat_view_of_one_game(reader: Api, world: World):
    path = f"/api/v1/matches/{world.finished_matches[0]}/replay?seat=a"
    everything = reader.get(path).json["steps"]
    assert reader.get(path + "&game=0").json["steps"] == [s for s in everything if s["game"] == 0]
    assert reader.get(path + "&game=5").json["steps"] == []


def test_replay_of_a_pending_match_is_409(reader: Api, world: World):
    response = reader.get(f"/api/v1/matches/{world.pending_match}/replay")
    assert response.status_code == 409
    assert response.json["type"].endswith("/replay-not-available")


def test_replay_is_embargoed_until_the_duplicate_twin_is_played(reader: Api, world: World):
    response = reader.get(f"/api/v1/matches/{world.embargoed_match}/replay?seat=a")
    assert response.status_code == 409
    assert response.json["type"].endswith("/replay-embargoed")
    assert response.headers["Cache-Control"] == "no-store"


def test_replay_query_errors(reader: Api, world: World):
    path = f"/api/v1/matches/{world.challenge_match}/replay"
    assert reader.get(path + "?seat=c").status_code == 422
    assert reader.get(path + "?game=-1").status_code == 422
