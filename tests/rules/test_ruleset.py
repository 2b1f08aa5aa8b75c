"""RULES.md "Variants the rule set must express" and STYLE.md "validated loudly": the RuleSet."""

from __future__ import annotations

import dataclasses
import re
from pathlib import Path
from typing import Any

import pytest
import yaml

from arena.rules import (
    DeadHandDealer,
    MatchScoring,
    MisknockPolicy,
    NextDealer,
    RuleSet,
    RuleSetError,
)

ROOT = Path(__file__).resolve().parents[2]


def test_defaults_are_the_rules_md_defaults() -> None:
    r = RuleSet()
    assert r.knock_limit == 10
    assert (r.gin_bonus, r.undercut_bonus, r.big_gin_bonus) == (25, 25, 31)
    assert r.undercut_on_tie is True
    assert r.allow_discard_of_taken_card is False
    assert r.last_discard_chance is False
    assert r.dead_hand_stock == 2
    assert r.dead_hand_dealer is DeadHandDealer.SAME
    assert r.next_dealer is NextDealer.ALTERNATE
    assert r.misknock is MisknockPolicy.OPEN_HAND
    assert r.misknock_penalty == 25
    assert (r.target, r.game_bonus, r.shutout_multiplier, r.box_bonus) == (250, 100, 2, 25)
    assert r.best_of == 5
    assert r.max_strikes == 3
    assert not r.upcard_sets_knock_limit and not r.spade_upcard_doubles


def test_the_seed_variant_fields_default_to_the_rules_played_before_them() -> None:
    r = RuleSet()
    assert r.spade_discard_doubles is False
    assert r.big_gin_after_taking_discard is True
    assert r.shutout_total_multiplier == 1
    assert r.match_scoring is MatchScoring.GAMES


VARIANTS: dict[str, dict[str, Any]] = {
    "gin bonus 20": {"gin_bonus": 20},
    "undercut bonus 10": {"undercut_bonus": 10},
    "undercut bonus 20": {"undercut_bonus": 20},
    "big gin 50": {"big_gin_bonus": 50},
    "big gin off": {"big_gin_bonus": None},
    "box 20": {"box_bonus": 20},
    "target 100": {"target": 100},
    "no undercut on tie": {"undercut_on_tie": False},
    "discard of taken card": {"allow_discard_of_taken_card": True},
    "last discard chance": {"last_discard_chance": True},
    "loser deals": {"next_dealer": "loser"},
    "winner deals": {"next_dealer": "winner"},
    "other deals after a dead hand": {"dead_hand_dealer": "other"},
    "opponent may accept": {"misknock": "opponent_may_accept"},
    "penalty points": {"misknock": "penalty_points", "misknock_penalty": 10},
    "enum members": {"misknock": MisknockPolicy.PENALTY_POINTS, "next_dealer": NextDealer.LOSER},
    "straight": {"knock_limit": 0},
    "spade top discard doubles": {"spade_discard_doubles": True},
    "big gin only after a stock draw": {"big_gin_after_taking_discard": False},
    "shutout doubles the whole score": {"shutout_multiplier": 1, "shutout_total_multiplier": 2},
    "hollywood": {"match_scoring": "hollywood", "best_of": 3},
    "play to an empty stock": {"dead_hand_stock": 0},
}


@pytest.mark.parametrize("fields", VARIANTS.values(), ids=VARIANTS.keys())
def test_variants_are_expressible_and_round_trip(fields: dict[str, Any]) -> None:
    rules = RuleSet(**fields)
    for name, value in fields.items():
        assert getattr(rules, name) == value
    data = rules.to_dict()
    assert RuleSet.from_dict(data) == rules
    assert all(
        not isinstance(v, MisknockPolicy | NextDealer | DeadHandDealer) for v in data.values()
    )


INVALID: dict[str, dict[str, Any]] = {
    "bad enum value": {"misknock": "forgive"},
    "enum value in the wrong case": {"next_dealer": "Loser"},
    "enum given as an int": {"dead_hand_dealer": 0},
    "enum given as None": {"next_dealer": None},
    "bool given as int": {"undercut_on_tie": 1},
    "bool given as string": {"last_discard_chance": "true"},
    "bool given as None": {"allow_discard_of_taken_card": None},
    "int given as bool": {"gin_bonus": True},
    "int given as float": {"target": 250.0},
    "int given as string": {"knock_limit": "10"},
    "negative bonus": {"undercut_bonus": -1},
    "negative knock limit": {"knock_limit": -1},
    "knock limit beyond any hand": {"knock_limit": 101},
    "zero target": {"target": 0},
    "even best_of": {"best_of": 4},
    "zero best_of": {"best_of": 0},
    "big gin bonus as bool": {"big_gin_bonus": False},
    "big gin bonus negative": {"big_gin_bonus": -31},
    "dead hand stock too large": {"dead_hand_stock": 30},
    "zero strikes": {"max_strikes": 0},
    "zero shutout multiplier": {"shutout_multiplier": 0},
    "zero shutout total multiplier": {"shutout_total_multiplier": 0},
    "unknown match scoring": {"match_scoring": "oklahoma"},
    "spade discard doubles as int": {"spade_discard_doubles": 1},
    "big gin after taking as string": {"big_gin_after_taking_discard": "yes"},
}


@pytest.mark.parametrize("fields", INVALID.values(), ids=INVALID.keys())
def test_invalid_values_raise(fields: dict[str, Any]) -> None:
    with pytest.raises(RuleSetError) as info:
        RuleSet(**fields)
    (name,) = fields
    assert name in str(info.value)
    with pytest.raises(RuleSetError):
        RuleSet.from_dict(fields)


def test_unknown_field_is_rejected_by_name() -> None:
    with pytest.raises(RuleSetError, match="knock_limt"):
        RuleSet.from_dict({"knock_limt": 5})
    with pytest.raises(RuleSetError, match="spades_double"):
        RuleSet.oklahoma(spades_double=True)


def test_replace_validates_and_rejects_unknown_fields() -> None:
    assert RuleSet().replace(gin_bonus=20).gin_bonus == 20
    with pytest.raises(RuleSetError):
        RuleSet().replace(gin_bonus=-5)
    with pytest.raises(RuleSetError, match="gin_bonsu"):
        RuleSet().replace(gin_bonsu=20)


def test_rule_set_error_is_a_value_error() -> None:
    assert issubclass(RuleSetError, ValueError)


def test_rule_set_is_frozen_and_hashable() -> None:
    rules = RuleSet()
    with pytest.raises(dataclasses.FrozenInstanceError):
        rules.target = 100  # type: ignore[misc]
    assert hash(rules) == hash(RuleSet())
    assert len({RuleSet(), RuleSet(), RuleSet.oklahoma()}) == 2


@pytest.mark.parametrize("name", ["standard", "oklahoma", "straight"])
def test_presets_by_name(name: str) -> None:
    assert RuleSet.preset(name) == getattr(RuleSet, name)()
    assert RuleSet.preset(name, target=100).target == 100


def test_unknown_preset() -> None:
    with pytest.raises(RuleSetError, match="hollywood"):
        RuleSet.preset("hollywood")


def test_every_field_round_trips_through_a_plain_dict() -> None:
    rules = RuleSet.oklahoma(misknock="penalty_points", big_gin_bonus=None, best_of=3)
    data = rules.to_dict()
    assert set(data) == {f.name for f in dataclasses.fields(RuleSet)}
    assert RuleSet.from_dict(data) == rules


def _schema(path: str, pointer: str) -> dict[str, Any]:
    node: Any = yaml.safe_load((ROOT / path).read_text(encoding="utf-8"))
    for part in pointer.split("/"):
        node = node[part]
    return dict(node)


def test_the_bot_protocol_rule_set_schema_lists_every_field_with_its_default() -> None:
    schema = _schema("api_spec/bot-protocol.yaml", "components/schemas/RuleSet")
    fields = RuleSet().to_dict()
    assert set(schema["properties"]) == set(schema["required"]) == set(fields)
    assert {k: v.get("default") for k, v in schema["properties"].items()} == fields
    for name, prop in schema["properties"].items():
        if "enum" in prop:
            field_type = type(getattr(RuleSet(), name))
            assert set(prop["enum"]) == {m.value for m in field_type}, name  # type: ignore[attr-defined]


def test_the_api_rules_schema_lists_every_field() -> None:
    schema = _schema("api_spec/openapi.yaml", "components/schemas/Rules")
    assert set(schema["properties"]) == set(RuleSet().to_dict())


def test_every_field_has_a_line_in_the_rules_document() -> None:
    text = (ROOT / "docs" / "RULES.md").read_text(encoding="utf-8")
    missing = [f for f in RuleSet().to_dict() if not re.search(rf"`{f}`", text)]
    assert not missing, f"docs/RULES.md does not name: {missing}"


def test_a_rule_set_recorded_before_the_seed_variant_fields_loads_with_their_defaults() -> None:
    new = {"spade_discard_doubles", "big_gin_after_taking_discard", "shutout_total_multiplier"}
    old = {k: v for k, v in RuleSet().to_dict().items() if k not in new | {"match_scoring"}}
    assert RuleSet.from_dict(old) == RuleSet()
