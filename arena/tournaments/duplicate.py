"""How a pairing is played: its matches, their seeds, and how their results combine.

A pairing is one match, keyed like the pairing, or with the ``duplicate`` option two matches
``KEY.1`` (seats ``a, b``) and ``KEY.2`` (seats swapped) that share one seed, so both players
get the same deals from each seat and luck cancels out. :func:`combine` turns the match results
into the pairing's outcome:

1. a side that forfeited a match while the other did not loses;
2. a single match's winner wins;
3. otherwise (duplicate, or a drawn match) more games won over the matches wins, then more points;
4. still level: the better seed when a winner is required (knockouts), else a draw
   (or a loss for both if both forfeited).

>>> first = MatchResult("ann", games=(3, 1), points=(420, 180))
>>> second = MatchResult("bob", games=(3, 2), points=(500, 330))  # bob sat in seat a
>>> outcome = combine("ann", "bob", first, second)
>>> outcome.winner, outcome.decided_by.value, outcome.games, outcome.points
('ann', 'games', (5, 4), (750, 680))
"""

from __future__ import annotations

import hashlib

from arena.tournaments.model import DecidedBy, Match, MatchResult, PairingResult

__all__ = ["combine", "match_keys", "match_seed", "matches_for"]


def match_seed(event_seed: int, pairing_key: str) -> int:
    """A 63-bit match seed from the event seed and the pairing key, stable across runs.

    >>> match_seed(7, "R1-1") == match_seed(7, "R1-1") != match_seed(7, "R1-2")
    True
    """
    digest = hashlib.blake2b(f"{event_seed}/{pairing_key}".encode(), digest_size=8).digest()
    return int.from_bytes(digest, "big") >> 1


def match_keys(pairing_key: str, duplicate: bool) -> tuple[str, ...]:
    """The keys of a pairing's matches: the pairing key, or ``KEY.1`` and ``KEY.2``.

    >>> match_keys("W2-1", True)
    ('W2-1.1', 'W2-1.2')
    """
    return (f"{pairing_key}.1", f"{pairing_key}.2") if duplicate else (pairing_key,)


def matches_for(
    pairing_key: str, a: str, b: str, event_seed: int, duplicate: bool
) -> tuple[Match, ...]:
    """The matches of pairing ``a`` v ``b``: one, or two with seats swapped and one seed."""
    seed = match_seed(event_seed, pairing_key)
    keys = match_keys(pairing_key, duplicate)
    seats = ((a, b), (b, a))
    return tuple(Match(k, pairing_key, seats[i], seed) for i, k in enumerate(keys))


def combine(
    a: str,
    b: str,
    first: MatchResult,
    second: MatchResult | None = None,
    *,
    better: str | None = None,
) -> PairingResult:
    """Combine a pairing's match results into its outcome, in the order ``(a, b)``.

    ``first`` is the match with ``a`` in seat a; ``second``, for duplicate, the match with
    ``b`` in seat a. ``better`` is the better-seeded side, given when a winner is required.
    """
    if better is not None and better not in (a, b):
        raise ValueError(f"better seed {better!r} is neither {a!r} nor {b!r}")
    games = list(first.games)
    points = list(first.points)
    forfeited = set(first.forfeited)
    if second is not None:
        games[0] += second.games[1]
        games[1] += second.games[0]
        points[0] += second.points[1]
        points[1] += second.points[0]
        forfeited |= second.forfeited
    totals = (games[0], games[1]), (points[0], points[1])

    def done(winner: str | None, how: DecidedBy) -> PairingResult:
        return PairingResult(winner, how, totals[0], totals[1], frozenset(forfeited))

    if len(forfeited) == 1:
        (quitter,) = forfeited
        return done(b if quitter == a else a, DecidedBy.FORFEIT)
    if second is None and first.winner is not None and not forfeited:
        return done(first.winner, DecidedBy.MATCH)
    for how, (x, y) in ((DecidedBy.GAMES, totals[0]), (DecidedBy.POINTS, totals[1])):
        if x != y:
            return done(a if x > y else b, how)
    if better is not None:
        return done(better, DecidedBy.SEED)
    return done(None, DecidedBy.FORFEIT if forfeited else DecidedBy.DRAW)
