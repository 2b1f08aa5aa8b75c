"""The values every tournament planner shares: results in, plans out.

A planner is a pure function from what happened (the participants in seed order, each finished
match's :class:`MatchResult` keyed by match key, the withdrawn participants, the event seed) to a
:class:`Plan`: every pairing known so far, its :class:`Status`, the :class:`Match` values to run
for it, the standings and a drawable bracket. Nothing here reads a clock, a database or a random
generator, so calling a planner twice with the same inputs gives the same plan.

>>> r = MatchResult("ann", games=(3, 1), points=(410, 220))
>>> r.winner, r.games
('ann', (3, 1))
>>> Status.READY.value
'ready'
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, Protocol

__all__ = [
    "BracketRound",
    "BracketSection",
    "DecidedBy",
    "Format",
    "FormatError",
    "Match",
    "MatchResult",
    "Pairing",
    "PairingResult",
    "Plan",
    "PlanError",
    "ResultError",
    "Source",
    "SourceKind",
    "Standing",
    "Status",
    "TournamentError",
]


class TournamentError(ValueError):
    """Base of every error a planner raises over bad input."""


class FormatError(TournamentError):
    """An unknown format name, an unknown option or an invalid option value."""


class PlanError(TournamentError):
    """Participants or withdrawals that cannot be planned (too few, duplicates, unknown ids)."""


class ResultError(TournamentError):
    """A result that does not fit the plan: unknown match key, match not ready, bad winner."""


class Status(StrEnum):
    """Where a pairing stands."""

    #: At least one side depends on pairings not yet decided.
    WAITING = "waiting"
    #: Both sides known and not every match has a result: run its matches.
    READY = "ready"
    #: Every match has a result.
    DONE = "done"
    #: One side (or both, in a bracket slot nobody reaches) is empty; nothing is played.
    BYE = "bye"
    #: A side is withdrawn: decided without play (unless all its matches had already finished).
    #: If both are, the one withdrawn later wins: it was still in when the other left.
    WALKOVER = "walkover"
    #: Never needed (the grand-final reset when the winners-bracket champion won the first final).
    SKIPPED = "skipped"


#: Statuses of a pairing that is decided and needs nothing more.
SETTLED = frozenset({Status.DONE, Status.BYE, Status.WALKOVER, Status.SKIPPED})


class DecidedBy(StrEnum):
    """How a pairing's outcome was reached."""

    MATCH = "match"  # the single match's winner
    GAMES = "games"  # duplicate: more games won over both matches
    POINTS = "points"  # duplicate, or a drawn match: more points
    SEED = "seed"  # knockout tie: the better seed goes through
    FORFEIT = "forfeit"  # one side forfeited a match (both: nobody wins)
    WALKOVER = "walkover"  # a side was withdrawn
    BYE = "bye"  # no opponent
    DRAW = "draw"  # level on everything (round robin, Swiss and gauntlet only)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """What the executor reports for one finished match.

    ``games`` and ``points`` are in the seat order of the :class:`Match` that was played
    (``(seat a, seat b)``); ``winner`` and ``forfeited`` name participants. ``winner`` is None
    only for a drawn match or a double forfeit.
    """

    winner: str | None
    games: tuple[int, int] = (0, 0)
    points: tuple[int, int] = (0, 0)
    forfeited: frozenset[str] = frozenset()


@dataclass(frozen=True, slots=True)
class PairingResult:
    """The outcome of a pairing, in the pairing's seat order ``(a, b)``.

    ``winner`` is None for a draw or when both sides forfeited (then both lose); knockout
    formats always name a winner, and so does every walkover. ``forfeited`` holds who forfeited
    a match or was walked over.
    """

    winner: str | None
    decided_by: DecidedBy
    games: tuple[int, int] = (0, 0)
    points: tuple[int, int] = (0, 0)
    forfeited: frozenset[str] = frozenset()

    @property
    def is_loss_for_both(self) -> bool:
        """No winner because both sides forfeited (not a draw)."""
        return self.winner is None and self.decided_by is DecidedBy.FORFEIT


@dataclass(frozen=True, slots=True)
class Match:
    """One match to run: its key, seats (a, b), seed, and its result once reported."""

    key: str
    pairing: str
    seats: tuple[str, str]
    seed: int
    result: MatchResult | None = None


class SourceKind(StrEnum):
    """Where a bracket slot's participant comes from."""

    SEED = "seed"
    WINNER = "winner"
    LOSER = "loser"
    EMPTY = "empty"


@dataclass(frozen=True, slots=True)
class Source:
    """A bracket slot's origin: seed number ``seed``, or the winner/loser of pairing ``key``."""

    kind: SourceKind
    seed: int | None = None
    key: str | None = None

    def to_dict(self) -> dict[str, Any]:
        if self.kind is SourceKind.SEED:
            return {"kind": self.kind.value, "seed": self.seed}
        if self.kind is SourceKind.EMPTY:
            return {"kind": self.kind.value}
        return {"kind": self.kind.value, "key": self.key}


@dataclass(frozen=True, slots=True)
class Pairing:
    """Two participants (or one and a bye) meeting once, as one or two matches.

    ``a`` and ``b`` are None while unknown (``WAITING``) or empty (``BYE``). ``matches`` lists
    what to run (``READY``) or what was run (``DONE``); it is empty otherwise. In brackets,
    ``sources`` says where each side comes from and ``winner_to``/``loser_to`` where the
    winner and loser go; ``seeds`` are the sides' seed numbers (1 is best).
    """

    key: str
    section: str
    round: int
    a: str | None
    b: str | None
    status: Status
    matches: tuple[Match, ...] = ()
    result: PairingResult | None = None
    seeds: tuple[int | None, int | None] = (None, None)
    sources: tuple[Source, Source] | None = None
    winner_to: str | None = None
    loser_to: str | None = None

    @property
    def is_settled(self) -> bool:
        """Decided (done, bye, walkover) or not needed (skipped)."""
        return self.status in SETTLED

    @property
    def winner(self) -> str | None:
        return None if self.result is None else self.result.winner

    @property
    def loser(self) -> str | None:
        """The other side when there is a winner and an opponent."""
        w = self.winner
        if w is None or self.a is None or self.b is None:
            return None
        return self.b if w == self.a else self.a

    def to_dict(self) -> dict[str, Any]:
        r = self.result
        return {
            "key": self.key,
            "section": self.section,
            "round": self.round,
            "a": self.a,
            "b": self.b,
            "seeds": list(self.seeds),
            "status": self.status.value,
            "winner": self.winner,
            "result": None
            if r is None
            else {
                "winner": r.winner,
                "decided_by": r.decided_by.value,
                "games": list(r.games),
                "points": list(r.points),
                "forfeited": sorted(r.forfeited),
            },
            "matches": [
                {"key": m.key, "seats": list(m.seats), "seed": m.seed, "played": bool(m.result)}
                for m in self.matches
            ],
            "sources": None if self.sources is None else [s.to_dict() for s in self.sources],
            "winner_to": self.winner_to,
            "loser_to": self.loser_to,
        }


@dataclass(frozen=True, slots=True)
class Standing:
    """One participant's line in the standings.

    ``score`` counts 1 per win, bye or walkover win and 0.5 per draw (knockouts: wins). Ranks are
    shared when participants are level on every criterion; ``tiebreaks`` lists the criteria
    after the score, in the order they were applied.
    """

    rank: int
    participant: str
    seed: int
    score: float
    played: int
    wins: int
    draws: int
    losses: int
    byes: int
    games_won: int
    games_lost: int
    points_for: int
    points_against: int
    withdrawn: bool
    tiebreaks: tuple[tuple[str, float], ...] = ()

    def tiebreak(self, name: str) -> float:
        """The value of one tie-break criterion (KeyError if this format has no such one)."""
        for key, value in self.tiebreaks:
            if key == name:
                return value
        raise KeyError(name)

    def to_dict(self) -> dict[str, Any]:
        return {
            "rank": self.rank,
            "participant": self.participant,
            "seed": self.seed,
            "score": self.score,
            "played": self.played,
            "wins": self.wins,
            "draws": self.draws,
            "losses": self.losses,
            "byes": self.byes,
            "games_won": self.games_won,
            "games_lost": self.games_lost,
            "points_for": self.points_for,
            "points_against": self.points_against,
            "withdrawn": self.withdrawn,
            "tiebreaks": dict(self.tiebreaks),
        }


@dataclass(frozen=True, slots=True)
class BracketRound:
    """A column of a bracket (or a round of a round robin or Swiss): its pairing keys in order."""

    number: int
    name: str
    pairings: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class BracketSection:
    """A part of the bracket: ``main``, ``third_place``, ``winners``, ``losers``, ``final``,
    ``rounds`` (round robin, Swiss) or ``gauntlet``."""

    name: str
    rounds: tuple[BracketRound, ...]


@dataclass(frozen=True, slots=True)
class Plan:
    """Everything a planner knows about an event at this point.

    ``pairings`` come in bracket order (section, round, board); every key appears in exactly
    one :class:`BracketRound`. ``withdrawn`` keeps the order of withdrawal. ``finished`` is
    True once every pairing is settled and, for Swiss, every round has been played;
    ``standings`` then hold the final ranking.
    """

    format: str
    options: Mapping[str, Any]
    participants: tuple[str, ...]
    withdrawn: tuple[str, ...]
    pairings: tuple[Pairing, ...]
    standings: tuple[Standing, ...]
    bracket: tuple[BracketSection, ...]
    finished: bool
    _index: Mapping[str, Pairing] = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        object.__setattr__(self, "_index", {p.key: p for p in self.pairings})

    def pairing(self, key: str) -> Pairing:
        """The pairing with this key (KeyError if the plan has none)."""
        return self._index[key]

    def __contains__(self, key: object) -> bool:
        return key in self._index

    def ready(self) -> tuple[Pairing, ...]:
        """Pairings whose matches can run now."""
        return tuple(p for p in self.pairings if p.status is Status.READY)

    def to_play(self) -> tuple[Match, ...]:
        """Matches to run now: those of ready pairings that have no result yet.

        An executor submits these (idempotently, by key); a submitted match without a result
        that is no longer listed here belongs to a walkover and should be cancelled.
        """
        return tuple(m for p in self.ready() for m in p.matches if m.result is None)

    @property
    def champion(self) -> str | None:
        """The sole first-ranked participant once the event is finished."""
        if not self.finished or not self.standings:
            return None
        top = [s for s in self.standings if s.rank == 1]
        return top[0].participant if len(top) == 1 else None

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready view: participants, sections with their pairings inline, standings."""
        return {
            "format": self.format,
            "options": dict(self.options),
            "finished": self.finished,
            "champion": self.champion,
            "participants": [
                {"id": p, "seed": i + 1, "withdrawn": p in self.withdrawn}
                for i, p in enumerate(self.participants)
            ],
            "sections": [
                {
                    "name": section.name,
                    "rounds": [
                        {
                            "number": r.number,
                            "name": r.name,
                            "pairings": [self._index[k].to_dict() for k in r.pairings],
                        }
                        for r in section.rounds
                    ],
                }
                for section in self.bracket
            ],
            "standings": [s.to_dict() for s in self.standings],
        }


class Format(Protocol):
    """A tournament format: a frozen value holding its options, planning from results."""

    @property
    def name(self) -> str:
        """The name :func:`~arena.tournaments.make_format` knows it by."""
        ...

    @property
    def duplicate(self) -> bool:
        """Each pairing is two matches on the same deals with seats swapped."""
        ...

    def options(self) -> dict[str, Any]:
        """Keyword options such that ``make_format(f.name, **f.options()) == f``."""
        ...

    def plan(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None = None,
        withdrawn: Collection[str] = (),
        seed: int = 0,
    ) -> Plan:
        """The plan for these participants (best seed first) given the results so far.

        ``withdrawn`` lists withdrawn participants in the order they withdrew (a set is
        accepted only with at most one member: the order decides walkovers between two).
        """
        ...
