"""Standings: tallies from settled pairings, tie-break criteria, and ranking.

Scoring: a win (played, forfeit or walkover) is 1, a draw 0.5, a loss 0, a bye ``bye_points``.
Tie-breaks (each counts only pairings with an opponent; byes add nothing):

- ``buchholz``: the sum of the current scores of every opponent met;
- ``sonneborn_berger``: the scores of opponents beaten plus half the scores of opponents drawn;
- ``head_to_head``: the score in pairings among the participants still level at that point;
- ``game_difference`` / ``point_difference``: games won minus lost, points for minus against;
- ``percentage``: score per pairing played (gauntlet).

Criteria apply in order, each within the groups the previous ones left level, so head to head
is computed among exactly the tied participants. Participants level on everything share a rank
and are listed by seed.

>>> scores = [("a", 2.0), ("b", 2.0), ("c", 1.0)]
>>> t = {p: Tally(p, i + 1, score=s) for i, (p, s) in enumerate(scores)}
>>> [(s.rank, s.participant) for s in rank(t, (), frozenset())]
[(1, 'a'), (1, 'b'), (3, 'c')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from arena.tournaments.model import Pairing, Standing, Status

__all__ = [
    "BUCHHOLZ",
    "GAME_DIFFERENCE",
    "HEAD_TO_HEAD",
    "PERCENTAGE",
    "POINT_DIFFERENCE",
    "SONNEBORN_BERGER",
    "Criterion",
    "Tally",
    "rank",
    "rank_by_level",
    "tally",
]


@dataclass(slots=True)
class Tally:
    """A participant's running totals (mutable while a plan is being built)."""

    participant: str
    seed: int
    score: float = 0.0
    played: int = 0
    wins: int = 0
    draws: int = 0
    losses: int = 0
    byes: int = 0
    games_won: int = 0
    games_lost: int = 0
    points_for: int = 0
    points_against: int = 0
    #: (opponent, score earned against them) for each pairing with an opponent.
    meetings: list[tuple[str, float]] = field(default_factory=list)


def tally(
    participants: Sequence[str], pairings: Iterable[Pairing], bye_points: float = 0.0
) -> dict[str, Tally]:
    """Totals of every participant over the settled pairings (done, walkover, bye)."""
    out = {p: Tally(p, i + 1) for i, p in enumerate(participants)}
    for pairing in pairings:
        result = pairing.result
        if result is None or pairing.status in (Status.READY, Status.WAITING, Status.SKIPPED):
            continue
        if pairing.status is Status.BYE:
            if pairing.a is not None:
                out[pairing.a].byes += 1
                out[pairing.a].score += bye_points
            continue
        assert pairing.a is not None and pairing.b is not None
        sides = ((pairing.a, pairing.b, 0), (pairing.b, pairing.a, 1))
        for me, other, i in sides:
            t = out[me]
            t.played += 1
            t.games_won += result.games[i]
            t.games_lost += result.games[1 - i]
            t.points_for += result.points[i]
            t.points_against += result.points[1 - i]
            if result.winner == me:
                earned = 1.0
                t.wins += 1
            elif result.winner is None and not result.is_loss_for_both:
                earned = 0.5
                t.draws += 1
            else:
                earned = 0.0
                t.losses += 1
            t.score += earned
            t.meetings.append((other, earned))
    return out


#: A criterion: its name and a function from a tied group (and all tallies) to values.
Criterion = tuple[str, Callable[[Sequence[Tally], Mapping[str, Tally]], dict[str, float]]]


def _buchholz(group: Sequence[Tally], all_: Mapping[str, Tally]) -> dict[str, float]:
    return {t.participant: sum((all_[o].score for o, _ in t.meetings), 0.0) for t in group}


def _sonneborn_berger(group: Sequence[Tally], all_: Mapping[str, Tally]) -> dict[str, float]:
    return {t.participant: sum((e * all_[o].score for o, e in t.meetings), 0.0) for t in group}


def _head_to_head(group: Sequence[Tally], all_: Mapping[str, Tally]) -> dict[str, float]:
    names = {t.participant for t in group}
    return {t.participant: sum((e for o, e in t.meetings if o in names), 0.0) for t in group}


def _game_difference(group: Sequence[Tally], all_: Mapping[str, Tally]) -> dict[str, float]:
    return {t.participant: float(t.games_won - t.games_lost) for t in group}


def _point_difference(group: Sequence[Tally], all_: Mapping[str, Tally]) -> dict[str, float]:
    return {t.participant: float(t.points_for - t.points_against) for t in group}


def _percentage(group: Sequence[Tally], all_: Mapping[str, Tally]) -> dict[str, float]:
    return {t.participant: t.score / t.played if t.played else 0.0 for t in group}


BUCHHOLZ: Criterion = ("buchholz", _buchholz)
SONNEBORN_BERGER: Criterion = ("sonneborn_berger", _sonneborn_berger)
HEAD_TO_HEAD: Criterion = ("head_to_head", _head_to_head)
GAME_DIFFERENCE: Criterion = ("game_difference", _game_difference)
POINT_DIFFERENCE: Criterion = ("point_difference", _point_difference)
PERCENTAGE: Criterion = ("percentage", _percentage)


def rank(
    tallies: Mapping[str, Tally],
    criteria: Sequence[Criterion],
    withdrawn: frozenset[str],
    *,
    lead: Criterion | None = None,
) -> tuple[Standing, ...]:
    """Standings ordered by score (or by ``lead``, then shown first among the tie-breaks),
    then each criterion in turn, then seed."""
    first: Criterion = lead or ("score", lambda g, _: {t.participant: t.score for t in g})
    chain = (first, *criteria)
    shown_names = [name for name, _ in (criteria if lead is None else chain)]
    values: dict[str, dict[str, float]] = {p: {} for p in tallies}
    groups = _split(list(tallies.values()), chain, tallies, values)
    out: list[Standing] = []
    for group in groups:
        place = len(out) + 1
        for t in sorted(group, key=lambda t: t.seed):
            shown = tuple((name, values[t.participant][name]) for name in shown_names)
            out.append(_standing(t, place, t.participant in withdrawn, shown))
    return tuple(out)


def _split(
    group: list[Tally],
    chain: Sequence[Criterion],
    all_: Mapping[str, Tally],
    values: dict[str, dict[str, float]],
) -> list[list[Tally]]:
    if not chain:
        return [group]
    name, fn = chain[0]
    got = fn(group, all_)
    for p, v in got.items():
        values[p][name] = v
    ordered = sorted(group, key=lambda t: (-got[t.participant], t.seed))
    out: list[list[Tally]] = []
    start = 0
    for i in range(1, len(ordered) + 1):
        if i == len(ordered) or got[ordered[i].participant] != got[ordered[start].participant]:
            out.extend(_split(ordered[start:i], chain[1:], all_, values))
            start = i
    return out


def rank_by_level(
    tallies: Mapping[str, Tally], levels: Mapping[str, int], withdrawn: frozenset[str]
) -> tuple[Standing, ...]:
    """Knockout standings: the later a participant went out, the better; still in is best.

    Participants out at the same stage share a rank. Knockout scores count wins.
    """
    top = max(levels.values(), default=0) + 1
    level = {p: levels.get(p, top) for p in tallies}
    ordered = sorted(tallies.values(), key=lambda t: (-level[t.participant], t.seed))
    out: list[Standing] = []
    for i, t in enumerate(ordered):
        same = i > 0 and level[ordered[i - 1].participant] == level[t.participant]
        place = out[-1].rank if same else i + 1
        out.append(_standing(t, place, t.participant in withdrawn, ()))
    return tuple(out)


def _standing(
    t: Tally, place: int, withdrawn: bool, tiebreaks: tuple[tuple[str, float], ...]
) -> Standing:
    return Standing(
        place, t.participant, t.seed, t.score, t.played, t.wins, t.draws, t.losses, t.byes,
        t.games_won, t.games_lost, t.points_for, t.points_against, withdrawn, tiebreaks,
    )  # fmt: skip
