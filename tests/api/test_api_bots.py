"""Bots through the API: registration checks the real bot first, owners manage their bots,
nobody else reads or changes their URL or credentials."""

from __future__ import annotations

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api, HouseBots, make_api
from api_world import ADMIN_TOKEN

from arena.db.models import BotRow
from arena.services.bots import update_bot

PROBLEM = "application/problem+json"


def register(api: Api, url: str, name: str = "my-bot", owner: str = "ada@example.com") -> dict:
    response = api.post("/api/v1/bots", {"name": name, "url": url, "owner": owner})
    assert response.status_code == 201, response.json
    return response.json


def test_register_checks_the_bot_and_shows_token_and_secret_once(api: Api, house: HouseBots):
    body = register(api, house.urls[0])
    assert body["token"].startswith("gat_") and body["secret"].startswith("whsec_")
    assert body["check"]["passed"] and not body["check"]["signatures_required"]
    assert body["check"]["bot_info"]["protocol"] == "gin-arena/1"
    assert body["bot"]["url"] == house.urls[0]
    read = api.get(f"/api/v1/bots/{body['id']}", token=body["token"]).json
    assert "token" not in read and "secret" not in read and "token_hash" not in read


def test_register_location_header_points_at_the_bot(api: Api, house: HouseBots):
    response = api.post("/api/v1/bots", {"name": "loc", "url": house.urls[0], "owner": "o"})
    assert response.headers["Location"].endswith(f"/api/v1/bots/{response.json['id']}")
    assert response.headers["Cache-Control"] == "no-store"


def test_a_signing_bot_registered_with_its_own_secret_is_checked_for_real(
    api: Api, house: HouseBots
):
    """The owner brings the secret the bot already verifies with: the registration check is
    signed with it, so the bot's /act is really checked, and no restart is needed."""
    response = api.post(
        "/api/v1/bots",
        {"name": "signed", "url": house.signed.url, "owner": "o", "secret": house.secret},
    )
    assert response.status_code == 201, response.json
    body = response.json
    assert body["secret"] == house.secret
    check = body["check"]
    assert check["passed"] and not check["signatures_required"]
    acts = [i for i in check["items"] if i["name"].startswith("POST /act")]
    assert acts and acts[0]["passed"] and "answered" in acts[0]["detail"]
    with api.db.session() as session:
        assert session.get_one(BotRow, body["id"]).secret == house.secret


def test_a_signing_bot_that_refuses_the_signed_check_is_not_registered(api: Api, house: HouseBots):
    """Without its secret the arena signs with one the bot cannot know: the bot refuses, and
    registration is refused saying why (it used to be accepted with no /act checked)."""
    response = api.post("/api/v1/bots", {"name": "signed", "url": house.signed.url, "owner": "o"})
    assert response.status_code == 422
    body = response.json
    assert "refused the arena's signed request" in body["detail"]
    assert "secret" in body["detail"]
    assert body["check"]["signatures_required"] is True and not body["check"]["passed"]
    assert api.get("/api/v1/bots").json["items"] == []


@pytest.mark.parametrize(
    "secret",
    ["not-a-secret", "whsec_", "whsec_@@@@", "whsec_" + "QUFB" * 4, "whsec_" + "QUFB" * 30],
    ids=["no-prefix", "empty", "not-base64", "16-bytes", "90-bytes"],
)
def test_a_malformed_secret_is_a_400_naming_the_field(api: Api, house: HouseBots, secret: str):
    response = api.post(
        "/api/v1/bots", {"name": "x", "url": house.urls[0], "owner": "o", "secret": secret}
    )
    assert response.status_code == 400, response.json
    assert response.mimetype == PROBLEM
    assert response.json["errors"][0]["field"] == "secret"
    assert response.json["detail"].startswith("secret: ")


def test_register_refuses_an_unreachable_bot_with_the_failed_step(api: Api):
    response = api.post(
        "/api/v1/bots", {"name": "ghost", "url": "http://127.0.0.1:9", "owner": "o"}
    )
    assert response.status_code == 422
    assert response.mimetype == PROBLEM
    body = response.json
    assert body["errors"][0]["field"] == "url"
    assert "connection" in body["detail"]
    assert body["check"]["passed"] is False


def test_register_refuses_loopback_in_production(db_url: str, house: HouseBots):
    for api in make_api(db_url, allow_loopback=False):
        response = api.post("/api/v1/bots", {"name": "x", "url": house.urls[0], "owner": "o"})
        assert response.status_code == 422
        assert "loopback" in response.json["detail"]
        assert "ARENA_ALLOW_LOOPBACK=1" in response.json["detail"]


def test_register_refuses_a_bot_speaking_another_protocol(api: Api, house: HouseBots):
    response = api.post(
        "/api/v1/bots", {"name": "x", "url": house.urls[0] + "/nowhere", "owner": "o"}
    )
    assert response.status_code == 422
    assert response.json["errors"][0]["field"] == "url"


def test_register_name_taken_is_409(api: Api, house: HouseBots):
    register(api, house.urls[0], name="dup")
    response = api.post("/api/v1/bots", {"name": "dup", "url": house.urls[1], "owner": "o"})
    assert response.status_code == 409
    assert response.json["type"].endswith("/name-taken")


def test_register_validation_names_the_offending_field(api: Api):
    cases = [
        ({"name": "bad name!", "url": "http://x", "owner": "o"}, "name"),
        ({"name": "ok", "owner": "o"}, "(body)"),
        ({"name": "ok", "url": "", "owner": "o"}, "url"),
        ({"name": "ok", "url": "http://x", "owner": "o", "extra": 1}, "(body)"),
        ({"name": 5, "url": "http://x", "owner": "o"}, "name"),
    ]
    for body, field in cases:
        response = api.post("/api/v1/bots", body)
        assert response.status_code == 422, body
        assert response.mimetype == PROBLEM
        assert response.json["errors"][0]["field"] == field, (body, response.json)
        assert response.json["detail"]


def test_malformed_json_is_400_and_wrong_media_type_415(api: Api):
    response = api.client.post(
        "/api/v1/bots", data="{not json", headers={"Content-Type": "application/json"}
    )
    assert response.status_code == 400 and response.mimetype == PROBLEM
    response = api.client.post("/api/v1/bots", data="name=x", content_type="text/plain")
    assert response.status_code == 415 and response.mimetype == PROBLEM


def test_list_filters_by_status_and_owner_and_pages(api: Api, house: HouseBots):
    bots = [register(api, house.urls[i % 3], name=f"b{i}", owner=f"o{i % 2}") for i in range(5)]
    ids = [b["id"] for b in bots]
    api.post(f"/api/v1/bots/{ids[0]}/deactivate", token=ADMIN_TOKEN)
    assert {b["id"] for b in api.get("/api/v1/bots?status=inactive").json["items"]} == {ids[0]}
    owned = api.get("/api/v1/bots?owner=o1&sort=id", token=ADMIN_TOKEN).json["items"]
    assert [b["id"] for b in owned] == [ids[1], ids[3]]
    # The owner of a bot with that contact may list its siblings too.
    owned = api.get("/api/v1/bots?owner=o1&sort=id", token=bots[3]["token"]).json["items"]
    assert [b["id"] for b in owned] == [ids[1], ids[3]]
    seen, offset = [], 0
    while offset is not None:
        page = api.get(f"/api/v1/bots?sort=name&limit=2&offset={offset}").json
        seen += [b["name"] for b in page["items"]]
        offset = page["next_offset"]
    assert seen == sorted(seen) and len(seen) == 5


def test_list_rejects_bad_query_parameters_with_the_parameter_named(api: Api):
    cases = [
        ("sort=height", "query.sort"),
        ("limit=0", "query.limit"),
        ("limit=x", "query.limit"),
        ("status=zombie", "query.status"),
    ]
    for query, field in cases:
        response = api.get(f"/api/v1/bots?{query}")
        assert response.status_code == 422
        assert response.json["errors"][0]["field"] == field


def test_read_shows_the_url_to_owner_and_organiser_only(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    other = register(api, house.urls[1], name="other")
    path = f"/api/v1/bots/{mine['id']}"
    assert api.get(path, token=mine["token"]).json["url"] == house.urls[0]
    assert api.get(path, token=ADMIN_TOKEN).json["url"] == house.urls[0]
    assert api.get(path, token=other["token"]).json["url"] is None
    assert api.get(path).json["url"] is None
    assert "Authorization" in api.get(path).headers["Vary"]


def test_read_unknown_and_out_of_range_ids_are_404(api: Api):
    for path in ("/api/v1/bots/12345", "/api/v1/bots/99999999999", "/api/v1/bots/0"):
        response = api.get(path)
        assert response.status_code == 404 and response.mimetype == PROBLEM


def test_owner_contact_is_for_the_owner_and_the_organiser_only(api: Api, house: HouseBots):
    """Anonymous callers and other owners see the public name, never the e-mail address."""
    mine = register(api, house.urls[0], name="mine", owner="Ada Lovelace <ada@example.com>")
    other = register(api, house.urls[1], name="other", owner="bob@example.org")
    assert mine["bot"]["owner"] == "Ada Lovelace <ada@example.com>"
    path = f"/api/v1/bots/{mine['id']}"
    for token in (mine["token"], ADMIN_TOKEN):
        body = api.get(path, token=token).json
        assert body["owner"] == "Ada Lovelace <ada@example.com>"
        assert body["owner_name"] == "Ada Lovelace"
    for token in (None, other["token"]):
        response = api.get(path, token=token)
        assert response.json["owner"] is None and response.json["url"] is None
        assert response.json["owner_name"] == "Ada Lovelace"
        assert "ada@example.com" not in response.get_data(as_text=True)
    public = api.get(f"/api/v1/bots/{other['id']}").json
    assert public["owner"] is None and public["owner_name"] == "bob"


def test_filtering_by_owner_contact_is_not_an_oracle_for_the_public(api: Api, house: HouseBots):
    """Without this, anyone could ask which bots an e-mail address owns."""
    mine = register(api, house.urls[0], name="mine", owner="ada@example.com")
    other = register(api, house.urls[1], name="other", owner="bob@example.org")
    query = "/api/v1/bots?owner=ada@example.com"
    assert api.get(query).status_code == 401
    refused = api.get(query, token=other["token"])
    assert refused.status_code == 403 and "not public" in refused.json["detail"]
    for token in (mine["token"], ADMIN_TOKEN):
        items = api.get(query, token=token).json["items"]
        assert [b["id"] for b in items] == [mine["id"]]


def test_owner_renames_and_moves_the_bot_and_the_url_is_rechecked(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    path = f"/api/v1/bots/{mine['id']}"
    response = api.patch(path, {"name": "renamed", "url": house.urls[1]}, token=mine["token"])
    assert response.status_code == 200
    assert response.json["name"] == "renamed" and response.json["url"] == house.urls[1]
    response = api.patch(path, {"url": "http://127.0.0.1:9"}, token=mine["token"])
    assert response.status_code == 422 and response.json["errors"][0]["field"] == "url"
    assert api.get(path, token=mine["token"]).json["url"] == house.urls[1]
    response = api.patch(path, {}, token=mine["token"])
    assert response.status_code == 422


def test_rename_to_a_taken_name_is_409(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    register(api, house.urls[1], name="taken")
    response = api.patch(f"/api/v1/bots/{mine['id']}", {"name": "taken"}, token=mine["token"])
    assert response.status_code == 409


def test_rotating_the_token_revokes_the_old_one(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    response = api.post(f"/api/v1/bots/{mine['id']}/token", token=mine["token"])
    assert response.status_code == 200
    new = response.json["token"]
    assert new != mine["token"]
    old = api.post(f"/api/v1/bots/{mine['id']}/token", token=mine["token"])
    assert old.status_code == 401 and old.headers["WWW-Authenticate"].startswith("Bearer")
    assert api.post(f"/api/v1/bots/{mine['id']}/secret", token=new).status_code == 200


def test_rotating_the_secret_changes_what_the_arena_signs_with(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    response = api.post(f"/api/v1/bots/{mine['id']}/secret", token=mine["token"])
    secret = response.json["secret"]
    assert secret.startswith("whsec_") and secret != mine["secret"]
    assert response.json["previous_valid_until"] is not None  # the default 24-hour window
    with api.db.session() as session:
        bot = session.get_one(BotRow, mine["id"])
        assert (bot.secret, bot.previous_secret) == (secret, mine["secret"])


def test_the_owner_ends_the_rotation_window_early(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    path = f"/api/v1/bots/{mine['id']}/secret/previous"
    api.post(f"/api/v1/bots/{mine['id']}/secret", token=mine["token"])
    other = register(api, house.urls[1], name="other")
    refused = api.client.delete(path, headers=api.headers(other["token"]))
    assert refused.status_code == 403
    response = api.client.delete(path, headers=api.headers(mine["token"]))
    assert response.status_code == 200
    assert response.json == {"id": mine["id"], "previous_valid_until": None}
    with api.db.session() as session:
        assert session.get_one(BotRow, mine["id"]).previous_secret is None


def test_deactivate_and_activate_again_after_a_check(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    path = f"/api/v1/bots/{mine['id']}"
    assert api.post(path + "/deactivate", token=mine["token"]).json["status"] == "inactive"
    assert api.post(path + "/activate", token=ADMIN_TOKEN).json["status"] == "active"


def test_activate_refuses_a_bot_that_stopped_answering(api: Api, house: HouseBots):
    mine = register(api, house.urls[0], name="mine")
    update_bot(api.db, mine["id"], url="http://127.0.0.1:9")
    response = api.post(f"/api/v1/bots/{mine['id']}/activate", token=mine["token"])
    assert response.status_code == 422


def test_conformance_check_on_demand_signs_with_the_bots_secret(api: Api, house: HouseBots):
    # The house bot verifies signatures with its own secret: the owner brings that one.
    signed = api.post(
        "/api/v1/bots",
        {"name": "signed", "url": house.signed.url, "owner": "o", "secret": house.secret},
    ).json
    response = api.post(f"/api/v1/bots/{signed['id']}/check", token=signed["token"])
    assert response.status_code == 200
    report = response.json
    assert report["passed"], report
    names = [i["name"] for i in report["items"]]
    assert "refuses a forged signature" in names
    assert report["latency_ms"]["requests"] >= 10


def test_conformance_check_during_a_rotation_signs_with_both_secrets(api: Api, house: HouseBots):
    # The owner rotated the secret but the bot still verifies with the old one, as the
    # rotation window allows: a match accepts it, so the on-demand check must too (it once
    # signed with the new secret alone, and the bot failed at POST /start).
    signed = api.post(
        "/api/v1/bots",
        {"name": "rotating", "url": house.signed.url, "owner": "o", "secret": house.secret},
    ).json
    rotated = api.post(f"/api/v1/bots/{signed['id']}/secret", token=signed["token"]).json
    assert rotated["previous_valid_until"] is not None
    report = api.post(f"/api/v1/bots/{signed['id']}/check", token=signed["token"]).json
    assert report["passed"], report
    names = {i["name"]: i["passed"] for i in report["items"]}
    assert names["accepts two signatures (a secret rotation)"]
    closed = api.client.delete(
        f"/api/v1/bots/{signed['id']}/secret/previous", headers=api.headers(signed["token"])
    )
    assert closed.status_code == 200
    ended = api.post(f"/api/v1/bots/{signed['id']}/check", token=signed["token"]).json
    assert not ended["passed"]  # the window is over: only the new secret signs
