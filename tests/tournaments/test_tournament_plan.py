"""The planner API as a whole: purity, determinism, JSON view, and loud input errors."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest
from tournament_support import people, stronger_wins

from arena.tournaments import (
    DoubleElimination,
    MatchResult,
    PlanError,
    ResultError,
    RoundRobin,
    SingleElimination,
    Status,
    Swiss,
)


def test_importing_the_planners_pulls_in_only_the_standard_library() -> None:
    code = textwrap.dedent(
        """
        import sys
        before = set(sys.modules)
        import arena.tournaments
        new = {m.split(".")[0] for m in set(sys.modules) - before}
        print(sorted(new - set(sys.stdlib_module_names) - {"arena"}))
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[]"


def test_same_inputs_same_plan() -> None:
    results = {"W1-2": MatchResult("s4", (3, 0))}  # W1-1 is seed 1's bye
    a = DoubleElimination().plan(people(6), results, seed=9)
    b = DoubleElimination().plan(list(people(6)), dict(results), seed=9)
    assert a == b
    assert json.dumps(a.to_dict()) == json.dumps(b.to_dict())
    other = DoubleElimination().plan(people(6), results, seed=10)
    assert a.pairing("W1-4").matches[0].seed != other.pairing("W1-4").matches[0].seed


def test_json_view_has_sections_rounds_and_pairings_inline() -> None:
    plan = SingleElimination(third_place=True).plan(people(5))
    data = json.loads(json.dumps(plan.to_dict()))
    assert data["format"] == "single_elimination"
    assert data["options"] == {"third_place": True, "duplicate": False}
    assert [s["name"] for s in data["sections"]] == ["main", "third_place"]
    r1 = data["sections"][0]["rounds"][0]
    assert r1["name"] == "Quarter-finals"
    first = r1["pairings"][0]
    assert first["key"] == "R1-1" and first["status"] == "bye" and first["seeds"] == [1, None]
    assert first["winner_to"] == "R2-1"
    assert first["sources"] == [{"kind": "seed", "seed": 1}, {"kind": "seed", "seed": 8}]
    ready = r1["pairings"][1]
    assert ready["matches"][0]["key"] == "R1-2" and ready["matches"][0]["played"] is False
    assert data["standings"][0]["tiebreaks"] == {}
    assert data["champion"] is None and data["finished"] is False


def test_round_robin_json_lists_tiebreaks() -> None:
    fmt = RoundRobin()
    plan = fmt.plan(people(2))
    plan = fmt.plan(people(2), {"R1-1": stronger_wins(plan.to_play()[0])})
    data = plan.to_dict()
    assert data["champion"] == "s1"
    assert set(data["standings"][0]["tiebreaks"]) == {
        "head_to_head", "sonneborn_berger", "game_difference", "point_difference",
    }  # fmt: skip


@pytest.mark.parametrize(
    ("results", "message"),
    [
        ({"R9-9": MatchResult("s1")}, "not in play: R9-9"),
        ({"R1-1": MatchResult("s4")}, "winner 's4' did not play"),
        ({"R1-1": MatchResult("s1", games=(-1, 0))}, "non-negative"),
        ({"R1-1": MatchResult("s1", forfeited=frozenset({"s4"}))}, "forfeit"),
        ({"R1-1": "s1"}, "expected a MatchResult"),
    ],
)
def test_bad_results_are_refused(results: dict[str, object], message: str) -> None:
    with pytest.raises(ResultError, match=message):
        RoundRobin().plan(people(3), results)  # type: ignore[arg-type]


def test_a_result_for_a_pairing_that_is_still_waiting_is_refused() -> None:
    with pytest.raises(ResultError, match="not in play: R2-1"):
        SingleElimination().plan(people(4), {"R2-1": MatchResult("s1")})
    with pytest.raises(ResultError, match="R2-1"):
        Swiss(rounds=3).plan(people(4), {"R2-1": MatchResult("s1")})


@pytest.mark.parametrize(
    ("participants", "message"),
    [
        (["a"], "at least 2"),
        (["a", "a"], "more than once"),
        (["a", ""], "non-empty"),
        ("ab", "not one string"),
    ],
)
def test_bad_participants_are_refused(participants: object, message: str) -> None:
    with pytest.raises(PlanError, match=message):
        RoundRobin().plan(participants)  # type: ignore[arg-type]


def test_seed_must_be_an_int() -> None:
    with pytest.raises(PlanError, match="seed"):
        RoundRobin().plan(people(2), seed="x")  # type: ignore[arg-type]


def test_to_play_lists_only_unplayed_matches_of_ready_pairings() -> None:
    fmt = SingleElimination()
    plan = fmt.plan(people(4))
    assert [m.key for m in plan.to_play()] == ["R1-1", "R1-2"]
    plan = fmt.plan(people(4), {"R1-1": stronger_wins(plan.to_play()[0])})
    assert [m.key for m in plan.to_play()] == ["R1-2"]
    assert plan.pairing("R2-1").status is Status.WAITING
    assert "R2-1" in plan and "R9-1" not in plan
