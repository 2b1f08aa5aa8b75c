"""A tournament withdraws a bot because of how it forfeited (``matches.forfeit_kind``), never
because of what the reason text happens to start with (SQLite and PostgreSQL)."""

from __future__ import annotations

from sqlalchemy import update
from tournament_driver import add_bots, entries, matches_of, new_tournament

from arena.db.models import MatchRow, utcnow
from arena.db.session import Database
from arena.services.tournaments import UNREACHABLE, advance_tournament, start_tournament
from arena.states import ForfeitKind, MatchStatus


def _forfeit(db: Database, match: MatchRow, kind: ForfeitKind, reason: str) -> None:
    """Seat a forfeits ``match`` as the recording service would store it."""
    with db.session() as s:
        s.execute(
            update(MatchRow)
            .where(MatchRow.id == match.id)
            .values(
                status=MatchStatus.FINISHED,
                winner="b",
                forfeit_seat="a",
                forfeit_kind=kind,
                forfeit_reason=reason,
                finished_at=utcnow(),
            )
        )


def test_tournament_withdrawal_follows_the_forfeit_kind_not_its_text(db: Database) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "round_robin")
    start_tournament(db, tid, lambda ids: None)
    first, *rest = matches_of(db, tid)
    apart = next(m for m in rest if {m.bot_a_id, m.bot_b_id}.isdisjoint(
        {first.bot_a_id, first.bot_b_id}
    ))  # fmt: skip
    # Unreachable, though its reason says otherwise; and a strike-out whose reason reads like
    # an unreachable bot's (a fault detail can be any text).
    _forfeit(db, first, ForfeitKind.UNREACHABLE_AT_START, "the bot went away")
    _forfeit(db, apart, ForfeitKind.MAX_STRIKES, f"{UNREACHABLE} (3 faults, max_strikes 3)")
    advance_tournament(db, tid, lambda ids: None)
    withdrawn = {bot for bot, entry in entries(db, tid).items() if entry.withdrawn}
    assert withdrawn == {first.bot_a_id}


def test_a_bot_refusing_the_signature_at_the_start_is_withdrawn_by_its_kind(
    db: Database,
) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "round_robin")
    start_tournament(db, tid, lambda ids: None)
    first = matches_of(db, tid)[0]
    _forfeit(db, first, ForfeitKind.SIGNATURE_REFUSED_AT_START, "401 at /start")
    advance_tournament(db, tid, lambda ids: None)
    assert entries(db, tid)[first.bot_a_id].withdrawn
    assert not entries(db, tid)[first.bot_b_id].withdrawn
