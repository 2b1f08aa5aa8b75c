"""Any answer whatever becomes an action or a fault, never an exception (issue 10, 1.1 and 2.1).

Bodies are arbitrary bytes, arbitrary JSON values (nested up to thousands of levels, sizes up to
the 64 KiB cap) and action-shaped objects with arbitrary fields. They go through the answer
decoders (``decode_action``, ``decode_info``) and through the real HTTP player against a real
loopback bot that answers ``POST /act`` (and ``GET /``) with exactly those bytes; the player
also keeps the bytes exactly as received (2.5).
"""

from __future__ import annotations

import base64
import json
import random
import socket
from collections.abc import Iterator

import pytest
from hostile import RawBot, running
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from loopback import HttpMessage, LoopbackServer, http_response

from arena.bots.probe import probe_bot
from arena.playing.match import MatchRunner
from arena.playing.players import Fault, FaultKind, HeuristicPlayer, MatchContext, Turn
from arena.playing.stored import ActionEntry, parse_record, raw_answer_from_json, raw_answer_to_json
from arena.protocol.http_player import HttpPlayer
from arena.protocol.transport import MAX_BODY
from arena.protocol.wire import PROTOCOL_VERSION, WireError, decode_action, decode_info
from arena.reading.seat_replay import seat_replay
from arena.rules.actions import Action, ActionKind
from arena.rules.hand import new_deal
from arena.rules.observation import observe
from arena.rules.ruleset import RuleSet

NESTED_1000 = b'{"action":"pass","x":' + b"[" * 1000 + b"]" * 1000 + b"}"
READ_FAULTS = {"bad_json", "schema"}

# --- strategies -----------------------------------------------------------------------------------

scalars = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=30,
)


@st.composite
def deep_json(draw: st.DrawFn) -> bytes:
    """JSON nested ``depth`` levels (0 to 12,000) of arrays and objects, inside an action or not."""
    depth = draw(st.integers(0, 12_000))
    kinds = draw(st.lists(st.sampled_from(["[", "{"]), min_size=1, max_size=8))
    opens, closes = [], []
    for i in range(depth):
        kind = kinds[i % len(kinds)]
        opens.append(b"[" if kind == "[" else b'{"k":')
        closes.append(b"]" if kind == "[" else b"}")
    core = b"".join(opens) + json.dumps(draw(scalars)).encode() + b"".join(reversed(closes))
    where = draw(st.sampled_from(["bare", "extra_field", "melds", "card"]))
    if where == "bare":
        body = core
    elif where == "extra_field":
        body = b'{"action":"pass","x":' + core + b"}"
    elif where == "melds":
        body = b'{"action":"knock","card":"As","melds":' + core + b"}"
    else:
        body = b'{"action":"discard","card":' + core + b"}"
    return body[:MAX_BODY] if draw(st.booleans()) else body[: draw(st.integers(0, MAX_BODY))]


@st.composite
def action_shaped(draw: st.DrawFn) -> bytes:
    """An object with an action name (real or not) and arbitrary card, melds and extra fields."""
    obj: dict[str, object] = {
        "action": draw(st.sampled_from([k.value for k in ActionKind]) | json_values)
    }
    for key in ("card", "melds", "extra"):
        if draw(st.booleans()):
            obj[key] = draw(
                json_values
                | st.lists(st.lists(st.text(max_size=4), max_size=5), max_size=5)
                | st.sampled_from(["As", "10h", "tD", "1s", "", "Ⅻh"])
            )
    return json.dumps(obj).encode()  # NaN and Infinity included: not JSON, so bad_json


big_bytes = st.builds(
    lambda unit, n: (unit * n)[:MAX_BODY], st.binary(min_size=1, max_size=64), st.integers(1, 2048)
)
bodies = (
    st.binary(max_size=512)
    | big_bytes
    | json_values.map(lambda v: json.dumps(v).encode())
    | deep_json()
    | action_shaped()
    | st.just(NESTED_1000)
)


# --- the decoders ---------------------------------------------------------------------------------


def test_a_deeply_nested_answer_is_bad_json_not_a_recursion_error() -> None:
    with pytest.raises(WireError) as caught:
        decode_action(NESTED_1000)
    assert caught.value.kind == "bad_json" and "nested too deeply" in str(caught.value)
    with pytest.raises(WireError) as info:
        decode_info(b'{"protocol":"gin-arena/1","name":"x","v":' + b"[" * 5000 + b"]" * 5000 + b"}")
    assert info.value.kind == "bad_json"


@settings(
    max_examples=400, suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large]
)
@given(bodies)
def test_any_answer_decodes_to_an_action_or_a_wire_error(body: bytes) -> None:
    for decode in (decode_action, decode_info):
        try:
            value = decode(body)
        except WireError as exc:
            assert exc.kind in READ_FAULTS
        else:
            assert value is not None


# --- empty melds (2.1) ----------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("answer", "declared"),
    [
        ({"action": "knock", "card": "Ks"}, None),
        ({"action": "knock", "card": "Ks", "melds": None}, None),
        ({"action": "knock", "card": "Ks", "melds": []}, None),
        ({"action": "big_gin", "melds": []}, None),
        ({"action": "discard", "card": "Ks", "melds": []}, None),
        ({"action": "knock", "card": "Ks", "melds": [["As", "2s", "3s"]]}, 1),
    ],
    ids=["absent", "null", "empty-list", "big-gin-empty-list", "discard-empty-list", "one-meld"],
)
def test_empty_melds_list_means_not_declared(
    answer: dict[str, object], declared: int | None
) -> None:
    action = decode_action(json.dumps(answer).encode())
    assert (None if action.melds is None else len(action.melds)) == declared


def test_a_knock_with_empty_melds_is_scored_with_the_best_arrangement_not_a_misknock() -> None:
    """The issue's case: ``"melds": []`` on a knock within the limit is a knock, not deadwood 57."""

    class EmptyMeldsKnocker(HeuristicPlayer):
        def act(self, turn: Turn) -> Action | Fault:
            action = super().act(turn)
            if isinstance(action, Action) and action.kind is ActionKind.KNOCK:
                wire = {"action": "knock", "card": str(action.card), "melds": []}
                return decode_action(json.dumps(wire).encode())
            return action

    record = MatchRunner(
        [EmptyMeldsKnocker(name="k"), HeuristicPlayer(name="h")], RuleSet(target=100, best_of=1), 4
    ).run()
    hands = [h for _, h in record.all_hands()]
    knocks = [h for h in hands if h.result.knocker == 0]
    assert knocks, "the seed gives seat a a knock"
    assert not any(m.seat == 0 for h in hands for m in h.result.misknocks)


# --- the HTTP player against a loopback bot answering those bytes --------------------------------


class EchoBot(LoopbackServer):
    """A loopback HTTP/1.1 bot that answers ``POST /act`` (or ``GET /``) with ``self.body``."""

    def __init__(self) -> None:
        super().__init__("echo")
        self.body = b'{"action":"pass"}'
        self.info: bytes | None = None

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        method, path = request.target
        if method == "GET":
            body = self.info or json.dumps({"protocol": PROTOCOL_VERSION, "name": "echo"}).encode()
        elif (method, path) == ("POST", "/act"):
            body = self.body
        else:
            body = b"{}"
        conn.sendall(http_response(body))
        return True


@pytest.fixture(scope="module")
def echo() -> Iterator[EchoBot]:
    bot = EchoBot().start()
    yield bot
    bot.stop()


RULES = RuleSet(deadline_ms=5000)


def started(bot: EchoBot) -> HttpPlayer:
    player = HttpPlayer(bot.url, allow_loopback=True)
    assert player.start(MatchContext("echo", 0, RULES, "opponent", 0)) is None
    return player


def a_turn() -> Turn:
    state = new_deal(RULES, 0, rng=random.Random(1))
    return Turn(observe(state, state.to_act), "echo", 0, 0, "echo-r1", RULES, (0, 0), (0, 0), 5000)


@pytest.fixture(scope="module")
def player(echo: EchoBot) -> Iterator[HttpPlayer]:
    p = started(echo)
    yield p
    p.end({})


@settings(
    max_examples=150,
    suppress_health_check=[
        HealthCheck.too_slow,
        HealthCheck.data_too_large,
        HealthCheck.function_scoped_fixture,
    ],
)
@given(body=bodies)
def test_the_http_player_turns_any_answer_into_an_action_or_a_fault(
    echo: EchoBot, player: HttpPlayer, body: bytes
) -> None:
    echo.body = body
    reply = player.act(a_turn())
    assert isinstance(reply, Action) or (
        isinstance(reply, Fault) and reply.kind.value in READ_FAULTS
    ), reply
    exchange = player.take_exchange()
    assert exchange is not None and exchange.raw == body  # kept exactly as received


def test_the_nested_answer_through_the_player_is_a_bad_json_fault(
    echo: EchoBot, player: HttpPlayer
) -> None:
    echo.body = NESTED_1000
    reply = player.act(a_turn())
    assert isinstance(reply, Fault) and reply.kind is FaultKind.BAD_JSON


@pytest.mark.parametrize("body", [NESTED_1000, b"\xff\xfe", b"[" * 60_000])
def test_a_bot_info_nobody_can_read_refuses_the_start_with_a_fault(
    echo: EchoBot, body: bytes
) -> None:
    echo.info = body
    try:
        player = HttpPlayer(echo.url, allow_loopback=True)
        fault = player.start(MatchContext("echo", 0, RULES, "opponent", 0))
    finally:
        echo.info = None
    assert isinstance(fault, Fault) and fault.kind is FaultKind.UNREACHABLE
    assert "GET / did not answer with bot info" in fault.detail


@pytest.mark.parametrize("where", ["act", "info"])
def test_the_registration_probe_reports_a_nested_answer_as_a_failed_step(
    echo: EchoBot, where: str
) -> None:
    """Registration answered 500 on this body: now the probe's report names the failed step."""
    if where == "act":
        echo.body = NESTED_1000
    else:
        echo.info = NESTED_1000
    try:
        report = probe_bot(echo.url, allow_loopback=True)
    finally:
        echo.body, echo.info = b'{"action":"pass"}', None
    (failure,) = report.failures()
    assert "nested too deeply" in failure.detail


# --- raw answers in the record (2.5) and the latency a timeout records (2.11) ---------------------


def test_an_answer_that_is_not_utf8_is_stored_as_base64_and_replayed_exactly(
    echo: EchoBot,
) -> None:
    body = b'{"action": "pass", "x": "\xff\xfe"}\x00'
    echo.body = body
    try:
        record = MatchRunner(
            [HttpPlayer(echo.url, allow_loopback=True), HeuristicPlayer(name="h")],
            RuleSet(target=50, best_of=1),
            2,
        ).run()
    finally:
        echo.body = b'{"action":"pass"}'
    d = record.to_dict()
    assert d["forfeit"]["seat"] == "a" and {f["kind"] for f in d["faults"]} == {"bad_json"}
    entries = [e for h in d["unfinished_game"]["hands"] for e in h["actions"] if e[0] == 0]
    entries += [e for e in d["interrupted_deal"]["actions"] if e[0] == 0]
    assert entries and all(e[3] == "bad_json" for e in entries)
    assert all(raw_answer_from_json(e[4]) == body for e in entries)
    assert all(ActionEntry.from_list(e).raw == body for e in entries)
    steps = seat_replay(parse_record(d), "a")["steps"]
    assert [s["answer_raw_encoding"] for s in steps] == ["base64"] * len(steps)
    assert all(base64.b64decode(s["answer_raw"]) == body for s in steps)
    assert all(s["answer"] is None and s["fault"]["kind"] == "bad_json" for s in steps)


@pytest.mark.parametrize(
    "raw", [b"", b"plain", "ünï €".encode(), b"\x00", b"\xff", b"\xed\xa0\x80", bytes(range(256))]
)
def test_raw_answers_round_trip_through_their_json_form(raw: bytes) -> None:
    stored = json.loads(json.dumps(raw_answer_to_json(raw)))
    assert raw_answer_from_json(stored) == raw
    if isinstance(stored, str):
        assert stored.encode() == raw and "\x00" not in stored


def test_a_timeout_records_exactly_the_deadline_never_more() -> None:
    """The record said 1,099.7 ms against a 1,000 ms deadline; a timeout now records 1,000."""
    rules = RuleSet(deadline_ms=100, target=50, best_of=1)
    slow = RawBot("sleep", on={1, 2}, sleep_s=0.5)
    with running(slow):
        record = MatchRunner(
            [HttpPlayer(slow.url, allow_loopback=True), HeuristicPlayer(name="h")], rules, 3
        ).run()
    timeouts = [f for f in record.faults if f.kind == "timeout"]
    assert len(timeouts) == 2
    assert all(f.latency_ms == 100.0 for f in timeouts)
    assert max(record.latencies[0]) <= 100.0
    d = record.to_dict()
    assert d["latency_ms"]["a"]["max"] <= 100.0
