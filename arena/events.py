"""The events the arena reports: their types and what each carries.

An event is a fact that has been committed (a match recorded, a bot suspended, a version
created...). It is written to the outbox (``events``) in the same transaction as the change it
reports (:func:`arena.services.events.emit`), then delivered to the owners' webhook endpoints and
(issue 13) fed to the live streams. The body delivered is ``{"type", "timestamp", "data"}``
with ``data`` as listed here; ``webhook-id`` is the event's message id on every attempt.

Pure: no database, no clock.
"""

from __future__ import annotations

import enum

__all__ = ["EventType"]


class EventType(enum.StrEnum):
    """Every event type, with the fields of its ``data``."""

    #: ``match`` (id), ``attempt`` (1 and up: a restart starts it again), ``bots`` ({seat: {id,
    #: name, version}}), ``tournament`` (id or null), ``ladder`` (preset or null), ``links``
    #: ({api, page}).
    MATCH_STARTED = "match.started"
    #: ``match`` (id), ``bots`` ({seat: {id, name, version}}), ``winner`` (seat or null),
    #: ``score`` ({"a": games, "b": games}), ``forfeit`` (null or {seat, reason}), ``rated``,
    #: ``tournament`` (id or null), ``ladder`` (preset or null), ``links`` ({api, page, replay}).
    MATCH_FINISHED = "match.finished"
    #: ``bot`` ({id, name}), ``reason`` (the last failed probe's), ``failed_probes``.
    BOT_SUSPENDED = "bot.suspended"
    #: ``bot`` ({id, name}), ``passed_probes``.
    BOT_RESUMED = "bot.resumed"
    #: ``bot`` ({id, name}), ``version`` ({id, number, label, reason, elo}).
    BOT_VERSION_CREATED = "bot.version_created"
    #: ``bot`` ({id, name}), ``rating``, ``ci_low``, ``ci_high``, ``previous`` (rating or null),
    #: ``matches``, ``provisional``.
    RATING_CHANGED = "rating.changed"
    #: ``tournament`` ({id, name, format}), ``bots`` (ids entered).
    TOURNAMENT_STARTED = "tournament.started"
    #: ``tournament`` ({id, name, format}), ``round`` (its label), ``section`` and ``number``
    #: (where the round is in the bracket), ``matches`` (ids scheduled).
    TOURNAMENT_ROUND_STARTED = "tournament.round_started"
    #: ``tournament`` ({id, name, format}), ``champion`` ({id, name} or null), ``standings``
    #: (the final table, best first: rank, bot {id, name}, score, played, wins, draws, losses,
    #: withdrawn).
    TOURNAMENT_FINISHED = "tournament.finished"
    #: ``test`` (id), ``candidate`` and ``baseline`` ({id, name}), ``verdict`` (``h0``, ``h1``,
    #: ``capped`` or ``cancelled``), ``reason`` (why cancelled, or null), ``llr``, ``bounds``
    #: ({lower, upper}), ``elo0``, ``elo1``, ``pairs``, ``pentanomial`` (five counts), ``elo``
    #: ({estimate, ci_low, ci_high} or null), ``los``, ``links`` ({api, page}).
    TEST_FINISHED = "test.finished"
