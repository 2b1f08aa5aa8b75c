"""Bot registration: tokens stored only as hashes, secrets kept for signing, unique names,
owner authentication compared in constant time."""

from __future__ import annotations

import hashlib
import hmac

import pytest
from sqlalchemy import select

from arena.db.models import Bot, BotStats, BotStatus
from arena.db.session import Database
from arena.services import bots as bots_service
from arena.services.bots import (
    BotNameTakenError,
    authenticate_owner,
    register_bot,
    rotate_secret,
    rotate_token,
    set_status,
    update_bot,
)


def test_register_bot_stores_a_hash_of_the_token_and_the_secret(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    assert new.token.startswith("gat_") and len(new.token) > 40
    assert new.secret.startswith("whsec_")
    with db.session() as s:
        bot = s.get_one(Bot, new.bot_id)
        assert bot.token_hash == hashlib.sha256(new.token.encode()).hexdigest()
        assert bot.secret == new.secret
        assert bot.status is BotStatus.ACTIVE and bot.elo == 1500.0
        # The clear token is nowhere in the row.
        assert all(new.token not in str(getattr(bot, c.name)) for c in Bot.__table__.columns)
        assert s.get_one(BotStats, new.bot_id).matches == 0


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
        assert s.scalars(select(Bot.name).order_by(Bot.id)).all() == ["alpha", "beta"]


@pytest.mark.parametrize("name", ["", "-dash", "has space", "x" * 65, "semi;colon"])
def test_bad_bot_names_are_refused(db: Database, name: str) -> None:
    with pytest.raises(ValueError, match="bot name"):
        register_bot(db, name=name, owner="ann", url="http://127.0.0.1:9001")


def test_authenticate_owner(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    other = register_bot(db, name="beta", owner="bob", url="http://127.0.0.1:9002")
    assert authenticate_owner(db, new.bot_id, new.token)
    assert not authenticate_owner(db, new.bot_id, other.token)
    assert not authenticate_owner(db, new.bot_id, new.token + "x")
    assert not authenticate_owner(db, new.bot_id, "")
    assert not authenticate_owner(db, 999_999, new.token)


def test_authenticate_owner_compares_in_constant_time(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The stored hash is compared with hmac.compare_digest, never with ``==``."""
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    calls: list[tuple[str, str]] = []
    real = hmac.compare_digest

    def spy(a: str, b: str) -> bool:
        calls.append((a, b))
        return real(a, b)

    monkeypatch.setattr(bots_service.hmac, "compare_digest", spy)
    assert authenticate_owner(db, new.bot_id, new.token)
    assert not authenticate_owner(db, new.bot_id, "gat_wrong")
    assert len(calls) == 2
    # Both sides are fixed-length hashes: the time taken does not depend on the token given.
    assert all(len(a) == len(b) == 64 for a, b in calls)


def test_rotate_token_revokes_the_old_one(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    token = rotate_token(db, new.bot_id)
    assert token != new.token
    assert authenticate_owner(db, new.bot_id, token)
    assert not authenticate_owner(db, new.bot_id, new.token)


def test_rotate_secret_status_and_url_updates(db: Database) -> None:
    new = register_bot(db, name="alpha", owner="ann", url="http://127.0.0.1:9001")
    secret = rotate_secret(db, new.bot_id)
    set_status(db, new.bot_id, BotStatus.INACTIVE)
    update_bot(db, new.bot_id, url="http://127.0.0.1:9009", name="alpha-2")
    with db.session() as s:
        bot = s.get_one(Bot, new.bot_id)
        assert bot.secret == secret != new.secret
        assert bot.status is BotStatus.INACTIVE
        assert (bot.name, bot.url) == ("alpha-2", "http://127.0.0.1:9009")
        assert bot.updated_at >= bot.created_at
