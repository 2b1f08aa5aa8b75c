"""The bracket engine under single and double elimination.

A bracket is a fixed list of :class:`Node` values, each with two slot :class:`Source` values
(a seed, or the winner or loser of an earlier node). :func:`evaluate` walks the nodes in order
and resolves every slot to a participant, to *empty* (nobody will ever come: a bye) or to
*pending* (not decided yet), then settles each node from the results. Because the structure is
fixed and nodes are only evaluated from earlier ones, keys never change and a pairing, once
both sides are known, never changes.

Each node may place its loser (and, for a third-place match or a final, its winner) at a
*level*; standings rank participants by level, higher is better, still-in above everyone.
:func:`seeding_order` gives the standard seed positions (1 v 16, 8 v 9, ...); :func:`plan` turns
an evaluated bracket into a format's :class:`~arena.tournaments.model.Plan`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from arena.tournaments._common import Context
from arena.tournaments.model import (
    BracketSection,
    Format,
    Pairing,
    Plan,
    Source,
    SourceKind,
    Status,
)
from arena.tournaments.standings import rank_by_level, tally

__all__ = [
    "EMPTY",
    "EvaluatedBracket",
    "Node",
    "evaluate",
    "from_seed",
    "loser_of",
    "plan",
    "seeding_order",
    "winner_of",
]


class _Marker:
    __slots__ = ("name",)

    def __init__(self, name: str) -> None:
        self.name = name

    def __repr__(self) -> str:
        return self.name


#: A slot nobody will fill.
EMPTY = _Marker("EMPTY")
#: A slot not decided yet.
PENDING = _Marker("PENDING")

Slot = str | _Marker


def from_seed(n: int) -> Source:
    """The participant seeded ``n`` (empty when there are fewer participants)."""
    return Source(SourceKind.SEED, seed=n)


def winner_of(key: str) -> Source:
    return Source(SourceKind.WINNER, key=key)


def loser_of(key: str) -> Source:
    return Source(SourceKind.LOSER, key=key)


def seeding_order(size: int) -> tuple[int, ...]:
    """Seed numbers in bracket order for a power-of-two ``size``: pairs are (1st, 2nd), ...

    >>> seeding_order(8)
    (1, 8, 4, 5, 2, 7, 3, 6)
    """
    if size < 1 or size & (size - 1):
        raise ValueError(f"bracket size must be a power of two, got {size}")
    order = [1]
    while len(order) < size:
        total = 2 * len(order) + 1
        order = [s for x in order for s in (x, total - x)]
    return tuple(order)


@dataclass(frozen=True, slots=True)
class Node:
    """One bracket pairing: where its sides come from and what going out here is worth."""

    key: str
    section: str
    round: int
    sources: tuple[Source, Source]
    #: The loser is out, placed at this level (None: the loser plays on).
    loser_level: int | None = None
    #: The winner is placed at this level (a final, a third-place match).
    winner_level: int | None = None
    #: Played only if side b won this earlier node (a grand-final reset).
    reset_of: str | None = None
    #: If side b wins, a reset follows, so neither level applies yet (a grand final).
    resettable: bool = False


@dataclass(frozen=True, slots=True)
class EvaluatedBracket:
    """The evaluated bracket: pairings in node order, levels reached, whether it is over."""

    pairings: tuple[Pairing, ...]
    levels: dict[str, int]
    finished: bool


def evaluate(nodes: Sequence[Node], ctx: Context) -> EvaluatedBracket:
    """Resolve and settle every node of a bracket against the context's results."""
    # Where each node's winner and loser go: the first node that takes them (a grand-final
    # reset takes the same two again but is not where they are sent).
    feeds: dict[str, tuple[str | None, str | None]] = {}
    for node in nodes:
        for src in node.sources:
            if src.key is not None:
                w, lo = feeds.get(src.key, (None, None))
                if src.kind is SourceKind.WINNER:
                    w = w or node.key
                else:
                    lo = lo or node.key
                feeds[src.key] = (w, lo)
    out: dict[str, tuple[Slot, Slot]] = {}
    done: dict[str, Pairing] = {}
    levels: dict[str, int] = {}
    pairings: list[Pairing] = []
    n = len(ctx.participants)

    def resolve(src: Source) -> Slot:
        if src.kind is SourceKind.SEED:
            assert src.seed is not None
            return ctx.participants[src.seed - 1] if src.seed <= n else EMPTY
        if src.kind is SourceKind.EMPTY:
            return EMPTY
        assert src.key is not None
        w, lo = out[src.key]
        return w if src.kind is SourceKind.WINNER else lo

    for node in nodes:
        a, b = resolve(node.sources[0]), resolve(node.sources[1])
        to_w, to_l = feeds.get(node.key, (None, None))
        known = (a if isinstance(a, str) else None, b if isinstance(b, str) else None)
        if node.reset_of is not None and not _reset_needed(done[node.reset_of]):
            status = Status.SKIPPED if done[node.reset_of].is_settled else Status.WAITING
            pairing = _unplayed(node, known, status, ctx, to_w, to_l)
            out[node.key] = (EMPTY, EMPTY) if status is Status.SKIPPED else (PENDING, PENDING)
        elif a is PENDING or b is PENDING:
            pairing = _unplayed(node, known, Status.WAITING, ctx, to_w, to_l)
            out[node.key] = (PENDING, EMPTY if EMPTY in (a, b) else PENDING)
        elif isinstance(a, str) and isinstance(b, str):
            pairing = ctx.pairing(
                node.key, node.section, node.round, a, b,
                decisive=True, sources=node.sources, winner_to=to_w, loser_to=to_l,
            )  # fmt: skip
            if pairing.is_settled:
                w = pairing.winner
                assert w is not None
                lo = b if w == a else a
                out[node.key] = (w, lo)
                if not (node.resettable and w == b):
                    if node.loser_level is not None:
                        levels[lo] = node.loser_level
                    if node.winner_level is not None:
                        levels[w] = node.winner_level
            else:
                out[node.key] = (PENDING, PENDING)
        else:
            alone = a if isinstance(a, str) else b if isinstance(b, str) else None
            pairing = ctx.bye(
                node.key, node.section, node.round, alone,
                sources=node.sources, winner_to=to_w, loser_to=to_l,
            )  # fmt: skip
            out[node.key] = (alone if alone is not None else EMPTY, EMPTY)
            if alone is not None and node.winner_level is not None:
                levels[alone] = node.winner_level
        done[node.key] = pairing
        pairings.append(pairing)
    finished = all(p.is_settled for p in pairings)
    return EvaluatedBracket(tuple(pairings), levels, finished)


def plan(
    fmt: Format,
    nodes: Sequence[Node],
    ctx: Context,
    sections: Callable[[tuple[Pairing, ...]], tuple[BracketSection, ...]],
) -> Plan:
    """A knockout format's plan: its bracket evaluated against the results, laid out by
    ``sections``, participants ranked by the level they reached."""
    outcome = evaluate(nodes, ctx)
    ctx.check_all_used()
    tallies = tally(ctx.participants, outcome.pairings)
    return Plan(
        fmt.name,
        fmt.options(),
        ctx.participants,
        ctx.withdrawn,
        outcome.pairings,
        rank_by_level(tallies, outcome.levels, ctx.out),
        sections(outcome.pairings),
        outcome.finished,
    )


def _unplayed(
    node: Node,
    known: tuple[str | None, str | None],
    status: Status,
    ctx: Context,
    *links: str | None,
) -> Pairing:
    winner_to, loser_to = links
    return Pairing(
        node.key, node.section, node.round, known[0], known[1], status,
        seeds=ctx.seeds(*known), sources=node.sources, winner_to=winner_to, loser_to=loser_to,
    )  # fmt: skip


def _reset_needed(final: Pairing) -> bool:
    """A reset is played only once side b (the losers-bracket champion) won the first final."""
    return final.is_settled and final.b is not None and final.winner == final.b
