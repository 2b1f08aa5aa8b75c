"""Recording a played match: its result, games, deals, statistics, Elo and its
``match.finished`` event in one transaction.

:func:`record_match_result` writes only while the claim's ``attempt`` is still the match's
(see :mod:`arena.services.matches`): an older attempt that wakes up late changes nothing, and
the unique keys on results, games, deals and rating history make a second result impossible
even if that guard were wrong.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.db.models import (
    BotRow,
    BotStatsRow,
    BotVersionRow,
    GameRow,
    HandRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
    utcnow,
)
from arena.db.session import Database
from arena.events import EventType
from arena.measures.ratings import elo_delta
from arena.measures.stats import merge_histograms, seat_stats
from arena.playing.records import SEATS, MatchRecord, seat_letter
from arena.playing.stored import (
    SCHEMA_VERSION,
    Seat,
    StoredHand,
    StoredMatch,
    deal_logs,
    record_digest,
)
from arena.services.events import emit
from arena.services.ladder import ladder_preset, rate_on_ladder
from arena.services.matches import Claim, _held_by
from arena.services.versions import played_version
from arena.states import MatchStatus

__all__ = ["record_match_result"]


def _summary(data: dict[str, Any]) -> dict[str, Any]:
    """The record's JSON without the per-deal logs (those go to the hands table)."""
    out = dict(data)
    out["games"] = [{k: v for k, v in g.items() if k != "hands"} for g in data["games"]]
    if data["unfinished_game"]:
        out["unfinished_game"] = {k: v for k, v in data["unfinished_game"].items() if k != "hands"}
    return out


def record_match_result(
    db: Database,
    claim: Claim,
    record: MatchRecord,
    *,
    duration_ms: int,
    bot_time_ms: int,
    elo_k: float,
    reported_versions: tuple[str | None, str | None] = (None, None),
    record_json: dict[str, Any] | None = None,
) -> bool:
    """Record a played match in one transaction; False if this attempt was fenced out.

    Result, games, deals (with their replay logs), bot statistics, the version of each side
    (after observing the ``version`` each seat's ``GET /`` reported at the start,
    ``reported_versions``: a new version if it changed, see :mod:`arena.services.versions`),
    (for rated matches) both bots' and both versions' Elo and rating history, and the
    ``match.finished`` event, all or nothing (a ladder match also moves both bots' Elo on its
    preset's ladder: :func:`arena.services.ladder.rate_on_ladder`). The
    record is encoded once (:meth:`~arena.playing.stored.StoredMatch.to_dict`, or
    ``record_json`` if given: the runner's, made for ``/end``): the summary, every deal's log
    and the digest come from that one JSON form.
    """
    stored = record.to_stored()
    data = stored.to_dict() if record_json is None else record_json
    forfeit = record.forfeit
    now = utcnow()
    with db.session() as session:
        guarded = session.execute(
            update(MatchRow)
            .where(*_held_by(claim))
            .values(
                status=MatchStatus.FINISHED,
                winner=stored.winner,
                games_won_a=stored.games_won.a,
                games_won_b=stored.games_won.b,
                forfeit_seat=None if forfeit is None else (seat_letter(forfeit.seat) or "both"),
                forfeit_reason=None if forfeit is None else forfeit.reason,
                forfeit_kind=None if forfeit is None else forfeit.kind,
                finished_at=now,
                lease_owner=None,
                error=None,
                duration_ms=duration_ms,
                bot_time_ms=bot_time_ms,
            )
        )
        if not guarded.rowcount:  # type: ignore[attr-defined]
            return False
        _store_games(session, claim.match_id, stored, data)
        session.add(
            MatchResultRow(
                match_id=claim.match_id,
                attempt=claim.attempt,
                summary=_summary(data),
                digest=record_digest(deal_logs(data)),
                schema_version=SCHEMA_VERSION,
                recorded_at=now,
            )
        )
        bot_ids = (claim.spec.bots[0].id, claim.spec.bots[1].id)
        # Lock both bots in id order (no deadlock between two matches of the same bots), and
        # only against other writers of their columns (``FOR NO KEY UPDATE``): a plain ``FOR
        # UPDATE`` also waits on every foreign-key check that references them, such as the
        # rating fit's inserts, which took those checks' locks in its own order and deadlocked
        # with recordings under load (``bench_load.py``, 4 failed tasks in 400 matches).
        bots = {
            b.id: b
            for b in session.scalars(
                select(BotRow)
                .where(BotRow.id.in_(bot_ids))
                .order_by(BotRow.id)
                .with_for_update(key_share=True)
            )
        }
        for seat, bot_id in zip(SEATS, bot_ids, strict=True):
            _add_stats(session, bot_id, seat, data, record)
        match = session.get_one(MatchRow, claim.match_id)
        versions = (
            played_version(session, claim.spec.bots[0], reported_versions[0]),
            played_version(session, claim.spec.bots[1], reported_versions[1]),
        )
        match.version_a_id, match.version_b_id = (None if v is None else v.id for v in versions)
        if claim.spec.rated and stored.winner is not None:
            a, b = bots[bot_ids[0]], bots[bot_ids[1]]
            _rate(session, claim.match_id, a, b, stored.winner, elo_k, versions)
        ladder = ladder_preset(session, match)
        if ladder is not None and claim.spec.rated and stored.winner is not None:
            rate_on_ladder(session, ladder, bot_ids[0], bot_ids[1], stored.winner, elo_k)
        emit(
            session,
            EventType.MATCH_FINISHED,
            finished_event(match, bots[bot_ids[0]], bots[bot_ids[1]], ladder),
            audience=bot_ids,
            match_id=claim.match_id,
            tournament_id=match.tournament_id,
        )
        session.flush()
    return True


def finished_event(
    match: MatchRow, bot_a: BotRow, bot_b: BotRow, ladder: str | None = None
) -> dict[str, Any]:
    """The ``data`` of ``match.finished`` (see :class:`arena.events.EventType`); ``ladder``
    is the preset of the ladder that scheduled it; links are paths on the arena's API and
    pages."""
    versions = (match.version_a_id, match.version_b_id)
    return {
        "match": match.id,
        "bots": {
            seat: {"id": bot.id, "name": bot.name, "version": version}
            for seat, bot, version in zip(SEATS, (bot_a, bot_b), versions, strict=True)
        },
        "winner": match.winner,
        "score": {"a": match.games_won_a, "b": match.games_won_b},
        "forfeit": None
        if match.forfeit_seat is None
        else {"seat": match.forfeit_seat, "reason": match.forfeit_reason},
        "rated": match.rated,
        "tournament": match.tournament_id,
        "ladder": ladder,
        "links": {
            "api": f"/api/v1/matches/{match.id}",
            "replay": f"/api/v1/matches/{match.id}/replay",
            "page": f"/matches/{match.id}",
        },
    }


def _store_games(
    session: Session, match_id: int, stored: StoredMatch, data: dict[str, Any]
) -> None:
    """A row for each game (and for the game a forfeit interrupted, if it has deals) and for
    each deal, whose log is that deal's JSON in ``data``."""
    for game, logs in zip(stored.games, data["games"], strict=True):
        row = GameRow(
            match_id=match_id,
            index=game.index,
            winner=game.winner,
            points_a=game.points.a,
            points_b=game.points.b,
            totals_a=game.totals.a,
            totals_b=game.totals.b,
            shutout=game.shutout,
            complete=True,
        )
        _store_hands(session, row, game.hands, logs["hands"])
    unfinished = stored.unfinished_game
    if unfinished is not None and unfinished.hands:
        points = unfinished.points
        row = GameRow(
            match_id=match_id,
            index=len(stored.games),
            winner=None,
            points_a=points.a,
            points_b=points.b,
            totals_a=points.a,
            totals_b=points.b,
            shutout=False,
            complete=False,
        )
        _store_hands(session, row, unfinished.hands, data["unfinished_game"]["hands"])


def _store_hands(session: Session, game: GameRow, hands: list[StoredHand], logs: list[Any]) -> None:
    session.add(game)
    session.flush()
    for hand, log in zip(hands, logs, strict=True):
        session.add(
            HandRow(
                game_id=game.id,
                match_id=game.match_id,
                index=hand.index,
                dealer=hand.dealer,
                outcome=hand.outcome.value,
                winner=hand.winner,
                points=hand.points,
                knocker=hand.knocker,
                knocker_deadwood=hand.knocker_deadwood,
                defender_deadwood=hand.defender_deadwood,
                misknocks=len(hand.misknocks),
                log=log,
            )
        )


def _add_stats(
    session: Session, bot_id: int, seat: Seat, data: dict[str, Any], record: MatchRecord
) -> None:
    seat_index = 0 if seat == "a" else 1
    delta = seat_stats(data, seat, record.latencies[seat_index])
    stats = session.get(BotStatsRow, bot_id)
    if stats is None:
        stats = BotStatsRow(bot_id=bot_id, latency_histogram=[])
        for name in delta.counters():
            setattr(stats, name, 0)
        session.add(stats)
    for name, value in delta.counters().items():
        setattr(stats, name, getattr(stats, name) + value)
    stats.latency_histogram = merge_histograms(stats.latency_histogram, delta.latency_histogram)


def _rate(
    session: Session,
    match_id: int,
    a: BotRow,
    b: BotRow,
    winner: str,
    k: float,
    versions: tuple[BotVersionRow | None, BotVersionRow | None],
) -> None:
    """Move both bots' live Elo, and by the same amount the live Elo of the version of each
    that played; one rating-history row each (the bot's Elo before and after, the version)."""
    score_a = 1.0 if winner == "a" else 0.0
    delta = elo_delta(a.elo, b.elo, score_a, k=k)
    for bot, version, change in ((a, versions[0], delta), (b, versions[1], -delta)):
        session.add(
            RatingHistoryRow(
                bot_id=bot.id,
                match_id=match_id,
                version_id=None if version is None else version.id,
                before=bot.elo,
                after=bot.elo + change,
            )
        )
        bot.elo = bot.elo + change
        if bot.rated_at is None:
            bot.rated_at = utcnow()
        if version is not None:
            version.elo = version.elo + change
