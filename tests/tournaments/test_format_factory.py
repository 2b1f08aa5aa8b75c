"""make_format: names, options, round trips and clear errors."""

from __future__ import annotations

import pytest

from arena.tournaments import (
    FORMAT_NAMES,
    DoubleElimination,
    FormatError,
    Gauntlet,
    RoundRobin,
    SingleElimination,
    Swiss,
    make_format,
)


@pytest.mark.parametrize(
    ("name", "options", "expected"),
    [
        ("round_robin", {}, RoundRobin()),
        ("round_robin", {"double": True}, RoundRobin(double=True)),
        ("double_round_robin", {"duplicate": True}, RoundRobin(double=True, duplicate=True)),
        ("single_elimination", {"third_place": True}, SingleElimination(third_place=True)),
        ("double_elimination", {"reset": False}, DoubleElimination(reset=False)),
        ("swiss", {"rounds": 5}, Swiss(rounds=5)),
        ("gauntlet", {"challenger": "bot-7"}, Gauntlet(challenger="bot-7")),
    ],
)
def test_names_and_options(name: str, options: dict[str, object], expected: object) -> None:
    fmt = make_format(name, **options)
    assert fmt == expected
    assert make_format(fmt.name, **fmt.options()) == fmt


def test_every_name_builds_and_round_trips() -> None:
    assert set(FORMAT_NAMES) == {
        "round_robin", "double_round_robin", "single_elimination", "double_elimination",
        "swiss", "gauntlet",
    }  # fmt: skip
    for name in FORMAT_NAMES:
        fmt = make_format(name, **({"rounds": 3} if name == "swiss" else {}))
        assert fmt.name == name
        assert make_format(fmt.name, **fmt.options()) == fmt


@pytest.mark.parametrize(
    ("name", "options", "message"),
    [
        ("knockout", {}, "unknown tournament format 'knockout'"),
        ("swiss", {}, "missing required option"),
        ("swiss", {"rounds": 0}, "positive int"),
        ("swiss", {"rounds": True}, "positive int"),
        ("single_elimination", {"thirdplace": True}, r"unknown option\(s\) thirdplace"),
        ("double_round_robin", {"double": False}, r"unknown option\(s\) double"),
        ("round_robin", {"duplicate": "yes"}, "true or false"),
        ("gauntlet", {"challenger": ""}, "challenger"),
    ],
)
def test_errors_are_clear_value_errors(name: str, options: dict[str, object], message: str) -> None:
    with pytest.raises(FormatError, match=message) as info:
        make_format(name, **options)
    assert isinstance(info.value, ValueError)
