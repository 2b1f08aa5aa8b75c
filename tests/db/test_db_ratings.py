"""The stored whole-history fit: concurrent refits are serialised and versioned (a fit over
fewer results never replaces one over more), and bots without rated matches stay out of the
fit (SQLite and PostgreSQL, real threads)."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Iterator
from typing import Any

import pytest
from db_support import SHORT, add_bots, add_match, heuristic_v_random
from sqlalchemy import insert, select, text, update

from arena.db.models import MatchRow, RatingFitRow, utcnow
from arena.db.session import Database
from arena.measures.ratings import fit_ratings
from arena.playing.jobs import run_match_job
from arena.reading.queries import bots as bot_queries
from arena.services.matches import schedule_match
from arena.services.ratings import refit_ratings
from arena.settings import load_settings
from arena.states import MatchStatus

WAIT_S = 60  # a safety net against a hung test, never what makes a test pass


def add_results(db: Database, a: int, b: int, winners: str) -> None:
    """Finished rated matches between ``a`` and ``b``, one per letter of ``winners``."""
    with db.session() as session:
        for i, winner in enumerate(winners):
            match = schedule_match(session, a, b, rules=SHORT, seed=i)
            session.execute(
                update(MatchRow)
                .where(MatchRow.id == match.id)
                .values(status=MatchStatus.FINISHED, winner=winner)
            )


def _fit_columns() -> dict[str, Any]:
    """A stored fit's columns (what :func:`refit_ratings` writes for one bot)."""
    return {
        "rating": 1500.0,
        "ci_low": 1400.0,
        "ci_high": 1600.0,
        "stderr": 50.0,
        "matches": 3,
        "provisional": False,
        "fitted_at": utcnow(),
    }


def stored_fits(db: Database) -> dict[int, RatingFitRow]:
    with db.session() as session:
        return {fit.bot_id: fit for fit in session.scalars(select(RatingFitRow))}


class Run(threading.Thread):
    """A refit in a thread of its own; keeps what it returned or raised."""

    def __init__(self, db: Database) -> None:
        super().__init__(daemon=True)
        self.db = db
        self.returned: int | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self.returned = refit_ratings(self.db, min_matches=2)
        except BaseException as exc:
            self.error = exc

    def finish(self) -> int | None:
        self.join(WAIT_S)
        assert not self.is_alive(), "the refit did not finish"
        if self.error is not None:
            raise self.error
        return self.returned


@pytest.fixture
def fit_hook(monkeypatch: pytest.MonkeyPatch) -> Iterator[list[Callable[[], object]]]:
    """Hooks run, one per call, inside the fit (between reading the results and writing):
    a test holds a refit there with events, never with sleeps."""
    hooks: list[Callable[[], object]] = []

    def slowed(*args: Any, **kwargs: Any) -> Any:
        fitted = fit_ratings(*args, **kwargs)
        if hooks:
            hooks.pop(0)()
        return fitted

    monkeypatch.setattr("arena.services.ratings.fit_ratings", slowed)
    yield hooks


def test_a_slow_refit_over_fewer_results_does_not_overwrite_a_newer_fit(
    db: Database, fit_hook: list[Callable[[], object]]
) -> None:
    ann, bob = add_bots(db, 2)
    add_results(db, ann, bob, "ab")
    inside, release = threading.Event(), threading.Event()

    def hold() -> None:
        inside.set()
        assert release.wait(WAIT_S)

    fit_hook.append(hold)
    old = Run(db)
    old.start()  # reads 2 results, then waits inside the fit
    assert inside.wait(WAIT_S)
    add_results(db, ann, bob, "aaa")
    assert refit_ratings(db, min_matches=2) == 2  # the newer fit, over 5 results
    release.set()
    returned = old.finish()
    fits = stored_fits(db)
    assert fits[ann].matches == fits[bob].matches == 5
    expected = fit_ratings([(ann, bob, 1.0)] * 4 + [(ann, bob, 0.0)], min_matches=2)
    assert fits[ann].rating == pytest.approx(expected[ann].rating)
    assert returned == 0  # it found the newer fit stored and wrote nothing


def test_two_refits_writing_at_once_both_succeed_and_leave_one_fit(
    db: Database, fit_hook: list[Callable[[], object]]
) -> None:
    """Both refits have fitted before either writes (a barrier), then both write at once:
    no unique violation on rating_fits, and the fit stored is the fit of every result."""
    ann, bob, cat = add_bots(db, 3)
    add_results(db, ann, bob, "abaa")
    add_results(db, bob, cat, "aab")
    barrier = threading.Barrier(2, timeout=WAIT_S)
    fit_hook.extend([barrier.wait, barrier.wait])
    runs = [Run(db), Run(db)]
    for run in runs:
        run.start()
    assert [run.finish() for run in runs] == [3, 3]
    fits = stored_fits(db)
    assert sorted(fits) == [ann, bob, cat]
    assert (fits[ann].matches, fits[bob].matches, fits[cat].matches) == (4, 7, 3)


def test_bots_without_rated_matches_are_not_fitted_and_do_not_widen_intervals(
    db: Database,
) -> None:
    ann, bob, newcomer = add_bots(db, 3)
    add_results(db, ann, bob, "aaaaaaabbb")
    assert refit_ratings(db, min_matches=2) == 2
    fits = stored_fits(db)
    assert newcomer not in fits
    alone = fit_ratings([(ann, bob, 1.0)] * 7 + [(ann, bob, 0.0)] * 3, min_matches=2)
    for bot in (ann, bob):
        assert fits[bot].ci_low == pytest.approx(alone[bot].ci_low)
        assert fits[bot].ci_high == pytest.approx(alone[bot].ci_high)


def test_bots_without_rated_matches_are_listed_apart_after_the_ranked_ones(
    db: Database,
) -> None:
    """A bot with no rated match is never ranked among rated bots (it ranked third, above a
    bot with ten matches): it is in ``ratings_board``'s unrated list, unranked, and out of the
    fit."""
    ann, newcomer, bob = add_bots(db, 3)
    add_results(db, ann, bob, "aaaaabbbbb")  # both fitted just under the prior's 1500
    refit_ratings(db, min_matches=2)
    board = bot_queries.ratings_board(db)[0]
    assert sorted(row["id"] for row in board) == [ann, bob]
    assert [row["rank"] for row in board] == [1, 2]
    unrated = bot_queries.ratings_board(db)[1]
    assert [row["id"] for row in unrated] == [newcomer]
    assert unrated[0]["rating"] is None and "rank" not in unrated[0]


def test_a_bot_rated_but_not_fitted_yet_is_ranked_by_live_elo(db: Database) -> None:
    ann, bob, cat = add_bots(db, 3)
    match_id = add_match(db, ann, bob)
    assert run_match_job(db, load_settings({}), match_id, "w", make_players=heuristic_v_random)
    board = bot_queries.ratings_board(db)[0]
    assert sorted(row["id"] for row in board) == [ann, bob]
    assert board[0]["elo"] > board[1]["elo"]
    assert [row["id"] for row in bot_queries.ratings_board(db)[1]] == [cat]


def test_equal_ratings_are_ordered_by_rated_matches_then_bot_id(db: Database) -> None:
    """Four bots fitted at exactly 1500 (every pair even): more rated matches first, then the
    lower id, whatever order the database returns rows in."""
    a, b, c, d = add_bots(db, 4)
    add_results(db, a, b, "ab")
    add_results(db, c, d, "abab")
    refit_ratings(db, min_matches=2)
    fits = stored_fits(db)
    assert {fit.rating for fit in fits.values()} == {1500.0}
    assert [row["id"] for row in bot_queries.ratings_board(db)[0]] == [c, d, a, b]
    assert [row["id"] for row in bot_queries.list_bots(db, sort="rating")] == [c, d, a, b]


@pytest.mark.parametrize("db_url", ["postgresql"], indirect=True)
def test_recording_a_match_does_not_wait_on_a_rating_fit_that_references_its_bots(
    db: Database,
) -> None:
    """The rating fit inserts a row per bot in one transaction, and each insert's foreign-key
    check locks that bot's row (``FOR KEY SHARE``) until the fit commits. Recording locked its
    two bots ``FOR UPDATE``, which waits on such a lock: a fit and recordings that took the
    bots in different orders deadlocked under load (``bench_load.py``: 4 tasks failed in 400
    matches). Recording now locks them ``FOR NO KEY UPDATE``, which no foreign-key check
    blocks. Here a fit's transaction holds that lock on ``ann`` while a match of ``ann`` is
    recorded: the recording must finish without ever waiting on a lock (PostgreSQL only:
    SQLite has no row locks)."""
    ann, bob = add_bots(db, 2)
    match_id = add_match(db, ann, bob)
    settings = load_settings({"ARENA_DATABASE_URL": db.url})
    fit = db.engine.connect()
    fit_tx = fit.begin()
    fit.execute(insert(RatingFitRow).values(bot_id=ann, **_fit_columns()))
    done = threading.Event()
    outcome: list[str] = []

    def play() -> None:
        result = run_match_job(db, settings, match_id, "w1", make_players=heuristic_v_random)
        outcome.append(result.status.value)
        done.set()

    player = threading.Thread(target=play, daemon=True)
    player.start()
    waited_on_lock = False
    deadline = time.monotonic() + WAIT_S
    while not done.wait(0.05) and time.monotonic() < deadline:
        waiting = fit.execute(
            text(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
                " AND wait_event_type = 'Lock'"
            )
        ).scalar_one()
        if waiting:
            waited_on_lock = True
            break
    fit_tx.rollback()
    fit.close()
    player.join(WAIT_S)
    assert not waited_on_lock, "recording waited on the fit's foreign-key lock on the bot"
    assert outcome == ["recorded"]
