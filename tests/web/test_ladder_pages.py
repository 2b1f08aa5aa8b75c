"""The ladder's pages on SQLite and PostgreSQL: ``/ladder`` (its standings by preset, its
recent matches, linked from the nav, refreshing itself while a ladder runs) and each bot's place
on its bot page."""

from __future__ import annotations

import re
from collections.abc import Iterable

from flask import Flask
from web_data import make_app

from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.players import HeuristicPlayer, Player
from arena.services.bots import register_bot
from arena.services.ladder import run_ladder
from arena.services.matches import Claim
from arena.settings import Settings, load_settings

REFRESH = 'http-equiv="refresh"'


def _heuristic(claim: Claim, _settings: Settings) -> list[Player]:
    return [HeuristicPlayer(name=b.name, early_knock=4 + b.id % 5) for b in claim.spec.bots]


def _played_ladder(db: Database, names: Iterable[str]) -> tuple[Flask, dict[str, int], list[int]]:
    bots = {
        name: register_bot(db, name=name, owner="t", url=f"http://127.0.0.1:{9200 + i}").bot_id
        for i, name in enumerate(names)
    }
    settings = load_settings({}, database_url=db.url)
    ids = run_ladder(db, settings, lambda _ids: None)
    for match_id in ids:
        outcome = run_match_job(db, settings, match_id, "test", make_players=_heuristic)
        assert outcome.status is JobStatus.RECORDED, outcome
    return make_app(db), bots, ids


def _text(html: str) -> str:
    return " ".join(re.sub(r"<[^>]+>", " ", html).split())


def test_the_ladder_page_shows_the_standings_and_recent_matches(db: Database) -> None:
    app, bots, ids = _played_ladder(db, ["ann", "bob", "cy", "dee"])
    client = app.test_client()
    response = client.get("/ladder")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    text = _text(page)
    assert "Standard" in text and "a round every 300 s for standard" in text
    for name in bots:
        assert f'href="/bots/{bots[name]}"' in page
    for match_id in ids:
        assert f'href="/matches/{match_id}"' in page
    assert REFRESH in page  # the ladder runs: the page stays live
    assert re.search(r'<a href="/ladder"\s+aria-current="page">Ladder</a>', page)


def test_every_page_links_to_the_ladder(db: Database) -> None:
    page = make_app(db).test_client().get("/").get_data(as_text=True)
    assert '<a href="/ladder"' in page


def test_a_bot_page_shows_its_place_on_each_ladder(db: Database) -> None:
    app, bots, _ = _played_ladder(db, ["ann", "bob"])
    client = app.test_client()
    places = {}
    for name, bot_id in bots.items():
        section = client.get(f"/bots/{bot_id}").get_data(as_text=True).split('id="ladder"')[1]
        places[name] = _text(section.split("</section>")[0])
    assert sorted(re.search(r"#(\d) of 2", p).group(1) for p in places.values()) == ["1", "2"]  # type: ignore[union-attr]
    assert all("2 matches" in p for p in places.values())


def test_a_bot_that_never_played_the_ladder_says_so(db: Database) -> None:
    bot_id = register_bot(db, name="new", owner="t", url="http://127.0.0.1:9300").bot_id
    page = make_app(db).test_client().get(f"/bots/{bot_id}").get_data(as_text=True)
    assert "No decided ladder match yet" in page


def test_an_unknown_preset_is_the_400_page(db: Database) -> None:
    response = make_app(db).test_client().get("/ladder?preset=chess")
    assert response.status_code == 400
    assert "preset must be one of standard, oklahoma, straight" in response.get_data(as_text=True)


def test_a_preset_without_a_ladder_shows_it_is_off(db: Database) -> None:
    page = make_app(db).test_client().get("/ladder?preset=straight").get_data(as_text=True)
    assert "Straight" in page and ">off<" in page
    assert "No decided ladder matches on straight yet" in page
