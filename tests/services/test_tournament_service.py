"""Tournaments through the service, end to end, on SQLite and PostgreSQL.

Each test runs a real tournament: ``start_tournament`` schedules, ``run_match_job`` plays each
match with in-process players and records it, and its ``after_record`` advances the tournament
(see ``tournament_driver.Driver``). One short game a match keeps an event near a second. The
checks are on what the service stored: matches, results, entries, ratings and statistics.
"""

from __future__ import annotations

import itertools
import threading
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest
from sqlalchemy import select
from tournament_driver import (
    SETTINGS,
    Driver,
    Lineup,
    add_bots,
    check_finished,
    count,
    entries,
    hand_rows,
    matches_of,
    new_tournament,
    pairings_with,
    rating_rows,
    stats_rows,
    statuses,
    tournament_row,
    walkovers_of,
)

from arena.db.models import BotRow, MatchResultRow, MatchRow, RatingFitRow, RatingHistoryRow
from arena.db.session import Database
from arena.measures.ratings import elo_delta
from arena.measures.stats import percentile
from arena.playing.jobs import JobStatus, run_match_job
from arena.playing.match import MatchRunner
from arena.playing.players import HeuristicPlayer
from arena.reading.replay import load_record, verify_record
from arena.rules.ruleset import RuleSet
from arena.services.matches import claim_match, renew_lease
from arena.services.recording import record_match_result
from arena.services.tournaments import (
    UNREACHABLE,
    AdvanceReport,
    TournamentStateError,
    advance_for_match,
    advance_running_tournaments,
    advance_tournament,
    cancel_tournament,
    load_plan,
    start_tournament,
)
from arena.states import MatchStatus, TournamentStatus
from arena.tournaments import DecidedBy, Plan, Status


def seeds_of(db: Database, tournament_id: int) -> list[int]:
    """Bot ids in seed order (best first)."""
    ranked = sorted(entries(db, tournament_id).values(), key=lambda e: e.seed_rank)
    return [e.bot_id for e in ranked]


def pairing_counts(rows: list[MatchRow], *, ordered: bool) -> Counter[Any]:
    return Counter(
        (m.bot_a_id, m.bot_b_id) if ordered else frozenset((m.bot_a_id, m.bot_b_id)) for m in rows
    )


def played_pairings(plan: Plan) -> list[Any]:
    """Pairings decided on the table (not byes, walkovers or skipped)."""
    return [p for p in plan.pairings if p.status is Status.DONE]


# --- every format, end to end --------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    id: str
    format: str
    n: int
    options: dict[str, Any] = field(default_factory=dict)

    @property
    def copies(self) -> int:
        return 2 if self.options.get("duplicate") else 1


def check_round_robin(case: Case, plan: Plan, rows: list[MatchRow], bots: list[int]) -> int:
    n = case.n
    double = case.format == "double_round_robin"
    every_pair = pairing_counts(rows, ordered=False)
    assert len(every_pair) == n * (n - 1) // 2
    assert set(every_pair.values()) == {case.copies * (2 if double else 1)}
    if double and case.copies == 1:
        assert set(pairing_counts(rows, ordered=True).values()) == {1}, "seats swap"
    for r in {p.round for p in plan.pairings}:
        seen = [x for p in plan.pairings if p.round == r for x in (p.a, p.b) if x]
        assert len(seen) == len(set(seen)) == n, f"round {r}: nobody plays twice or sits out"
    return n * (n - 1) // 2 * (2 if double else 1)


def check_single_elimination(case: Case, plan: Plan, rows: list[MatchRow], bots: list[int]) -> int:
    expected = case.n - 1 + (1 if case.options.get("third_place") and case.n >= 4 else 0)
    assert plan.champion is not None
    main = [p for p in played_pairings(plan) if p.section == "main"]
    losers = Counter(p.loser for p in main)
    assert set(losers.values()) == {1} and len(losers) == case.n - 1
    assert plan.champion not in losers
    return expected


def check_double_elimination(case: Case, plan: Plan, rows: list[MatchRow], bots: list[int]) -> int:
    champion = plan.champion
    assert champion is not None
    gf1 = plan.pairing("GF1")
    reset_played = "GF2" in plan and plan.pairing("GF2").status is Status.DONE
    assert reset_played is (case.options["reset"] and gf1.winner == gf1.b)
    losses = Counter(p.loser for p in played_pairings(plan))
    # Out after two losses; the champion lost once at most (in the winners bracket, or the
    # first final); without a reset the winners-bracket champion is out after losing the final.
    assert losses[champion] == (1 if champion == gf1.b or reset_played else 0)
    once = gf1.a if gf1.winner == gf1.b and not reset_played else None
    for b in map(str, bots):
        if b != champion:
            assert losses[b] == (1 if b == once else 2), b
    return 2 * case.n - 2 + (1 if reset_played else 0)


def check_swiss(case: Case, plan: Plan, rows: list[MatchRow], bots: list[int]) -> int:
    rounds = case.options["rounds"]
    assert {p.round for p in plan.pairings} == set(range(1, rounds + 1))
    assert set(pairing_counts(rows, ordered=False).values()) == {case.copies}, "a rematch"
    byes = [p.a for p in plan.pairings if p.status is Status.BYE]
    assert len(byes) == len(set(byes)) == (rounds if case.n % 2 else 0)
    return rounds * (case.n // 2)


def check_gauntlet(case: Case, plan: Plan, rows: list[MatchRow], bots: list[int]) -> int:
    challenger = bots[0]  # the first seed by default
    assert all(challenger in (m.bot_a_id, m.bot_b_id) for m in rows)
    others = Counter(m.bot_b_id if m.bot_a_id == challenger else m.bot_a_id for m in rows)
    assert others == Counter(dict.fromkeys(bots[1:], case.copies))
    return case.n - 1


CHECKS: dict[str, Callable[[Case, Plan, list[MatchRow], list[int]], int]] = {
    "round_robin": check_round_robin,
    "double_round_robin": check_round_robin,
    "single_elimination": check_single_elimination,
    "double_elimination": check_double_elimination,
    "swiss": check_swiss,
    "gauntlet": check_gauntlet,
}

CASES = [
    Case("round_robin-5", "round_robin", 5),
    Case("round_robin-4-duplicate", "round_robin", 4, {"duplicate": True}),
    Case("double_round_robin-4", "double_round_robin", 4),
    Case("single_elimination-6", "single_elimination", 6),
    Case("single_elimination-8-third_place", "single_elimination", 8, {"third_place": True}),
    Case(
        "single_elimination-5-third_place-duplicate",
        "single_elimination",
        5,
        {"third_place": True, "duplicate": True},
    ),
    Case("double_elimination-6-reset", "double_elimination", 6, {"reset": True}),
    Case("double_elimination-5-no_reset", "double_elimination", 5, {"reset": False}),
    Case("swiss-7-3_rounds", "swiss", 7, {"rounds": 3}),
    Case("swiss-6-2_rounds-duplicate", "swiss", 6, {"rounds": 2, "duplicate": True}),
    Case("gauntlet-5", "gauntlet", 5),
    Case("gauntlet-4-duplicate", "gauntlet", 4, {"duplicate": True}),
]


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_every_format_runs_to_the_end_through_the_service(db: Database, case: Case) -> None:
    bots = add_bots(db, case.n)
    tid = new_tournament(db, bots, case.format, case.options)
    driver = Driver(db)
    driver.run(tid)

    plan = check_finished(db, tid, driver)
    rows = matches_of(db, tid)
    assert {m.status for m in rows} == {MatchStatus.FINISHED}
    assert all(m.forfeit_seat is None and m.winner in ("a", "b") for m in rows)
    pairings = CHECKS[case.format](case, plan, rows, seeds_of(db, tid))
    assert len(rows) == pairings * case.copies == len(driver.recorded)
    assert len(played_pairings(plan)) == pairings
    if case.copies == 2:  # both matches of a pairing: same deals, seats swapped
        by_pairing: dict[str, list[MatchRow]] = {}
        for m in rows:
            by_pairing.setdefault(str(m.match_key).rsplit(".", 1)[0], []).append(m)
        for first, second in by_pairing.values():
            assert first.seed == second.seed
            assert (first.bot_a_id, first.bot_b_id) == (second.bot_b_id, second.bot_a_id)
    for m in rows:
        assert verify_record(load_record(db, m.id)) == []


# --- byes ----------------------------------------------------------------------------------


def test_an_odd_round_robin_gives_everyone_one_bye(db: Database) -> None:
    bots = add_bots(db, 5)
    tid = new_tournament(db, bots, "round_robin")
    driver = Driver(db)
    driver.run(tid)
    plan = check_finished(db, tid, driver)
    byes = Counter(p.a for p in plan.pairings if p.status is Status.BYE)
    assert byes == Counter({str(b): 1 for b in bots})
    assert all(s.byes == 1 and s.played == 4 for s in plan.standings)
    assert len(matches_of(db, tid)) == 10


def test_single_elimination_gives_the_byes_to_the_top_seeds(db: Database) -> None:
    bots = add_bots(db, 6)
    tid = new_tournament(db, bots, "single_elimination")
    driver = Driver(db)
    driver.run(tid)
    plan = check_finished(db, tid, driver)
    seeds = seeds_of(db, tid)
    first_round = [p for p in plan.pairings if p.round == 1]
    assert sorted(p.a for p in first_round if p.status is Status.BYE) == sorted(
        str(b) for b in seeds[:2]
    )
    first_matches = [m for m in matches_of(db, tid) if str(m.match_key).startswith("R1-")]
    assert len(first_matches) == 2
    assert not {m.bot_a_id for m in first_matches} & set(seeds[:2])
    assert not {m.bot_b_id for m in first_matches} & set(seeds[:2])


def test_swiss_gives_the_bye_to_a_different_player_each_round(db: Database) -> None:
    bots = add_bots(db, 5)
    tid = new_tournament(db, bots, "swiss", {"rounds": 4})
    driver = Driver(db)
    driver.run(tid)
    plan = check_finished(db, tid, driver)
    byes = [p.a for p in plan.pairings if p.status is Status.BYE]
    assert len(byes) == len(set(byes)) == 4
    assert set(pairing_counts(matches_of(db, tid), ordered=False).values()) == {1}


# --- a bot that stops answering ------------------------------------------------------------


def test_a_bot_that_stops_answering_is_withdrawn_and_walked_over(db: Database) -> None:
    bots = add_bots(db, 5)
    tid = new_tournament(db, bots, "round_robin")
    quitter = bots[0]
    lineup = Lineup(db, silent_after={quitter: 1})
    driver = Driver(db, lineup)
    driver.run(tid)

    plan = check_finished(db, tid, driver)
    theirs = [m for m in matches_of(db, tid) if quitter in (m.bot_a_id, m.bot_b_id)]
    by_status: dict[MatchStatus, list[MatchRow]] = {}
    for m in theirs:
        by_status.setdefault(m.status, []).append(m)
    (played,) = by_status[MatchStatus.FINISHED][:1]
    assert played.forfeit_seat is None
    (forfeit,) = [m for m in theirs if m.forfeit_reason]
    assert forfeit.status is MatchStatus.FINISHED
    assert str(forfeit.forfeit_reason).startswith(UNREACHABLE)
    assert forfeit.forfeit_seat == ("a" if forfeit.bot_a_id == quitter else "b")
    assert len(by_status[MatchStatus.FINISHED]) == 2
    # Its other matches were queued from the start: cancelled, never played.
    cancelled = by_status[MatchStatus.CANCELLED]
    assert len(cancelled) == 2
    assert all(m.attempt == 0 for m in cancelled)
    skipped = {o.match_id for o in driver.outcomes if o.status is JobStatus.SKIPPED}
    assert skipped == {m.id for m in cancelled}
    entry = entries(db, tid)[quitter]
    assert entry.withdrawn and entry.withdrawn_order == 1
    assert not any(e.withdrawn for b, e in entries(db, tid).items() if b != quitter)
    # Its remaining pairings are walkovers to the opponent; everyone else played everyone.
    walkovers = [plan.pairing(k) for k in walkovers_of(plan, str(quitter))]
    assert {m.match_key for m in cancelled} == {p.key for p in walkovers}
    for p in walkovers:
        assert p.result is not None and p.result.decided_by is DecidedBy.WALKOVER
        assert p.winner != str(quitter)
    others = [m for m in matches_of(db, tid) if quitter not in (m.bot_a_id, m.bot_b_id)]
    assert len(others) == 6 and {m.status for m in others} == {MatchStatus.FINISHED}
    (line,) = [s for s in plan.standings if s.participant == str(quitter)]
    assert line.withdrawn and line.wins <= 1


@pytest.mark.parametrize(
    ("format_name", "options", "n"),
    [
        ("single_elimination", {"third_place": True}, 8),
        ("double_elimination", {"reset": True}, 8),
    ],
    ids=["single_elimination-third_place", "double_elimination"],
)
def test_a_forfeit_mid_bracket_advances_the_bracket(
    db: Database, format_name: str, options: dict[str, Any], n: int
) -> None:
    """The top seed wins its first match, then cannot be reached: it forfeits that match,
    its later pairings (third place, losers bracket) are walkovers and the event ends."""
    bots = add_bots(db, n)
    tid = new_tournament(db, bots, format_name, options)
    seeds = seeds_of(db, tid)
    quitter = seeds[0]
    rank = {b: i for i, b in enumerate(seeds)}
    lineup = Lineup(
        db,
        silent_after={quitter: 1},
        script=lambda _key, a, b: min((a, b), key=rank.__getitem__),  # the better seed wins
    )
    driver = Driver(db, lineup)
    driver.run(tid)

    plan = check_finished(db, tid, driver)
    theirs = [m for m in matches_of(db, tid) if quitter in (m.bot_a_id, m.bot_b_id)]
    assert [m.status for m in theirs] == [MatchStatus.FINISHED, MatchStatus.FINISHED]
    won, forfeited = theirs
    assert won.forfeit_seat is None
    assert won.winner == ("a" if won.bot_a_id == quitter else "b")
    assert str(forfeited.forfeit_reason).startswith(UNREACHABLE)
    assert entries(db, tid)[quitter].withdrawn
    walkovers = walkovers_of(plan, str(quitter))
    assert walkovers, "its next pairing is a walkover"
    for key in walkovers:
        assert plan.pairing(key).winner != str(quitter)
    assert plan.champion not in (None, str(quitter))
    assert statuses(db, tid)[MatchStatus.CANCELLED] == 0  # never scheduled, never stalled
    # Everyone else played their part of the bracket.
    assert len(matches_of(db, tid)) == len(played_pairings(plan))


def test_a_withdrawn_bots_running_match_is_cancelled_and_its_late_result_refused(
    db: Database,
) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "round_robin")
    quitter = bots[0]
    driver = Driver(db, Lineup(db, silent_after={quitter: 0}))
    driver.start(tid)
    queued = list(driver.queue)
    theirs = [m.id for m in matches_of(db, tid) if quitter in (m.bot_a_id, m.bot_b_id)]
    assert len(theirs) == 3
    # Another worker is playing the quitter's last match when its first forfeit comes in.
    late = theirs[-1]
    claim = claim_match(db, late, "slow-worker", lease_seconds=60, max_attempts=5)
    assert claim is not None
    record = MatchRunner(
        [HeuristicPlayer(name="x"), HeuristicPlayer(name="y")], claim.spec.rules, claim.spec.seed
    ).run()
    driver.drain()

    check_finished(db, tid, driver)
    assert queued.index(theirs[0]) < queued.index(late)
    assert {m.id: m.status for m in matches_of(db, tid) if m.id in theirs} == {
        theirs[0]: MatchStatus.FINISHED,
        theirs[1]: MatchStatus.CANCELLED,
        late: MatchStatus.CANCELLED,
    }
    # The slow worker is fenced out: its lease cannot be renewed, its result is refused.
    assert not renew_lease(db, claim, lease_seconds=60)
    assert not record_match_result(db, claim, record, duration_ms=1, bot_time_ms=1, elo_k=24)
    assert count(db, MatchResultRow, MatchResultRow.match_id == late) == 0
    assert count(db, RatingHistoryRow, RatingHistoryRow.match_id == late) == 0
    assert stats_rows(db)[quitter].matches == 1


# --- the grand-final reset -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("reset", "losers_champion_wins_final", "matches", "gf2"),
    [
        (True, True, 7, Status.DONE),
        (True, False, 6, Status.SKIPPED),
        (False, True, 6, None),
    ],
    ids=["reset-played", "reset-not-needed", "no-reset"],
)
def test_the_grand_final_reset_is_played_only_when_the_losers_bracket_champion_wins(
    db: Database,
    reset: bool,
    losers_champion_wins_final: bool,
    matches: int,
    gf2: Status | None,
) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "double_elimination", {"reset": reset})
    s1, s2, _s3, _s4 = seeds_of(db, tid)
    rank = {b: i for i, b in enumerate(seeds_of(db, tid))}

    def script(key: str, a: int, b: int) -> int:
        if key == "GF1" and losers_champion_wins_final:
            return s2
        if key == "GF2":
            return s1  # the winners-bracket champion takes the reset
        return min((a, b), key=rank.__getitem__)

    driver = Driver(db, Lineup(db, script=script))
    driver.run(tid)
    plan = check_finished(db, tid, driver)
    rows = {m.match_key: m for m in matches_of(db, tid)}
    assert len(rows) == matches
    gf1 = rows["GF1"]
    assert (gf1.bot_a_id, gf1.bot_b_id) == (s1, s2)  # winners-bracket champion in seat a
    assert gf1.winner == ("b" if losers_champion_wins_final else "a")
    if gf2 is None:
        assert "GF2" not in plan
    else:
        assert plan.pairing("GF2").status is gf2
    assert ("GF2" in rows) is (gf2 is Status.DONE)
    champion = s2 if (losers_champion_wins_final and not reset) else s1
    assert plan.champion == str(champion)
    assert [s.participant for s in plan.standings[:2]] == [
        str(champion),
        str(s2 if champion == s1 else s1),
    ]


# --- cancellation --------------------------------------------------------------------------


def test_cancelling_stops_new_matches_and_keeps_finished_ones(db: Database) -> None:
    bots = add_bots(db, 5)
    tid = new_tournament(db, bots, "round_robin")
    driver = Driver(db)
    driver.start(tid)
    for _ in range(3):
        driver.step()
    played = driver.recorded
    elo_before = {b.id: b.elo for b in _bots(db)}
    results_before = {m.id: (m.winner, m.games_won_a, m.games_won_b) for m in matches_of(db, tid)}

    cancelled = cancel_tournament(db, tid)

    assert len(cancelled) == 7 and not set(cancelled) & set(played)
    assert tournament_row(db, tid).status is TournamentStatus.CANCELLED
    assert statuses(db, tid) == Counter({MatchStatus.FINISHED: 3, MatchStatus.CANCELLED: 7})
    driver.drain()  # the queued tasks find their matches cancelled
    assert driver.recorded == played
    assert len(driver.submitted) == 10
    assert advance_tournament(db, tid, driver.enqueue) == AdvanceReport()
    assert driver.queue == type(driver.queue)()
    # Finished matches keep their results, ratings and replays.
    assert {m.id: (m.winner, m.games_won_a, m.games_won_b) for m in matches_of(db, tid)} == (
        results_before
    )
    assert count(db, MatchResultRow) == 3 and count(db, RatingHistoryRow) == 6
    assert {b.id: b.elo for b in _bots(db)} == elo_before
    for match_id in played:
        assert verify_record(load_record(db, match_id)) == []
    _, plan = load_plan(db, tid)  # standings still readable
    assert not plan.finished and sum(s.wins for s in plan.standings) == 3
    with pytest.raises(TournamentStateError):
        cancel_tournament(db, tid)
    with pytest.raises(TournamentStateError):
        start_tournament(db, tid, driver.enqueue)


def test_a_match_running_at_cancellation_is_kept_but_schedules_nothing(db: Database) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "single_elimination")
    driver = Driver(db)
    driver.start(tid)
    running, pending = driver.queue
    claim = claim_match(db, running, "worker", lease_seconds=60, max_attempts=5)
    assert claim is not None

    assert cancel_tournament(db, tid) == [pending]
    record = MatchRunner(
        [HeuristicPlayer(name="x"), HeuristicPlayer(name="y")], claim.spec.rules, claim.spec.seed
    ).run()
    assert record_match_result(db, claim, record, duration_ms=1, bot_time_ms=1, elo_k=24)
    advance_for_match(db, running, driver.enqueue)

    assert driver.submitted == [running, pending]  # the final was never scheduled
    assert {m.id: m.status for m in matches_of(db, tid)} == {
        running: MatchStatus.FINISHED,
        pending: MatchStatus.CANCELLED,
    }
    assert tournament_row(db, tid).status is TournamentStatus.CANCELLED


# --- idempotency ---------------------------------------------------------------------------


def test_advancing_again_schedules_nothing_new(db: Database) -> None:
    bots = add_bots(db, 6)
    tid = new_tournament(db, bots, "swiss", {"rounds": 2})
    driver = Driver(db)
    driver.start(tid)
    first = list(driver.submitted)
    assert advance_tournament(db, tid, driver.enqueue).scheduled == []
    assert start_tournament(db, tid, driver.enqueue).scheduled == []
    driver.drain()
    # A redelivered after_record for an old match changes nothing.
    advance_for_match(db, first[0], driver.enqueue)
    assert advance_tournament(db, tid, driver.enqueue) == AdvanceReport()
    check_finished(db, tid, driver)
    assert len(driver.submitted) == 6


def _at_once(calls: list[Callable[[], Any]]) -> list[Any]:
    """Run the calls in threads released together; return their results (re-raise errors)."""
    barrier = threading.Barrier(len(calls))
    out: list[Any] = [None] * len(calls)

    def run(i: int) -> None:
        barrier.wait(timeout=30)
        try:
            out[i] = calls[i]()
        except BaseException as exc:  # handed to the main thread
            out[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(calls))]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=60)
    for value in out:
        if isinstance(value, BaseException):
            raise value
    return out


def _twice_at_once(
    call: Callable[[Callable[[Any], None]], AdvanceReport],
) -> tuple[tuple[list[int], list[int]], list[AdvanceReport]]:
    """``call(enqueue)`` from two threads at once, each with its own queue."""
    lists: tuple[list[int], list[int]] = ([], [])
    return lists, _at_once([lambda i=i: call(lists[i].extend) for i in (0, 1)])


@pytest.mark.parametrize(
    ("format_name", "options", "n"),
    [
        ("single_elimination", {"third_place": True}, 8),
        ("double_elimination", {"reset": True}, 5),
        ("swiss", {"rounds": 3}, 6),
    ],
    ids=["single_elimination", "double_elimination", "swiss"],
)
def test_concurrent_advances_schedule_each_match_once(
    db: Database, format_name: str, options: dict[str, Any], n: int
) -> None:
    """Two workers finish matches at once and both advance: every match is scheduled once."""
    bots = add_bots(db, n)
    tid = new_tournament(db, bots, format_name, options)
    driver = Driver(db)
    lists, reports = _twice_at_once(lambda enqueue: start_tournament(db, tid, enqueue))
    rounds = 0
    while True:
        assert not set(lists[0]) & set(lists[1])
        driver.enqueue(lists[0] + lists[1])
        if any(r.finished for r in reports):  # the other found it finished: nothing to do
            assert tournament_row(db, tid).status is TournamentStatus.FINISHED
            break
        assert driver.queue, "stalled"
        while driver.queue:  # play without advancing, then advance from two threads at once
            run_match_job(
                db, SETTINGS, driver.queue.popleft(), "w", make_players=driver.lineup or Lineup(db)
            )
        lists, reports = _twice_at_once(lambda enqueue: advance_tournament(db, tid, enqueue))
        rounds += 1
    assert rounds >= 3
    driver.outcomes.clear()
    check_finished(db, tid, driver)


def test_an_advance_lost_with_its_worker_is_made_up_by_the_sweeper(db: Database) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "single_elimination")
    driver = Driver(db, min_matches=1)
    driver.start(tid)
    driver.step()
    # The worker records the other semi-final and dies before advancing the event ...
    lost = driver.queue.popleft()
    first = run_match_job(db, SETTINGS, lost, "doomed", make_players=driver.lineup or Lineup(db))
    assert first.status is JobStatus.RECORDED
    # ... so its task comes back, finds the match finished and has nothing to do.
    again = run_match_job(
        db, SETTINGS, lost, "w", make_players=Lineup(db), after_record=driver.after_record
    )
    assert again.status is JobStatus.SKIPPED and not driver.queue

    reports = advance_running_tournaments(db, driver.enqueue, min_matches=1)

    (final,) = reports[tid].scheduled
    assert list(driver.queue) == [final] and reports[tid].rounds_closed == 1
    with db.session() as session:
        assert sum(f.matches for f in session.scalars(select(RatingFitRow))) == 4
    assert advance_running_tournaments(db, driver.enqueue)[tid] == AdvanceReport()
    driver.drain()
    check_finished(db, tid, driver)
    assert advance_running_tournaments(db, driver.enqueue) == {}  # finished: not swept


# --- ratings -------------------------------------------------------------------------------


def _bots(db: Database) -> list[BotRow]:
    with db.session() as session:
        return list(session.scalars(select(BotRow).order_by(BotRow.id)))


def test_live_elo_moves_once_per_match_and_sums_to_zero(db: Database) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "double_round_robin")
    driver = Driver(db)
    driver.run(tid)
    check_finished(db, tid, driver)
    rows = {m.id: m for m in matches_of(db, tid)}
    # Replaying every job (a redelivered task) finds the match finished and changes nothing.
    for match_id in rows:
        outcome = run_match_job(
            db,
            SETTINGS,
            match_id,
            "again",
            make_players=Lineup(db),
            after_record=driver.after_record,
        )
        assert outcome.status is JobStatus.SKIPPED

    history = rating_rows(db)
    assert len(history) == 2 * len(rows) == 24
    assert Counter(h.match_id for h in history) == Counter(dict.fromkeys(rows, 2))
    assert sum(h.after - h.before for h in history) == pytest.approx(0.0, abs=1e-9)
    for match_id, m in rows.items():
        a, b = sorted(
            (h for h in history if h.match_id == match_id), key=lambda h: h.bot_id != m.bot_a_id
        )
        expected = elo_delta(a.before, b.before, 1.0 if m.winner == "a" else 0.0, k=24)
        assert a.after - a.before == pytest.approx(expected)
        assert b.after - b.before == pytest.approx(-expected)
    final = {b.id: b.elo for b in _bots(db)}
    for bot_id in bots:
        chain = [h for h in history if h.bot_id == bot_id]
        assert len(chain) == 6
        assert chain[0].before == 1500.0
        assert all(x.after == y.before for x, y in itertools.pairwise(chain))
        assert chain[-1].after == pytest.approx(final[bot_id])
    assert sum(final.values()) == pytest.approx(1500.0 * 4)
    assert len(set(final.values())) > 1


def test_an_unrated_tournament_changes_no_rating(db: Database) -> None:
    bots = add_bots(db, 4)
    tid = new_tournament(db, bots, "round_robin", rated=False)
    driver = Driver(db)
    driver.run(tid)
    check_finished(db, tid, driver)
    assert not any(m.rated for m in matches_of(db, tid))
    assert count(db, RatingHistoryRow) == 0
    assert {b.elo for b in _bots(db)} == {1500.0}
    with db.session() as session:
        fits = list(session.scalars(select(RatingFitRow)))
    assert fits == []  # no rated match: nobody is fitted (the leaderboard lists them unrated)
    # Statistics still count the matches.
    assert sum(s.matches for s in stats_rows(db).values()) == 2 * 6


@pytest.mark.parametrize(
    ("format_name", "options", "n"),
    [("swiss", {"rounds": 3}, 6), ("round_robin", {}, 4)],
    ids=["swiss", "round_robin"],
)
def test_ratings_are_refit_after_each_round(
    db: Database, format_name: str, options: dict[str, Any], n: int
) -> None:
    """Swiss schedules round by round; a round robin's pairings are all queued at the start,
    yet the fit still follows each round's close (the driver plays them in round order)."""
    bots = add_bots(db, n)
    tid = new_tournament(db, bots, format_name, options)
    seen: list[tuple[int, int]] = []

    def look(_match_id: int) -> None:
        finished = statuses(db, tid)[MatchStatus.FINISHED]
        with db.session() as session:
            fits = list(session.scalars(select(RatingFitRow)))
        seen.append((finished, sum(f.matches for f in fits)))

    driver = Driver(db, min_matches=3, on_advance=look)
    driver.run(tid)
    check_finished(db, tid, driver)
    per_round = n // 2
    assert [finished for finished, _ in seen] == list(range(1, 3 * per_round + 1))
    # The fit moves when a round closes, and then covers every match played so far.
    assert [fitted for _, fitted in seen] == [2 * (f - f % per_round) for f, _ in seen]
    with db.session() as session:
        fits = {f.bot_id: f for f in session.scalars(select(RatingFitRow))}
    assert set(fits) == set(bots)
    assert all(f.matches == 3 and not f.provisional for f in fits.values())
    assert sum(f.rating for f in fits.values()) / len(fits) == pytest.approx(1500.0)
    assert all(f.ci_low < f.rating < f.ci_high for f in fits.values())


def test_the_fit_marks_bots_with_few_matches_provisional(db: Database) -> None:
    bots = add_bots(db, 5)
    tid = new_tournament(db, bots, "gauntlet")
    driver = Driver(db, min_matches=3)
    driver.run(tid)
    check_finished(db, tid, driver)
    challenger = seeds_of(db, tid)[0]
    with db.session() as session:
        fits = {f.bot_id: f for f in session.scalars(select(RatingFitRow))}
    assert set(fits) == set(bots)
    assert fits[challenger].matches == 4 and not fits[challenger].provisional
    assert all(f.matches == 1 and f.provisional for b, f in fits.items() if b != challenger)


# --- statistics ----------------------------------------------------------------------------


def _expected_stats(db: Database, bot_id: int, rows: list[MatchRow]) -> dict[str, int]:
    """A bot's totals recomputed from the stored matches, results and deals."""
    out: Counter[str] = Counter()
    finished = [m for m in rows if m.status is MatchStatus.FINISHED]
    with db.session() as session:
        summaries = {
            r.match_id: r.summary
            for r in session.scalars(
                select(MatchResultRow).where(MatchResultRow.match_id.in_([m.id for m in finished]))
            )
        }
    for m in finished:
        if bot_id not in (m.bot_a_id, m.bot_b_id):
            continue
        seat, other = ("a", "b") if m.bot_a_id == bot_id else ("b", "a")
        out["matches"] += 1
        out["wins"] += m.winner == seat
        out["losses"] += m.winner == other
        out["games_won"] += m.games_won_a if seat == "a" else m.games_won_b
        out["games_lost"] += m.games_won_b if seat == "a" else m.games_won_a
        out["forfeits"] += m.forfeit_seat in (seat, "both")
        summary = summaries[m.id]
        out["faults"] += sum(f["seat"] == seat for f in summary["faults"])
        out["calls"] += summary["latency_ms"][seat]["calls"]
        for h in hand_rows(db, [m.id]):
            out["hands_played"] += 1
            out["hands_won"] += h.winner == seat
            if h.knocker == seat:
                if h.outcome in ("knock", "undercut", "tie"):
                    out["knocks"] += 1
                    out["deadwood_at_knock"] += h.knocker_deadwood or 0
                out["gins"] += h.outcome == "gin"
                out["big_gins"] += h.outcome == "big_gin"
                out["undercut"] += h.outcome == "undercut"
            elif h.knocker == other:
                out["undercuts"] += h.outcome == "undercut"
            out["misknocks"] += sum(x["seat"] == seat for x in h.log["misknocks"])
    return dict(out)


def test_bot_statistics_add_up_to_the_matches_played(db: Database) -> None:
    bots = add_bots(db, 5)
    faulty, quitter = bots[1], bots[2]
    tid = new_tournament(db, bots, "double_round_robin")
    driver = Driver(db, Lineup(db, silent_after={quitter: 3}, faulty={faulty}))
    driver.run(tid)
    check_finished(db, tid, driver)
    rows = matches_of(db, tid)
    stats = stats_rows(db)
    counters = [
        "matches", "wins", "losses", "games_won", "games_lost", "hands_played", "hands_won",
        "knocks", "gins", "big_gins", "undercut", "undercuts", "misknocks", "deadwood_at_knock",
        "faults", "forfeits", "calls",
    ]  # fmt: skip
    for bot_id in bots:
        expected = _expected_stats(db, bot_id, rows)
        s = stats[bot_id]
        assert {c: getattr(s, c) for c in counters} == {c: expected.get(c, 0) for c in counters}
        assert sum(s.latency_histogram) == s.calls
        if s.calls:
            p50, p99 = percentile(s.latency_histogram, 0.5), percentile(s.latency_histogram, 0.99)
            assert p50 is not None and p99 is not None and 0 < p50 <= p99
        if s.knocks:
            assert 0 <= s.deadwood_at_knock / s.knocks <= RuleSet().knock_limit
    finished = [m for m in rows if m.status is MatchStatus.FINISHED]
    assert sum(s.matches for s in stats.values()) == 2 * len(finished)
    total_hands = len(hand_rows(db, [m.id for m in finished]))
    assert sum(s.hands_played for s in stats.values()) == 2 * total_hands
    assert sum(s.wins for s in stats.values()) == sum(s.losses for s in stats.values())
    assert sum(s.knocks + s.gins + s.big_gins for s in stats.values()) > 0
    # The faulty bot faulted once in every match it got to act in; the quitter forfeited once
    # (it was withdrawn) and its remaining matches were walkovers.
    assert stats[faulty].faults >= stats[faulty].matches - 1 > 0
    assert all(stats[b].faults == 0 for b in bots if b != faulty)
    assert stats[quitter].forfeits == 1 and stats[quitter].matches == 4
    assert sum(s.forfeits for s in stats.values()) == 1
    plan = load_plan(db, tid)[1]
    assert len(walkovers_of(plan, str(quitter))) == 4 == statuses(db, tid)[MatchStatus.CANCELLED]
    assert Counter(p.status for p in pairings_with(plan, str(quitter))) == Counter(
        {Status.DONE: 4, Status.WALKOVER: 4, Status.BYE: 2}
    )
