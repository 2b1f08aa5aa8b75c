"""Bot versions: when a bot gets a new version, and what the new version starts from.

A bot's versions are numbered 1, 2, ... (``bot_versions``); the newest is its current version
(``bots.current_version_id``), the one its next match records. :func:`create_version` makes
one, in the caller's transaction, for one of four reasons (:class:`VersionReason`):

* ``registered``: version 1, when the bot is registered;
* ``url_changed``: its owner moved it to a new URL;
* ``secret_changed``: its signing secret was rotated;
* ``reported``: its ``GET /`` reported a ``version`` string other than the current version's
  label, at a health probe or at the start of a match (:func:`observe_reported_version`).

**Labels.** A version's label is the ``version`` string the bot reported for it (its first
:data:`LABEL_LENGTH` characters), or None while none is known. An empty string (or none at
all) says nothing about the code that answers, so it never makes a version: a bot that never
reports a string keeps the versions its URL and secret give it, and a bot going from ``"v1"``
to no string stays on its ``"v1"`` version. The first string reported for a version whose label
is not known names that version (no new version: the arena cannot tell it from what the version
ran all along); from then on, a different string is a new version. A version made for a URL
change takes the label the new URL reported at its check (unknown when the change was stored
without one); one made for a new secret keeps its predecessor's label (the same server answers).

**Ratings.** A new version's live Elo starts from its predecessor's; each rated match then
moves the Elo of the version that played by the same amount as its bot's
(:mod:`arena.services.recording`), and the whole-history fit rates every version as a player of
its own (:mod:`arena.services.ratings`).

Every new version is reported as ``bot.version_created`` (:mod:`arena.services.events`) in the
same transaction.
"""

from __future__ import annotations

import enum
from typing import Final

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session

from arena.db.models import BotRow, BotVersionRow, utcnow
from arena.errors import NotFoundError
from arena.events import EventType
from arena.services.events import emit
from arena.services.matches import BotSpec

__all__ = [
    "LABEL_LENGTH",
    "VersionReason",
    "create_version",
    "current_label",
    "observe_reported_version",
    "played_version",
    "version_label",
]

#: The longest label kept (``bot_versions.label``); a longer ``version`` string is cut here.
LABEL_LENGTH: Final = 64


class VersionReason(enum.StrEnum):
    """Why a version was made (``bot_versions.reason``)."""

    REGISTERED = "registered"
    URL_CHANGED = "url_changed"
    SECRET_CHANGED = "secret_changed"
    REPORTED = "reported"


def version_label(reported: str | None) -> str | None:
    """The label a reported ``version`` string gives (None: it says nothing).

    >>> version_label("  2.1.0 "), version_label(""), version_label(None)
    ('2.1.0', None, None)
    >>> len(version_label("x" * 99) or "")
    64
    """
    if reported is None:
        return None
    label = reported.strip()[:LABEL_LENGTH]
    return label or None


def create_version(
    session: Session, bot: BotRow, reason: VersionReason, label: str | None = None
) -> BotVersionRow:
    """A new current version of ``bot`` (in the caller's transaction), numbered after its
    last, at the bot's URL, its live Elo its predecessor's (the bot's for version 1), and its
    ``bot.version_created`` event.

    The caller holds the bot's row (locked where versions may be made concurrently: see
    :func:`observe_reported_version`).
    """
    previous = _current(session, bot)
    last = session.scalar(
        select(func.max(BotVersionRow.number)).where(BotVersionRow.bot_id == bot.id)
    )
    version = BotVersionRow(
        bot_id=bot.id,
        number=(last or 0) + 1,
        label=version_label(label),
        url=bot.url,
        reason=reason.value,
        elo=bot.elo if previous is None else previous.elo,
        created_at=utcnow(),
    )
    session.add(version)
    session.flush()
    bot.current_version_id = version.id
    emit(
        session,
        EventType.BOT_VERSION_CREATED,
        {
            "bot": {"id": bot.id, "name": bot.name},
            "version": {
                "id": version.id,
                "number": version.number,
                "label": version.label,
                "reason": version.reason,
                "elo": round(version.elo, 1),
            },
        },
        bot_id=bot.id,
    )
    return version


def observe_reported_version(session: Session, bot_id: int, label: str | None) -> int | None:
    """Note the ``version`` string a bot's ``GET /`` reported (in the caller's transaction):
    a new version if it differs from the current version's label; its id, or None if no new
    version was made.

    An empty or missing string changes nothing; the first string reported for a version
    whose label is not known becomes its label (see the module docstring). The bot's row is
    locked first, so two observations at once (a probe and a match's record) make at most one
    version. :class:`~arena.errors.NotFoundError` if there is no such bot.
    """
    reported = version_label(label)
    if reported is None:
        return None
    bot = _locked_bot(session, bot_id)
    current = _current(session, bot)
    if current is not None and current.label is None:
        current.label = reported
        return None
    if current is not None and current.label == reported:
        return None
    return create_version(session, bot, VersionReason.REPORTED, reported).id


def _locked_bot(session: Session, bot_id: int) -> BotRow:
    """The bot's row, locked until the transaction ends, by an update that changes nothing: a
    row lock on PostgreSQL, and on SQLite the database's write lock (taken before anything is
    read, so what is read next is the newest)."""
    locked = session.execute(
        update(BotRow)
        .where(BotRow.id == bot_id)
        .values(current_version_id=BotRow.current_version_id, updated_at=BotRow.updated_at)
    )
    if not locked.rowcount:  # type: ignore[attr-defined]
        raise NotFoundError("bot", bot_id)
    return session.get_one(BotRow, bot_id, populate_existing=True)


def current_label(session: Session, bot: BotRow) -> str | None:
    """The label of ``bot``'s current version (None: not known, or no version yet)."""
    current = _current(session, bot)
    return None if current is None else current.label


def _current(session: Session, bot: BotRow) -> BotVersionRow | None:
    if bot.current_version_id is None:
        return None
    return session.get(BotVersionRow, bot.current_version_id)


def played_version(session: Session, bot: BotSpec, reported: str | None) -> BotVersionRow | None:
    """The version of ``bot`` (as a match claimed it) that played the match, once what its
    ``GET /`` reported at the match's start has been observed (:func:`observe_reported_version`,
    in the recording's transaction): the bot's current version if it is at the URL the match
    played and carries the reported label (made now, or by a probe while the match was
    played), else the version current when the match was claimed (None for a match claimed
    before the bot had versions)."""
    observe_reported_version(session, bot.id, reported)
    label = version_label(reported)
    row = session.get_one(BotRow, bot.id)
    current = _current(session, row)
    if (
        label is not None
        and current is not None
        and (current.label, current.url)
        == (
            label,
            bot.url,
        )
    ):
        return current
    return None if bot.version_id is None else session.get(BotVersionRow, bot.version_id)
