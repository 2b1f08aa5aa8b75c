"""The matchmaker: one ladder round's inputs in, the matches to schedule out.

:func:`plan_round` is a pure function of the round's entrants (each bot's rating, rated
matches, ladder matches today and matches in flight), the :class:`LadderPolicy` and a seed. The
policy, in the order it is applied:

1. **Who is due.** Only active bots (not suspended, not inactive). A bot is due while its
   ladder matches today are fewer than its even share of the day's budget so far,
   ``ceil(matches_per_day * share of the UTC day over at the end of this slot)``, and one more
   pair (or match) keeps it within ``matches_per_day``; so the budget is spread over the day
   instead of being spent at midnight, and a bot that joins late catches up to the pace. It must
   also have room for the whole pair: its matches in flight (pending or running, of any kind:
   ladder, tournaments, challenges) plus the pair's at most ``max_concurrent_per_bot``. A bot
   plays at most one pair a round.
2. **Fewest first.** Bots are taken fewest ladder matches today first (ties in a random order),
   and each one's opponent comes from the bots with the fewest matches today among those left,
   so over a day the counts of bots that stay due stay within one pair (two matches) of each
   other: equality comes before rating.
3. **Close in rating.** Among those, the opponent is drawn at random from the bots within
   ``rating_window`` points of the bot's rating (the nearest one if none is), except for an
   ``exploration`` share of picks, drawn from all of them. A provisional bot (fewer than
   ``provisional_matches`` rated matches) always picks widely, drawing up to eight times until
   it draws an established bot, so it meets the whole range of the ladder and finds its level
   in few matches.
4. **Duplicate pairs.** Both matches of a pair share one seed, seats swapped (``duplicate_pairs``;
   off, a pair is one match, and seat ``a`` goes to the bot that has sat in it less often than
   in seat ``b`` today, so each bot's seats stay close to even). Keys are
   ``"<seat a>-<seat b>:<leg>"`` of the first leg.

No I/O, no clock, no global randomness: every draw comes from ``random.Random(seed)``. The
service (:mod:`arena.services.ladder`) reads the inputs, draws the round's seed from the
system's randomness (the seed decides the deals, which nobody may predict), and schedules the
result.

>>> policy = LadderPolicy(matches_per_day=10)
>>> bots = [Entrant(1, 1500.0, rated_matches=30), Entrant(2, 1520.0, rated_matches=30)]
>>> [(m.key, m.seat_a, m.seat_b, m.leg) for m in plan_round(bots, policy, day_elapsed=0.5, seed=1)]
[('2-1:1', 2, 1, 1), ('2-1:2', 1, 2, 2)]
"""

from __future__ import annotations

import math
import random
from bisect import bisect_left, bisect_right
from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

__all__ = ["Entrant", "LadderMatch", "LadderPolicy", "pace", "plan_round"]

#: Draws a provisional bot makes for an established opponent before it takes whoever came up.
_ESTABLISHED_TRIES = 8
#: Match seeds: 62 random bits (the arena's seeds fit a signed 64-bit column).
_SEED_BITS = 62


@dataclass(frozen=True, slots=True)
class LadderPolicy:
    """The ladder's numbers (``ARENA_LADDER_*`` and ``ARENA_PROVISIONAL_MATCHES``)."""

    matches_per_day: int = 100
    max_concurrent_per_bot: int = 2
    rating_window: float = 200.0
    exploration: float = 0.2
    duplicate_pairs: bool = True
    provisional_matches: int = 10

    def __post_init__(self) -> None:
        if self.matches_per_day < 1:
            raise ValueError("matches_per_day must be at least 1")
        if not (math.isfinite(self.rating_window) and self.rating_window > 0):
            raise ValueError("rating_window must be a number above 0")
        if not 0.0 <= self.exploration <= 1.0:
            raise ValueError("exploration must be between 0 and 1")
        if self.provisional_matches < 0:
            raise ValueError("provisional_matches must be 0 or more")
        if self.max_concurrent_per_bot < self.legs:
            raise ValueError(
                f"max_concurrent_per_bot must be at least {self.legs}"
                + (
                    " with duplicate pairs (both matches of a pair play at once)"
                    if self.legs > 1
                    else ""
                )
            )

    @property
    def legs(self) -> int:
        """Matches per pair: 2 with duplicate pairs, else 1."""
        return 2 if self.duplicate_pairs else 1

    def to_dict(self) -> dict[str, Any]:
        """The numbers as JSON (what a round records it used)."""
        return asdict(self)


@dataclass(frozen=True, slots=True)
class Entrant:
    """A bot as one round of one preset's ladder sees it."""

    bot_id: int
    #: The rating opponents are chosen by (the bot's live Elo).
    rating: float
    #: Rated, decided matches so far (below ``provisional_matches``: provisional).
    rated_matches: int = 0
    #: Ladder matches of this preset scheduled today (UTC), and how many of them in seat ``a``.
    today: int = 0
    seat_a_today: int = 0
    #: Matches of any kind pending or running now.
    in_flight: int = 0
    #: Whether the bot is active (not suspended by its health probes, not inactive).
    active: bool = True


@dataclass(frozen=True, slots=True)
class LadderMatch:
    """One match to schedule: its key in the round, its seats and its seed."""

    key: str
    seat_a: int
    seat_b: int
    seed: int
    #: 1, or 2 for the second match of a duplicate pair (seats swapped, the same seed).
    leg: int


def pace(policy: LadderPolicy, day_elapsed: float) -> int:
    """The ladder matches a bot may have had today by the end of a slot that ends with
    ``day_elapsed`` of the UTC day over: its even share of the budget, rounded up.

    >>> policy = LadderPolicy(matches_per_day=100)
    >>> pace(policy, 1 / 288), pace(policy, 0.5), pace(policy, 1.0)
    (1, 50, 100)
    """
    if not 0.0 < day_elapsed <= 1.0:
        raise ValueError(f"day_elapsed must be in (0, 1], not {day_elapsed!r}")
    share = policy.matches_per_day * day_elapsed
    # A hair of tolerance: 100 * 0.5 computed as 50.000000000001 is still 50.
    return min(policy.matches_per_day, max(1, math.ceil(share - 1e-9)))


def _due(entrants: Iterable[Entrant], policy: LadderPolicy, day_elapsed: float) -> list[Entrant]:
    target = pace(policy, day_elapsed)
    legs = policy.legs
    seen: set[int] = set()
    due = []
    for e in entrants:
        if e.bot_id in seen:
            raise ValueError(f"bot {e.bot_id} is entered twice")
        seen.add(e.bot_id)
        if (
            e.active
            and e.today < target
            and e.today + legs <= policy.matches_per_day
            and e.in_flight + legs <= policy.max_concurrent_per_bot
        ):
            due.append(e)
    return due


class _Tier:
    """The bots left with one count of matches today, sorted by rating (then id)."""

    __slots__ = ("entrants", "keys")

    def __init__(self) -> None:
        self.keys: list[tuple[float, int]] = []
        self.entrants: list[Entrant] = []

    def sort(self) -> None:
        order = sorted(range(len(self.entrants)), key=lambda i: self.keys[i])
        self.keys = [self.keys[i] for i in order]
        self.entrants = [self.entrants[i] for i in order]

    def remove(self, e: Entrant) -> None:
        i = bisect_left(self.keys, (e.rating, e.bot_id))
        del self.keys[i], self.entrants[i]

    def take(self, i: int) -> Entrant:
        del self.keys[i]
        return self.entrants.pop(i)


def _pick(tier: _Tier, x: Entrant, policy: LadderPolicy, rng: random.Random) -> int:
    """The index in ``tier`` (not empty) of ``x``'s opponent (see the module docstring)."""
    n = len(tier.keys)
    provisional = x.rated_matches < policy.provisional_matches
    if provisional or rng.random() < policy.exploration:
        i = rng.randrange(n)
        if provisional:
            tries = 1
            while (
                tier.entrants[i].rated_matches < policy.provisional_matches
                and tries < _ESTABLISHED_TRIES
            ):
                i = rng.randrange(n)
                tries += 1
        return i
    low = bisect_left(tier.keys, (x.rating - policy.rating_window, -math.inf))
    high = bisect_right(tier.keys, (x.rating + policy.rating_window, math.inf))
    if low < high:
        return rng.randrange(low, high)
    # Nobody within the window: the nearest on either side (low == high here).
    if low == 0:
        return 0
    if low == n:
        return n - 1
    below, above = tier.keys[low - 1][0], tier.keys[low][0]
    return low - 1 if x.rating - below <= above - x.rating else low


def _seat_lead(e: Entrant) -> int:
    """How many more of its matches today a bot played in seat ``a`` than in seat ``b``."""
    return 2 * e.seat_a_today - e.today


def _legs(x: Entrant, y: Entrant, legs: int, rng: random.Random) -> list[LadderMatch]:
    if _seat_lead(x) != _seat_lead(y):
        a, b = (x, y) if _seat_lead(x) < _seat_lead(y) else (y, x)
    else:
        a, b = (x, y) if rng.random() < 0.5 else (y, x)
    seed = rng.getrandbits(_SEED_BITS)
    pair = f"{a.bot_id}-{b.bot_id}"
    first = LadderMatch(f"{pair}:1", a.bot_id, b.bot_id, seed, 1)
    if legs == 1:
        return [first]
    return [first, LadderMatch(f"{pair}:2", b.bot_id, a.bot_id, seed, 2)]


def plan_round(
    entrants: Iterable[Entrant], policy: LadderPolicy, *, day_elapsed: float, seed: int
) -> tuple[LadderMatch, ...]:
    """The matches of one round (see the module docstring), first legs in the order the pairs
    were made. ``day_elapsed``: the share of the UTC day over when the round's slot ends, in
    (0, 1]. ``ValueError`` if a bot is entered twice."""
    rng = random.Random(seed)
    due = _due(entrants, policy, day_elapsed)
    rng.shuffle(due)
    due.sort(key=lambda e: e.today)  # stable: ties stay in the shuffled order
    tiers: dict[int, _Tier] = {}
    for e in due:
        tier = tiers.setdefault(e.today, _Tier())
        tier.keys.append((e.rating, e.bot_id))
        tier.entrants.append(e)
    order = [tiers[count] for count in sorted(tiers)]
    for tier in order:
        tier.sort()
    paired: set[int] = set()
    matches: list[LadderMatch] = []
    lowest = 0
    for x in due:
        if x.bot_id in paired:
            continue
        tiers[x.today].remove(x)
        while lowest < len(order) and not order[lowest].keys:
            lowest += 1
        if lowest == len(order):
            break  # x is the last one left
        y = order[lowest].take(_pick(order[lowest], x, policy, rng))
        paired.update((x.bot_id, y.bot_id))
        matches.extend(_legs(x, y, policy.legs, rng))
    return tuple(matches)
