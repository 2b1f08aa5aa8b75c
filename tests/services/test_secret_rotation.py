"""Secret rotation: for ARENA_SECRET_ROTATION_HOURS after a rotation the arena signs with the
new and the old secret, so a bot holding either one verifies; after the window, or once the
owner ends it, only the new one signs. Real matches through the job path against SDK house
bots that verify signatures (SQLite and PostgreSQL); the clock is injected, never slept on."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from tournament_driver import count

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.db.models import MatchResultRow, MatchRow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, players_for, run_match_job
from arena.playing.players import Player
from arena.protocol.signing import generate_secret
from arena.rules.ruleset import RuleSet
from arena.services.bots import (
    SecretRotation,
    end_secret_rotation,
    register_bot,
    rotate_secret,
    update_bot,
)
from arena.services.matches import Claim, schedule_match
from arena.settings import Settings, load_settings

SETTINGS = load_settings({}, allow_loopback=True)


@pytest.fixture
def plain() -> Iterator[BotServer]:
    server = house_bot("greedy", name="plain").start()
    yield server
    server.stop()


@dataclass(frozen=True, slots=True)
class Rotated:
    """A bot registered with the secret ``old``, then rotated; and an opponent for it."""

    bot: int
    opponent: int
    old: str
    rotation: SecretRotation


def register_and_rotate(
    db: Database, plain: BotServer, *, window_hours: float, now: datetime | None = None
) -> Rotated:
    """Register ``rotating`` (secret ``old``) and ``plain``, both at ``plain``; rotate the first."""
    old = generate_secret()
    bot = register_bot(db, name="rotating", owner="o", url=plain.url, secret=old).bot_id
    opponent = register_bot(db, name="plain", owner="o", url=plain.url).bot_id
    return Rotated(bot, opponent, old, rotate_secret(db, bot, window_hours=window_hours, now=now))


@contextmanager
def holding(**secrets: str) -> Iterator[dict[str, str]]:
    """A greedy house bot that verifies signatures with each secret, by name: their URLs."""
    servers: dict[str, BotServer] = {}
    try:
        for name, secret in secrets.items():
            servers[name] = house_bot("greedy", name=name, secret=secret).start()
        yield {name: server.url for name, server in servers.items()}
    finally:
        for server in servers.values():
            server.stop()


def play_at(db: Database, rotated: Rotated, url: str, now: datetime) -> MatchRow:
    """One match of the rotated bot (now served at ``url``) through the job, signed as at
    ``now``."""
    update_bot(db, rotated.bot, url=url)
    with db.session() as session:
        match_id = schedule_match(
            session, rotated.bot, rotated.opponent, rules=RuleSet(target=25), seed=1
        ).id

    def make_players(claim: Claim, settings: Settings) -> list[Player]:
        return players_for(claim, settings, now=now)

    outcome = run_match_job(db, SETTINGS, match_id, "w", make_players=make_players)
    assert outcome.status is JobStatus.RECORDED, outcome
    assert count(db, MatchResultRow, MatchResultRow.match_id == match_id) == 1
    with db.session() as session:
        return session.get_one(MatchRow, match_id)


def accepted(match: MatchRow) -> bool:
    """The bot verified the arena's requests (else it refused /start: a forfeit)."""
    if match.forfeit_seat is None:
        return True
    assert match.forfeit_seat == "a"
    assert match.forfeit_reason is not None and "signature" in match.forfeit_reason
    return False


def test_during_the_window_a_bot_holding_either_secret_verifies_after_it_only_the_new(
    db: Database, plain: BotServer
) -> None:
    rotated_at = datetime.now().astimezone()
    r = register_and_rotate(db, plain, window_hours=24, now=rotated_at)
    assert r.rotation.previous_valid_until == rotated_at + timedelta(hours=24)
    with holding(old=r.old, new=r.rotation.secret) as url:
        inside = rotated_at + timedelta(hours=23, minutes=59)
        after = rotated_at + timedelta(hours=24)
        assert accepted(play_at(db, r, url["old"], inside))
        assert accepted(play_at(db, r, url["new"], inside))
        assert not accepted(play_at(db, r, url["old"], after))
        assert accepted(play_at(db, r, url["new"], after))


def test_ending_the_window_early_leaves_only_the_new_secret(db: Database, plain: BotServer) -> None:
    rotated_at = datetime.now().astimezone()
    r = register_and_rotate(db, plain, window_hours=24, now=rotated_at)
    with holding(old=r.old, new=r.rotation.secret) as url:
        soon = rotated_at + timedelta(minutes=5)
        assert accepted(play_at(db, r, url["old"], soon))
        end_secret_rotation(db, r.bot)
        assert not accepted(play_at(db, r, url["old"], soon))
        assert accepted(play_at(db, r, url["new"], soon))


def test_a_window_of_zero_hours_cuts_over_at_once(db: Database, plain: BotServer) -> None:
    r = register_and_rotate(db, plain, window_hours=0)
    assert r.rotation.previous_valid_until is None
    with holding(old=r.old) as url:
        assert not accepted(play_at(db, r, url["old"], datetime.now().astimezone()))


def test_the_rotation_window_is_a_validated_setting() -> None:
    assert load_settings({}).secret_rotation_hours == 24.0
    assert load_settings({"ARENA_SECRET_ROTATION_HOURS": "0.5"}).secret_rotation_hours == 0.5
    with pytest.raises(ValueError, match="ARENA_SECRET_ROTATION_HOURS"):
        load_settings({"ARENA_SECRET_ROTATION_HOURS": "-1"})
