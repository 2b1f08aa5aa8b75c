"""Actions and their wire form: the validating parser raises ``InvalidActionError`` for anything
malformed (a bot's fault), never a bare ``KeyError``/``TypeError``."""

from __future__ import annotations

from typing import Any

import pytest
from rules_support import action, mask

from arena.rules import Action, ActionKind, InvalidActionError
from arena.rules.actions import ActionError, IllegalActionError

ROUND_TRIPS: dict[str, dict[str, Any]] = {
    "pass": {"action": "pass"},
    "take discard": {"action": "take_discard"},
    "draw stock": {"action": "draw_stock"},
    "discard": {"action": "discard", "card": "7h"},
    "knock": {"action": "knock", "card": "Qc"},
    "knock with melds": {
        "action": "knock",
        "card": "Qc",
        "melds": [["7c", "7d", "7s"], ["As", "2s", "3s"]],
    },
    "big gin": {"action": "big_gin"},
    "big gin with melds": {"action": "big_gin", "melds": [["As", "2s", "3s", "4s"]]},
    "accept knock": {"action": "accept_knock"},
    "open hand": {"action": "open_hand"},
}


@pytest.mark.parametrize("wire", ROUND_TRIPS.values(), ids=ROUND_TRIPS.keys())
def test_wire_form_round_trips(wire: dict[str, Any]) -> None:
    parsed = Action.from_dict(wire)
    assert parsed.to_dict() == wire
    assert Action.from_dict(parsed.to_dict()) == parsed


def test_card_text_is_normalised() -> None:
    assert Action.from_dict({"action": "discard", "card": "10H"}).to_dict() == {
        "action": "discard",
        "card": "Th",
    }


def test_null_optional_fields_are_accepted() -> None:
    assert Action.from_dict({"action": "pass", "card": None, "melds": None}) == action("pass")
    assert Action.from_dict({"action": "knock", "card": "Qc", "melds": None}) == action("knock Qc")


def test_empty_melds_in_an_action_or_a_record_mean_not_declared() -> None:
    """``"melds": []`` is *not declared* in the engine's own form too (records, in-process
    players), as on the wire: a record must not replay a knock as every card deadwood."""
    assert Action.from_dict({"action": "knock", "card": "Qc", "melds": []}) == action("knock Qc")
    assert Action.from_dict({"action": "big_gin", "melds": []}) == action("big_gin")
    assert Action.from_dict({"action": "knock", "card": "Qc", "melds": []}).melds is None
    assert "melds" not in Action.from_dict({"action": "knock", "card": "Qc", "melds": []}).to_dict()


def test_melds_are_masks() -> None:
    parsed = Action.from_dict({"action": "knock", "card": "Qc", "melds": [["7c", "7d", "7s"]]})
    assert parsed.kind is ActionKind.KNOCK
    assert parsed.melds == (mask("7c 7d 7s"),)


MALFORMED: dict[str, object] = {
    "not an object": ["pass"],
    "a string": "pass",
    "no action": {"card": "7h"},
    "unknown action": {"action": "fold"},
    "action not a string": {"action": ["pass"]},
    "discard without card": {"action": "discard"},
    "discard with null card": {"action": "discard", "card": None},
    "knock without card": {"action": "knock"},
    "bad card": {"action": "discard", "card": "Zz"},
    "card as a number": {"action": "discard", "card": 7},
    "card on a pass": {"action": "pass", "card": "7h"},
    "melds on a discard": {"action": "discard", "card": "7h", "melds": [["7c", "7d", "7s"]]},
    "melds not a list": {"action": "knock", "card": "Qc", "melds": "7c 7d 7s"},
    "meld not a list": {"action": "knock", "card": "Qc", "melds": ["7c 7d 7s"]},
    "bad card in a meld": {"action": "knock", "card": "Qc", "melds": [["7c", "7d", "7x"]]},
    "duplicate card in a meld": {"action": "knock", "card": "Qc", "melds": [["7c", "7c", "7d"]]},
    "extra field": {"action": "pass", "comment": "gg"},
}


@pytest.mark.parametrize("wire", MALFORMED.values(), ids=MALFORMED.keys())
def test_malformed_actions_raise_invalid_action_error(wire: object) -> None:
    with pytest.raises(InvalidActionError):
        Action.from_dict(wire)  # type: ignore[arg-type]


def test_action_errors_are_value_errors() -> None:
    assert issubclass(InvalidActionError, ActionError)
    assert issubclass(IllegalActionError, ActionError)
    assert issubclass(ActionError, ValueError)


def test_action_text() -> None:
    assert str(action("discard 7h")) == "discard 7h"
    assert str(action("knock Qc [7c 7d 7s]")) == "knock Qc [7c 7d 7s]"
