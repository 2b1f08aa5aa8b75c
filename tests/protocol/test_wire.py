"""The wire format: golden examples, the OpenAPI contract and the msgspec structs agree.

``api_spec/examples/`` holds request and answer bodies made from real engine states (see
``golden.py``). Each one validates against ``api_spec/bot-protocol.yaml``, decodes with the
msgspec structs and re-encodes to the same JSON; the yaml's component schemas and the structs
name the same properties and require the same ones. The observation never carries the seed,
the stock or the opponent's concealed cards.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import golden
import jsonschema
import msgspec
import pytest
import yaml
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

from arena.cards import mask_to_cards
from arena.playing.players import Turn
from arena.protocol.wire import (
    ActRequest,
    BotInfo,
    EndRequest,
    StartRequest,
    WireAction,
    WireError,
    act_request,
    decode_action,
)
from arena.rules.actions import Action, ActionKind, Phase, knock
from arena.rules.game import deal_deck
from arena.rules.hand import DealResult, new_deal, play
from arena.rules.observation import observe
from arena.rules.ruleset import MisknockPolicy, RuleSet

SPEC_PATH = Path(__file__).resolve().parents[2] / "api_spec" / "bot-protocol.yaml"
SPEC: dict[str, Any] = yaml.safe_load(SPEC_PATH.read_text(encoding="utf-8"))
SPEC_URI = "urn:gin-arena:bot-protocol"
REGISTRY: Registry[Any] = Registry().with_resource(
    SPEC_URI, Resource.from_contents(SPEC, default_specification=DRAFT202012)
)
EXAMPLE_FILES = sorted(p.name for p in golden.EXAMPLES.glob("*.json"))

#: The struct and the yaml component of each kind of example (by file name).
KINDS: list[tuple[re.Pattern[str], type[msgspec.Struct], str]] = [
    (re.compile(r"info\.response\.json"), BotInfo, "BotInfo"),
    (re.compile(r"start\.request\.json"), StartRequest, "StartRequest"),
    (re.compile(r"act\.\w+\.request\.json"), ActRequest, "ActRequest"),
    (re.compile(r"act\.\w+\.response\.json"), WireAction, "Action"),
    (re.compile(r"end\.request\.json"), EndRequest, "EndRequest"),
]


def kind_of(name: str) -> tuple[type[msgspec.Struct], str]:
    for pattern, struct, component in KINDS:
        if pattern.fullmatch(name):
            return struct, component
    raise AssertionError(f"no schema for example {name}")


def validator(component: str) -> jsonschema.Draft202012Validator:
    schema = {"$ref": f"{SPEC_URI}#/components/schemas/{component}"}
    return jsonschema.Draft202012Validator(schema, registry=REGISTRY)


def load(name: str) -> Any:
    return json.loads((golden.EXAMPLES / name).read_text(encoding="utf-8"))


# --- the golden examples --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def generated() -> dict[str, Any]:
    return golden.examples()


def test_examples_are_the_ones_real_states_make(generated: dict[str, Any]) -> None:
    """The checked-in files are what the engine and wire code make today.

    After a deliberate wire change, regenerate: ``.venv/bin/python tests/protocol/golden.py``.
    """
    assert sorted(generated) == EXAMPLE_FILES
    for name, value in generated.items():
        text = (golden.EXAMPLES / name).read_text(encoding="utf-8")
        assert text == golden.render(value), f"{name} is out of date"


def test_examples_cover_every_phase_the_docs_promise() -> None:
    phases = {
        load(n)["phase"]
        for n in EXAMPLE_FILES
        if n.endswith(".request.json") and n.startswith("act.")
    }
    assert {"first_upcard", "draw", "discard", "misknock_response"} <= phases
    assert load("act.first_upcard.request.json")["previous_deal"] is not None
    discard = load("act.discard.request.json")
    assert discard["taken_card"] is not None
    assert {"action": "discard", "card": discard["taken_card"]} not in discard["legal_actions"]
    assert any(a["action"] == "knock" for a in discard["legal_actions"])
    misknock = load("act.misknock_response.request.json")
    assert misknock["pending_misknock"]["deadwood"] > misknock["knock_limit"]
    assert misknock["rules"]["misknock"] == "opponent_may_accept"
    end = load("end.request.json")
    assert end["record"]["faults"], "the example shows the receiving bot's own fault"
    assert all(f["seat"] == end["you"] for f in end["record"]["faults"])


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_validates_against_the_yaml(name: str) -> None:
    _, component = kind_of(name)
    errors = sorted(validator(component).iter_errors(load(name)), key=str)
    assert not errors, "\n".join(f"{list(e.absolute_path)}: {e.message}" for e in errors[:5])


@pytest.mark.parametrize("name", EXAMPLE_FILES)
def test_example_round_trips_through_the_msgspec_struct(name: str) -> None:
    struct, _ = kind_of(name)
    raw = (golden.EXAMPLES / name).read_bytes()
    decoded = msgspec.json.decode(raw, type=struct)
    assert json.loads(msgspec.json.encode(decoded)) == json.loads(raw)


def test_answer_examples_are_actions_the_arena_accepts() -> None:
    for name in EXAMPLE_FILES:
        if name.endswith(".response.json") and name.startswith("act."):
            action = decode_action((golden.EXAMPLES / name).read_bytes())
            assert action.to_dict() == load(name)


def test_the_yaml_names_every_example_and_they_exist() -> None:
    def external(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for key, value in node.items():
                if key == "externalValue":
                    yield value
                else:
                    yield from external(value)
        elif isinstance(node, list):
            for item in node:
                yield from external(item)

    named = list(external(SPEC))
    for path in named:
        assert (SPEC_PATH.parent / path).is_file(), path
    assert sorted(named) == sorted(f"examples/{n}" for n in EXAMPLE_FILES), "every example named"


# --- the yaml and the structs ---------------------------------------------------------------------

#: msgspec component name -> JSON pointer of the same object in the yaml.
COMPONENTS = {
    "ActRequest": "/components/schemas/ActRequest",
    "StartRequest": "/components/schemas/StartRequest",
    "EndRequest": "/components/schemas/EndRequest",
    "BotInfo": "/components/schemas/BotInfo",
    "WireAction": "/components/schemas/Action",
    "WireEvent": "/components/schemas/HistoryEvent",
    "Pair": "/components/schemas/Pair",
    "Strikes": "/components/schemas/Strikes",
    "PendingMisknock": "/components/schemas/PendingMisknock",
    "PreviousDeal": "/components/schemas/PreviousDeal",
    "Layoff": "/components/schemas/PreviousDeal/properties/layoffs/items",
    "MisknockInfo": "/components/schemas/PreviousDeal/properties/misknocks/items",
}


def _pointer(pointer: str) -> Any:
    node: Any = SPEC
    for part in pointer.strip("/").split("/"):
        node = node[part]
    return node


def _enum(schema: Any, root: Any) -> set[Any] | None:
    """The enum a (yaml or msgspec) property allows, following $ref and oneOf/anyOf."""
    if not isinstance(schema, dict):
        return None
    if "$ref" in schema:
        ref = schema["$ref"].removeprefix("#")
        node = root
        for part in ref.strip("/").split("/"):
            node = node[part]
        return _enum(node, root)
    if "enum" in schema:
        return set(schema["enum"])
    if "const" in schema:
        return {schema["const"]}
    for key in ("oneOf", "anyOf"):
        if key in schema:
            found = [e for e in (_enum(s, root) for s in schema[key]) if e is not None]
            return set().union(*found) if found else None
    return None


@pytest.fixture(scope="module")
def msgspec_components() -> dict[str, Any]:
    _, components = msgspec.json.schema_components(
        [ActRequest, StartRequest, EndRequest, BotInfo, WireAction],
        ref_template="#/components/schemas/{name}",
    )
    return components


def test_every_struct_has_a_yaml_schema(msgspec_components: dict[str, Any]) -> None:
    assert set(msgspec_components) == set(COMPONENTS)


@pytest.mark.parametrize("name", sorted(COMPONENTS))
def test_yaml_schema_and_struct_agree(name: str, msgspec_components: dict[str, Any]) -> None:
    ours = msgspec_components[name]
    theirs = _pointer(COMPONENTS[name])
    assert set(theirs["properties"]) == set(ours["properties"]), "property names"
    assert set(theirs.get("required", [])) == set(ours.get("required", [])), "required"
    root = {"components": {"schemas": msgspec_components}}
    for prop, schema in ours["properties"].items():
        enum = _enum(schema, root)
        if enum is not None:
            assert _enum(theirs["properties"][prop], SPEC) == enum, f"{prop}: allowed values"


# --- answers: the yaml and the decoder accept and refuse the same --------------------------------

GOOD_ANSWERS = [
    {"action": "draw_stock"},
    {"action": "discard", "card": "Th"},
    {"action": "discard", "card": "10h"},
    {"action": "discard", "card": "7H"},
    {"action": "knock", "card": "7h", "melds": [["7c", "7d", "7s"]]},
    {"action": "big_gin", "melds": [["As", "2s", "3s"]]},
    {"action": "pass", "why": "extra fields are ignored"},
]
BAD_ANSWERS = [
    ({"move": "draw_stock"}, "schema"),
    ({"action": "fly"}, "schema"),
    ({"action": "discard", "card": 7}, "schema"),
    ({"action": "discard", "card": "Zz"}, "schema"),
    ({"action": "knock", "card": "7h", "melds": "7c 7d 7s"}, "schema"),
    ([], "schema"),
]


@pytest.mark.parametrize("answer", GOOD_ANSWERS, ids=json.dumps)
def test_good_answers_pass_the_yaml_and_the_decoder(answer: Any) -> None:
    validator("Action").validate(answer)
    assert isinstance(decode_action(json.dumps(answer).encode()), Action)


@pytest.mark.parametrize(("answer", "kind"), BAD_ANSWERS, ids=json.dumps)
def test_bad_answers_fail_the_yaml_and_the_decoder(answer: Any, kind: str) -> None:
    assert not validator("Action").is_valid(answer)
    with pytest.raises(WireError) as caught:
        decode_action(json.dumps(answer).encode())
    assert caught.value.kind == kind


def test_malformed_json_is_bad_json() -> None:
    with pytest.raises(WireError) as caught:
        decode_action(b'{"action": "pass"')
    assert caught.value.kind == "bad_json"


# --- what the observation never carries -----------------------------------------------------------

SEED = "seed-that-must-stay-secret-7731"
CARDS_IN_JSON = re.compile(r'"([A2-9TJQK][cdhs])"')


def _cards_in(value: Any) -> set[str]:
    """Every card named anywhere in a JSON value."""
    return set(CARDS_IN_JSON.findall(json.dumps(value)))


def _choose(
    rng: random.Random, legal: tuple[Action, ...], hand: tuple[int, ...], taken: int | None
) -> Action:
    """Random play that sometimes knocks on purpose (misknocks expose hands)."""
    if legal and legal[0].kind in (ActionKind.DISCARD, ActionKind.KNOCK) and rng.random() < 0.15:
        return knock(rng.choice([c for c in hand if c != taken]))
    return rng.choice(legal)


@pytest.mark.parametrize("policy", list(MisknockPolicy))
def test_the_observation_never_reveals_the_seed_the_stock_or_concealed_cards(
    policy: MisknockPolicy,
) -> None:
    rules = RuleSet(misknock=policy, last_discard_chance=True)
    rng = random.Random(f"leak:{policy}")
    previous: DealResult | None = None
    requests = exposed = 0
    for deal in range(6):
        deck = deal_deck(SEED, 0, deal)
        deck_text = "".join(map(str, deck))
        state = new_deal(rules, deal % 2, deck=deck)
        told = [False, False]
        while not state.is_over:
            seat, other = state.to_act, 1 - state.to_act
            obs = observe(state, seat)
            turn = Turn(
                obs,
                "leak",
                0,
                deal,
                f"r{requests}",
                rules,
                (0, 0),
                (0, 0),
                1000,
                previous_deal=None if told[seat] else previous,
            )
            told[seat] = True
            body = msgspec.json.encode(act_request(turn, rules.to_dict()))
            requests += 1
            text = body.decode()
            assert SEED not in text and deck_text not in text
            data = json.loads(body)
            del data["rules"], data["previous_deal"]  # the previous deal is over: both hands shown
            seen = _cards_in(data)
            stock = {str(c) for c in state.deck[state.stock_pos :]}
            assert not seen & stock, "a stock card leaked"
            concealed = {str(c) for c in mask_to_cards(state.hands[other] & ~state.known[other])}
            shown = state.exposed[other] or (
                state.pending is not None and state.pending.seat == other
            )
            if shown:
                exposed += 1
                assert set(data["opponent_hand"]) == {
                    str(c) for c in mask_to_cards(state.hands[other])
                }
            else:
                assert data["opponent_hand"] is None
                assert not seen & concealed, "an opponent's concealed card leaked"
            for event in data["history"]:
                if event["player"] == "opponent" and event["event"] == "draw_stock":
                    assert "card" not in event
            action = _choose(rng, obs.legal_actions, obs.hand, obs.taken)
            state = play(state, seat, action)
        previous = state.result
    assert requests > 150
    if policy is not MisknockPolicy.PENALTY_POINTS:
        assert exposed, "misknocks exposed a hand at least once"


def test_phases_of_the_wire_and_the_engine_agree() -> None:
    wire_phases = set(_pointer("/components/schemas/Phase")["enum"])
    assert wire_phases == {p.value for p in Phase} - {"done"}
