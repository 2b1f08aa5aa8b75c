"""Hostile answers end up in the database as faults of the bot that sent them (issue 10, 1.1).

What a bot sends back (an HTTP error page with NUL bytes in it, an answer nested 1000 deep)
reaches stored text: the fault detail, the forfeit reason. Whatever it is, the match is recorded
as a forfeit of that bot, once, on SQLite and PostgreSQL; it is never an arena failure (which
would void the match and deny the opponent its win).
"""

from __future__ import annotations

import socket
from collections.abc import Iterator
from contextlib import contextmanager

import pytest
from arena_procs import house_bots, wait_until
from loopback import HttpMessage, LoopbackServer, http_response
from sqlalchemy import select

from arena.db.models import MatchResultRow, MatchRow
from arena.db.session import Database
from arena.playing.executors import LocalExecutor
from arena.playing.jobs import JobStatus, run_match_job
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.settings import load_settings
from arena.states import MatchStatus


class AnswersWith(LoopbackServer):
    """A loopback bot whose ``GET /`` and ``/start`` are sound and whose every ``/act`` is
    answered with ``reply`` (whole HTTP response bytes)."""

    def __init__(self, reply: bytes) -> None:
        super().__init__("answers-with")
        self.reply = reply

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        method, path = request.target
        if (method, path) == ("POST", "/act"):
            conn.sendall(self.reply)
            return True
        body = b'{"protocol":"gin-arena/1","name":"hostile"}' if method == "GET" else b"{}"
        conn.sendall(http_response(body))
        return True

    @contextmanager
    def running(self) -> Iterator[AnswersWith]:
        self.start()
        try:
            yield self
        finally:
            self.stop()


def play_against_house(db: Database, answer: bytes) -> MatchRow:
    """Register a bot answering ``answer`` (seat a) and a greedy house bot (seat b), and run
    the match job once in this process; the stored match."""
    settings = load_settings({}, database_url=db.url, allow_loopback=True, max_attempts=2)
    with AnswersWith(answer).running() as hostile, house_bots(["greedy"]) as (house,):
        a = register_bot(db, name="hostile", owner="t", url=hostile.url).bot_id
        b = register_bot(db, name="house", owner="t", url=house.url).bot_id
        with db.session() as s:
            match_id = schedule_match(s, a, b, rules=RuleSet(target=50), seed=1).id
        outcome = run_match_job(db, settings, match_id, "test")
    assert outcome.status is JobStatus.RECORDED, outcome
    with db.session() as s:
        match = s.get_one(MatchRow, match_id)
        s.expunge(match)
        return match


def test_an_error_page_with_nul_bytes_is_the_bots_forfeit_not_an_arena_failure(
    db: Database,
) -> None:
    """PostgreSQL text cannot hold NUL: the status fault's snippet of the body (``HTTP 500:
    ...``) reached ``forfeit_reason`` as it was, the insert failed, and the match was retried
    and then voided, so the bot that broke the rules denied its opponent the win."""
    match = play_against_house(
        db, http_response(b"\x00\xff boom \x00", "500 Internal Server Error")
    )
    assert match.status is MatchStatus.FINISHED
    assert (match.forfeit_seat, match.winner) == ("a", "b")
    assert match.forfeit_reason is not None and "HTTP 500" in match.forfeit_reason
    assert "\x00" not in match.forfeit_reason
    with db.session() as s:
        assert (
            len(list(s.scalars(select(MatchResultRow).where(MatchResultRow.match_id == match.id))))
            == 1
        )


@pytest.mark.parametrize(
    "reply",
    [
        http_response(b"\x00\xff boom \x00", "500 Internal Server Error"),
        http_response(b'{"action":"pass","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"),
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n",
        b"HTTP/1.1 103 Early Hints\r\n\r\n" + http_response(b'{"action":"pass"}'),
    ],
    ids=["error_page_with_nul", "nested_100k", "101_upgrade", "103_then_pass"],
)
def test_the_local_executor_records_a_hostile_bots_forfeit_once_never_void(
    db: Database, reply: bytes
) -> None:
    """The embedded executor's worker process plays it: the hostile bot forfeits (its
    opponent wins), recorded once at the first attempt; a 101 used to escape the transport
    as an exception, so the match was played again and then void."""
    settings = load_settings({}, database_url=db.url, allow_loopback=True, max_attempts=2)
    with AnswersWith(reply).running() as hostile, house_bots(["greedy"]) as (house,):
        a = register_bot(db, name="hostile", owner="t", url=hostile.url).bot_id
        b = register_bot(db, name="house", owner="t", url=house.url).bot_id
        with db.session() as s:
            match_id = schedule_match(s, a, b, rules=RuleSet(target=50), seed=1).id
        with LocalExecutor(settings, processes=1, threads=2) as executor:
            executor.submit([match_id])

            def done() -> bool:
                with db.session() as s:
                    status = s.get_one(MatchRow, match_id).status
                    return status in (MatchStatus.FINISHED, MatchStatus.FAILED)

            wait_until(done, timeout=120, what="the match")
    with db.session() as s:
        match = s.get_one(MatchRow, match_id)
        assert (match.status, match.attempt) == (MatchStatus.FINISHED, 1), match.error
        assert (match.forfeit_seat, match.winner) == ("a", "b")
        assert (
            len(list(s.scalars(select(MatchResultRow).where(MatchResultRow.match_id == match_id))))
            == 1
        )
