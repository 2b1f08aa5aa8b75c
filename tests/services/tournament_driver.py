"""Running tournaments through the real service in-process: a queue instead of an executor.

:class:`Driver` is what an executor does, one match at a time on this thread:
``start_tournament`` fills its queue, ``run_match_job`` plays each queued match with in-process
players (:class:`Lineup`) and records it, and ``after_record`` advances the tournament, which
queues whatever became ready. The loop ends when the queue is empty, as an executor goes idle.

:func:`check_finished` checks what a finished tournament left in the database against its plan.
"""

from __future__ import annotations

import threading
from collections import Counter, deque
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from sqlalchemy import func, select

from arena.db.models import (
    BotStatsRow,
    HandRow,
    MatchResultRow,
    MatchRow,
    RatingHistoryRow,
    TournamentEntryRow,
    TournamentRow,
)
from arena.db.session import Database
from arena.playing.jobs import JobOutcome, JobStatus, run_match_job
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    Player,
    RandomPlayer,
    Turn,
)
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet
from arena.services.bots import register_bot
from arena.services.matches import Claim
from arena.services.tournaments import (
    advance_for_match,
    create_tournament,
    load_plan,
    start_tournament,
)
from arena.settings import Settings, load_settings
from arena.states import MatchStatus, TournamentStatus
from arena.tournaments import Plan, Status

#: One short game a match: a tournament of a few dozen matches plays in about a second.
SHORT = RuleSet(target=50, best_of=1)
SETTINGS = load_settings({}, lease_seconds=30)

#: Picks the winner of a match (a bot id) from its key and seats, or None to let them play.
Script = Callable[[str, int, int], int | None]


class SilentPlayer:
    """A bot that stopped answering: unreachable when the match starts."""

    def __init__(self, name: str) -> None:
        self.name = name

    def start(self, context: MatchContext) -> Fault | None:
        return Fault(FaultKind.CONNECTION, "connection refused")

    def act(self, turn: Turn) -> Action | Fault:  # pragma: no cover - never asked
        raise AssertionError("an unreachable player is never asked to act")

    def end(self, summary: dict[str, object]) -> None:
        return None


class OneFaultPlayer:
    """Plays well but times out on its first request of every match (one fault, no forfeit)."""

    def __init__(self, inner: Player) -> None:
        self.inner = inner
        self.name = inner.name
        self.faulted = False

    def start(self, context: MatchContext) -> Fault | None:
        return self.inner.start(context)

    def act(self, turn: Turn) -> Action | Fault:
        if not self.faulted:
            self.faulted = True
            return Fault(FaultKind.TIMEOUT, "deadline exceeded")
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        self.inner.end(summary)


@dataclass
class Lineup:
    """``make_players`` for :func:`run_match_job`: who plays each bot's seat, in-process.

    Every bot is a :class:`HeuristicPlayer` (its knock threshold varies with its id, so results
    vary) unless it is told otherwise: ``silent_after[bot]`` matches answered before it goes
    silent, ``faulty`` bots fault once a match, and ``script`` names a winner, who then plays
    heuristically against a random player (which has never won such a match at these rules).
    """

    db: Database
    silent_after: dict[int, int] = field(default_factory=dict)
    faulty: set[int] = field(default_factory=set)
    script: Script | None = None
    started: Counter[int] = field(default_factory=Counter)
    _lock: threading.Lock = field(default_factory=threading.Lock)

    def __call__(self, claim: Claim, _settings: Settings) -> list[Player]:
        a, b = claim.spec.bots
        winner = None
        if self.script is not None:
            with self.db.session() as session:
                key = session.scalar(
                    select(MatchRow.match_key).where(MatchRow.id == claim.match_id)
                )
            winner = self.script(key or "", a.id, b.id)
        with self._lock:
            self.started.update([a.id, b.id])
            counts = (self.started[a.id], self.started[b.id])
        return [
            self._player(bot.id, bot.name, claim.spec.seed, n, winner)
            for bot, n in zip((a, b), counts, strict=True)
        ]

    def _player(self, bot_id: int, name: str, seed: int, nth: int, winner: int | None) -> Player:
        if bot_id in self.silent_after and nth > self.silent_after[bot_id]:
            return SilentPlayer(name)
        player: Player
        if winner is not None and winner != bot_id:
            player = RandomPlayer(seed=seed, name=name)
        else:
            player = HeuristicPlayer(name=name, early_knock=4 + bot_id % 7)
        return OneFaultPlayer(player) if bot_id in self.faulty else player


@dataclass
class Driver:
    """An executor on this thread: a queue of match ids, played until none is left."""

    db: Database
    lineup: Lineup | None = None
    min_matches: int = 10
    settings: Settings = SETTINGS
    #: Hook after each recorded match has advanced its tournament.
    on_advance: Callable[[int], None] | None = None
    queue: deque[int] = field(default_factory=deque)
    #: Every id ever submitted, in order (an id twice means a match was scheduled twice).
    submitted: list[int] = field(default_factory=list)
    outcomes: list[JobOutcome] = field(default_factory=list)

    def __post_init__(self) -> None:
        if self.lineup is None:
            self.lineup = Lineup(self.db)

    def enqueue(self, ids: Iterable[int]) -> None:
        new = list(ids)
        self.submitted += new
        self.queue.extend(new)

    def after_record(self, match_id: int) -> None:
        advance_for_match(self.db, match_id, self.enqueue, min_matches=self.min_matches)
        if self.on_advance is not None:
            self.on_advance(match_id)

    def start(self, tournament_id: int) -> None:
        start_tournament(self.db, tournament_id, self.enqueue)

    def step(self) -> JobOutcome:
        """Play the next queued match (and advance its tournament)."""
        assert self.lineup is not None
        outcome = run_match_job(
            self.db,
            self.settings,
            self.queue.popleft(),
            "driver",
            make_players=self.lineup,
            after_record=self.after_record,
        )
        assert outcome.status in (JobStatus.RECORDED, JobStatus.SKIPPED), outcome
        self.outcomes.append(outcome)
        return outcome

    def drain(self, limit: int = 1000) -> None:
        """Play until the queue is empty (fails if that takes more than ``limit`` matches)."""
        for _ in range(limit):
            if not self.queue:
                return
            self.step()
        raise AssertionError(f"still {len(self.queue)} matches queued after {limit}")

    def run(self, tournament_id: int) -> None:
        self.start(tournament_id)
        self.drain()

    @property
    def recorded(self) -> list[int]:
        return [o.match_id for o in self.outcomes if o.status is JobStatus.RECORDED]


def add_bots(db: Database, n: int, *, prefix: str = "bot") -> list[int]:
    """Register ``n`` bots (in-process players stand in for them; their URLs are never called)."""
    return [
        register_bot(
            db, name=f"{prefix}-{i}", owner="tests", url=f"http://127.0.0.1:{9000 + i}"
        ).bot_id
        for i in range(n)
    ]


def new_tournament(
    db: Database,
    bots: Sequence[int],
    format_name: str,
    options: dict[str, Any] | None = None,
    *,
    seed: int = 7,
    rated: bool = True,
    rules: RuleSet = SHORT,
) -> int:
    return create_tournament(
        db,
        name=f"{format_name} test",
        format_name=format_name,
        options=options,
        bot_ids=list(bots),
        rules=rules,
        seed=seed,
        rated=rated,
    )


def matches_of(db: Database, tournament_id: int) -> list[MatchRow]:
    with db.session() as session:
        return list(
            session.scalars(
                select(MatchRow)
                .where(MatchRow.tournament_id == tournament_id)
                .order_by(MatchRow.id)
            )
        )


def statuses(db: Database, tournament_id: int) -> Counter[MatchStatus]:
    return Counter(m.status for m in matches_of(db, tournament_id))


def entries(db: Database, tournament_id: int) -> dict[int, TournamentEntryRow]:
    with db.session() as session:
        return {
            e.bot_id: e
            for e in session.scalars(
                select(TournamentEntryRow).where(TournamentEntryRow.tournament_id == tournament_id)
            )
        }


def tournament_row(db: Database, tournament_id: int) -> TournamentRow:
    with db.session() as session:
        return session.get_one(TournamentRow, tournament_id)


def count(db: Database, model: Any, *where: Any) -> int:
    with db.session() as session:
        return int(session.scalar(select(func.count()).select_from(model).where(*where)) or 0)


def plan_matches(plan: Plan) -> dict[str, tuple[tuple[str, str], int]]:
    """Every match the plan has issued (played or to play): key -> (seats, seed)."""
    return {m.key: (m.seats, m.seed) for p in plan.pairings for m in p.matches}


def check_finished(db: Database, tournament_id: int, driver: Driver) -> Plan:
    """A finished tournament's rows agree with its plan; returns the plan.

    Finished, with its summary stored; every pairing settled; every match the plan issued was
    scheduled once and played once, with the plan's seats and seed; nothing else was scheduled;
    the standings rank every entry.
    """
    t, plan = load_plan(db, tournament_id)
    assert t.status is TournamentStatus.FINISHED and t.finished_at is not None
    assert plan.finished
    assert t.summary == plan.to_dict()
    unsettled = [p.key for p in plan.pairings if not p.is_settled]
    assert not unsettled, unsettled
    rows = matches_of(db, tournament_id)
    assert len(driver.submitted) == len(set(driver.submitted)), "a match was submitted twice"
    assert sorted(driver.submitted) == [m.id for m in rows]
    issued = plan_matches(plan)
    played = {m.match_key: m for m in rows if m.status is MatchStatus.FINISHED}
    # Every finished match is one the plan issued, and the plan counts its result.
    assert set(played) <= set(issued)
    for key, m in played.items():
        seats, seed = issued[key]
        assert (str(m.bot_a_id), str(m.bot_b_id)) == seats and m.seed == seed, key
    results_in_plan = {m.key for p in plan.pairings for m in p.matches if m.result is not None}
    assert results_in_plan == set(played)
    assert len({m.match_key for m in rows}) == len(rows)
    assert count(db, MatchResultRow, MatchResultRow.match_id.in_([m.id for m in rows])) == len(
        played
    )
    ids = {str(b) for b in entries(db, tournament_id)}
    assert {s.participant for s in plan.standings} == ids
    assert sorted(s.rank for s in plan.standings)[0] == 1
    return plan


def stats_rows(db: Database) -> dict[int, BotStatsRow]:
    with db.session() as session:
        return {s.bot_id: s for s in session.scalars(select(BotStatsRow))}


def hand_rows(db: Database, match_ids: Sequence[int]) -> list[HandRow]:
    with db.session() as session:
        return list(session.scalars(select(HandRow).where(HandRow.match_id.in_(match_ids))))


def rating_rows(db: Database) -> list[RatingHistoryRow]:
    with db.session() as session:
        return list(session.scalars(select(RatingHistoryRow).order_by(RatingHistoryRow.id)))


def pairings_with(plan: Plan, participant: str) -> list[Any]:
    return [p for p in plan.pairings if participant in (p.a, p.b)]


def walkovers_of(plan: Plan, participant: str) -> list[str]:
    return [p.key for p in pairings_with(plan, participant) if p.status is Status.WALKOVER]
