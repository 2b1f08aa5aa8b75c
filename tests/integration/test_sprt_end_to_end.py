"""SPRT tests end to end on the embedded default's path: house bots over HTTP on loopback, the
test started through the API (the organiser's token), its pairs played by the LocalExecutor's
worker processes and advanced by the hook after each record, the report read through the API,
the page and ``gin-arena test status``.

The numbers: fast rules (one game to 50 a match), H0: 0 against H1: 40. ``strong`` and
``greedy`` are deterministic (each answer a function of the request alone, no generator), pair
``n`` plays on a seed derived from the test's seed and ``n``, and pairs are counted in pair
number order whatever order they finish in: so a fixed test seed fixes the whole LLR path.
With :data:`SEED` the test accepts H1 after 28 pairs, pentanomial 0 0 22 0 6 (found by
playing the pairs in process through the wire format, ``docs/TESTS.md``), every run; a slow
answer past the deadline (a forfeit) could still change a match, which at these rules and
deadline does not happen on a loaded machine either. A deterministic bot against itself splits
every pair (each seat wins its leg) and accepts H0 after 25 pairs, whatever the seed.
"""

from __future__ import annotations

import os
import subprocess
import sys
from typing import Any

import pytest
from arena_procs import house_bots, wait_until

from arena.api import close_app, create_app
from arena.db.session import Database
from arena.playing.executors import LocalExecutor
from arena.services.bots import register_bot
from arena.settings import load_settings

ADMIN = "admin-token-for-tests"
FAST = {"preset": "standard", "fields": {"target": 50, "best_of": 1}}
#: A test seed for which strong against greedy accepts H1 (after 28 pairs).
SEED = 20


def _run_test(db: Database, kinds: list[str], same_bot: bool) -> dict[str, Any]:
    settings = load_settings(
        {},
        database_url=db.url,
        allow_loopback=True,
        rate_limit="",
        admin_token=ADMIN,
        lease_seconds=30,
    )
    with house_bots(kinds) as bots:
        ids = [
            register_bot(db, name=b.info.name, owner="ada@example.org", url=b.url).bot_id
            for b in bots
        ]
        candidate, baseline = (ids[0], ids[0]) if same_bot else (ids[0], ids[1])
        with LocalExecutor(settings, processes=2, threads=4, periodic=("sweep",)) as executor:
            app = create_app(settings, db=db, executor=executor)
            client = app.test_client()
            headers = {"Authorization": f"Bearer {ADMIN}"}
            try:
                created = client.post(
                    "/api/v1/tests",
                    json={
                        "candidate_id": candidate,
                        "baseline_id": baseline,
                        "elo0": 0,
                        "elo1": 40,
                        "max_pairs": 1000,
                        "concurrency": 4,
                        "rules": FAST,
                        "seed": SEED,
                    },
                    headers=headers,
                )
                assert created.status_code == 201, created.get_json()
                test_id = created.get_json()["id"]

                def settled() -> bool:
                    """A verdict, and the pairs in flight past the stop played out too."""
                    now = client.get(f"/api/v1/tests/{test_id}").get_json()
                    open_ = {"pending", "running"}
                    return bool(now["verdict"]) and not any(
                        m["status"] in open_ for m in now["matches"]
                    )

                wait_until(settled, timeout=600, what="the SPRT test to reach a verdict")
                report: dict[str, Any] = client.get(f"/api/v1/tests/{test_id}").get_json()
                page = client.get(f"/tests/{test_id}")
                assert page.status_code == 200
                assert b"<svg" in page.data and b"llr-chart" in page.data
                assert client.get("/tests").status_code == 200
            finally:
                close_app(app)
    return report


def _cli_status(db: Database, test_id: int) -> str:
    env = {**os.environ, "ARENA_DATABASE_URL": db.url}
    done = subprocess.run(
        [sys.executable, "-m", "arena.cli", "test", "status", str(test_id)],
        capture_output=True,
        text=True,
        env=env,
        check=False,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr
    return done.stdout


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_strong_against_greedy_accepts_h1(db: Database) -> None:
    report = _run_test(db, ["strong", "greedy"], same_bot=False)
    assert report["verdict"] == "h1"
    assert report["seed"] == SEED  # over: shown
    assert (report["pairs"], report["pentanomial"]) == (28, [0, 0, 22, 0, 6])
    assert report["llr"] >= report["bounds"]["upper"]
    assert report["elo"]["ci_high"] > report["elo"]["estimate"] > 0
    assert len(report["llr_history"]) == report["pairs"]
    assert "H1 accepted" in _cli_status(db, report["id"])


@pytest.mark.parametrize("db_url", ["sqlite"], indirect=True)
def test_a_bot_against_itself_accepts_h0(db: Database) -> None:
    report = _run_test(db, ["strong"], same_bot=True)
    assert report["verdict"] == "h0"
    assert report["pentanomial"] == [0, 0, report["pairs"], 0, 0]
    assert "H0 accepted" in _cli_status(db, report["id"])
