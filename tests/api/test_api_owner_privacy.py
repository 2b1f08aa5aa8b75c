"""A bot's owner contact (an e-mail address) is for its owner and the organiser only: every
read the public can make, on the API and on the pages, shows the owner's public name instead,
and leaks no address anywhere (leaderboard, bots, matches, replays, tournaments)."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import Api
from api_world import ADMIN_TOKEN, World
from hypothesis import given
from hypothesis import strategies as st
from test_api_parameters import SPEC

from arena.api.owners import owner_name

#: The owner contacts of the world's bots (the spec's own examples name other addresses).
ADDRESS = re.compile(r"(?:alpha|bravo|charlie|delta|echo)@example\.com")


def _public_reads(world: World) -> Iterator[str]:
    """Every documented GET (ids filled from the world) and every page, as the public."""
    ids = {
        "{bot_id}": [world.bots["alpha"], world.bots["charlie"]],
        "{match_id}": [world.challenge_match, *world.finished_matches[:2]],
        "{tournament_id}": [world.finished_tournament, world.running_tournament],
    }
    for path, item in SPEC["paths"].items():
        if "get" not in item or path.startswith("/api/v1/docs"):
            continue
        if item["get"].get("security") == [{"bearer": []}]:
            continue  # not a public read (a bot's webhooks: its owner and the organiser)
        if item["get"].get("x-streaming"):
            continue  # a live stream does not end (tests/live reads what streams carry)
        if "{test_id}" in path:
            continue  # the world has no SPRT test: test_api_sprt_tests.py reads one
        holes = [hole for hole in ids if hole in path]
        if not holes:
            yield path
            continue
        for value in ids[holes[0]]:
            yield path.replace(holes[0], str(value))
    for m in world.finished_matches[:2]:
        yield f"/api/v1/matches/{m}/replay?seat=a"
        yield f"/api/v1/matches/{m}/replay?seat=b"
    yield "/"
    yield "/?all=1"
    yield "/matches"
    yield "/tournaments"
    yield "/rules"
    for name in world.bots:
        yield f"/bots/{world.bots[name]}"
    for m in [world.challenge_match, world.pending_match, *world.finished_matches]:
        yield f"/matches/{m}"
    for t in (world.finished_tournament, world.running_tournament):
        yield f"/tournaments/{t}"


def test_no_public_read_shows_an_owner_address(reader: Api, world: World):
    paths = list(_public_reads(world))
    assert len(paths) > 30
    for path in paths:
        response = reader.get(path)
        assert response.status_code in (200, 409), (path, response.status_code)
        text = response.get_data(as_text=True)
        assert not ADDRESS.search(text), (path, ADDRESS.findall(text)[:3])


@pytest.mark.parametrize("viewer", ["anonymous", "other owner", "owner", "organiser"])
def test_the_bot_page_and_the_api_show_the_contact_to_owner_and_organiser_only(
    reader: Api, world: World, viewer: str
):
    alpha = world.bots["alpha"]
    token = {
        "anonymous": None,
        "other owner": world.tokens["bravo"],
        "owner": world.tokens["alpha"],
        "organiser": ADMIN_TOKEN,
    }[viewer]
    may_see = viewer in ("owner", "organiser")
    body = reader.get(f"/api/v1/bots/{alpha}", token=token).json
    assert body["owner_name"] == "alpha"
    assert body["owner"] == ("alpha@example.com" if may_see else None)
    page = reader.get(f"/bots/{alpha}", token=token)
    assert page.status_code == 200 and page.mimetype == "text/html"
    text = page.get_data(as_text=True)
    assert "Owner alpha" in text
    assert ("alpha@example.com" in text) is may_see
    assert "Authorization" in page.headers["Vary"]


def test_a_bad_token_on_the_bot_page_is_a_401_page_not_a_silent_anonymous(
    reader: Api, world: World
):
    page = reader.get(f"/bots/{world.bots['alpha']}", token="not-a-token")
    assert page.status_code == 401 and page.mimetype == "text/html"
    assert "bearer token is not valid" in page.get_data(as_text=True)


def test_a_proxys_basic_authentication_leaves_the_pages_public(reader: Api, world: World):
    """A site behind a proxy with Basic authentication: the browser sends it on every page."""
    page = reader.client.get(
        f"/bots/{world.bots['alpha']}", headers={"Authorization": "Basic dXNlcjpwYXNz"}
    )
    assert page.status_code == 200 and "alpha@example.com" not in page.get_data(as_text=True)


NAMES = st.text(st.characters(categories=["L", "Zs"], exclude_characters="@"), max_size=30)
LOCALS = st.from_regex(r"[A-Za-z0-9._+-]{1,20}", fullmatch=True)
DOMAINS = st.from_regex(r"[a-z0-9-]{1,12}\.[a-z]{2,6}", fullmatch=True)
FORMS = st.sampled_from(
    ["{a}", "{n} <{a}>", '"{n}" <{a}>', "{n} ({a})", "<{a}>", "mailto:{a}", "{a}, {n}", "{n}: {a}"]
)


@given(name=NAMES, local=LOCALS, domain=DOMAINS, form=FORMS)
def test_the_public_name_never_holds_the_address(name: str, local: str, domain: str, form: str):
    contact = form.format(n=name, a=f"{local}@{domain}")
    public = owner_name(contact)
    assert "@" not in public, (contact, public)
    assert public.strip() == public and public
