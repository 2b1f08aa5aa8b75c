"""A match stream's head (:func:`arena.reading.queries.matches.stream_head`, what its ``match``
event is made of) says what the match's detail says, in one statement, on both databases:
a stream joining must not show other names, versions or rules than the match's page."""

from __future__ import annotations

import pytest
from sqlalchemy import update

from arena.db.models import BotRow, MatchRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries.matches import match_detail, stream_head
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.versions import VersionReason, create_version
from arena.states import MatchStatus

FIELDS = ("id", "status", "attempt", "bots", "versions", "rules")


def _match(db: Database) -> int:
    a = register_bot(db, name="head-a", owner="o", url="http://127.0.0.1:9/a").bot_id
    b = register_bot(db, name="head-b", owner="o", url="http://127.0.0.1:9/b").bot_id
    with db.session() as s:
        return schedule_match(s, a, b, rules=RuleSet(target=100), seed=7).id


def _same(db: Database, match_id: int) -> None:
    detail = match_detail(db, match_id)
    assert stream_head(db, match_id) == {k: detail[k] for k in FIELDS}


def test_a_pending_matchs_head_is_its_detail_without_versions(db: Database) -> None:
    match_id = _match(db)
    _same(db, match_id)
    assert stream_head(db, match_id)["versions"] == {"a": None, "b": None}


def test_a_running_matchs_head_names_the_versions_played(db: Database) -> None:
    match_id = _match(db)
    with db.session() as s:
        m = s.get(MatchRow, match_id)
        assert m is not None
        bot_a = s.get(BotRow, m.bot_a_id)
        assert bot_a is not None
        version = create_version(s, bot_a, VersionReason.REPORTED, "v2.1")
        s.flush()
        s.execute(
            update(MatchRow)
            .where(MatchRow.id == match_id)
            .values(status=MatchStatus.RUNNING, attempt=2, version_a_id=version.id)
        )
    _same(db, match_id)
    head = stream_head(db, match_id)
    assert head["status"] == "running" and head["attempt"] == 2
    assert head["versions"]["a"]["label"] == "v2.1" and head["versions"]["b"] is None


def test_no_such_match_has_no_head(db: Database) -> None:
    with pytest.raises(NotFoundError):
        stream_head(db, 999_999)
