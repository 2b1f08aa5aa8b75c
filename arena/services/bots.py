"""Bots: registration (the token and secret are shown once), authentication, updates."""

from __future__ import annotations

import hashlib
import hmac
import re
import secrets
from dataclasses import dataclass

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError

from arena.db.models import Bot, BotStats, BotStatus, utcnow
from arena.db.session import Database
from arena.protocol.signing import generate_secret
from arena.protocol.wire import PROTOCOL_VERSION

__all__ = [
    "BotNameTakenError",
    "RegisteredBot",
    "authenticate_owner",
    "hash_token",
    "register_bot",
    "rotate_secret",
    "rotate_token",
    "set_status",
    "update_bot",
]

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$")


class BotNameTakenError(ValueError):
    """Another bot already has this name."""


@dataclass(frozen=True, slots=True)
class RegisteredBot:
    """A new bot: its id, and the owner token and signing secret (shown only this once)."""

    bot_id: int
    token: str
    secret: str


def hash_token(token: str) -> str:
    """SHA-256 hex of an API token (tokens are random, so no salt or slow hash is needed)."""
    return hashlib.sha256(token.encode()).hexdigest()


def _check_name(name: str) -> None:
    if not NAME_PATTERN.match(name):
        raise ValueError(
            f"bot name {name!r}: 1-64 characters, letters, digits, '_', '.', '-', starting with a"
            " letter or digit"
        )


def register_bot(
    db: Database, *, name: str, owner: str, url: str, protocol_version: str = PROTOCOL_VERSION
) -> RegisteredBot:
    """Store a new active bot with a fresh owner token and signing secret."""
    _check_name(name)
    token = "gat_" + secrets.token_urlsafe(32)
    secret = generate_secret()
    try:
        with db.session() as session:
            bot = Bot(
                name=name,
                owner=owner,
                url=url,
                protocol_version=protocol_version,
                token_hash=hash_token(token),
                secret=secret,
                status=BotStatus.ACTIVE,
            )
            session.add(bot)
            session.flush()
            session.add(BotStats(bot_id=bot.id, latency_histogram=[]))
            bot_id = bot.id
    except IntegrityError:
        raise BotNameTakenError(f"a bot named {name!r} already exists") from None
    return RegisteredBot(bot_id, token, secret)


def authenticate_owner(db: Database, bot_id: int, token: str) -> bool:
    """Whether ``token`` is the owner token of bot ``bot_id`` (compared in constant time)."""
    with db.session() as session:
        stored = session.scalar(select(Bot.token_hash).where(Bot.id == bot_id))
    if stored is None:
        return False
    return hmac.compare_digest(stored, hash_token(token))


def update_bot(
    db: Database, bot_id: int, *, name: str | None = None, url: str | None = None
) -> None:
    """Change a bot's name or URL (the caller has checked the new URL)."""
    if name is not None:
        _check_name(name)
    try:
        with db.session() as session:
            bot = session.get_one(Bot, bot_id)
            if name is not None:
                bot.name = name
            if url is not None:
                bot.url = url
            bot.updated_at = utcnow()
    except IntegrityError:
        raise BotNameTakenError(f"a bot named {name!r} already exists") from None


def rotate_token(db: Database, bot_id: int) -> str:
    """A new owner token (the old one stops working at once)."""
    token = "gat_" + secrets.token_urlsafe(32)
    with db.session() as session:
        bot = session.get_one(Bot, bot_id)
        bot.token_hash = hash_token(token)
        bot.updated_at = utcnow()
    return token


def rotate_secret(db: Database, bot_id: int) -> str:
    """A new signing secret (requests are signed with it from the next match on)."""
    secret = generate_secret()
    with db.session() as session:
        bot = session.get_one(Bot, bot_id)
        bot.secret = secret
        bot.updated_at = utcnow()
    return secret


def set_status(db: Database, bot_id: int, status: BotStatus) -> None:
    """Activate or deactivate a bot."""
    with db.session() as session:
        bot = session.get_one(Bot, bot_id)
        bot.status = status
        bot.updated_at = utcnow()
