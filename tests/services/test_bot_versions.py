"""Bot versions (SQLite and PostgreSQL): when a bot gets a new version, what it is labelled,
what its live Elo starts from, and which version each match records. Real house bots on
loopback where the arena asks a bot anything (registration, a URL change, a match's start)."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import pytest
from sqlalchemy import select

from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES
from arena.db.models import (
    BotRow,
    BotVersionRow,
    EventRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
)
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.match import MatchRunner
from arena.playing.players import HeuristicPlayer, RandomPlayer
from arena.playing.stored import StoredMatch, deal_logs, record_digest
from arena.rules.ruleset import RuleSet
from arena.services.bots import (
    change_bot,
    end_secret_rotation,
    enroll_bot,
    register_bot,
    rotate_secret,
    update_bot,
)
from arena.services.matches import claim_match, schedule_match
from arena.services.recording import record_match_result
from arena.services.versions import LABEL_LENGTH, observe_reported_version
from arena.settings import load_settings

SETTINGS = load_settings({}, allow_loopback=True)
SHORT = RuleSet(target=50, best_of=1)


@contextmanager
def serving(*versions: str) -> Iterator[list[BotServer]]:
    """Greedy bots on loopback, the i-th reporting ``versions[i]`` in its ``GET /``."""
    servers = [
        BotServer(STRATEGIES["greedy"](0), name=f"v-bot-{i}", version=v).start()
        for i, v in enumerate(versions)
    ]
    try:
        yield servers
    finally:
        for server in servers:
            server.stop()


def versions(db: Database, bot_id: int) -> list[tuple[int, str | None, str]]:
    """The bot's versions, oldest first: (number, label, reason)."""
    with db.session() as session:
        rows = session.scalars(
            select(BotVersionRow)
            .where(BotVersionRow.bot_id == bot_id)
            .order_by(BotVersionRow.number)
        )
        return [(v.number, v.label, v.reason) for v in rows]


def current(db: Database, bot_id: int) -> BotVersionRow:
    with db.session() as session:
        bot = session.get_one(BotRow, bot_id)
        assert bot.current_version_id is not None
        return session.get_one(BotVersionRow, bot.current_version_id)


def version_events(db: Database, bot_id: int) -> list[dict[str, Any]]:
    """The data of the bot's ``bot.version_created`` events, oldest first."""
    with db.session() as session:
        rows = session.scalars(
            select(EventRow)
            .where(EventRow.bot_id == bot_id, EventRow.type == "bot.version_created")
            .order_by(EventRow.id)
        )
        return [e.data for e in rows]


def bot(db: Database, name: str = "b", url: str = "http://127.0.0.1:9") -> int:
    return register_bot(db, name=name, owner="o", url=url).bot_id


# --- registration, URL, secret ------------------------------------------------------------


def test_a_bot_registered_after_its_check_is_version_1_labelled_with_what_it_reported(
    db: Database,
) -> None:
    with serving("1.4.2") as (server,):
        enrolled = enroll_bot(db, SETTINGS, name="checked", url=server.url, owner="o")
    assert versions(db, enrolled.bot_id) == [(1, "1.4.2", "registered")]
    assert current(db, enrolled.bot_id).url == server.url
    (event,) = version_events(db, enrolled.bot_id)
    assert event["bot"] == {"id": enrolled.bot_id, "name": "checked"}
    assert event["version"]["number"] == 1 and event["version"]["label"] == "1.4.2"
    assert event["version"]["reason"] == "registered" and event["version"]["elo"] == 1500.0


def test_a_bot_stored_without_a_check_is_version_1_with_no_label_yet(db: Database) -> None:
    bot_id = bot(db)
    assert versions(db, bot_id) == [(1, None, "registered")]


def test_a_checked_url_change_is_a_new_version_labelled_with_what_the_new_url_reported(
    db: Database,
) -> None:
    with serving("1.0", "2.0") as (old, new):
        enrolled = enroll_bot(db, SETTINGS, name="mover", url=old.url, owner="o")
        change_bot(db, SETTINGS, enrolled.bot_id, url=new.url)
    assert versions(db, enrolled.bot_id) == [(1, "1.0", "registered"), (2, "2.0", "url_changed")]
    assert current(db, enrolled.bot_id).url == new.url


def test_an_unchecked_url_change_is_a_new_version_whose_label_is_not_known_yet(
    db: Database,
) -> None:
    bot_id = bot(db)
    observe(db, bot_id, "1.0")
    update_bot(db, bot_id, url="http://127.0.0.1:10")
    assert versions(db, bot_id) == [(1, "1.0", "registered"), (2, None, "url_changed")]


def test_the_same_url_or_a_rename_makes_no_new_version(db: Database) -> None:
    bot_id = bot(db, url="http://127.0.0.1:9")
    update_bot(db, bot_id, url="http://127.0.0.1:9")
    update_bot(db, bot_id, name="renamed")
    assert versions(db, bot_id) == [(1, None, "registered")]


def test_a_secret_rotation_is_a_new_version_with_its_predecessors_label(db: Database) -> None:
    bot_id = bot(db)
    observe(db, bot_id, "3.1")
    rotate_secret(db, bot_id, window_hours=24)
    end_secret_rotation(db, bot_id)  # the secret does not change again: no version
    assert versions(db, bot_id) == [(1, "3.1", "registered"), (2, "3.1", "secret_changed")]
    assert [e["version"]["reason"] for e in version_events(db, bot_id)] == [
        "registered",
        "secret_changed",
    ]


# --- reported version strings ----------------------------------------------------------------


def observe(db: Database, bot_id: int, label: str | None) -> int | None:
    with db.session() as session:
        return observe_reported_version(session, bot_id, label)


@pytest.mark.parametrize(
    ("reported", "expected"),
    [
        pytest.param([None, "", "   "], [(1, None)], id="no-string-ever-makes-no-version"),
        pytest.param(["1.0"], [(1, "1.0")], id="the-first-string-names-the-version"),
        pytest.param(["1.0", "1.0", " 1.0 "], [(1, "1.0")], id="the-same-string-again"),
        pytest.param(["1.0", "", None, "1.0"], [(1, "1.0")], id="v1-to-no-string-is-no-change"),
        pytest.param(["1.0", "2.0"], [(1, "1.0"), (2, "2.0")], id="a-new-string"),
        pytest.param(
            ["1.0", "2.0", "1.0"], [(1, "1.0"), (2, "2.0"), (3, "1.0")], id="a-rollback-is-new"
        ),
    ],
)
def test_a_reported_string_makes_a_version_only_when_it_differs_from_a_known_label(
    db: Database, reported: list[str | None], expected: list[tuple[int, str | None]]
) -> None:
    bot_id = bot(db)
    made = [observe(db, bot_id, label) for label in reported]
    assert [(n, label) for n, label, _ in versions(db, bot_id)] == expected
    new = [v for v in made if v is not None]
    assert len(new) == len(expected) - 1, "the id of each new version, None otherwise"
    assert all(reason == "reported" for n, _, reason in versions(db, bot_id) if n > 1)


def test_a_reported_string_is_kept_to_its_first_64_characters(db: Database) -> None:
    bot_id = bot(db)
    observe(db, bot_id, "x" * 300)
    assert observe(db, bot_id, "x" * 200) is None, "the same label once cut"
    assert versions(db, bot_id) == [(1, "x" * LABEL_LENGTH, "registered")]


def test_a_new_version_starts_from_its_predecessors_live_elo(db: Database) -> None:
    bot_id = bot(db)
    observe(db, bot_id, "1")
    with db.session() as session:
        version = session.get_one(BotVersionRow, session.get_one(BotRow, bot_id).current_version_id)
        version.elo = 1612.5
    new_id = observe(db, bot_id, "2")
    assert new_id is not None and current(db, bot_id).id == new_id
    assert current(db, bot_id).elo == 1612.5
    assert version_events(db, bot_id)[-1]["version"]["elo"] == 1612.5


def test_observing_a_bot_that_does_not_exist_is_not_found(db: Database) -> None:
    with pytest.raises(NotFoundError):
        observe(db, 999, "1.0")


# --- matches ---------------------------------------------------------------------------------


def play(db: Database, a: int, b: int, seed: int) -> MatchRow:
    """One rated match through the job, over HTTP to the bots' URLs."""
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=SHORT, seed=seed).id
    outcome = run_match_job(db, SETTINGS, match_id, "w")
    assert outcome.status is JobStatus.RECORDED, outcome
    with db.session() as session:
        return session.get_one(MatchRow, match_id)


def history(db: Database, match_id: int) -> dict[int, RatingHistoryRow]:
    """The match's rating-history rows, by bot."""
    with db.session() as session:
        rows = session.scalars(
            select(RatingHistoryRow).where(RatingHistoryRow.match_id == match_id)
        )
        return {r.bot_id: r for r in rows}


def test_a_new_version_string_at_a_match_start_is_a_new_version_the_match_records(
    db: Database,
) -> None:
    with serving("1", "7") as (server_a, server_b):
        a = bot(db, "alpha", server_a.url)
        b = bot(db, "beta", server_b.url)
        first = play(db, a, b, seed=1)
        # Nothing was known of either version: the strings name them, no new version.
        assert versions(db, a) == [(1, "1", "registered")]
        assert versions(db, b) == [(1, "7", "registered")]
        v1 = current(db, a)
        assert (first.version_a_id, first.version_b_id) == (v1.id, current(db, b).id)
        assert v1.elo == history(db, first.id)[a].after, "the version moved with its bot"

        server_a.info.version = "2"  # the owner deploys a new build behind the same URL
        second = play(db, a, b, seed=2)
        assert versions(db, a) == [(1, "1", "registered"), (2, "2", "reported")]
        v2 = current(db, a)
        assert second.version_a_id == v2.id and second.version_b_id == first.version_b_id
        row = history(db, second.id)[a]
        assert row.version_id == v2.id
        assert row.before == v1.elo, "the new version starts from its predecessor's Elo"
        assert v2.elo == row.after
        with db.session() as session:
            assert session.get_one(BotRow, a).elo == v2.elo
            assert session.get_one(BotVersionRow, v1.id).elo == v1.elo, "v1 played no more"

        third = play(db, a, b, seed=3)
        assert versions(db, a) == [(1, "1", "registered"), (2, "2", "reported")]
        assert third.version_a_id == v2.id, "no new version when nothing changed"


def test_a_match_claimed_before_a_new_version_counts_for_the_version_that_played(
    db: Database,
) -> None:
    a, b = bot(db, "alpha"), bot(db, "beta")
    old = current(db, a)
    with db.session() as session:
        match_id = schedule_match(session, a, b, rules=SHORT, seed=4).id
    claim = claim_match(db, match_id, "w", lease_seconds=60, max_attempts=3)
    assert claim is not None
    rotate_secret(db, a, window_hours=0)  # version 2, while version 1 plays
    new = current(db, a)
    players = [HeuristicPlayer(name="alpha"), RandomPlayer(seed=4, name="beta")]
    record = MatchRunner(players, SHORT, 4, match_id=f"m{match_id}").run()
    assert record_match_result(db, claim, record, duration_ms=1, bot_time_ms=1, elo_k=24.0)
    row = history(db, match_id)[a]
    with db.session() as session:
        assert session.get_one(MatchRow, match_id).version_a_id == old.id
        assert row.version_id == old.id
        assert session.get_one(BotVersionRow, old.id).elo == row.after
        assert session.get_one(BotVersionRow, new.id).elo == 1500.0, "it has not played yet"
        assert session.get_one(BotRow, a).elo == row.after


def test_two_observations_of_a_new_string_at_once_make_one_version(db: Database) -> None:
    """A probe and a match's record seeing the same new build at the same moment: the bot's
    row is locked first, so the second finds the version the first made."""
    bot_id = bot(db)
    observe(db, bot_id, "1.0")
    barrier = threading.Barrier(4)
    made: list[int | None] = []
    errors: list[BaseException] = []

    def observer() -> None:
        try:
            with db.session() as session:
                barrier.wait(timeout=30)
                made.append(observe_reported_version(session, bot_id, "2.0"))
        except BaseException as exc:  # reported below, never swallowed
            errors.append(exc)

    threads = [threading.Thread(target=observer) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=60)
    assert not errors, errors
    assert len([m for m in made if m is not None]) == 1
    assert versions(db, bot_id) == [(1, "1.0", "registered"), (2, "2.0", "reported")]


def test_a_played_match_is_encoded_once_for_the_bots_end_and_the_database(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The record's JSON the runner makes for ``POST /end`` is the one the recording stores
    (its summary, deal logs and digest): a loaded worker spent 1.7% of its time encoding every
    finished match a second time."""
    encoded: list[dict[str, Any]] = []
    to_dict = StoredMatch.to_dict

    def counted(self: StoredMatch) -> dict[str, Any]:
        encoded.append(to_dict(self))
        return encoded[-1]

    monkeypatch.setattr(StoredMatch, "to_dict", counted)
    with serving("1", "1") as (server_a, server_b):
        match = play(db, bot(db, "alpha", server_a.url), bot(db, "beta", server_b.url), seed=3)
    assert len(encoded) == 1
    with db.session() as session:
        result = session.scalars(
            select(MatchResultRow).where(MatchResultRow.match_id == match.id)
        ).one()
    assert result.digest == record_digest(deal_logs(encoded[0]))
    assert result.summary["games"][0]["winner"] == encoded[0]["games"][0]["winner"]
