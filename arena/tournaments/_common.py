"""Shared planner plumbing: input validation and settling one pairing from its match results.

:class:`Context` carries one ``plan()`` call's inputs. Planners ask it to settle each pairing
whose two sides are known; it records which results were used so that a result no pairing could
use (an unknown key, a match that is not ready) is reported instead of silently ignored.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence

from arena.tournaments.duplicate import combine, matches_for
from arena.tournaments.model import (
    DecidedBy,
    FormatError,
    Match,
    MatchResult,
    Pairing,
    PairingResult,
    PlanError,
    ResultError,
    Source,
    Status,
)

__all__ = ["Context", "check_bool", "check_participants"]


def check_bool(owner: str, name: str, value: object) -> None:
    """Raise :class:`FormatError` unless ``value`` is a bool."""
    if not isinstance(value, bool):
        raise FormatError(f"{owner}: option {name!r} must be true or false, not {value!r}")


def check_participants(participants: Sequence[str], minimum: int = 2) -> tuple[str, ...]:
    """The participants as a tuple, after checking they are distinct non-empty strings."""
    if isinstance(participants, str):
        raise PlanError("participants must be a sequence of ids, not one string")
    out = tuple(participants)
    for p in out:
        if not isinstance(p, str) or not p:
            raise PlanError(f"participant ids must be non-empty strings, got {p!r}")
    if len(set(out)) != len(out):
        dupes = sorted({p for p in out if out.count(p) > 1})
        raise PlanError(f"participants listed more than once: {', '.join(dupes)}")
    if len(out) < minimum:
        raise PlanError(f"at least {minimum} participants are needed, got {len(out)}")
    return out


def _natural(value: object) -> bool:
    return type(value) is int and value >= 0


class Context:
    """One planning call: participants, results, withdrawals, seed and the duplicate option."""

    def __init__(
        self,
        participants: Sequence[str],
        results: Mapping[str, MatchResult] | None,
        withdrawn: Collection[str],
        seed: int,
        duplicate: bool,
    ) -> None:
        self.participants = check_participants(participants)
        self.seed_of = {p: i + 1 for i, p in enumerate(self.participants)}
        if isinstance(withdrawn, str):
            raise PlanError("withdrawn must be a sequence of ids, not one string")
        if isinstance(withdrawn, (set, frozenset)) and len(withdrawn) > 1:
            raise PlanError("withdrawn must be ordered (earliest first), not a set")
        #: Withdrawn participants, earliest first.
        self.withdrawn = tuple(dict.fromkeys(withdrawn))
        self.out = frozenset(self.withdrawn)
        self._order_out = {p: i for i, p in enumerate(self.withdrawn)}
        unknown = sorted(self.out - set(self.participants))
        if unknown:
            raise PlanError(f"withdrawn ids are not participants: {', '.join(unknown)}")
        if not isinstance(seed, int) or isinstance(seed, bool):
            raise PlanError(f"seed must be an int, got {seed!r}")
        self.seed = seed
        self.duplicate = duplicate
        self.results: Mapping[str, MatchResult] = results or {}
        for key, result in self.results.items():
            if not isinstance(result, MatchResult):
                raise ResultError(f"{key}: expected a MatchResult, got {type(result).__name__}")
        self._used: set[str] = set()

    def better(self, a: str, b: str) -> str:
        """The better-seeded of two participants."""
        return a if self.seed_of[a] < self.seed_of[b] else b

    def seeds(self, a: str | None, b: str | None) -> tuple[int | None, int | None]:
        return (
            None if a is None else self.seed_of[a],
            None if b is None else self.seed_of[b],
        )

    def settle(
        self, key: str, a: str, b: str, decisive: bool
    ) -> tuple[Status, tuple[Match, ...], PairingResult | None]:
        """Status, matches and outcome of pairing ``key`` between ``a`` (seat a) and ``b``.

        All results in: done (results are facts, even if a side withdrew later). Otherwise a
        withdrawn side makes it a walkover; else it is ready. ``decisive`` demands a winner
        even when the results are level (the better seed).
        """
        planned = matches_for(key, a, b, self.seed, self.duplicate)
        matches = tuple(self._attach(m) for m in planned)
        played = [m.result for m in matches if m.result is not None]
        if len(played) == len(matches):
            second = played[1] if len(played) > 1 else None
            better = self.better(a, b) if decisive else None
            return Status.DONE, matches, combine(a, b, played[0], second, better=better)
        if a in self.out or b in self.out:
            # Both out: the later withdrawal wins, as it did while it was still in.
            later = max((a, b), key=lambda x: self._order_out.get(x, len(self._order_out)))
            loser = b if later == a else a
            result = PairingResult(later, DecidedBy.WALKOVER, forfeited=frozenset({loser}))
            return Status.WALKOVER, (), result
        return Status.READY, matches, None

    def pairing(
        self,
        key: str,
        section: str,
        round_no: int,
        a: str,
        b: str,
        *,
        decisive: bool,
        sources: tuple[Source, Source] | None = None,
        winner_to: str | None = None,
        loser_to: str | None = None,
    ) -> Pairing:
        """A settled-as-far-as-possible :class:`Pairing` between two known participants."""
        status, matches, result = self.settle(key, a, b, decisive)
        return Pairing(
            key, section, round_no, a, b, status, matches, result,
            self.seeds(a, b), sources, winner_to, loser_to,
        )  # fmt: skip

    def bye(
        self,
        key: str,
        section: str,
        round_no: int,
        a: str | None,
        *,
        sources: tuple[Source, Source] | None = None,
        winner_to: str | None = None,
        loser_to: str | None = None,
    ) -> Pairing:
        """A bye for ``a`` (or an empty slot when ``a`` is None)."""
        result = PairingResult(a, DecidedBy.BYE)
        return Pairing(
            key, section, round_no, a, None, Status.BYE, (), result,
            self.seeds(a, None), sources, winner_to, loser_to,
        )  # fmt: skip

    def _attach(self, match: Match) -> Match:
        result = self.results.get(match.key)
        if result is None:
            return match
        self._check(match, result)
        self._used.add(match.key)
        return Match(match.key, match.pairing, match.seats, match.seed, result)

    def _check(self, match: Match, result: MatchResult) -> None:
        seats = set(match.seats)
        if result.winner is not None and result.winner not in seats:
            raise ResultError(f"{match.key}: winner {result.winner!r} did not play this match")
        if not result.forfeited <= seats:
            raise ResultError(f"{match.key}: forfeit by {sorted(result.forfeited)} not in match")
        for name, pair in (("games", result.games), ("points", result.points)):
            if not (len(pair) == 2 and _natural(pair[0]) and _natural(pair[1])):
                raise ResultError(f"{match.key}: {name} must be two non-negative ints: {pair!r}")

    def check_all_used(self) -> None:
        """Raise :class:`ResultError` for results that match no ready or finished match."""
        unused = sorted(set(self.results) - self._used)
        if unused:
            raise ResultError(
                "results for matches that are not in play: " + ", ".join(unused[:10])
                + (" ..." if len(unused) > 10 else "")
            )  # fmt: skip
