"""The match runner: plays a best-of-N match to the target between two players.

The runner drives the pure engine and asks the player whose turn it is for an action. It
applies the fault policy of RULES.md: a fault (a :class:`~arena.playing.players.Fault`, or an action
the engine refuses) is a strike, answered with the safe fallback action; ``max_strikes`` in a
match forfeits it; a player that cannot be reached at the start forfeits at once. When
*neither* can be started the match is not played at all (:class:`NeitherStartedError`): two
bots failing at once point at the arena's own network or settings, not at the bots, so no one
is scored a loss (a match job plays it again, then voids it). A fault is never shown to the
other player. Misknocks are rules events, not faults.

Games are played one after another, or, under Hollywood scoring (``match_scoring``), all at
once from one sequence of deals (:class:`~arena.rules.game.HollywoodScore`): each deal is
recorded once, under the earliest game still open when it was played.

The runner itself holds no locks and no globals: many matches run at once in threads, each
blocked only on its own players.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from arena.cards import Card
from arena.playing.players import Fault, FaultKind, MatchContext, Player, Turn, take_exchange
from arena.playing.records import (
    FaultEntry,
    Forfeit,
    GameRecord,
    HandRecord,
    InterruptedDeal,
    MatchRecord,
)
from arena.playing.stored import ActionEntry
from arena.rules.actions import Action, ActionError
from arena.rules.game import HollywoodScore, add_deal, deal_deck, first_dealer, games_to_win
from arena.rules.hand import DealResult, HandState, apply, fallback_action, new_deal, play
from arena.rules.observation import observe
from arena.rules.ruleset import MatchScoring, RuleSet
from arena.rules.scoring import GameScore, final_totals, next_dealer
from arena.states import ForfeitKind

__all__ = ["LiveStep", "MatchProgress", "MatchRunner", "NeitherStartedError", "play_match"]


@dataclass(frozen=True, slots=True)
class MatchProgress:
    """A progress report after each deal."""

    game: int
    deal: int
    games_won: tuple[int, int]
    game_points: tuple[int, int]
    last: DealResult


@dataclass(frozen=True, slots=True)
class LiveStep:
    """A report at each step (the live streams, :mod:`arena.live`): a deal starts
    (``entry`` None: its dealer and deck, the game's points and games won before it), or an
    action was applied (``entry``, and ``fault``, the fault entry it answered, if any)."""

    game: int
    deal: int
    dealer: int
    deck: tuple[Card, ...]
    game_points: tuple[int, int]
    games_won: tuple[int, int]
    entry: ActionEntry | None = None
    fault: FaultEntry | None = None


class NeitherStartedError(Exception):
    """Neither player could be started (``GET /`` or ``POST /start`` failed for both): the
    match is not played. Two bots unreachable at once is most likely the arena's own failure
    (its network, its URL policy, its clock), so it is no forfeit of either: a match job
    treats it as any arena failure (played again, then void)."""


class ForfeitError(Exception):
    """Internal: a seat forfeits the match."""

    def __init__(self, seat: int | None, kind: ForfeitKind, reason: str) -> None:
        super().__init__(reason)
        self.forfeit = Forfeit(seat, kind, reason)
        #: The fault entry that caused it (applied as a fallback), if any.
        self.entry: ActionEntry | None = None
        #: The deal it interrupted, if any.
        self.interrupted: InterruptedDeal | None = None


@dataclass
class MatchRunner:
    """Plays one match. ``players[0]`` is seat ``a``, ``players[1]`` seat ``b``."""

    players: Sequence[Player]
    rules: RuleSet = field(default_factory=RuleSet)
    seed: int | str = 0
    match_id: str = "local"
    on_progress: Callable[[MatchProgress], None] | None = None
    clock: Callable[[], float] = time.perf_counter
    #: Called at every step (:class:`LiveStep`); it must be quick and must not raise.
    on_step: Callable[[LiveStep], None] | None = None

    _strikes: list[int] = field(init=False, default_factory=lambda: [0, 0])
    _faults: list[FaultEntry] = field(init=False, default_factory=list)
    _latencies: tuple[list[float], list[float]] = field(
        init=False, default_factory=lambda: ([], [])
    )
    _requests: int = field(init=False, default=0)
    _wins: list[int] = field(init=False, default_factory=lambda: [0, 0])
    #: The game in progress: its score and the deals played so far.
    _score: GameScore = field(init=False, default_factory=GameScore)
    _hands: list[HandRecord] = field(init=False, default_factory=list)
    #: After :meth:`run`: the record's JSON (:meth:`MatchRecord.to_dict`), as sent at ``/end``;
    #: the recording takes it rather than encode the record again.
    record_json: dict[str, Any] | None = field(init=False, default=None)

    def run(self) -> MatchRecord:
        """Play the match to the end (or a forfeit) and return its record; raise
        :class:`NeitherStartedError` if neither player can be started."""
        if len(self.players) != 2:
            raise ValueError("a match needs exactly two players")
        games: list[GameRecord] = []
        forfeit: Forfeit | None = None
        interrupted: InterruptedDeal | None = None
        winner: int | None
        try:
            self._start()
            if self.rules.match_scoring is MatchScoring.HOLLYWOOD:
                self._play_hollywood(games)
            else:
                need = games_to_win(self.rules)
                while max(self._wins) < need:
                    record = self._play_game(len(games))
                    games.append(record)
                    self._wins[record.result.winner] += 1
            winner = 0 if self._wins[0] > self._wins[1] else 1
        except ForfeitError as f:
            forfeit = f.forfeit
            interrupted = f.interrupted
            winner = None if forfeit.seat is None else 1 - forfeit.seat
        match_record = MatchRecord(
            match_id=self.match_id,
            seed=self.seed,
            rules=self.rules,
            players=(self.players[0].name, self.players[1].name),
            winner=winner,
            games=tuple(games),
            faults=tuple(self._faults),
            forfeit=forfeit,
            unfinished=tuple(self._hands) if forfeit else (),
            latencies=(tuple(self._latencies[0]), tuple(self._latencies[1])),
            unfinished_points=self._score.points if forfeit else (0, 0),
            interrupted=interrupted,
        )
        self.record_json = summary = match_record.to_dict()
        for p in self.players:
            p.end(summary)
        return match_record

    def _start(self) -> None:
        failed = []
        for seat, player in enumerate(self.players):
            context = MatchContext(
                self.match_id, seat, self.rules, self.players[1 - seat].name, self.seed
            )
            fault = player.start(context)
            if fault is not None:
                failed.append((seat, fault))
        if len(failed) == 2:
            details = "; ".join(f"{'ab'[s]}: {f.kind}: {f.detail}" for s, f in failed)
            raise NeitherStartedError(f"neither player could be started ({details})")
        if failed:
            seat, fault = failed[0]
            if fault.kind is FaultKind.SIGNATURE_REFUSED:
                kind, what = (
                    ForfeitKind.SIGNATURE_REFUSED_AT_START,
                    "refused the arena's signature at the start",
                )
            else:
                kind, what = ForfeitKind.UNREACHABLE_AT_START, "unreachable at the start"
            raise ForfeitError(seat, kind, f"{what} ({fault.kind}: {fault.detail})")

    def _play_game(self, game: int) -> GameRecord:
        rules = self.rules
        dealer = start_dealer = first_dealer(self.seed, game)
        self._score, self._hands = GameScore(), []
        previous: DealResult | None = None
        while not self._score.over(rules.target):
            deal = len(self._hands)
            deck = deal_deck(self.seed, game, deal)
            final, actions = self._play_deal(
                new_deal(rules, dealer, deck=deck), game, deal, previous
            )
            result = final.result
            assert result is not None
            self._hands.append(
                HandRecord(deal, dealer, "".join(map(str, deck)), tuple(actions), result)
            )
            self._score = add_deal(rules, self._score, result)
            previous = result
            dead = result.knocker is None
            dealer = next_dealer(rules, dealer, result.winner, dead)
            if self.on_progress is not None:
                wins = (self._wins[0], self._wins[1])
                self.on_progress(MatchProgress(game, deal, wins, self._score.points, result))
        return GameRecord(game, start_dealer, final_totals(rules, self._score), tuple(self._hands))

    def _play_hollywood(self, games: list[GameRecord]) -> None:
        """Every game at once; each closed game is appended to ``games`` as it closes."""
        rules = self.rules
        board = HollywoodScore.new(rules)
        dealer = first_dealer(self.seed, 0)
        hands: list[list[HandRecord]] = [[] for _ in board.games]
        first_dealers: list[int | None] = [None] * len(board.games)
        previous: DealResult | None = None
        while (game := board.current(rules.target)) is not None:
            self._score, self._hands = board.games[game], hands[game]
            deal = len(hands[game])
            if first_dealers[game] is None:
                first_dealers[game] = dealer
            deck = deal_deck(self.seed, game, deal)
            final, actions = self._play_deal(
                new_deal(rules, dealer, deck=deck), game, deal, previous
            )
            result = final.result
            assert result is not None
            before, board = board, board.add(rules, result)
            hands[game].append(
                HandRecord(
                    deal, dealer, "".join(map(str, deck)), tuple(actions), result,
                    scored_in=board.scored_in(before),
                )
            )  # fmt: skip
            previous = result
            dealer = next_dealer(rules, dealer, result.winner, result.knocker is None)
            now = board.current(rules.target)
            for closed in range(game, len(board.games) if now is None else now):
                start = first_dealers[closed]
                record = GameRecord(
                    closed,
                    dealer if start is None else start,
                    final_totals(rules, board.games[closed]),
                    tuple(hands[closed]),
                )
                games.append(record)
                self._wins[record.result.winner] += 1
            if self.on_progress is not None:
                wins = (self._wins[0], self._wins[1])
                points = board.games[game].points
                self.on_progress(MatchProgress(game, deal, wins, points, result))
        self._score, self._hands = GameScore(), []

    def _play_deal(
        self,
        state: HandState,
        game: int,
        deal: int,
        previous: DealResult | None,
    ) -> tuple[HandState, list[ActionEntry]]:
        entries: list[ActionEntry] = []
        told = [False, False]
        if self.on_step is not None:
            wins = (self._wins[0], self._wins[1])
            self.on_step(LiveStep(game, deal, state.dealer, state.deck, self._score.points, wins))
        try:
            return self._play_turns(state, game, deal, previous, entries, told)
        except ForfeitError as forfeit:
            if forfeit.entry is not None:
                entries.append(forfeit.entry)
            forfeit.interrupted = InterruptedDeal(
                game, deal, state.dealer, "".join(map(str, state.deck)), tuple(entries)
            )
            raise

    def _play_turns(
        self,
        state: HandState,
        game: int,
        deal: int,
        previous: DealResult | None,
        entries: list[ActionEntry],
        told: list[bool],
    ) -> tuple[HandState, list[ActionEntry]]:
        while not state.is_over:
            seat = state.to_act
            self._requests += 1
            observation = observe(state, seat)
            turn = Turn(
                observation=observation,
                match_id=self.match_id,
                game=game,
                deal=deal,
                request_id=f"{self.match_id}-r{self._requests}",
                rules=self.rules,
                game_points=self._score.points,
                games_won=(self._wins[0], self._wins[1]),
                deadline_ms=self.rules.deadline_ms,
                previous_deal=None if told[seat] else previous,
                previous_rtt_ms=self._latencies[seat][-1] if self._latencies[seat] else None,
                strikes=self._strikes[seat],
            )
            told[seat] = True
            start = self.clock()
            reply = self.players[seat].act(turn)
            # A remote bot's latency is the transport's (the exchange alone, capped at the
            # deadline), and its raw answer is kept; an in-process player is timed here.
            exchange = take_exchange(self.players[seat])
            if exchange is None:
                latency, raw = (self.clock() - start) * 1000.0, None
            else:
                latency, raw = exchange.latency_ms, exchange.raw
            self._latencies[seat].append(latency)
            faults = len(self._faults)
            try:
                state, entry = self._apply_reply(
                    state, seat, reply, latency, game, deal, observation.legal_actions, raw
                )
            except ForfeitError as forfeit:
                if forfeit.entry is not None:
                    self._tell(game, deal, state, forfeit.entry, faults)
                raise
            entries.append(entry)
            self._tell(game, deal, state, entry, faults)
        return state, entries

    def _tell(
        self, game: int, deal: int, state: HandState, entry: ActionEntry, faults: int
    ) -> None:
        """Report an applied entry to ``on_step`` (with the fault it answered, if any)."""
        if self.on_step is None:
            return
        fault = self._faults[-1] if len(self._faults) > faults else None
        wins = (self._wins[0], self._wins[1])
        self.on_step(
            LiveStep(game, deal, state.dealer, state.deck, self._score.points, wins, entry, fault)
        )

    def _apply_reply(
        self,
        state: HandState,
        seat: int,
        reply: Action | Fault,
        latency: float,
        game: int,
        deal: int,
        legal: tuple[Action, ...],
        raw: bytes | None = None,
    ) -> tuple[HandState, ActionEntry]:
        if isinstance(reply, Action):
            try:
                return play(state, seat, reply, legal), ActionEntry(seat, reply, latency, raw=raw)
            except ActionError as exc:
                reply = Fault(FaultKind.ILLEGAL_ACTION, f"{reply}: {exc}")
        fallback = fallback_action(state)
        self._faults.append(
            FaultEntry(seat, reply.kind, reply.detail, game, deal, fallback.to_dict(), latency)
        )
        self._strikes[seat] += 1
        new_state = apply(state, fallback)
        entry = ActionEntry(seat, fallback, latency, reply.kind, raw)
        if self._strikes[seat] >= self.rules.max_strikes:
            forfeit = ForfeitError(
                seat,
                ForfeitKind.MAX_STRIKES,
                f"{self._strikes[seat]} faults (max_strikes {self.rules.max_strikes});"
                f" last: {reply.kind}: {reply.detail}",
            )
            forfeit.entry = entry
            raise forfeit
        return new_state, entry


def play_match(
    players: Sequence[Player],
    rules: RuleSet | None = None,
    seed: int | str = 0,
    match_id: str = "local",
    on_progress: Callable[[MatchProgress], None] | None = None,
) -> MatchRecord:
    """Play one match between two players and return its record."""
    runner = MatchRunner(players, rules or RuleSet(), seed, match_id, on_progress)
    return runner.run()
