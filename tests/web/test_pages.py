"""Every page renders with real data on SQLite and PostgreSQL: house bots over HTTP play real
matches and a real tournament; a forfeit shows its faults and unfinished deals; a duplicate
twin still to play keeps the deals hidden; unknown ids get the 404 page, bad parameters the 400
page, a failure a 500 page without internals; and names are escaped wherever they appear."""

from __future__ import annotations

import json
import re
from typing import Any

from flask import Flask
from flask.testing import FlaskClient
from sqlalchemy import update
from web_data import SHORT, house_bots, make_app, populate, register, settings_for

from arena.api import close_app, create_app
from arena.db.models import BotRow, BotStatsRow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.players import Fault, FaultKind, HeuristicPlayer, MatchContext, Player, Turn
from arena.reading.queries import bots as bot_queries
from arena.reading.queries import matches as match_queries
from arena.reading.queries import tournaments as tournament_queries
from arena.reading.replay import load_record
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import Claim, schedule_match
from arena.services.tournaments import create_tournament, start_tournament
from arena.settings import Settings, load_settings
from arena.states import BotStatus
from arena.web import bp

REPLAY_DATA = re.compile(r'<script type="application/json" id="replay-data">(.*?)</script>', re.S)
REFRESH = 'http-equiv="refresh"'


def get(client: FlaskClient, path: str, status: int = 200) -> str:
    response = client.get(path)
    assert response.status_code == status, (path, response.status_code, response.text[:800])
    assert response.mimetype == "text/html"
    return response.get_data(as_text=True)


def replay_data(page: str) -> dict[str, Any]:
    found = REPLAY_DATA.search(page)
    assert found, "the match page embeds its replay"
    data: dict[str, Any] = json.loads(found.group(1))
    return data


def test_every_page_renders_real_matches_and_a_tournament(db: Database) -> None:
    with house_bots(["random", "greedy", "strong", "lazy"]) as servers:
        data = populate(db, servers)
    client = make_app(db).test_client()

    board = bot_queries.ratings_board(db)[0]
    home = get(client, "/")
    assert len(board) == 5
    positions = [home.index(f">{row['name']}</a>") for row in board]
    assert positions == sorted(positions), "the leaderboard keeps the fitted order"
    assert home.count('class="ci-range') == 5, "every fitted bot has its interval bar"
    assert "Spring Knockout" in home
    for match_id in [*data.matches, *data.tournament_matches]:
        assert f'href="/matches/{match_id}"' in home
    assert REFRESH not in home

    flaky = data.bots["flaky-greedy"]
    detail = bot_queries.bot_detail(db, flaky)
    assert detail is not None and detail["statistics"]["faults"] >= 1
    page = get(client, f"/bots/{flaky}")
    assert "<h1" in page and "flaky-greedy" in page
    assert '<svg class="sparkline"' in page
    for label in ("Knock rate", "Gin rate", "Misknock rate", "Deadwood at knock", "Latency p99"):
        assert label in page
    assert f"<dd>{detail['statistics']['faults']}</dd>" in page
    assert f'href="/matches/{data.matches[0]}"' in page

    listing = get(client, "/matches")
    every = [*data.matches, *data.tournament_matches]
    assert all(f'href="/matches/{m}"' in listing for m in every)
    older = get(client, f"/matches?before={max(every)}")
    assert f'href="/matches/{max(every)}"' not in older
    assert f'href="/matches/{min(every)}"' in older
    mine = get(client, f"/matches?bot={data.bots['house-random']}&status=finished")
    assert "house-random" in mine and f'href="/matches/{data.matches[1]}"' not in mine

    match_id = data.matches[0]
    m = match_queries.match_detail(db, match_id)
    assert m is not None
    page = get(client, f"/matches/{match_id}")
    assert "illegal_action" in page, "the flaky bot's fault is listed"
    assert re.search(r'href="#g1-d\d+-s\d+" class="jump"', page), "the fault links to its step"
    assert "Time in bots" in page and "p99" in page
    replay = replay_data(page)
    hands = [h for g in m["games"] for h in g["hands"]]
    assert len(replay["deals"]) == len(hands) >= 1
    for deal, hand in zip(replay["deals"], hands, strict=True):
        assert deal["error"] is None
        assert deal["result"]["outcome"] == hand["outcome"]
        assert deal["steps"][0]["stock"] == 31
    assert any("fault" in s["action"] for d in replay["deals"] for s in d["steps"])
    assert "replay.js" in page and REFRESH not in page

    tournaments = get(client, "/tournaments")
    assert "Spring Knockout" in tournaments and "Single elimination" in tournaments
    t = tournament_queries.tournament_detail(db, data.tournament_id)
    assert t is not None and t["status"] == "finished" and t["champion"] is not None
    page = get(client, f"/tournaments/{data.tournament_id}")
    assert "Standings" in page and "Third place" in page and "Semi-finals" in page
    assert ">bye<" in page, "five bots in an eight-slot bracket: byes"
    assert f">{t['champion']['name']}</a></p>" in page
    for match_id in data.tournament_matches:
        assert f'href="/matches/{match_id}"' in page
    assert REFRESH not in page


def test_a_running_tournament_and_its_pending_matches_refresh_themselves(db: Database) -> None:
    with house_bots(["random", "greedy", "strong"], flaky=False) as servers:
        bots = list(populate(db, servers, tournament=False).bots.values())
    running = create_tournament(
        db, name="Live Cup", format_name="double_elimination", bot_ids=bots, rules=SHORT, seed=1
    )
    scheduled: list[int] = []
    start_tournament(db, running, scheduled.extend)
    swiss = create_tournament(
        db, name="Swiss Open", format_name="swiss", options={"rounds": 2}, rules=SHORT, seed=2
    )
    client = make_app(db).test_client()

    page = get(client, f"/tournaments/{running}")
    assert REFRESH in page and "Live" in page
    for section in ("Winners bracket", "Losers bracket", "Grand final"):
        assert section in page
    assert "winner of W" in page and "loser of W" in page
    assert scheduled and all(f'href="/matches/{m}"' in page for m in scheduled)

    pending = get(client, f"/matches/{scheduled[0]}")
    assert REFRESH in pending and "Waiting for a worker" in pending
    assert "replay-data" not in pending

    page = get(client, f"/tournaments/{swiss}")
    assert "Rounds" in page and "Round 1" in page and REFRESH not in page
    listing = get(client, "/tournaments?status=running")
    assert "Live Cup" in listing and "Swiss Open" not in listing


def test_unknown_ids_get_the_404_page(db: Database) -> None:
    client = make_app(db).test_client()
    for path, what in [
        ("/bots/999", "There is no bot 999."),
        ("/matches/999", "There is no match 999."),
        ("/tournaments/999", "There is no tournament 999."),
    ]:
        page = get(client, path, 404)
        assert what in page and "Back to the leaderboard" in page
        assert "Traceback" not in page


def test_bad_parameters_get_the_400_page(db: Database) -> None:
    client = make_app(db).test_client()
    assert "bot must be a whole number" in get(client, "/matches?bot=abc", 400)
    assert "before must be positive" in get(client, "/matches?before=0", 400)
    assert "status must be one of" in get(client, "/matches?status=nope", 400)
    assert "status must be one of" in get(client, "/tournaments?status=nope", 400)


def test_a_failing_page_shows_no_internals_even_beside_an_app_wide_json_handler(
    db: Database,
) -> None:
    app = Flask(__name__)
    app.extensions["gin_arena"] = {"db": "not a database"}
    app.register_blueprint(bp)

    # What a JSON API typically registers app-wide: it must not answer the pages.
    @app.errorhandler(Exception)
    def problem(error: Exception) -> tuple[dict[str, str], int]:
        return {"title": "problem"}, 500

    client = app.test_client()
    page = get(client, "/", 500)
    assert "Something went wrong" in page
    assert "Traceback" not in page and "not a database" not in page and "TypeError" not in page
    app.extensions["gin_arena"] = {"db": db}
    assert "There is no match 5." in get(client, "/matches/5", 404)


HOSTILE = "<script>alert('x')</script>"
HOSTILE_TOURNAMENT = '<img src=x onerror="alert(1)">'


def test_names_are_escaped_everywhere(db: Database) -> None:
    # The service refuses such names now; the pages must still be safe with any stored text
    # (an older row, an admin edit), including inside the replay's embedded JSON.
    with house_bots(["random", "greedy"], flaky=False) as servers:
        data = populate(db, servers, tournament=False)
    victim = data.bots["house-random"]
    with db.session() as session:
        session.execute(update(BotRow).where(BotRow.id == victim).values(name=HOSTILE))
        session.execute(update(BotRow).where(BotRow.id == victim).values(owner=HOSTILE))
        sneaky = BotRow(
            name=f"</script>{HOSTILE}",
            owner="x",
            url="http://127.0.0.1:1",
            protocol_version="1",
            token_hash="0" * 64,
            secret="s",
            status=BotStatus.ACTIVE,
        )
        session.add(sneaky)
        session.flush()
        session.add(BotStatsRow(bot_id=sneaky.id, latency_histogram=[]))
        pending = schedule_match(session, sneaky.id, victim, rules=SHORT, seed=3).id
    tournament = create_tournament(db, name=HOSTILE_TOURNAMENT, format_name="round_robin", seed=1)
    client = make_app(db).test_client()
    pages = [
        "/",
        "/?all=1",
        f"/bots/{victim}",
        f"/bots/{sneaky.id}",
        "/matches",
        f"/matches?bot={victim}",
        f"/matches/{data.matches[0]}",
        f"/matches/{pending}",
        "/tournaments",
        f"/tournaments/{tournament}",
    ]
    for path in pages:
        page = get(client, path)
        assert HOSTILE not in page and HOSTILE_TOURNAMENT not in page, path
        assert "<script>alert" not in page, path
        escaped = ("&lt;script&gt;", "\\u003cscript\\u003e", "&lt;img src=x")
        assert any(e in page for e in escaped), path
    replay = replay_data(get(client, f"/matches/{data.matches[0]}"))
    assert replay["names"]["a"] == HOSTILE
    assert "&lt;img src=x" in get(client, f"/tournaments/{tournament}")


class _GoesSilent:
    """Plays well for its first requests, then never answers: it forfeits in mid-game."""

    def __init__(self, name: str, answers: int) -> None:
        self.name = name
        self.inner = HeuristicPlayer(name=name)
        self.answers = answers

    def start(self, context: MatchContext) -> Fault | None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        self.answers -= 1
        if self.answers < 0:
            return Fault(FaultKind.TIMEOUT, "no answer within the deadline")
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        return None


def test_a_forfeit_shows_its_faults_the_unfinished_deals_and_the_deal_it_cut_short(
    db: Database,
) -> None:
    a = register_bot(db, name="steady", owner="t", url="http://127.0.0.1:9001").bot_id
    b = register_bot(db, name="silent", owner="t", url="http://127.0.0.1:9002").bot_id
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=RuleSet(best_of=1), seed=8).id

    def players(claim: Claim, _settings: Settings) -> list[Player]:
        return [HeuristicPlayer(name="steady"), _GoesSilent("silent", answers=40)]

    outcome = run_match_job(db, load_settings({}), match_id, "test", make_players=players)
    assert outcome.status is JobStatus.RECORDED
    record = load_record(db, match_id).to_dict()
    assert record["forfeit"]["seat"] == "b" and record["unfinished_game"]["hands"]
    page = get(make_app(db).test_client(), f"/matches/{match_id}")
    assert "Forfeit" in page and "silent" in page
    assert page.count('class="tag fault">timeout<') == 3
    assert "no answer within the deadline" in page
    assert "(unfinished)" in page
    assert "cut short by the forfeit" in page
    assert page.count('class="jump"') == 3, "every fault links to its step, the last one too"
    deals = replay_data(page)["deals"]
    *played, cut = deals
    assert len(played) == len(record["unfinished_game"]["hands"])
    assert all(d["unfinished"] and d["error"] is None for d in deals)
    assert cut["interrupted"] and cut["result"] is None
    assert len(cut["steps"]) == len(record["interrupted_deal"]["actions"]) + 1
    assert cut["steps"][-1]["action"]["fault"]["kind"] == "timeout"


def test_deals_stay_hidden_while_the_duplicate_twin_is_still_to_play(db: Database) -> None:
    with house_bots(["greedy"]) as servers:
        register(db, servers)
        tournament = create_tournament(
            db,
            name="Duplicate Duel",
            format_name="round_robin",
            options={"duplicate": True},
            rules=SHORT,
            seed=9,
        )
        queue: list[int] = []
        start_tournament(db, tournament, queue.extend)
        first, twin = queue
        settings = settings_for(db.url)
        assert run_match_job(db, settings, first, "test").status is JobStatus.RECORDED
        client = make_app(db).test_client()
        detail = match_queries.match_detail(db, first)
        assert detail is not None and detail["faults"], "the flaky bot faulted"
        secret = detail["faults"][0]["detail"]

        page = get(client, f"/matches/{first}")
        assert "replay-data" not in page and "duplicate twin" in page
        assert f"seed {detail['seed']}" not in page
        assert "illegal_action" in page and secret not in page

        assert run_match_job(db, settings, twin, "test").status is JobStatus.RECORDED
    page = get(client, f"/matches/{first}")
    assert "replay-data" in page and f"seed {detail['seed']}" in page and secret in page


def test_the_app_factory_mounts_the_pages_beside_the_api(db: Database) -> None:
    app = create_app(settings_for(db.url), db=db)
    try:
        client = app.test_client()
        assert "Leaderboard" in get(client, "/")
        assert "Back to the leaderboard" in get(client, "/no/such/page", 404)
        assert "There is no bot 7." in get(client, "/bots/7", 404)
        api = client.get("/api/v1/bots/7")
        assert api.status_code == 404 and api.mimetype == "application/problem+json"
        with client.get("/assets/replay.js") as script:  # a file response: close it
            assert script.status_code == 200 and script.mimetype == "text/javascript"
    finally:
        close_app(app)
