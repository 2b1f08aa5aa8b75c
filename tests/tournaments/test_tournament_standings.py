"""Ranking mechanics: criteria applied in order within tied groups, shared ranks."""

from __future__ import annotations

from arena.tournaments.standings import (
    BUCHHOLZ,
    HEAD_TO_HEAD,
    SONNEBORN_BERGER,
    Tally,
    rank,
    rank_by_level,
)


def tallies(*rows: tuple[str, float, list[tuple[str, float]]]) -> dict[str, Tally]:
    return {
        name: Tally(name, i + 1, score=score, meetings=meetings)
        for i, (name, score, meetings) in enumerate(rows)
    }


def test_head_to_head_is_computed_among_the_players_still_level() -> None:
    # a and b are level on score, Buchholz (1 + 1) and Sonneborn-Berger (1); b beat a.
    t = tallies(
        ("a", 1.0, [("b", 0.0), ("c", 1.0)]),
        ("b", 1.0, [("a", 1.0), ("d", 0.0)]),
        ("c", 1.0, [("a", 0.0)]),
        ("d", 1.0, [("b", 1.0)]),
    )
    table = rank(t, (BUCHHOLZ, SONNEBORN_BERGER, HEAD_TO_HEAD), frozenset({"d"}))
    # c and d are level on score and Buchholz (1); d beat someone, c did not.
    assert [(s.rank, s.participant) for s in table] == [(1, "b"), (2, "a"), (3, "d"), (4, "c")]
    by = {s.participant: s for s in table}
    assert by["b"].tiebreaks == (
        ("buchholz", 2.0),
        ("sonneborn_berger", 1.0),
        ("head_to_head", 1.0),
    )
    assert by["a"].tiebreak("head_to_head") == 0.0
    assert by["d"].withdrawn and not by["a"].withdrawn


def test_knockout_levels_share_ranks_and_still_in_is_best() -> None:
    t = tallies(("a", 0.0, []), ("b", 0.0, []), ("c", 0.0, []), ("d", 0.0, []))
    table = rank_by_level(t, {"c": 1, "d": 1}, frozenset())
    assert [(s.rank, s.participant) for s in table] == [(1, "a"), (1, "b"), (3, "c"), (3, "d")]
