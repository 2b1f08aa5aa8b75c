"""Real hostile bots on loopback against the real HTTP player and match runner (RULES.md faults).

Each fault kind is a strike answered with the safe fallback (pass; draw from stock; discard the
drawn card, or else the highest-value deadwood card; never a knock); ``max_strikes`` of them
forfeit the match to the opponent; a bot unreachable at the start, or speaking another protocol
version, forfeits at once. Misknocks are rules events, not faults. A fault never reaches the
other bot. The deadline bounds the whole exchange, keep-alive holds one connection per match,
and many matches run at once in one process.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from hostile import (
    RawBot,
    RecordingBot,
    card_not_held,
    closed_port_url,
    discards_taken_card,
    faulted_turns,
    house,
    misknocker,
    play,
    running,
    sdk_bot,
    start_quickly,
    wrong_phase,
)

from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.playing.match import NeitherStartedError, play_match
from arena.playing.records import MatchRecord
from arena.protocol.http_player import HttpPlayer
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.actions import DRAW_STOCK, OPEN_HAND, PASS, Action, ActionKind, Phase
from arena.rules.hand import EventKind, HandState
from arena.rules.melds import deadwood_mask
from arena.rules.ruleset import MisknockPolicy, RuleSet

DEADLINE_MS = 300
FAST = RuleSet(deadline_ms=DEADLINE_MS)
SHORT = RuleSet(deadline_ms=DEADLINE_MS, target=50, best_of=1)


@pytest.fixture(scope="module")
def greedy_url() -> Iterator[str]:
    bot = start_quickly(house("greedy"))
    yield bot.url
    bot.stop()


@pytest.fixture(scope="module")
def strong_url() -> Iterator[str]:
    bot = start_quickly(house("strong"))
    yield bot.url
    bot.stop()


def seats(hostile_seat: int, hostile_url: str, other_url: str) -> list[str]:
    return [hostile_url, other_url] if hostile_seat == 0 else [other_url, hostile_url]


def assert_safe_fallback(state: HandState, action: Action) -> None:
    """RULES.md: pass; draw from stock; discard the drawn card or the highest deadwood; no knock."""
    phase = state.phase
    if phase in (Phase.FIRST_UPCARD, Phase.LAST_CHANCE):
        assert action == PASS
    elif phase is Phase.DRAW:
        assert action == DRAW_STOCK
    elif phase is Phase.MISKNOCK_RESPONSE:
        assert action == OPEN_HAND
    else:
        assert phase is Phase.DISCARD
        assert action.kind is ActionKind.DISCARD, f"a fallback is never a knock: {action}"
        assert action.card is not None
        hand = state.hands[state.to_act]
        last = state.events[-1]
        if last.kind is EventKind.DRAW_STOCK:
            assert action.card == last.card, "the drawn card is discarded"
        else:
            assert action.card != state.taken, "never the card just taken"
            allowed = [c for c in range(52) if hand >> c & 1 and c != state.taken]
            least = min(deadwood_mask(hand & ~(1 << c)) for c in allowed)
            assert deadwood_mask(hand & ~(1 << action.card)) == least


def assert_fallbacks_replay(record: MatchRecord) -> list[Action]:
    """Every recorded fault replays to a safe fallback, the one its fault entry names."""
    turns = faulted_turns(record)
    recorded = [f for f in record.faults if (f.game, f.deal) not in _interrupted(record)]
    assert len(turns) == len(recorded)
    for (state, entry), fault in zip(turns, recorded, strict=True):
        assert entry.seat == fault.seat and entry.fault == fault.kind
        assert fault.fallback == entry.action.to_dict()
        assert_safe_fallback(state, entry.action)
    return [entry.action for _, entry in turns]


def _interrupted(record: MatchRecord) -> set[tuple[int, int]]:
    if record.forfeit is None:
        return set()
    return {(len(record.games), len(record.unfinished))}


# --- each fault kind ------------------------------------------------------------------------------

RAW_CASES = [
    ("sleep", "timeout", f"within {DEADLINE_MS} ms"),
    ("trickle", "timeout", f"within {DEADLINE_MS} ms"),
    ("status_500", "status", "HTTP 500"),
    ("garbage", "bad_json", "not valid JSON"),
    ("wrong_schema", "schema", "action schema"),
    ("huge_length", "body_too_large", "65536-byte cap"),
    ("huge_chunked", "body_too_large", "65536-byte cap"),
    ("redirect", "redirect", "not followed"),
    ("drop", "connection", "closed the connection without answering"),
    ("truncated", "connection", "closed the connection mid-answer"),
    ("bad_http", "connection", "malformed HTTP answer"),
]
SDK_CASES: list[tuple[Callable[[ActRequest], WireAction], str, str]] = [
    (card_not_held, "illegal_action", "is not in the hand"),
    (wrong_phase, "illegal_action", "not allowed in the draw phase"),
    (discards_taken_card, "illegal_action", "just taken from the discard pile"),
]


def assert_forfeit_after_max_strikes(
    d: dict[str, Any], hostile: str, kind: str, detail: str
) -> None:
    other = "b" if hostile == "a" else "a"
    assert d["winner"] == other
    assert d["forfeit"]["seat"] == hostile
    assert d["forfeit"]["reason"].startswith("3 faults (max_strikes 3)")
    assert kind in d["forfeit"]["reason"]
    assert len(d["faults"]) == 3
    for fault in d["faults"]:
        assert fault["seat"] == hostile
        assert fault["kind"] == kind
        assert detail in fault["detail"]
        assert fault["fallback"]["action"] in ("pass", "draw_stock", "discard")
    assert d["unfinished_game"] is not None
    assert d["misknocks"] == []


@pytest.mark.parametrize(("mode", "kind", "detail"), RAW_CASES, ids=[c[0] for c in RAW_CASES])
def test_transport_fault_is_a_strike_and_max_strikes_forfeit(
    mode: str, kind: str, detail: str, greedy_url: str
) -> None:
    hostile_seat = RAW_CASES.index((mode, kind, detail)) % 2
    bot = RawBot(mode)
    with running(bot):
        record = play(seats(hostile_seat, bot.url, greedy_url), FAST, seed=5)
    d = record.to_dict()
    assert_forfeit_after_max_strikes(d, "ab"[hostile_seat], kind, detail)
    assert_fallbacks_replay(record)
    if kind == "timeout":
        for fault in d["faults"]:
            assert DEADLINE_MS * 0.9 <= fault["latency_ms"] < DEADLINE_MS + 700


@pytest.mark.parametrize(
    ("act", "kind", "detail"), SDK_CASES, ids=[c[0].__name__ for c in SDK_CASES]
)
def test_illegal_action_is_a_strike_and_max_strikes_forfeit(
    act: Callable[[ActRequest], WireAction], kind: str, detail: str, greedy_url: str
) -> None:
    hostile_seat = SDK_CASES.index((act, kind, detail)) % 2
    bot = sdk_bot(act, act.__name__)
    with running(bot):
        record = play(seats(hostile_seat, bot.url, greedy_url), FAST, seed=6)
    assert_forfeit_after_max_strikes(record.to_dict(), "ab"[hostile_seat], kind, detail)


@pytest.mark.parametrize(
    "make",
    [lambda: RawBot("status_500"), lambda: sdk_bot(discards_taken_card, "taker")],
    ids=["always_500", "always_discards_taken_card"],
)
def test_fallbacks_are_safe_in_every_phase_and_the_match_ends(
    make: Callable[[], RawBot | BotServer], strong_url: str
) -> None:
    """With strikes unlimited, a bot that always faults plays fallbacks only, and never knocks."""
    bot = make()
    rules = SHORT.replace(max_strikes=100_000)
    with running(bot):
        record = play([bot.url, strong_url], rules, seed=7)
    d = record.to_dict()
    assert d["forfeit"] is None and d["winner"] == "b"
    assert all(f["seat"] == "a" for f in d["faults"])
    fallbacks = assert_fallbacks_replay(record)
    assert len(fallbacks) == len(d["faults"]) > 10
    for _, hand in record.all_hands():
        assert hand.result.knocker != 0
        if isinstance(bot, RawBot):
            assert all(e.fault is not None for e in hand.actions if e.seat == 0)
    kinds = {a.kind for a in fallbacks}
    assert ActionKind.DISCARD in kinds and ActionKind.KNOCK not in kinds
    if isinstance(bot, RawBot):
        assert kinds == {ActionKind.PASS, ActionKind.DRAW_STOCK, ActionKind.DISCARD}


@pytest.mark.parametrize(
    ("mode", "on", "kind"),
    [("status_500", {2, 4}, "status"), ("sleep", {3}, "timeout"), ("garbage", {1, 6}, "bad_json")],
    ids=["status_500", "sleep", "garbage"],
)
def test_occasional_faults_finish_the_match_normally(
    mode: str, on: set[int], kind: str, greedy_url: str
) -> None:
    bot = RawBot(mode, on=on)
    with running(bot):
        record = play([greedy_url, bot.url], SHORT, seed=8)
    d = record.to_dict()
    assert d["forfeit"] is None and d["winner"] in ("a", "b")
    assert d["unfinished_game"] is None
    assert len(d["games"]) == 1 and d["games"][0]["hands"]
    assert [(f["seat"], f["kind"]) for f in d["faults"]] == [("b", kind)] * len(on)
    assert len(assert_fallbacks_replay(record)) == len(on)


def test_a_keep_alive_connection_closed_by_the_bot_is_retried_once(greedy_url: str) -> None:
    """The bot closes a reused connection without answering: one retry, no fault."""
    bot = RawBot("drop", on={3})
    with running(bot):
        record = play([bot.url, greedy_url], SHORT, seed=9)
    d = record.to_dict()
    assert d["faults"] == [] and d["forfeit"] is None
    assert bot.connections == 2
    assert bot.acts == d["latency_ms"]["a"]["calls"] + 1


# --- the start of a match -------------------------------------------------------------------------


@pytest.mark.parametrize("dead_seat", [0, 1])
def test_unreachable_at_the_start_forfeits_at_once(dead_seat: int) -> None:
    other = RecordingBot()
    with running(other):
        record = play(seats(dead_seat, closed_port_url(), other.url), FAST)
    d = record.to_dict()
    assert d["forfeit"]["seat"] == "ab"[dead_seat]
    assert "unreachable at the start" in d["forfeit"]["reason"]
    assert "connection refused" in d["forfeit"]["reason"]
    assert d["winner"] == "ab"[1 - dead_seat]
    assert d["games"] == [] and d["faults"] == []
    assert [p for p, _ in other.requests] == ["/start", "/end"]
    end = json.loads(other.bodies("/end")[0])
    assert end["record"]["forfeit"] == d["forfeit"]


def test_both_unreachable_is_not_played_not_a_double_forfeit() -> None:
    """Two bots down at once is most likely the arena's own network: no record, no loss for
    either (a match job plays it again, then voids it); it used to be a loss for both."""
    with pytest.raises(NeitherStartedError, match="neither player could be started") as caught:
        play([closed_port_url(), closed_port_url()], FAST)
    assert "a: unreachable" in str(caught.value) and "b: unreachable" in str(caught.value)


def test_a_wrong_protocol_version_forfeits_at_once(greedy_url: str) -> None:
    bot = RawBot("wrong_version")
    with running(bot):
        record = play([greedy_url, bot.url], FAST)
    d = record.to_dict()
    assert d["forfeit"]["seat"] == "b" and d["winner"] == "a"
    assert "'gin-arena/2'" in d["forfeit"]["reason"]
    assert "'gin-arena/1'" in d["forfeit"]["reason"]
    # Refused at GET /: no /start, no /act, and no /end in a protocol it does not speak.
    assert [(m, p) for m, p, _ in bot.requests] == [("GET", "/")]


# --- misknocks are rules events -------------------------------------------------------------------


def test_deliberate_misknocks_are_rules_events_not_faults() -> None:
    bot = sdk_bot(misknocker, "misknocker")
    other = RecordingBot()
    with running(bot, other):
        record = play([bot.url, other.url], SHORT, seed=10)
    d = record.to_dict()
    assert d["faults"] == [] and d["forfeit"] is None
    assert d["misknocks"], "the misknocker misknocked"
    assert all(m["seat"] == "a" for m in d["misknocks"])
    limit = RuleSet().knock_limit
    assert all(m["deadwood"] > limit for m in d["misknocks"])
    per_hand = [m for g in d["games"] for h in g["hands"] for m in h["misknocks"]]
    assert len(per_hand) == len(d["misknocks"])
    # open_hand: the misknocker's hand is shown to the opponent for the rest of the deal.
    exposed = [a for a in other.acts() if a["opponent_hand"] is not None]
    assert exposed
    for act in exposed:
        assert any(e["event"] == "misknock" and e["player"] == "opponent" for e in act["history"])
        assert len(act["opponent_hand"]) == act["opponent_hand_size"]


def test_opponent_may_accept_asks_the_opponent_and_applies_its_choice() -> None:
    bot = sdk_bot(misknocker, "misknocker")
    # The opponent accepts every other misknock and keeps the open-hand penalty otherwise.
    other = RecordingBot(respond=lambda n: "accept_knock" if n % 2 else "open_hand")
    rules = SHORT.replace(misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT)
    with running(bot, other):
        record = play([bot.url, other.url], rules, seed=11)
    d = record.to_dict()
    assert d["faults"] == [] and d["forfeit"] is None
    asked = [a for a in other.acts() if a["phase"] == "misknock_response"]
    assert len(asked) == len(d["misknocks"]) == other.responses >= 2
    for act in asked:
        assert act["pending_misknock"]["deadwood"] > rules.knock_limit
        assert act["opponent_hand"] is not None
        assert [a["action"] for a in act["legal_actions"]] == ["accept_knock", "open_hand"]
    hands = {(g["index"], h["index"]): h for g in d["games"] for h in g["hands"]}
    for n, act in enumerate(asked, start=1):
        hand = hands[(act["game"], act["deal"])]
        answers = [e[1]["action"] for e in hand["actions"] if e[0] == 1]
        if n % 2:  # accepted: scored as a knock by the misknocker, the deal over
            assert "accept_knock" in answers
            assert hand["knocker"] == "a"
            assert hand["outcome"] in ("knock", "undercut", "tie")
        else:  # the open-hand penalty: the deal goes on with the misknocker's hand shown
            assert "open_hand" in answers
            later = [
                a
                for a in other.acts()
                if (a["game"], a["deal"]) == (act["game"], act["deal"])
                and len(a["history"]) > len(act["history"])
            ]
            assert later and all(a["opponent_hand"] is not None for a in later)


# --- what a bot sees ----------------------------------------------------------------------------


def test_a_fault_never_reaches_the_other_bot() -> None:
    hostile = RawBot("wrong_schema", on={1, 3})
    other = RecordingBot()
    with running(hostile, other):
        record = play([other.url, hostile.url], SHORT, seed=12)
    d = record.to_dict()
    assert [f["seat"] for f in d["faults"]] == ["b", "b"]
    assert d["forfeit"] is None
    acts = other.bodies("/act")
    assert len(acts) > 20
    for body in acts:
        observation = json.loads(body)
        del observation["rules"]  # the rule set names max_strikes
        # Its own strikes (none), never the other bot's.
        assert observation.pop("strikes") == {"count": 0, "limit": SHORT.max_strikes}
        text = json.dumps(observation)
        for word in ("fault", "schema", "strike", "fallback", "the answer"):
            assert word not in text
    (end_body,) = other.bodies("/end")
    end = json.loads(end_body)
    assert end["you"] == "a"
    assert end["record"]["faults"] == []
    entries = [e for g in end["record"]["games"] for h in g["hands"] for e in h["actions"]]
    assert entries and all(len(e) == 3 for e in entries), "no fault markers of the opponent"
    # Everything else of the record is the arena's record.
    for key in ("winner", "games_won", "forfeit", "misknocks", "rules"):
        assert end["record"][key] == d[key]
    # ...except the seed and the decks, which would reveal a duplicate match's deals.
    assert "seed" not in end["record"]
    assert all("deck" not in h for g in end["record"]["games"] for h in g["hands"])
    # The faulting bot is told of its own faults.
    (own_end,) = hostile.bodies("/end")
    own = json.loads(own_end)["record"]
    assert own["faults"] == d["faults"]
    marked = [e for g in own["games"] for h in g["hands"] for e in h["actions"] if len(e) == 4]
    assert [e[3] for e in marked] == ["schema", "schema"]


def test_each_deal_starts_with_the_previous_deal_revealed(greedy_url: str) -> None:
    """What a bot can rely on: self-contained requests, previous_deal at its first of each deal."""
    bot = RecordingBot()
    with running(bot):
        record = play([greedy_url, bot.url], SHORT.replace(target=100), seed=15)
    d = record.to_dict()
    hands = {(g["index"], h["index"]): h for g in d["games"] for h in g["hands"]}
    assert len(hands) >= 2
    acts = bot.acts()
    assert len({a["request_id"] for a in acts}) == len(acts)
    first_of_deal = set()
    for act in acts:
        assert act["protocol"] == "gin-arena/1" and act["match_id"] == "hostile"
        assert act["deadline_ms"] == DEADLINE_MS and act["rules"] == d["rules"]
        key = (act["game"], act["deal"])
        if key in first_of_deal or act["deal"] == 0:
            assert act["previous_deal"] is None
        else:
            previous = hands[(act["game"], act["deal"] - 1)]
            shown = act["previous_deal"]
            assert shown is not None
            assert shown["outcome"] == previous["outcome"] and shown["points"] == previous["points"]
            assert " ".join(shown["your_hand"]) == previous["hands"]["b"]
            assert " ".join(shown["opponent_hand"]) == previous["hands"]["a"]
        first_of_deal.add(key)
    assert {(a["game"], a["deal"]) for a in acts} == set(hands)


def test_the_deadline_bounds_a_trickling_answer() -> None:
    """One byte every 0.2 s: a timeout at the deadline, not at the last byte (several seconds).
    A deadline of 1 s, not the file's 300 ms: on a loaded CI machine an ordinary answer of
    these in-process bots once missed 300 ms too, a third timeout beside the two."""
    deadline_ms = 1000
    bot = RawBot("trickle", on={1, 2}, trickle_s=0.2)
    fast = sdk_bot(greedy, "fast")
    with running(bot, fast):
        record = play([fast.url, bot.url], SHORT.replace(deadline_ms=deadline_ms), seed=13)
    d = record.to_dict()
    assert [f["kind"] for f in d["faults"]] == ["timeout", "timeout"]
    for fault in d["faults"]:
        # Generous slack: this checks the deadline covers the whole exchange, not speed.
        assert deadline_ms * 0.9 <= fault["latency_ms"] < deadline_ms + 700


# --- connections ----------------------------------------------------------------------------------


def test_keep_alive_one_connection_per_bot_per_match() -> None:
    sdk = RecordingBot()
    raw = RawBot("behave")
    with running(sdk, raw):
        record = play([sdk.url, raw.url], SHORT, seed=14)
    d = record.to_dict()
    assert d["faults"] == [] and d["forfeit"] is None
    assert len(sdk.requests) > 30 and len(raw.requests) > 30
    assert sdk.connections == 1
    assert raw.connections == 1


def test_many_matches_at_once_in_one_process() -> None:
    """Ten matches in threads against two bots that think 20 ms per action."""
    seen: dict[str, list[tuple[str, str]]] = {"a": [], "b": []}
    lock = threading.Lock()

    def thinker(seat: str) -> Callable[[ActRequest], WireAction]:
        def act(obs: ActRequest) -> WireAction:
            time.sleep(0.02)
            with lock:
                seen[seat].append((obs.match_id, obs.request_id))
            return greedy(obs)

        return act

    bots = [sdk_bot(thinker("a"), "thinker-a"), sdk_bot(thinker("b"), "thinker-b")]
    rules = RuleSet(target=25, best_of=1)
    with running(*bots):

        def one(i: int) -> MatchRecord:
            players = [HttpPlayer(b.url, allow_loopback=True) for b in bots]
            return play_match(players, rules, seed=100 + i, match_id=f"many-{i}")

        with ThreadPoolExecutor(max_workers=10) as pool:
            records = list(pool.map(one, range(10)))
    for i, record in enumerate(records):
        d = record.to_dict()
        assert d["match_id"] == f"many-{i}"
        assert d["faults"] == [] and d["forfeit"] is None
        assert d["winner"] in ("a", "b") and len(d["games"]) == 1
        for seat in "ab":
            calls = [r for m, r in seen[seat] if m == f"many-{i}"]
            assert len(calls) == d["latency_ms"][seat]["calls"] > 0
    ids = [r for seat in "ab" for _, r in seen[seat]]
    assert len(ids) == len(set(ids))
