"""The golden examples agree with themselves: what a bot author reads in ``api_spec/examples/``.

Every answer example is legal for the request it answers (``golden.ANSWERS``), no two examples
share a ``request_id``, every request is a position its own ``history`` reaches, and the
``/end`` example's timeout took the deadline. (That the files are what ``golden.py`` makes is
``test_wire.py::test_examples_are_the_ones_real_states_make``.)
"""

from __future__ import annotations

import json
from typing import Any

import golden
import msgspec
import pytest
from rebuild import inconsistencies

from arena.cards import parse_card
from arena.protocol.wire import ActRequest, WireAction, decode_action
from arena.rules.melds import InvalidMeldError, check_declared_melds
from arena.rules.showdown import knock_deadwood

REQUESTS = sorted(p.name for p in golden.EXAMPLES.glob("act.*.request.json"))
ANSWERS = sorted(p.name for p in golden.EXAMPLES.glob("act.*.response.json"))


def request(name: str) -> ActRequest:
    return msgspec.json.decode((golden.EXAMPLES / name).read_bytes(), type=ActRequest)


def load(name: str) -> Any:
    return json.loads((golden.EXAMPLES / name).read_text(encoding="utf-8"))


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


def illegal_because(req: ActRequest, answer: WireAction) -> str | None:
    """Why ``answer`` is not a legal answer to ``req`` (None: it is), from the request alone."""
    listed = {(a.action, a.card) for a in req.legal_actions}
    if (answer.action, answer.card) not in listed:
        return f"{answer.action} {answer.card or ''} is not among the legal actions"
    if not answer.melds:
        return None
    kept = [c for c in req.hand if c != answer.card]
    declared = [_mask(m) for m in answer.melds]
    try:
        check_declared_melds(_mask(kept), declared)
    except InvalidMeldError as exc:
        return f"the declared melds are not melds of the hand: {exc}"
    deadwood = knock_deadwood(_mask(kept), tuple(declared))
    if deadwood > req.knock_limit:
        return f"the declared melds leave {deadwood} deadwood, over the limit {req.knock_limit}"
    return None


def test_every_answer_example_says_which_request_it_answers() -> None:
    assert sorted(golden.ANSWERS) == ANSWERS
    assert set(golden.ANSWERS.values()) <= set(REQUESTS)


@pytest.mark.parametrize("answer", ANSWERS)
def test_answer_example_is_legal_for_its_request(answer: str) -> None:
    req = request(golden.ANSWERS[answer])
    wire = msgspec.json.decode((golden.EXAMPLES / answer).read_bytes(), type=WireAction)
    decode_action((golden.EXAMPLES / answer).read_bytes())  # the arena accepts it
    assert illegal_because(req, wire) is None, f"{answer} for {golden.ANSWERS[answer]}"


def test_the_discard_answer_discards_a_card_of_the_discard_request() -> None:
    req = request("act.discard.request.json")
    card = load("act.discard.response.json")["card"]
    assert card in req.hand and card != req.taken_card


def test_request_ids_are_unique_across_the_examples() -> None:
    ids = [load(n)["request_id"] for n in REQUESTS]
    assert len(set(ids)) == len(ids), ids
    # A request id is unique within its match: examples of different matches say so by id.
    keys = [(load(n)["match_id"], load(n)["request_id"]) for n in REQUESTS]
    assert len(set(keys)) == len(keys)


@pytest.mark.parametrize("name", REQUESTS)
def test_request_example_is_a_position_its_history_reaches(name: str) -> None:
    assert inconsistencies(request(name)) == []


def test_the_end_example_records_a_timeout_that_took_the_deadline() -> None:
    end = load("end.request.json")
    record = end["record"]
    deadline = record["rules"]["deadline_ms"]
    timeouts = [f for f in record["faults"] if f["kind"] == "timeout"]
    assert timeouts, "the example shows a timeout"
    for fault in timeouts:
        assert fault["latency_ms"] >= deadline, fault
        assert f"{deadline} ms" in fault["detail"]
    seat = end["you"]
    assert record["latency_ms"][seat]["max"] >= deadline
    assert end["match_id"] == record["match_id"]
