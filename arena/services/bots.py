"""Bots: registration (the token and secret are shown once), authentication, updates, and
the signing secret's rotation window.

**One URL check for every caller.** :func:`enroll_bot` is what the API and the CLI
(``gin-arena bot register``) call: the URL policy (``ARENA_ALLOW_LOOPBACK``), the registration
check signed with the bot's secret (the owner's own, or one made now), then
:func:`register_bot` stores it. A new URL (:func:`change_bot`) and a reactivation
(:func:`activate_bot`) pass the same check first. :func:`register_bot`, :func:`update_bot` and
:func:`set_status` store without a check (the demo's own house bots, tests).
:func:`list_registered_bots` is ``gin-arena bot list``; a bot that does not exist is
:class:`~arena.errors.NotFoundError` everywhere.

**Secret rotation.** :func:`rotate_secret` makes a new secret current and keeps the old one
valid beside it for ``ARENA_SECRET_ROTATION_HOURS`` (default 24): requests are signed with both
(two ``v1,`` signatures), so a bot holding either verifies and can switch at its own pace.
:func:`end_secret_rotation` ends the window early; after it, only the new secret signs.
"""

from __future__ import annotations

import hashlib
import re
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Protocol

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from arena.bots.check import CheckReport, check_bot
from arena.bots.probe import ProbeReport, probe_bot
from arena.db.models import BotRow, BotStatsRow, utcnow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.protocol.signing import SecretError, generate_secret, parse_secret
from arena.protocol.urlguard import Resolver
from arena.protocol.wire import PROTOCOL_VERSION
from arena.services.versions import VersionReason, create_version, current_label
from arena.settings import Settings
from arena.states import BotStatus

__all__ = [
    "BotListing",
    "BotNameTakenError",
    "BotRefusedError",
    "Enrolment",
    "RegisteredBot",
    "SecretRotation",
    "activate_bot",
    "change_bot",
    "check_registered_bot",
    "check_secret",
    "end_secret_rotation",
    "enroll_bot",
    "find_bot",
    "hash_token",
    "list_registered_bots",
    "probe_registered_bot",
    "register_bot",
    "rotate_secret",
    "rotate_token",
    "set_status",
    "signing_secrets",
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


class BotRefusedError(ValueError):
    """The bot did not pass the registration check; ``report`` has every item."""

    def __init__(self, url: str, report: ProbeReport) -> None:
        failures = report.failures()
        why = failures[0].detail if failures else "no check was made"
        super().__init__(f"the bot at {url} did not pass the registration check: {why}")
        self.url = url
        self.report = report


@dataclass(frozen=True, slots=True)
class Enrolment:
    """A bot registered after passing its check: id, token and secret (shown once), the check."""

    bot_id: int
    token: str
    secret: str
    check: ProbeReport


@dataclass(frozen=True, slots=True)
class BotListing:
    """One registered bot as the organiser sees it (``gin-arena bot list``)."""

    id: int
    name: str
    owner: str
    url: str
    status: BotStatus
    elo: float
    created_at: datetime


@dataclass(frozen=True, slots=True)
class SecretRotation:
    """A rotated secret: the new one (shown once) and until when the old one still signs."""

    secret: str
    previous_valid_until: datetime | None


def check_secret(secret: str) -> str:
    """``secret`` if it is ``whsec_`` and the base64 of 24 to 64 bytes, else SecretError."""
    if not secret.startswith("whsec_"):
        raise SecretError("a secret must start with 'whsec_' (then the base64 of 24 to 64 bytes)")
    parse_secret(secret)
    return secret


def _name_taken(db: Database, name: str, *, by_other_than: int | None = None) -> bool:
    with db.session() as session:
        holder = session.scalar(select(BotRow.id).where(BotRow.name == name))
    return holder is not None and holder != by_other_than


def _bot(session: Session, bot_id: int) -> BotRow:
    """The bot's row, or :class:`~arena.errors.NotFoundError`."""
    bot = session.get(BotRow, bot_id)
    if bot is None:
        raise NotFoundError("bot", bot_id)
    return bot


def enroll_bot(
    db: Database,
    settings: Settings,
    *,
    name: str,
    url: str,
    owner: str,
    secret: str | None = None,
    resolver: Resolver | None = None,
) -> Enrolment:
    """Check the bot at ``url`` and register it: what the API and ``gin-arena bot register``
    do.

    ``secret`` is the owner's own signing secret (``whsec_`` and the base64 of 24 to 64
    bytes), so a bot that verifies signatures can run with it before it is registered; None
    makes one. The URL must pass the URL policy (loopback only with ``ARENA_ALLOW_LOOPBACK``)
    and the bot the registration check, every request signed with that secret
    (:func:`arena.bots.probe.probe_bot`). Raises ``ValueError`` subclasses with a one-line
    message: a bad name or :class:`SecretError`, :class:`BotNameTakenError`,
    :class:`BotRefusedError` (its ``report`` has every item).
    """
    _check_name(name)
    if secret is not None:
        check_secret(secret)
    if _name_taken(db, name):
        raise BotNameTakenError(f"a bot named {name!r} already exists")
    secret = secret or generate_secret()
    report = probe_bot(
        url, secrets=(secret,), allow_loopback=settings.allow_loopback, resolver=resolver
    )
    if not report.passed:
        raise BotRefusedError(url, report)
    registered = register_bot(
        db, name=name, owner=owner, url=url, secret=secret, version_label=_reported(report)
    )
    return Enrolment(registered.bot_id, registered.token, registered.secret, report)


def probe_registered_bot(
    db: Database,
    settings: Settings,
    bot_id: int,
    *,
    url: str | None = None,
    resolver: Resolver | None = None,
) -> ProbeReport:
    """The registration check of a stored bot at its URL (or at a new ``url`` before a change),
    signed with its secret(s) as a match would be; raises :class:`BotRefusedError` if it
    fails."""
    with db.session() as session:
        bot = _bot(session, bot_id)
        target = url if url is not None else bot.url
        keys = signing_secrets(bot)
    report = probe_bot(
        target, secrets=keys, allow_loopback=settings.allow_loopback, resolver=resolver
    )
    if not report.passed:
        raise BotRefusedError(target, report)
    return report


def change_bot(
    db: Database,
    settings: Settings,
    bot_id: int,
    *,
    name: str | None = None,
    url: str | None = None,
    resolver: Resolver | None = None,
) -> None:
    """Rename a bot or move it to a new URL, the new URL checked first as at registration
    (:func:`probe_registered_bot`). Raises :class:`~arena.errors.NotFoundError`, a bad name's
    ``ValueError``, :class:`BotNameTakenError` (before any check is made) or
    :class:`BotRefusedError`; nothing is changed then."""
    if name is not None:
        _check_name(name)
        if _name_taken(db, name, by_other_than=bot_id):
            raise BotNameTakenError(f"a bot named {name!r} already exists")
    label = None
    if url is not None:
        label = _reported(probe_registered_bot(db, settings, bot_id, url=url, resolver=resolver))
    update_bot(db, bot_id, name=name, url=url, version_label=label)


def _reported(report: ProbeReport) -> str | None:
    """The ``version`` string the bot's ``GET /`` reported at its check (None: no answer)."""
    return None if report.info is None else report.info.version


def activate_bot(
    db: Database, settings: Settings, bot_id: int, *, resolver: Resolver | None = None
) -> ProbeReport:
    """Make a bot active again once it passes the registration check at its URL (else
    :class:`BotRefusedError`, and it stays as it was)."""
    report = probe_registered_bot(db, settings, bot_id, resolver=resolver)
    set_status(db, bot_id, BotStatus.ACTIVE)
    return report


def check_registered_bot(
    db: Database, settings: Settings, bot_id: int, *, repeats: int = 10
) -> CheckReport:
    """The full conformance check (:func:`arena.bots.check.check_bot`) of a stored bot at its
    URL, signed with its secret, and with the previous one too while a rotation window is
    open."""
    with db.session() as session:
        bot = _bot(session, bot_id)
        url, keys = bot.url, signing_secrets(bot)
    return check_bot(url, secret=keys, allow_loopback=settings.allow_loopback, repeats=repeats)


def find_bot(db: Database, bot_id: int) -> BotListing:
    """One registered bot with its owner contact and URL (:class:`~arena.errors.NotFoundError`
    if there is none)."""
    with db.session() as session:
        return _listing(_bot(session, bot_id))


def list_registered_bots(db: Database) -> list[BotListing]:
    """Every registered bot, by id, with its owner contact and URL (for the organiser)."""
    with db.session() as session:
        return [_listing(b) for b in session.scalars(select(BotRow).order_by(BotRow.id))]


def _listing(bot: BotRow) -> BotListing:
    return BotListing(bot.id, bot.name, bot.owner, bot.url, bot.status, bot.elo, bot.created_at)


def register_bot(
    db: Database,
    *,
    name: str,
    owner: str,
    url: str,
    protocol_version: str = PROTOCOL_VERSION,
    secret: str | None = None,
    version_label: str | None = None,
) -> RegisteredBot:
    """Store a new active bot with a fresh owner token and ``secret`` (default: a new one),
    and its version 1 (labelled ``version_label``, the ``version`` its ``GET /`` reported).

    No check of the bot is made here: :func:`enroll_bot` checks first.
    """
    _check_name(name)
    token = "gat_" + secrets.token_urlsafe(32)
    secret = generate_secret() if secret is None else check_secret(secret)
    try:
        with db.session() as session:
            bot = BotRow(
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
            session.add(BotStatsRow(bot_id=bot.id, latency_histogram=[]))
            create_version(session, bot, VersionReason.REGISTERED, version_label)
            bot_id = bot.id
    except IntegrityError:
        raise BotNameTakenError(f"a bot named {name!r} already exists") from None
    return RegisteredBot(bot_id, token, secret)


def update_bot(
    db: Database,
    bot_id: int,
    *,
    name: str | None = None,
    url: str | None = None,
    version_label: str | None = None,
) -> None:
    """Change a bot's name or URL as given, with no check of the URL (:func:`change_bot`
    checks it first). A new URL is a new version of the bot, labelled ``version_label`` (the
    ``version`` the new URL reported at its check; None: not known yet)."""
    if name is not None:
        _check_name(name)
    try:
        with db.session() as session:
            bot = _bot(session, bot_id)
            if name is not None:
                bot.name = name
            if url is not None and url != bot.url:
                bot.url = url
                create_version(session, bot, VersionReason.URL_CHANGED, version_label)
            bot.updated_at = utcnow()
    except IntegrityError:
        raise BotNameTakenError(f"a bot named {name!r} already exists") from None


def rotate_token(db: Database, bot_id: int) -> str:
    """A new owner token (the old one stops working at once)."""
    token = "gat_" + secrets.token_urlsafe(32)
    with db.session() as session:
        bot = _bot(session, bot_id)
        bot.token_hash = hash_token(token)
        bot.updated_at = utcnow()
    return token


class _Secrets(Protocol):
    @property
    def secret(self) -> str: ...
    @property
    def previous_secret(self) -> str | None: ...
    @property
    def previous_secret_expires_at(self) -> datetime | None: ...


def signing_secrets(bot: _Secrets, *, now: datetime | None = None) -> tuple[str, ...]:
    """The secrets requests to a bot (a :class:`Bot` row or a worker's copy of it) are signed
    with at ``now``: the current one, and the previous one while its rotation window is open."""
    now = now or utcnow()
    expires = bot.previous_secret_expires_at
    if bot.previous_secret and expires is not None and now < expires:
        return (bot.secret, bot.previous_secret)
    return (bot.secret,)


def rotate_secret(
    db: Database, bot_id: int, *, window_hours: float = 24.0, now: datetime | None = None
) -> SecretRotation:
    """A new signing secret, used from the next match on; the old one keeps signing beside it
    for ``window_hours`` (``ARENA_SECRET_ROTATION_HOURS``; 0 cuts over at once). The bot gets a
    new version (``secret_changed``, with its current version's label).

    Rotating again within a window replaces the previous secret with the one current until now
    (a bot still on the one before must take the newest).
    """
    secret = generate_secret()
    now = now or utcnow()
    until = now + timedelta(hours=window_hours) if window_hours > 0 else None
    with db.session() as session:
        bot = _bot(session, bot_id)
        bot.previous_secret = bot.secret if until is not None else None
        bot.previous_secret_expires_at = until
        bot.secret = secret
        bot.updated_at = now
        create_version(session, bot, VersionReason.SECRET_CHANGED, current_label(session, bot))
    return SecretRotation(secret, until)


def end_secret_rotation(db: Database, bot_id: int) -> None:
    """End the rotation window now: only the current secret signs from the next request on."""
    with db.session() as session:
        bot = _bot(session, bot_id)
        bot.previous_secret = None
        bot.previous_secret_expires_at = None
        bot.updated_at = utcnow()


def set_status(db: Database, bot_id: int, status: BotStatus) -> None:
    """Activate or deactivate a bot."""
    with db.session() as session:
        bot = _bot(session, bot_id)
        bot.status = status
        bot.updated_at = utcnow()
