"""Every format driven to its end by random results terminates with a full ranking."""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st
from tournament_support import KNOCKOUT, drive, people

from arena.tournaments import FORMAT_NAMES, Format, make_format


@st.composite
def formats(draw: st.DrawFn) -> Format:
    name = draw(st.sampled_from(FORMAT_NAMES))
    options: dict[str, object] = {"duplicate": draw(st.booleans())}
    if name == "single_elimination":
        options["third_place"] = draw(st.booleans())
    if name == "double_elimination":
        options["reset"] = draw(st.booleans())
    if name == "swiss":
        options["rounds"] = draw(st.integers(1, 7))
    return make_format(name, **options)


@settings(max_examples=40, deadline=None)
@given(
    fmt=formats(),
    n=st.integers(2, 10),
    seed=st.integers(0, 2**32),
    batch=st.integers(1, 4),
    withdraw=st.sampled_from([0.0, 0.0, 0.05]),
)
def test_playouts_terminate_with_a_full_ranking(
    fmt: Format, n: int, seed: int, batch: int, withdraw: float
) -> None:
    out = drive(fmt, people(n), random.Random(seed), batch=batch, withdraw_chance=withdraw, seed=7)
    final = out.final
    assert final.finished
    assert sorted(s.participant for s in final.standings) == sorted(people(n))
    assert final.standings[0].rank == 1
    if fmt.name in KNOCKOUT:
        assert final.champion == final.standings[0].participant
        assert [s.rank for s in final.standings].count(1) == 1
    # Replanning from the same inputs gives the same plan.
    assert fmt.plan(people(n), out.results, out.withdrawn, 7) == final
