"""The forfeit's kind is a column of ``matches`` (SQLite and PostgreSQL): the recording service
stores the kind the match runner gave, and migration 0004 fills it in once, from the reason
text, for the forfeits stored before it (every stored record so far is schema version 1)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from db_support import add_bots, add_match, heuristic_v_faulty, match_row
from old_schema import database_at
from sqlalchemy import select, text

from arena.db.migrate import upgrade
from arena.db.models import MatchResultRow, MatchRow
from arena.db.session import Database
from arena.playing.match import MatchRunner
from arena.playing.players import Fault, FaultKind, HeuristicPlayer, MatchContext, Player
from arena.playing.stored import SCHEMA_VERSION
from arena.services.matches import Claim, claim_match
from arena.services.recording import record_match_result
from arena.settings import load_settings
from arena.states import ForfeitKind


class _Refuses(HeuristicPlayer):
    """Cannot be started: ``kind`` at ``/start``."""

    def __init__(self, kind: FaultKind) -> None:
        super().__init__(name="refuses")
        self.kind = kind

    def start(self, context: MatchContext) -> Fault | None:
        return Fault(self.kind, "no")


def _record(db: Database, match_id: int, make: Callable[[Claim], list[Player]]) -> None:
    claim = claim_match(db, match_id, "w", lease_seconds=60, max_attempts=5)
    assert claim is not None
    record = MatchRunner(make(claim), claim.spec.rules, claim.spec.seed).run()
    assert record_match_result(db, claim, record, duration_ms=1, bot_time_ms=1, elo_k=24.0)


def _refusing(kind: FaultKind) -> Callable[[Claim], list[Player]]:
    return lambda claim: [HeuristicPlayer(), _Refuses(kind)]


@pytest.mark.parametrize(
    ("make", "kind", "reason"),
    [
        (
            _refusing(FaultKind.UNREACHABLE),
            ForfeitKind.UNREACHABLE_AT_START,
            "unreachable at the start (",
        ),
        (
            _refusing(FaultKind.SIGNATURE_REFUSED),
            ForfeitKind.SIGNATURE_REFUSED_AT_START,
            "refused the arena's signature at the start (",
        ),
        (
            lambda claim: heuristic_v_faulty(claim, load_settings({})),
            ForfeitKind.MAX_STRIKES,
            "3 faults (max_strikes 3); last: ",
        ),
    ],
    ids=["unreachable", "signature_refused", "max_strikes"],
)
def test_the_recorded_forfeit_keeps_its_kind_beside_its_reason(
    db: Database, make: Callable[[Claim], list[Player]], kind: ForfeitKind, reason: str
) -> None:
    match_id = add_match(db, *add_bots(db, 2))
    _record(db, match_id, make)
    m = match_row(db, match_id)
    assert (m.forfeit_kind, m.forfeit_seat) == (kind, "b")
    assert m.forfeit_reason is not None and m.forfeit_reason.startswith(reason)
    with db.session() as s:
        assert s.get_one(MatchResultRow, match_id).schema_version == SCHEMA_VERSION


def test_a_finished_match_without_a_forfeit_has_no_kind(db: Database) -> None:
    match_id = add_match(db, *add_bots(db, 2))
    _record(db, match_id, lambda claim: [HeuristicPlayer(), HeuristicPlayer(name="other")])
    m = match_row(db, match_id)
    assert (m.forfeit_seat, m.forfeit_reason, m.forfeit_kind) == (None, None, None)


@pytest.fixture(params=["sqlite", "postgresql"])
def at_0003(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[Database]:
    """A database migrated only to revision 0003 (before forfeit kinds were stored)."""
    with database_at("0003", request.param, tmp_path) as db:
        yield db


#: Reasons the match runner has written, and the kind each one is given.
STORED_REASONS = {
    "unreachable at the start (connection: refused)": "unreachable_at_start",
    "unreachable at the start: neither player answered (a: timeout)": "unreachable_at_start",
    "refused the arena's signature at the start (signature_refused: 401)": (
        "signature_refused_at_start"
    ),
    "3 faults (max_strikes 3); last: timeout: no answer within 1000 ms": "max_strikes",
    "neither player could be reached at the start (a: x; b: y)": None,
}


def test_migration_0004_gives_stored_forfeits_their_kind_from_the_reason_once(
    at_0003: Database,
) -> None:
    with at_0003.engine.begin() as conn:
        for i, name in enumerate(("a", "b")):
            conn.execute(
                text(
                    "INSERT INTO bots (id, name, owner, url, protocol_version, token_hash, secret,"
                    " status, elo, created_at, updated_at) VALUES (:id, :name, 't', 'u',"
                    " 'gin-arena/1', 'h', 's', 'active', 1500, :now, :now)"
                ),
                {"id": i + 1, "name": name, "now": "2026-01-01 00:00:00"},
            )
        reasons = [*STORED_REASONS, None]
        for i, reason in enumerate(reasons):
            conn.execute(
                text(
                    "INSERT INTO matches (id, status, bot_a_id, bot_b_id, rules, seed, rated,"
                    " games_won_a, games_won_b, forfeit_seat, forfeit_reason, attempt,"
                    " created_at) VALUES (:id, 'finished', 1, 2, '{}', 1, true, 0, 0, :seat,"
                    " :reason, 1, :now)"
                ),
                {
                    "id": i + 1,
                    "seat": None if reason is None else "a",
                    "reason": reason,
                    "now": "2026-01-01 00:00:00",
                },
            )
        conn.execute(
            text(
                "INSERT INTO match_results (match_id, attempt, summary, digest, recorded_at)"
                " VALUES (1, 1, '{}', :digest, :now)"
            ),
            {"digest": "0" * 64, "now": "2026-01-01 00:00:00"},
        )
    upgrade(at_0003)
    with at_0003.session() as s:
        kinds = {m.forfeit_reason: m.forfeit_kind for m in s.scalars(select(MatchRow))}
        assert s.get_one(MatchResultRow, 1).schema_version == 1
    assert kinds == {**STORED_REASONS, None: None}
