"""The match record's typed form (``arena.playing.stored``): what a match wrote reads back as
the same JSON, anything else is refused in one line naming the place, fault and forfeit kinds
are enums, and the schema version is checked."""

from __future__ import annotations

import copy
import json
from collections.abc import Callable
from typing import Any

import pytest

from arena.playing.match import MatchRunner
from arena.playing.players import (
    Exchange,
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    RandomPlayer,
    Turn,
)
from arena.playing.records import MatchRecord
from arena.playing.stored import (
    SCHEMA_VERSION,
    ActionEntry,
    RecordFormatError,
    StoredMatch,
    parse_record,
)
from arena.rules.actions import Action
from arena.rules.ruleset import RuleSet
from arena.states import ForfeitKind


class Scripted:
    """A heuristic player that can fail to start, fault every ``every`` requests, and answer
    as a remote bot does (its raw answer bytes, some not UTF-8)."""

    def __init__(self, name: str, *, every: int = 0, start: FaultKind | None = None) -> None:
        self.inner = HeuristicPlayer(name=name)
        self.name, self.every, self.start_fault, self.calls = name, every, start, 0
        self.exchange: Exchange | None = None

    def start(self, context: MatchContext) -> Fault | None:
        return None if self.start_fault is None else Fault(self.start_fault, "no answer")

    def act(self, turn: Turn) -> Action | Fault:
        self.calls += 1
        raw = b"\xff\x00 not text" if self.calls % 3 else '{"action":"pass","é":1}'.encode()
        self.exchange = Exchange(raw, 1.0 + self.calls / 7)
        if self.every and self.calls % self.every == 0:
            return Fault(FaultKind.BAD_JSON, "the answer is not valid JSON: \u00e9\x01")
        return self.inner.act(turn)

    def take_exchange(self) -> Exchange | None:
        exchange, self.exchange = self.exchange, None
        return exchange

    def end(self, summary: dict[str, object]) -> None:
        return None


def _play(rules: RuleSet, seed: int, **scripted: Any) -> MatchRecord:
    ticks = iter(range(10**6))
    players = [Scripted("remote", **scripted), RandomPlayer(seed=seed, name="random")]
    runner = MatchRunner(players, rules, seed, f"m{seed}", clock=lambda: next(ticks) * 0.000123)
    return runner.run()


MATCHES: dict[str, Callable[[], MatchRecord]] = {
    "plain": lambda: _play(RuleSet(target=100), 1),
    "faults and a forfeit": lambda: _play(RuleSet(target=100, best_of=3), 3, every=15),
    "hollywood": lambda: _play(RuleSet(target=60, best_of=3, match_scoring="hollywood"), 3),
    "hollywood forfeit": lambda: _play(
        RuleSet(target=60, best_of=3, match_scoring="hollywood"), 4, every=7
    ),
    "unreachable at the start": lambda: _play(RuleSet(), 5, start=FaultKind.UNREACHABLE),
}


@pytest.mark.parametrize("make", MATCHES.values(), ids=MATCHES.keys())
def test_a_stored_record_decodes_and_encodes_back_to_the_same_json(
    make: Callable[[], MatchRecord],
) -> None:
    text = json.dumps(make().to_dict(), indent=2)
    assert json.dumps(parse_record(json.loads(text)).to_dict(), indent=2) == text


def test_fault_and_forfeit_kinds_are_enums_in_the_record() -> None:
    record = _play(RuleSet(target=100, best_of=3), 3, every=15)
    assert record.faults and all(type(f.kind) is FaultKind for f in record.faults)
    assert record.forfeit is not None and record.forfeit.kind is ForfeitKind.MAX_STRIKES
    stored = parse_record(json.loads(json.dumps(record.to_dict())))
    assert all(type(f.kind) is FaultKind for f in stored.faults)
    faulted = [e for _, h in stored.all_hands() for e in h.actions if e.fault is not None]
    assert faulted and all(type(e.fault) is FaultKind for e in faulted)


@pytest.mark.parametrize(
    ("start", "kind", "reason"),
    [
        (FaultKind.UNREACHABLE, ForfeitKind.UNREACHABLE_AT_START, "unreachable at the start"),
        (
            FaultKind.SIGNATURE_REFUSED,
            ForfeitKind.SIGNATURE_REFUSED_AT_START,
            "refused the arena's signature at the start",
        ),
    ],
    ids=["unreachable", "signature_refused"],
)
def test_a_forfeit_at_the_start_carries_its_kind_beside_the_same_reason(
    start: FaultKind, kind: ForfeitKind, reason: str
) -> None:
    record = _play(RuleSet(), 5, start=start)
    assert record.forfeit is not None
    assert (record.forfeit.seat, record.forfeit.kind) == (0, kind)
    assert record.forfeit.reason.startswith(f"{reason} ({start.value}: ")
    assert record.to_dict()["forfeit"] == {"seat": "a", "reason": record.forfeit.reason}


def _edit(path: str, value: Any) -> Callable[[dict[str, Any]], None]:
    """Set the field at ``path`` (keys and list indices, dot-separated) to ``value``."""

    def change(data: dict[str, Any]) -> None:
        *parents, last = [int(p) if p.isdigit() else p for p in path.split(".")]
        node: Any = data
        for key in parents:
            node = node[key]
        node[last] = value

    return change


def _drop(key: str) -> Callable[[dict[str, Any]], None]:
    return lambda data: data.pop(key)


BROKEN: dict[str, tuple[Callable[[dict[str, Any]], None], str]] = {
    "points as text": (_edit("games.0.hands.0.points", "ten"), "$.games[0].hands[0].points"),
    "unknown outcome": (_edit("games.0.hands.0.outcome", "draw"), "$.games[0].hands[0].outcome"),
    "seat c": (_edit("games.0.winner", "c"), "$.games[0].winner"),
    "unknown fault kind": (_edit("faults.0.kind", "sulk"), "$.faults[0].kind"),
    "an action that does not parse": (
        _edit("games.0.hands.0.actions.0.1", {"action": "fly"}),
        "$.games[0].hands[0].actions[0]",
    ),
    "an action entry too short": (
        _edit("games.0.hands.0.actions.0", [0]),
        "$.games[0].hands[0].actions[0]",
    ),
    "a raw answer that is not base64": (
        _edit("unfinished_game.hands.0.actions.0.4", {"base64": "***"}),
        "$.unfinished_game.hands[0].actions[0]",
    ),
    "no latency summary": (_drop("latency_ms"), "latency_ms"),
    "rules that do not load": (_edit("rules.knock_limit", -3), "knock_limit"),
    "unknown rule": (_edit("rules.wild_cards", True), "wild_cards"),
}


@pytest.mark.parametrize(("change", "named"), BROKEN.values(), ids=BROKEN.keys())
def test_a_malformed_record_is_refused_with_one_line_naming_the_place(
    change: Callable[[dict[str, Any]], None], named: str
) -> None:
    data = copy.deepcopy(_BROKEN_BASE)
    change(data)
    with pytest.raises(RecordFormatError) as refused:
        parse_record(data)
    message = str(refused.value)
    assert "\n" not in message and message.startswith("not a match record: ")
    assert named in message


def test_a_record_from_an_older_schema_version_is_refused_with_one_line() -> None:
    data = copy.deepcopy(_BROKEN_BASE)
    assert isinstance(parse_record(data, schema_version=SCHEMA_VERSION), StoredMatch)
    with pytest.raises(RecordFormatError) as refused:
        parse_record(data, schema_version=SCHEMA_VERSION - 1)
    message = str(refused.value)
    assert "\n" not in message
    assert f"schema version {SCHEMA_VERSION - 1} is not one this arena reads" in message


#: A record with faults, raw answers and an unfinished game, as JSON (what the database holds).
_BROKEN_BASE: dict[str, Any] = json.loads(
    json.dumps(_play(RuleSet(target=100, best_of=3), 3, every=15).to_dict())
)


@pytest.mark.parametrize(
    "entry",
    [
        [0, {"action": "knock", "card": "7h", "melds": [["7c", "7d", "7h"]]}, 1.5],
        [1, {"action": "big_gin", "melds": [["As", "2s", "3s"]]}, 2],
        [0, {"action": "discard", "card": "Td"}, 0.25],
    ],
)
def test_an_action_entry_with_or_without_declared_melds_reads_back_as_written(
    entry: list[Any],
) -> None:
    assert ActionEntry.from_list(entry).to_list() == entry


@pytest.mark.parametrize(
    "entry",
    [
        [0, {"action": "discard", "card": [1]}, 1.0],
        [0, {"action": "knock", "card": "7h", "melds": "7h"}, 1.0],
        [0, "draw_stock", 1.0],
        [2, {"action": "draw_stock"}, 1.0],
        [0, {"action": "draw_stock"}, "1"],
    ],
)
def test_a_malformed_action_entry_is_a_value_error_never_a_type_error(entry: list[Any]) -> None:
    with pytest.raises(ValueError):
        ActionEntry.from_list(entry)
