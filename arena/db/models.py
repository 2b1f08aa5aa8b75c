"""The database schema: typed SQLAlchemy 2 models for bots, matches, results, replays,
ratings and tournaments.

Invariants the schema itself enforces (so no code path can break them):

* a match has at most one result (``match_results.match_id`` is the primary key) and at most
  one row per game and per deal;
* a bot's rating moves at most once per match (``rating_history`` is unique on bot and match);
* a tournament pairing issues each of its matches once (unique on tournament and match key);
* a ladder round is scheduled once per preset and time slot (unique on preset and slot), and
  issues each of its matches once (unique on round and match key);
* a bot's versions are numbered 1, 2, ... (unique on bot and number);
* an SPRT test issues each of its matches once (unique on test and match key ``pair:leg``);
* an event is delivered to an endpoint through one delivery (unique on endpoint and event).
"""

from __future__ import annotations

import enum
from datetime import UTC, datetime
from typing import Any, ClassVar

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    DateTime,
    Enum,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.engine import Dialect
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column, relationship
from sqlalchemy.types import TypeDecorator

from arena.states import BotStatus, DeliveryStatus, ForfeitKind, MatchStatus, TournamentStatus

__all__ = [
    "Base",
    "BotRow",
    "BotStatsRow",
    "BotVersionRow",
    "EventRow",
    "GameRow",
    "HandRow",
    "HealthProbeRow",
    "LadderRatingRow",
    "LadderRoundRow",
    "MatchResultRow",
    "MatchRow",
    "RatingFitRow",
    "RatingFitStateRow",
    "RatingHistoryRow",
    "SprtTestRow",
    "TournamentEntryRow",
    "TournamentRow",
    "VersionRatingFitRow",
    "WebhookAttemptRow",
    "WebhookDeliveryRow",
    "WebhookEndpointRow",
    "utcnow",
]


def utcnow() -> datetime:
    """The current time, timezone-aware UTC (the only clock the database layer reads)."""
    return datetime.now(UTC)


class UTCDateTime(TypeDecorator[datetime]):
    """Timezone-aware UTC datetimes on every backend (SQLite keeps them as naive UTC text)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("naive datetime given to a UTC column")
        value = value.astimezone(UTC)
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


class Base(DeclarativeBase):
    """Declarative base; JSON columns map ``dict``/``list`` values."""

    type_annotation_map: ClassVar[dict[Any, Any]] = {dict[str, Any]: JSON, list[Any]: JSON}


def _enum(cls: type[enum.StrEnum], name: str, length: int = 16) -> Enum:
    return Enum(
        cls,
        name=name,
        native_enum=False,
        length=length,
        values_callable=lambda e: [m.value for m in e],
    )


class BotRow(Base):
    """A registered bot: where it lives, who owns it, how it is authenticated, its live Elo."""

    __tablename__ = "bots"
    __table_args__ = (Index("ix_bots_unrated", "rated_at", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(64), unique=True)
    owner: Mapped[str] = mapped_column(String(200))
    url: Mapped[str] = mapped_column(String(2048))
    protocol_version: Mapped[str] = mapped_column(String(32))
    #: SHA-256 of the owner's API token (the token itself is shown once and never stored).
    token_hash: Mapped[str] = mapped_column(String(64), index=True)
    #: The signing secret (``whsec_...``): needed in clear to sign requests to the bot.
    secret: Mapped[str] = mapped_column(String(200))
    #: The secret before the last rotation, still signed with (beside ``secret``) until
    #: ``previous_secret_expires_at`` (``ARENA_SECRET_ROTATION_HOURS`` after the rotation).
    previous_secret: Mapped[str | None] = mapped_column(String(200))
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    status: Mapped[BotStatus] = mapped_column(
        _enum(BotStatus, "bot_status"), default=BotStatus.ACTIVE
    )
    #: Indexed: the leaderboard finds the bots rated by Elo alone above its last fitted bot.
    elo: Mapped[float] = mapped_column(Float, default=1500.0, index=True)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow, onupdate=utcnow)
    #: The version playing now, the newest of ``bot_versions`` (None only between the insert
    #: of a new bot and of its first version, inside one transaction). A plain integer, not a
    #: foreign key: ``bot_versions`` refers to ``bots``, and a cycle of keys would make every
    #: insert and drop a two-step.
    current_version_id: Mapped[int | None] = mapped_column(Integer)
    #: When the bot's first rated, decided match was recorded (None: not rated yet, listed
    #: apart from the leaderboard as unrated). Indexed with ``id`` (``ix_bots_unrated``): the
    #: unrated list reads its first page from the index.
    rated_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    #: The health state machine (:mod:`arena.measures.health`): probes failed and passed in a
    #: row, and when the bot was last probed (None: never).
    failed_probes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    passed_probes: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    last_probed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    stats: Mapped[BotStatsRow | None] = relationship(back_populates="bot", uselist=False)


class BotVersionRow(Base):
    """One version of a bot: a new one when its URL or secret changes or its ``GET /`` reports a
    new ``version`` string. Each version has its own live Elo (a new one starts from its
    predecessor's)."""

    __tablename__ = "bot_versions"
    __table_args__ = (UniqueConstraint("bot_id", "number", name="uq_bot_version_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    #: 1 for the version registered, then 2, 3, ...
    number: Mapped[int] = mapped_column(Integer)
    #: The ``version`` string the bot's ``GET /`` reported (None: it reports none).
    label: Mapped[str | None] = mapped_column(String(64))
    url: Mapped[str] = mapped_column(String(2048))
    #: Why it was created: ``registered``, ``url_changed``, ``secret_changed``, ``reported``.
    reason: Mapped[str] = mapped_column(String(32))
    elo: Mapped[float] = mapped_column(Float, default=1500.0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class HealthProbeRow(Base):
    """One health probe of a bot (``GET /`` and a signed synthetic ``POST /act``)."""

    __tablename__ = "health_probes"
    __table_args__ = (Index("ix_health_probes_bot_time", "bot_id", "probed_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"))
    probed_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    passed: Mapped[bool] = mapped_column(Boolean)
    #: Round trip of the probe's ``/act``, milliseconds (None if it never got that far).
    latency_ms: Mapped[float | None] = mapped_column(Float)
    #: Why it failed (None when it passed).
    reason: Mapped[str | None] = mapped_column(Text)
    #: What set it off: ``sweep``, ``forfeit`` (a ladder match forfeited as unreachable), ``cli``.
    trigger: Mapped[str] = mapped_column(String(16), default="sweep")
    #: The bot's status after this probe (``suspended`` and ``active`` mark the transitions).
    status_after: Mapped[BotStatus] = mapped_column(_enum(BotStatus, "bot_status"))


class BotStatsRow(Base):
    """Per-bot totals, updated in the transaction that records each match (once per match)."""

    __tablename__ = "bot_stats"

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), primary_key=True)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    wins: Mapped[int] = mapped_column(Integer, default=0)
    losses: Mapped[int] = mapped_column(Integer, default=0)
    games_won: Mapped[int] = mapped_column(Integer, default=0)
    games_lost: Mapped[int] = mapped_column(Integer, default=0)
    hands_played: Mapped[int] = mapped_column(Integer, default=0)
    hands_won: Mapped[int] = mapped_column(Integer, default=0)
    knocks: Mapped[int] = mapped_column(Integer, default=0)
    gins: Mapped[int] = mapped_column(Integer, default=0)
    big_gins: Mapped[int] = mapped_column(Integer, default=0)
    #: Knocks of this bot that were undercut.
    undercut: Mapped[int] = mapped_column(Integer, default=0)
    #: Undercuts this bot made as defender.
    undercuts: Mapped[int] = mapped_column(Integer, default=0)
    misknocks: Mapped[int] = mapped_column(Integer, default=0)
    deadwood_at_knock: Mapped[int] = mapped_column(Integer, default=0)
    faults: Mapped[int] = mapped_column(Integer, default=0)
    forfeits: Mapped[int] = mapped_column(Integer, default=0)
    calls: Mapped[int] = mapped_column(Integer, default=0)
    #: Counts of call latencies in fixed log buckets (see arena.measures.stats), for p50/p99.
    latency_histogram: Mapped[list[Any]] = mapped_column(JSON, default=list)

    bot: Mapped[BotRow] = relationship(back_populates="stats")


class TournamentRow(Base):
    """A tournament: its format and options, rule set, seed and where it stands."""

    __tablename__ = "tournaments"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    name: Mapped[str] = mapped_column(String(200))
    format: Mapped[str] = mapped_column(String(32))
    options: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(BigInteger)
    rated: Mapped[bool] = mapped_column(Boolean, default=True)
    status: Mapped[TournamentStatus] = mapped_column(
        _enum(TournamentStatus, "tournament_status"), default=TournamentStatus.CREATED
    )
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    #: Cached plan summary (standings, bracket) written by advance_tournament.
    summary: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)

    entries: Mapped[list[TournamentEntryRow]] = relationship(
        back_populates="tournament", order_by="TournamentEntryRow.seed_rank"
    )


class TournamentEntryRow(Base):
    """A bot entered in a tournament, with its seed; ``withdrawn`` once it stops answering."""

    __tablename__ = "tournament_entries"
    __table_args__ = (UniqueConstraint("tournament_id", "bot_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    tournament_id: Mapped[int] = mapped_column(ForeignKey("tournaments.id", ondelete="CASCADE"))
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id"))
    seed_rank: Mapped[int] = mapped_column(Integer)
    withdrawn: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Order of withdrawal within the tournament (1 for the first bot to withdraw).
    withdrawn_order: Mapped[int | None] = mapped_column(Integer)

    tournament: Mapped[TournamentRow] = relationship(back_populates="entries")
    bot: Mapped[BotRow] = relationship()


class MatchRow(Base):
    """A match as a job: ``pending -> running -> finished | failed`` (or cancelled).

    ``attempt`` counts claims; a worker's claim carries it and every later write is guarded
    by it, so an older attempt that wakes up late can change nothing.
    """

    __tablename__ = "matches"
    __table_args__ = (
        UniqueConstraint("tournament_id", "match_key", name="uq_match_tournament_key"),
        UniqueConstraint("ladder_round_id", "match_key", name="uq_match_ladder_key"),
        UniqueConstraint("test_id", "match_key", name="uq_match_test_key"),
        Index("ix_matches_status_lease", "status", "lease_expires_at"),
        Index("ix_matches_created", "created_at", "id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    status: Mapped[MatchStatus] = mapped_column(
        _enum(MatchStatus, "match_status"), default=MatchStatus.PENDING, index=True
    )
    bot_a_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    bot_b_id: Mapped[int] = mapped_column(ForeignKey("bots.id"), index=True)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    seed: Mapped[int] = mapped_column(BigInteger)
    rated: Mapped[bool] = mapped_column(Boolean, default=True)
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE"), index=True
    )
    #: Within a tournament: the pairing key and the match's place in it (e.g. ``R1-2:1``);
    #: within a ladder round, the pair and leg (e.g. ``3-7:1``).
    match_key: Mapped[str | None] = mapped_column(String(64))
    #: The ladder round that scheduled the match (None for tournaments and challenges).
    ladder_round_id: Mapped[int | None] = mapped_column(
        ForeignKey("ladder_rounds.id", ondelete="CASCADE"), index=True
    )
    #: The version of each bot that played (set when the match starts).
    version_a_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    version_b_id: Mapped[int | None] = mapped_column(ForeignKey("bot_versions.id"))
    winner: Mapped[str | None] = mapped_column(String(1))
    games_won_a: Mapped[int] = mapped_column(Integer, default=0)
    games_won_b: Mapped[int] = mapped_column(Integer, default=0)
    forfeit_seat: Mapped[str | None] = mapped_column(String(4))
    forfeit_reason: Mapped[str | None] = mapped_column(Text)
    #: How the forfeit came about (None without one; also for a forfeit recorded before kinds
    #: were stored whose reason names none of them).
    forfeit_kind: Mapped[ForfeitKind | None] = mapped_column(
        _enum(ForfeitKind, "forfeit_kind", length=32)
    )
    attempt: Mapped[int] = mapped_column(Integer, default=0)
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    error: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    started_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    #: Time spent playing (the last attempt), and the bots' share of it, milliseconds.
    duration_ms: Mapped[int | None] = mapped_column(Integer)
    bot_time_ms: Mapped[int | None] = mapped_column(Integer)
    #: The SPRT test that scheduled the match (None otherwise); its key is ``pair:leg``.
    test_id: Mapped[int | None] = mapped_column(
        ForeignKey("sprt_tests.id", ondelete="CASCADE"), index=True
    )

    bot_a: Mapped[BotRow] = relationship(foreign_keys=[bot_a_id])
    bot_b: Mapped[BotRow] = relationship(foreign_keys=[bot_b_id])
    result: Mapped[MatchResultRow | None] = relationship(back_populates="match", uselist=False)
    games: Mapped[list[GameRow]] = relationship(back_populates="match", order_by="GameRow.index")


class MatchResultRow(Base):
    """The one result of a match: the full record (faults, latencies, forfeit) and its digest."""

    __tablename__ = "match_results"

    match_id: Mapped[int] = mapped_column(
        ForeignKey("matches.id", ondelete="CASCADE"), primary_key=True
    )
    attempt: Mapped[int] = mapped_column(Integer)
    #: The match record without the per-deal logs (those are in ``hands``).
    summary: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: SHA-256 over the canonical JSON of every deal's log and result (tamper evidence).
    digest: Mapped[str] = mapped_column(String(64))
    #: The record's schema version (:data:`arena.playing.stored.SCHEMA_VERSION` when it was
    #: written; 1 for the rows written before the version was stored).
    schema_version: Mapped[int] = mapped_column(Integer, server_default="1")
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)

    match: Mapped[MatchRow] = relationship(back_populates="result")


class GameRow(Base):
    """One game of a match."""

    __tablename__ = "games"
    __table_args__ = (UniqueConstraint("match_id", "index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    winner: Mapped[str | None] = mapped_column(String(1))
    points_a: Mapped[int] = mapped_column(Integer)
    points_b: Mapped[int] = mapped_column(Integer)
    totals_a: Mapped[int] = mapped_column(Integer)
    totals_b: Mapped[int] = mapped_column(Integer)
    shutout: Mapped[bool] = mapped_column(Boolean, default=False)
    #: Whether the game was finished (False for the game a forfeit interrupted).
    complete: Mapped[bool] = mapped_column(Boolean, default=True)

    match: Mapped[MatchRow] = relationship(back_populates="games")
    hands: Mapped[list[HandRow]] = relationship(back_populates="game", order_by="HandRow.index")


class HandRow(Base):
    """One deal: its outcome columns for statistics, and its replay log (deck and actions)."""

    __tablename__ = "hands"
    __table_args__ = (UniqueConstraint("game_id", "index"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    game_id: Mapped[int] = mapped_column(ForeignKey("games.id", ondelete="CASCADE"), index=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"), index=True)
    index: Mapped[int] = mapped_column(Integer)
    dealer: Mapped[str] = mapped_column(String(1))
    outcome: Mapped[str] = mapped_column(String(16))
    winner: Mapped[str | None] = mapped_column(String(1))
    points: Mapped[int] = mapped_column(Integer)
    knocker: Mapped[str | None] = mapped_column(String(1))
    knocker_deadwood: Mapped[int | None] = mapped_column(Integer)
    defender_deadwood: Mapped[int | None] = mapped_column(Integer)
    misknocks: Mapped[int] = mapped_column(Integer, default=0)
    #: The deal's record as JSON: deck, actions with latencies and faults, result details.
    log: Mapped[dict[str, Any]] = mapped_column(JSON)

    game: Mapped[GameRow] = relationship(back_populates="hands")


class RatingHistoryRow(Base):
    """A bot's live Elo before and after one rated match (once per bot and match)."""

    __tablename__ = "rating_history"
    __table_args__ = (UniqueConstraint("bot_id", "match_id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    match_id: Mapped[int] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    #: The version that played (its own live Elo moved from ``before`` to ``after`` too).
    version_id: Mapped[int | None] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="CASCADE"), index=True
    )
    before: Mapped[float] = mapped_column(Float)
    after: Mapped[float] = mapped_column(Float)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class _FitColumns:
    """The columns of a stored whole-history fit (a bot's or a version's): the rating, its
    95% interval and standard error, the rated matches it rests on, and when it was made."""

    rating: Mapped[float] = mapped_column(Float)
    ci_low: Mapped[float] = mapped_column(Float)
    ci_high: Mapped[float] = mapped_column(Float)
    stderr: Mapped[float] = mapped_column(Float)
    matches: Mapped[int] = mapped_column(Integer)
    provisional: Mapped[bool] = mapped_column(Boolean)
    fitted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class RatingFitRow(_FitColumns, Base):
    """A bot's whole-history rating (Bradley-Terry fit over all rated results) with its 95%
    interval; the table is rewritten by each refit."""

    __tablename__ = "rating_fits"
    #: The leaderboard's ranking (rating, then rated matches, then id) walked from the top.
    __table_args__ = (Index("ix_rating_fits_rank", "rating", "matches", "bot_id"),)

    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), primary_key=True)


class RatingFitStateRow(Base):
    """The version of the stored fit (one row, ``id`` 1): how many rated results it covers.

    A refit replaces the fit only if it covers at least as many results (a conditional update
    of this row, which also serialises concurrent refits), so a slow refit over older results
    can never overwrite a newer one.
    """

    __tablename__ = "rating_fit_state"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    #: Rated, decided matches the stored fit was computed from.
    results: Mapped[int] = mapped_column(Integer)
    fitted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class VersionRatingFitRow(_FitColumns, Base):
    """A bot version's whole-history rating: the same fit as ``rating_fits`` with each version
    its own player; rewritten by each refit."""

    __tablename__ = "version_rating_fits"

    version_id: Mapped[int] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="CASCADE"), primary_key=True
    )
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)


class LadderRoundRow(Base):
    """One round of a preset's ladder. Its slot (the start of its time slot, in whole
    ``ARENA_LADDER_INTERVAL_SECONDS`` since the epoch) is unique per preset, so two beats or a
    retried round never schedule twice."""

    __tablename__ = "ladder_rounds"
    __table_args__ = (UniqueConstraint("preset", "slot", name="uq_ladder_round_slot"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    preset: Mapped[str] = mapped_column(String(32))
    slot: Mapped[int] = mapped_column(BigInteger)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    #: Matches the round scheduled, and the policy it used (the settings, for the record).
    scheduled: Mapped[int] = mapped_column(Integer, default=0)
    policy: Mapped[dict[str, Any]] = mapped_column(JSON, default=dict)


class LadderRatingRow(Base):
    """A bot's live Elo on one preset's ladder (moved by that ladder's rated matches only)."""

    __tablename__ = "ladder_ratings"

    preset: Mapped[str] = mapped_column(String(32), primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), primary_key=True)
    elo: Mapped[float] = mapped_column(Float, default=1500.0)
    matches: Mapped[int] = mapped_column(Integer, default=0)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class EventRow(Base):
    """The outbox: one row per event, written in the transaction of the change it reports
    (:mod:`arena.services.events`). ``id`` orders events; ``message_id`` is the
    ``webhook-id`` every delivery and retry of the event carries."""

    __tablename__ = "events"
    __table_args__ = (
        Index("ix_events_bot", "bot_id", "id"),
        Index("ix_events_tournament", "tournament_id", "id"),
        Index("ix_events_match", "match_id", "id"),
    )

    id: Mapped[int] = mapped_column(BigInteger().with_variant(Integer, "sqlite"), primary_key=True)
    message_id: Mapped[str] = mapped_column(String(64), unique=True)
    type: Mapped[str] = mapped_column(String(32))
    bot_id: Mapped[int | None] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"))
    tournament_id: Mapped[int | None] = mapped_column(
        ForeignKey("tournaments.id", ondelete="CASCADE")
    )
    match_id: Mapped[int | None] = mapped_column(ForeignKey("matches.id", ondelete="CASCADE"))
    #: The event's ``data`` as delivered (the body is ``{"type", "timestamp", "data"}``).
    data: Mapped[dict[str, Any]] = mapped_column(JSON)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WebhookEndpointRow(Base):
    """An owner's webhook endpoint for one bot: where to send which event types, signed with
    its own secret (the previous one signs too until it expires, as for bots)."""

    __tablename__ = "webhook_endpoints"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    bot_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    url: Mapped[str] = mapped_column(String(2048))
    #: Event types delivered (a list of :class:`arena.events.EventType` values).
    event_types: Mapped[list[Any]] = mapped_column(JSON)
    secret: Mapped[str] = mapped_column(String(200))
    previous_secret: Mapped[str | None] = mapped_column(String(200))
    previous_secret_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    enabled: Mapped[bool] = mapped_column(Boolean, default=True)
    #: Why it was disabled (None while enabled).
    disabled_reason: Mapped[str | None] = mapped_column(Text)
    #: Delivery attempts failed in a row (reset by a success).
    failed_attempts: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WebhookDeliveryRow(Base):
    """One event on its way to one endpoint (created with the event, in its transaction)."""

    __tablename__ = "webhook_deliveries"
    __table_args__ = (
        UniqueConstraint("endpoint_id", "event_id", name="uq_delivery_endpoint_event"),
        Index("ix_deliveries_due", "status", "next_attempt_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    endpoint_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_endpoints.id", ondelete="CASCADE"), index=True
    )
    event_id: Mapped[int] = mapped_column(ForeignKey("events.id", ondelete="CASCADE"))
    status: Mapped[DeliveryStatus] = mapped_column(
        _enum(DeliveryStatus, "delivery_status"), default=DeliveryStatus.PENDING
    )
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    next_attempt_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    #: A sender's hold on the delivery while it is being sent (as a match's lease).
    lease_owner: Mapped[str | None] = mapped_column(String(128))
    lease_expires_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    last_status_code: Mapped[int | None] = mapped_column(Integer)
    last_latency_ms: Mapped[float | None] = mapped_column(Float)
    last_error: Mapped[str | None] = mapped_column(Text)
    delivered_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)


class WebhookAttemptRow(Base):
    """One try of a delivery: when, the HTTP status (None: no answer), latency, error."""

    __tablename__ = "webhook_attempts"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    delivery_id: Mapped[int] = mapped_column(
        ForeignKey("webhook_deliveries.id", ondelete="CASCADE"), index=True
    )
    attempted_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    status_code: Mapped[int | None] = mapped_column(Integer)
    latency_ms: Mapped[float | None] = mapped_column(Float)
    error: Mapped[str | None] = mapped_column(Text)


class SprtTestRow(Base):
    """An SPRT test of a candidate (seat ``a`` of each pair's first leg) against a baseline:
    unrated duplicate pairs until the log-likelihood ratio crosses a bound or the cap is
    reached (:mod:`arena.services.sprt_tests`). The numbers after ``pairs`` are a cache,
    rewritten whole from the test's stored matches after each pair, never incremented."""

    __tablename__ = "sprt_tests"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    candidate_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    baseline_id: Mapped[int] = mapped_column(ForeignKey("bots.id", ondelete="CASCADE"), index=True)
    #: The version of each side when the test was created (the only one it plays).
    candidate_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="SET NULL")
    )
    baseline_version_id: Mapped[int | None] = mapped_column(
        ForeignKey("bot_versions.id", ondelete="SET NULL")
    )
    #: The hypotheses, logistic Elo of the match score, and the error rates.
    elo0: Mapped[float] = mapped_column(Float)
    elo1: Mapped[float] = mapped_column(Float)
    alpha: Mapped[float] = mapped_column(Float)
    beta: Mapped[float] = mapped_column(Float)
    max_pairs: Mapped[int] = mapped_column(Integer)
    #: Pairs scheduled but not yet finished, at most.
    concurrency: Mapped[int] = mapped_column(Integer)
    rules: Mapped[dict[str, Any]] = mapped_column(JSON)
    #: Decides every pair's seed (:func:`arena.services.sprt_tests.pair_seed`); secret until
    #: the test is over and none of its matches is pending or running.
    seed: Mapped[int] = mapped_column(BigInteger)
    #: ``running`` or ``finished``; ``verdict`` (``h0``, ``h1``, ``capped``, ``cancelled``)
    #: once finished, and why in words.
    status: Mapped[str] = mapped_column(String(16), default="running", index=True)
    verdict: Mapped[str | None] = mapped_column(String(16))
    reason: Mapped[str | None] = mapped_column(Text)
    #: Who created it: ``organiser`` or ``owner:<bot id>``.
    created_by: Mapped[str] = mapped_column(String(32))
    #: Pairs scheduled so far (the next pair's number is this plus one).
    scheduled_pairs: Mapped[int] = mapped_column(Integer, default=0)
    pairs: Mapped[int] = mapped_column(Integer, default=0)
    pentanomial: Mapped[list[Any]] = mapped_column(JSON, default=list)
    llr: Mapped[float] = mapped_column(Float, default=0.0)
    #: The LLR after each counted pair, in pair number order.
    llr_history: Mapped[list[Any]] = mapped_column(JSON, default=list)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime(), default=utcnow)
    finished_at: Mapped[datetime | None] = mapped_column(UTCDateTime())

    candidate: Mapped[BotRow] = relationship(foreign_keys=[candidate_id])
    baseline: Mapped[BotRow] = relationship(foreign_keys=[baseline_id])
