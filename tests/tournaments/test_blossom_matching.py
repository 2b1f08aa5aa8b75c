"""The maximum-weight matching under Swiss pairing, against brute force."""

from __future__ import annotations

from collections.abc import Iterator

from hypothesis import given, settings
from hypothesis import strategies as st

from arena.tournaments._matching import max_weight_matching

Edge = tuple[int, int, int]


def matchings(n: int, edges: list[Edge]) -> Iterator[list[Edge]]:
    """Every matching (not only perfect ones) of the graph."""
    if not edges:
        yield []
        return
    first, rest = edges[0], edges[1:]
    yield from matchings(n, rest)
    i, j, _ = first
    for tail in matchings(n, [e for e in rest if i not in e[:2] and j not in e[:2]]):
        yield [first, *tail]


@st.composite
def graphs(draw: st.DrawFn) -> tuple[int, list[Edge]]:
    n = draw(st.integers(2, 8))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    chosen = draw(st.lists(st.sampled_from(pairs), unique=True, max_size=len(pairs)))
    weights = draw(st.lists(st.integers(1, 30), min_size=len(chosen), max_size=len(chosen)))
    return n, [(i, j, w) for (i, j), w in zip(chosen, weights, strict=True)]


@settings(max_examples=300, deadline=None)
@given(graph=graphs())
def test_matches_the_brute_force_optimum(graph: tuple[int, list[Edge]]) -> None:
    n, edges = graph
    mate = max_weight_matching(n, edges)
    assert len(mate) == n
    weight = {frozenset((i, j)): w for i, j, w in edges}
    total = 0
    for v, u in enumerate(mate):
        if u >= 0:
            assert mate[u] == v
            if v < u:
                total += weight[frozenset((v, u))]
    assert total == max(sum(w for _, _, w in m) for m in matchings(n, edges))


def test_blossoms_that_need_expanding() -> None:
    """Classic cases where augmenting paths run through nested and relabelled blossoms."""
    cases = [
        [(1, 2, 8), (1, 3, 9), (2, 3, 10), (3, 4, 7), (1, 6, 5), (4, 5, 6)],
        [(1, 2, 9), (1, 3, 8), (2, 3, 10), (1, 4, 5), (4, 5, 4), (1, 6, 3)],
        [(1, 2, 23), (1, 5, 22), (1, 6, 15), (2, 3, 25), (3, 4, 22), (4, 5, 25), (4, 8, 14),
         (5, 7, 13)],
        [(1, 2, 45), (1, 5, 45), (2, 3, 50), (3, 4, 45), (4, 5, 50), (1, 6, 30), (3, 9, 35),
         (4, 8, 35), (5, 7, 26), (9, 10, 5)],
        [(1, 2, 45), (1, 7, 45), (2, 3, 50), (3, 4, 45), (4, 5, 95), (4, 6, 94), (5, 6, 94),
         (6, 7, 50), (1, 8, 30), (3, 11, 35), (5, 9, 36), (7, 10, 26), (11, 12, 5)],
        [(1, 2, 40), (1, 3, 40), (2, 3, 60), (2, 4, 55), (3, 5, 55), (4, 5, 50), (1, 8, 15),
         (5, 7, 30), (7, 6, 10), (8, 10, 10), (4, 9, 30)],
    ]  # fmt: skip
    for edges in cases:
        best = max(sum(w for _, _, w in m) for m in matchings(13, edges))
        mate = max_weight_matching(13, edges)
        weight = {frozenset((i, j)): w for i, j, w in edges}
        total = sum(weight[frozenset((v, u))] for v, u in enumerate(mate) if 0 <= v < u)
        assert total == best


def test_empty_graph() -> None:
    assert max_weight_matching(3, []) == [-1, -1, -1]
