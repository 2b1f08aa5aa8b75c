"""Bot registration: tokens stored only as hashes, secrets kept for signing, unique names."""

from __future__ import annotations

import hashlib

import pytest
from sqlalchemy import select

from arena.db.models import BotRow, BotStatsRow
from arena.db.session import Database
from arena.services.bots import (
    BotNameTakenError,
    hash_token,
    register_bot,
    rotate_secret,
    rotate_token,
    set_status,
    update_bot,
)
from arena.states import BotStatus


def test_register_bot_stores_a_hash_of_the_token_and_the_secret(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    assert new.token.startswith("gat_") and len(new.token) > 40
    assert new.secret.startswith("whsec_")
    with db.session() as s:
        bot = s.get_one(BotRow, new.bot_id)
        assert bot.token_hash == hashlib.sha256(new.token.encode()).hexdigest()
        assert bot.secret == new.secret
        assert bot.status is BotStatus.ACTIVE and bot.elo == 1500.0
        # The clear token is nowhere in the row.
        assert all(new.token not in str(getattr(bot, c.name)) for c in BotRow.__table__.columns)
        assert s.get_one(BotStatsRow, new.bot_id).matches == 0


def test_each_registration_gets_its_own_token_and_secret(db: Database) -> None:
    one = register_bot(db, name="one", owner="x", url="http://127.0.0.1:9001")
    two = register_bot(db, name="two", owner="x", url="http://127.0.0.1:9002")
    assert one.token != two.token and one.secret != two.secret


def test_bot_names_are_unique(db: Database) -> None:
    register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    with pytest.raises(BotNameTakenError, match="alpha"):
        register_bot(db, name="alpha", owner="bob", url="http://127.0.0.1:9002")
    other = register_bot(db, name="beta", owner="bob", url="http://127.0.0.1:9002")
    with pytest.raises(BotNameTakenError):
        update_bot(db, other.bot_id, name="alpha")
    with db.session() as s:
        assert s.scalars(select(BotRow.name).order_by(BotRow.id)).all() == ["alpha", "beta"]


@pytest.mark.parametrize("name", ["", "-dash", "has space", "x" * 65, "semi;colon"])
def test_bad_bot_names_are_refused(db: Database, name: str) -> None:
    with pytest.raises(ValueError, match="bot name"):
        register_bot(db, name=name, owner="ann", url="http://127.0.0.1:9001")


def test_rotate_token_revokes_the_old_one(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    token = rotate_token(db, new.bot_id)
    assert token != new.token
    with db.session() as s:
        stored = s.get_one(BotRow, new.bot_id).token_hash
    assert stored == hash_token(token) != hash_token(new.token)


def test_rotate_secret_status_and_url_updates(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    secret = rotate_secret(db, new.bot_id).secret
    set_status(db, new.bot_id, BotStatus.INACTIVE)
    update_bot(db, new.bot_id, url="http://127.0.0.1:9009", name="alpha-2")
    with db.session() as s:
        bot = s.get_one(BotRow, new.bot_id)
        assert bot.secret == secret != new.secret
        assert bot.previous_secret == new.secret  # still signs during the rotation window
        assert bot.status is BotStatus.INACTIVE
        assert (bot.name, bot.url) == ("alpha-2", "http://127.0.0.1:9009")
        assert bot.updated_at >= bot.created_at
