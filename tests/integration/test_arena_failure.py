"""A failure of the arena's own never scores a loss: through the local executor, on SQLite and
PostgreSQL, a match the arena fails on is played again (bounded by ARENA_MAX_ATTEMPTS), then
void; its tournament counts it as a drawn match with no games and finishes."""

from __future__ import annotations

from arena_procs import house_bots, wait_until
from sqlalchemy import select, update

from arena.db.models import BotRow, BotStatsRow, MatchResultRow, MatchRow, RatingHistoryRow
from arena.db.session import Database
from arena.playing.executors import LocalExecutor
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.tournaments import create_tournament, load_plan, start_tournament
from arena.settings import load_settings
from arena.states import MatchStatus
from arena.tournaments import DecidedBy


def test_an_arena_failure_voids_the_match_and_scores_no_loss_for_either_bot(db: Database) -> None:
    """The arena cannot build a player for ``broken`` (its stored secret is corrupt: an
    exception in the arena's code, not a fault of any bot). Its matches are tried
    ARENA_MAX_ATTEMPTS times, then void: no result, rating or statistics for either side, the
    pairing a draw with no games; the match between the two sound bots is played normally."""
    settings = load_settings(
        {}, database_url=db.url, allow_loopback=True, lease_seconds=30, max_attempts=2
    )
    with house_bots(["greedy", "strong", "random"]) as servers:
        names = ["broken", "sound-1", "sound-2"]
        ids = [
            register_bot(db, name=name, owner="t", url=server.url).bot_id
            for name, server in zip(names, servers, strict=True)
        ]
        with db.session() as s:
            s.execute(update(BotRow).where(BotRow.id == ids[0]).values(secret="whsec_not-base64!"))
        tournament_id = create_tournament(
            db, name="t", format_name="round_robin", bot_ids=ids, rules=RuleSet(target=50), seed=3
        )
        with LocalExecutor(settings, processes=1, threads=4) as executor:
            start_tournament(db, tournament_id, executor.submit)

            def finished() -> bool:
                return load_plan(db, tournament_id)[1].finished

            wait_until(finished, timeout=120, what="the tournament to finish")

    broken = str(ids[0])
    with db.session() as s:
        matches = list(s.scalars(select(MatchRow).where(MatchRow.tournament_id == tournament_id)))
        void = [m for m in matches if ids[0] in (m.bot_a_id, m.bot_b_id)]
        played = [m for m in matches if m not in void]
        assert len(void) == 2 and len(played) == 1
        for m in void:
            assert (m.status, m.attempt, m.winner, m.forfeit_seat) == (
                MatchStatus.FAILED,
                2,
                None,
                None,
            )
            assert m.error is not None and "gave up after 2 attempts" in m.error
            assert "SecretError" in m.error
        assert played[0].status is MatchStatus.FINISHED
        void_ids = [m.id for m in void]
        assert not list(
            s.scalars(select(MatchResultRow).where(MatchResultRow.match_id.in_(void_ids)))
        )
        assert not list(
            s.scalars(select(RatingHistoryRow).where(RatingHistoryRow.match_id.in_(void_ids)))
        )
        stats = {row.bot_id: row for row in s.scalars(select(BotStatsRow))}
        assert [stats[i].matches for i in ids] == [0, 1, 1]
        assert stats[ids[0]].losses == 0 and stats[ids[0]].forfeits == 0
        assert s.get_one(BotRow, ids[0]).elo == 1500.0

    _, plan = load_plan(db, tournament_id)
    against_broken = [p for p in plan.pairings if broken in (p.a, p.b) and None not in (p.a, p.b)]
    assert len(against_broken) == 2
    for pairing in against_broken:
        assert pairing.result is not None
        assert pairing.result.winner is None
        assert not pairing.result.is_loss_for_both
        assert pairing.result.decided_by is not DecidedBy.FORFEIT
        assert pairing.result.forfeited == frozenset()
    standings = {s.participant: s for s in plan.standings}
    assert standings[str(ids[1])].losses + standings[str(ids[2])].losses == 1
    assert standings[broken].losses == 0
