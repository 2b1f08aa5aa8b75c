"""A small arena with history, built for the API's read tests: bots, tournaments, matches.

Matches are played in-process (heuristic, random and a faulty player) through the real
service layer (:func:`arena.playing.jobs.run_match_job`: claim, play, record, advance the
tournament), so every row the API reads is what production writes. Short rules (target 50, best of
1) keep it to a second or two.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from sqlalchemy import select

from arena.db.models import BotRow, MatchRow
from arena.db.session import Database
from arena.playing.jobs import run_match_job
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
from arena.services.bots import register_bot, set_status
from arena.services.matches import Claim, schedule_match
from arena.services.ratings import refit_ratings
from arena.services.tournaments import advance_for_match, create_tournament, start_tournament
from arena.settings import Settings
from arena.states import BotStatus, MatchStatus

SHORT = RuleSet(target=50, best_of=1)
ADMIN_TOKEN = "organiser-secret-token"


class FaultyPlayer:
    """A heuristic player that times out on every fifth request."""

    def __init__(self, name: str) -> None:
        self.name = name
        self.inner = HeuristicPlayer(name=name)
        self.calls = 0

    def start(self, context: MatchContext) -> Fault | None:
        return self.inner.start(context)

    def act(self, turn: Turn) -> Action | Fault:
        self.calls += 1
        if self.calls % 5 == 0:
            return Fault(FaultKind.TIMEOUT, "no complete answer within 1000 ms")
        return self.inner.act(turn)

    def end(self, summary: dict[str, object]) -> None:
        self.inner.end(summary)


def player_for(name: str, seed: int) -> Player:
    if name.startswith("bravo"):
        return RandomPlayer(seed=seed, name=name)
    if name.startswith("charlie"):
        return FaultyPlayer(name)
    return HeuristicPlayer(name=name)


def make_players(claim: Claim, _settings: Settings) -> list[Player]:
    return [player_for(b.name, claim.spec.seed) for b in claim.spec.bots]


@dataclass
class World:
    """Ids and tokens of what :func:`build_world` made."""

    url: str
    bots: dict[str, int] = field(default_factory=dict)
    tokens: dict[str, str] = field(default_factory=dict)
    finished_tournament: int = 0
    running_tournament: int = 0
    embargoed_match: int = 0
    challenge_match: int = 0
    pending_match: int = 0
    finished_matches: list[int] = field(default_factory=list)


def play_pending(db: Database, settings: Settings, ids: Iterable[int]) -> list[int]:
    """Play matches (and whatever their tournaments schedule next) to the end, in-process."""
    queue = list(ids)
    played = []
    while queue:
        match_id = queue.pop(0)
        run_match_job(
            db,
            settings,
            match_id,
            "tests",
            make_players=make_players,
            after_record=lambda m: advance_for_match(db, m, queue.extend, min_matches=3),
        )
        played.append(match_id)
    return played


def build_world(url: str) -> World:
    """Register bots and play a finished tournament, a half-played duplicate tournament, a
    challenge (with faults) and leave one match pending."""
    db = Database(url)
    settings = Settings(database_url=url, allow_loopback=True)
    world = World(url)
    try:
        for name in ("alpha", "bravo", "charlie", "delta", "echo"):
            reg = register_bot(db, name=name, owner=f"{name}@example.com", url="http://127.0.0.1:9")
            world.bots[name], world.tokens[name] = reg.bot_id, reg.token
        set_status(db, world.bots["echo"], BotStatus.INACTIVE)
        b = world.bots
        t1 = create_tournament(
            db,
            name="spring cup",
            format_name="round_robin",
            bot_ids=[b["alpha"], b["bravo"], b["charlie"]],
            rules=SHORT,
            seed=7,
        )
        report = start_tournament(db, t1, lambda ids: None)
        world.finished_matches += play_pending(db, settings, report.scheduled)
        world.finished_tournament = t1
        t2 = create_tournament(
            db,
            name="duplicate open",
            format_name="round_robin",
            options={"duplicate": True},
            bot_ids=[b["alpha"], b["delta"]],
            rules=SHORT,
            seed=11,
        )
        report = start_tournament(db, t2, lambda ids: None)
        first = min(report.scheduled)
        run_match_job(db, settings, first, "tests", make_players=make_players)
        world.running_tournament, world.embargoed_match = t2, first
        with db.session() as session:
            challenge = schedule_match(
                session, b["bravo"], b["charlie"], rules=SHORT, seed=99, rated=False
            ).id
            pending = schedule_match(session, b["alpha"], b["bravo"], rules=SHORT, seed=5).id
        play_pending(db, settings, [challenge])
        world.challenge_match, world.pending_match = challenge, pending
        world.finished_matches.append(challenge)
        refit_ratings(db, min_matches=3)
        with db.session() as session:
            assert session.scalar(select(BotRow.id).where(BotRow.name == "alpha")) == b["alpha"]
            statuses = dict(session.execute(select(MatchRow.id, MatchRow.status)).all())
        assert all(statuses[m] is MatchStatus.FINISHED for m in world.finished_matches)
    finally:
        db.dispose()
    return world
