"""The lifecycle states the arena stores: of a bot, a match and a tournament (and how a match
was forfeited).

They are plain string enums (their values are what the database and the API carry), kept apart
from the database models so that code outside the data doors (``arena.services`` and
``arena.reading.queries``) can name a state without importing the schema.
"""

from __future__ import annotations

import enum

__all__ = ["BotStatus", "DeliveryStatus", "ForfeitKind", "MatchStatus", "TournamentStatus"]


class BotStatus(enum.StrEnum):
    """Whether a bot is entered in new matches (``inactive``: retired by its owner;
    ``suspended``: its health probes failed, until they pass again)."""

    ACTIVE = "active"
    INACTIVE = "inactive"
    SUSPENDED = "suspended"


class MatchStatus(enum.StrEnum):
    """A match from scheduling to its end; ``failed`` is a void match (no result, no rating)."""

    PENDING = "pending"
    RUNNING = "running"
    FINISHED = "finished"
    FAILED = "failed"
    CANCELLED = "cancelled"


class ForfeitKind(enum.StrEnum):
    """How a match came to be forfeited (``matches.forfeit_kind``; the reason says it in words)."""

    #: ``GET /`` or ``POST /start`` failed: the bot could not be reached at the start.
    UNREACHABLE_AT_START = "unreachable_at_start"
    #: ``POST /start`` was refused with 401/403: the bot refused the arena's signature.
    SIGNATURE_REFUSED_AT_START = "signature_refused_at_start"
    #: The bot reached ``max_strikes`` faults in the match.
    MAX_STRIKES = "max_strikes"

    @property
    def is_at_start(self) -> bool:
        """The bot could not be started at all (a tournament withdraws it)."""
        return self is not ForfeitKind.MAX_STRIKES


class TournamentStatus(enum.StrEnum):
    """A tournament from creation to its end."""

    CREATED = "created"
    RUNNING = "running"
    FINISHED = "finished"
    CANCELLED = "cancelled"


class DeliveryStatus(enum.StrEnum):
    """A webhook delivery: waiting for its next attempt (paused while its endpoint is
    disabled), delivered, or given up (its retries ran out). Deleting an endpoint deletes its
    deliveries."""

    PENDING = "pending"
    DELIVERED = "delivered"
    FAILED = "failed"
