"""Where suspension bites, with real loopback bots on SQLite and PostgreSQL: a suspended bot's
match is forfeited at the start with no request reaching it; a ladder match a bot forfeited
as unreachable has that bot probed at once (and only a ladder match, and only a bot that was
called); a tournament takes a suspended bot that is named and withdraws it when it forfeits."""

from __future__ import annotations

from collections import deque
from collections.abc import Iterator

import pytest
from health_support import HeldBot, bot_row, probes_of, register
from loopback import free_port
from sqlalchemy import select, update

from arena.bots.house import start_house_bots
from arena.bots.sdk import BotServer
from arena.db.models import BotRow, LadderRoundRow, MatchRow, TournamentEntryRow, TournamentRow
from arena.db.session import Database
from arena.playing.jobs import JobStatus, run_match_job
from arena.protocol.signing import generate_secret
from arena.rules.ruleset import RuleSet
from arena.services.matches import schedule_match
from arena.services.tournaments import advance_for_match, create_tournament, start_tournament
from arena.settings import Settings, load_settings
from arena.states import BotStatus, ForfeitKind, TournamentStatus

SECRET = generate_secret()
SHORT = RuleSet(target=50, best_of=1)


@pytest.fixture(scope="module")
def house() -> Iterator[list[BotServer]]:
    bots = start_house_bots(["greedy", "strong"], secret=SECRET)
    yield bots
    for bot in bots:
        bot.stop()


@pytest.fixture
def held() -> Iterator[HeldBot]:
    bot = HeldBot().start()
    yield bot
    bot.release.set()
    bot.stop()


def _settings(db: Database) -> Settings:
    return load_settings({}, database_url=db.url, allow_loopback=True, health_timeout_seconds=5)


def _suspend(db: Database, bot_id: int, failed: int = 3) -> None:
    with db.session() as session:
        session.execute(
            update(BotRow)
            .where(BotRow.id == bot_id)
            .values(status=BotStatus.SUSPENDED, failed_probes=failed, passed_probes=0)
        )


def _match(db: Database, a: int, b: int, *, ladder: bool) -> int:
    with db.session() as session:
        match = schedule_match(session, a, b, rules=SHORT, seed=11, rated=False)
        if ladder:
            round_ = LadderRoundRow(preset="standard", slot=1)
            session.add(round_)
            session.flush()
            match.ladder_round_id = round_.id
        return match.id


def _forfeit(db: Database, match_id: int) -> tuple[str | None, ForfeitKind | None, str | None]:
    with db.session() as session:
        m = session.get_one(MatchRow, match_id)
        return m.forfeit_seat, m.forfeit_kind, m.forfeit_reason


def test_a_suspended_bots_match_is_forfeited_at_the_start_without_a_request_reaching_it(
    db: Database, house: list[BotServer], held: HeldBot
) -> None:
    player = register(db, "player", house[0].url, SECRET)
    down = register(db, "down", held.url)
    _suspend(db, down, failed=4)
    match_id = _match(db, player, down, ladder=False)
    assert run_match_job(db, _settings(db), match_id, "t").status is JobStatus.RECORDED
    seat, kind, reason = _forfeit(db, match_id)
    assert (seat, kind) == ("b", ForfeitKind.UNREACHABLE_AT_START)
    assert reason is not None and "suspended: its last 4 health probes failed" in reason
    assert held.connections == 0
    assert probes_of(db, down) == []


def test_a_ladder_match_forfeited_as_unreachable_probes_that_bot_at_once(
    db: Database, house: list[BotServer]
) -> None:
    player = register(db, "player", house[0].url, SECRET)
    gone = register(db, "gone", f"http://127.0.0.1:{free_port()}")
    match_id = _match(db, gone, player, ladder=True)
    assert run_match_job(db, _settings(db), match_id, "t").status is JobStatus.RECORDED
    assert _forfeit(db, match_id)[:2] == ("a", ForfeitKind.UNREACHABLE_AT_START)
    (probe,) = probes_of(db, gone)
    assert probe.trigger == "forfeit" and not probe.passed
    assert bot_row(db, gone).failed_probes == 1
    assert probes_of(db, player) == []


def test_a_match_outside_the_ladder_forfeited_as_unreachable_triggers_no_probe(
    db: Database, house: list[BotServer]
) -> None:
    player = register(db, "player", house[0].url, SECRET)
    gone = register(db, "gone", f"http://127.0.0.1:{free_port()}")
    match_id = _match(db, gone, player, ladder=False)
    run_match_job(db, _settings(db), match_id, "t")
    assert _forfeit(db, match_id)[:2] == ("a", ForfeitKind.UNREACHABLE_AT_START)
    assert probes_of(db, gone) == []


def test_a_suspended_bot_forfeiting_a_ladder_match_is_not_probed_for_it(
    db: Database, house: list[BotServer], held: HeldBot
) -> None:
    player = register(db, "player", house[0].url, SECRET)
    down = register(db, "down", held.url)
    _suspend(db, down)
    match_id = _match(db, player, down, ladder=True)
    run_match_job(db, _settings(db), match_id, "t")
    assert _forfeit(db, match_id)[:2] == ("b", ForfeitKind.UNREACHABLE_AT_START)
    assert probes_of(db, down) == [] and held.connections == 0


def _entries(db: Database, tournament_id: int) -> dict[int, bool]:
    """Each entrant's id and whether it was withdrawn."""
    with db.session() as session:
        rows = session.execute(
            select(TournamentEntryRow.bot_id, TournamentEntryRow.withdrawn).where(
                TournamentEntryRow.tournament_id == tournament_id
            )
        ).all()
    return {int(bot): bool(withdrawn) for bot, withdrawn in rows}


def test_a_tournament_takes_a_suspended_bot_it_names_and_withdraws_it_when_it_forfeits(
    db: Database, house: list[BotServer], held: HeldBot
) -> None:
    settings = _settings(db)
    a, b = (register(db, n, s.url, SECRET) for n, s in zip(("a", "b"), house, strict=True))
    down = register(db, "down", held.url)
    _suspend(db, down)
    everyone = create_tournament(db, name="all", format_name="round_robin", seed=1)
    assert set(_entries(db, everyone)) == {a, b}  # every active bot: not the suspended one
    tid = create_tournament(
        db, name="named", format_name="round_robin", bot_ids=[a, b, down], rules=SHORT, seed=1
    )
    queue: deque[int] = deque()
    start_tournament(db, tid, queue.extend)
    while queue:
        run_match_job(
            db,
            settings,
            queue.popleft(),
            "t",
            after_record=lambda m: advance_for_match(db, m, queue.extend),
        )
    assert _entries(db, tid) == {a: False, b: False, down: True}
    with db.session() as session:
        assert session.get_one(TournamentRow, tid).status is TournamentStatus.FINISHED
    assert held.connections == 0
