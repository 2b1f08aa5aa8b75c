"""The tournament fingerprint (arena.reading.queries.versions) is read in one statement: it must
give exactly what the three separate queries it replaced gave, and change on every event that
can change a bracket, on SQLite and PostgreSQL."""

from __future__ import annotations

import pytest
from sqlalchemy import func, select

from arena.db.models import BotRow, MatchRow, TournamentEntryRow, TournamentRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.playing.jobs import run_match_job
from arena.playing.players import HeuristicPlayer, Player
from arena.reading.queries.versions import tournament_version
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot, update_bot
from arena.services.matches import Claim, claim_match, fail_match
from arena.services.tournaments import cancel_tournament, create_tournament, start_tournament
from arena.settings import load_settings
from arena.states import MatchStatus


def reference_version(db: Database, tournament_id: int) -> str | None:
    """The fingerprint as three queries computed it before they became one."""
    with db.session() as session:
        status = session.scalar(
            select(TournamentRow.status).where(TournamentRow.id == tournament_id)
        )
        if status is None:
            return None
        rows = session.execute(
            select(
                MatchRow.status, func.count(), func.max(MatchRow.id), func.max(MatchRow.finished_at)
            )
            .where(MatchRow.tournament_id == tournament_id)
            .group_by(MatchRow.status)
            .order_by(MatchRow.status)
        ).all()
        withdrawn, renamed = session.execute(
            select(func.count(TournamentEntryRow.withdrawn_order), func.max(BotRow.updated_at))
            .join(BotRow, BotRow.id == TournamentEntryRow.bot_id)
            .where(TournamentEntryRow.tournament_id == tournament_id)
        ).one()
    parts = [status.value, str(withdrawn), str(renamed)] + [
        f"{s.value}:{n}:{last}:{at.isoformat() if at else ''}" for s, n, last, at in rows
    ]
    return "|".join(parts)


def heuristic(claim: Claim, _settings: object) -> list[Player]:
    return [HeuristicPlayer(name=b.name) for b in claim.spec.bots]


def test_the_one_statement_fingerprint_matches_the_three_queries_at_every_step(db: Database):
    settings = load_settings({}, database_url=db.url)
    bots = [
        register_bot(db, name=f"v-{i}", owner="t", url=f"http://127.0.0.1:{9100 + i}").bot_id
        for i in range(4)
    ]
    tid = create_tournament(
        db,
        name="versions",
        format_name="round_robin",
        bot_ids=bots,
        rules=RuleSet(target=50, best_of=1),
        seed=5,
    )
    seen: list[str | None] = []

    def check() -> None:
        version = tournament_version(db, tid)
        assert version == reference_version(db, tid)
        assert version not in seen, "every step changes the fingerprint"
        seen.append(version)

    check()  # created, no match yet
    queue: list[int] = []
    start_tournament(db, tid, queue.extend)
    check()  # pending matches
    claim = claim_match(db, queue[0], "w", lease_seconds=60, max_attempts=3)
    assert claim is not None
    check()  # one running
    assert fail_match(db, claim, "boom")
    check()  # one failed
    run_match_job(db, settings, queue[1], "w", make_players=heuristic)
    check()  # one finished
    update_bot(db, bots[2], name="v-renamed")
    check()  # a participant renamed
    cancel_tournament(db, tid)
    check()  # cancelled: the rest cancelled too
    with db.session() as session:
        statuses = set(
            session.scalars(select(MatchRow.status).where(MatchRow.tournament_id == tid))
        )
    assert {MatchStatus.FAILED, MatchStatus.FINISHED, MatchStatus.CANCELLED} <= statuses
    with pytest.raises(NotFoundError) as missing:
        tournament_version(db, 999_999)
    assert (missing.value.resource, missing.value.key) == ("tournament", 999_999)
    assert reference_version(db, 999_999) is None
