"""The embargo of each live view, over every frame of a whole played match (with faults): the
public view never names a card neither player could see, a seat view names only what that seat
could see, and while a duplicate twin is open no view names any card."""

from __future__ import annotations

import json
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from typing import Any

import pytest
from live_support import card_tokens, played_events

from arena.live.feed import Frame, MatchFeed


@pytest.fixture(scope="module")
def events() -> list[dict[str, Any]]:
    return played_events()


def _feed(events: list[dict[str, Any]], *, twin: bool) -> MatchFeed:
    feed = MatchFeed(1, twin_open=lambda _match: twin)
    for event in events:
        assert feed.apply(event)
    return feed


def _cards(hand: dict[str, Any]) -> set[str]:
    return {c for meld in hand["melds"] for c in meld} | set(hand["deadwood"])


def _seen(frames: list[Frame]) -> list[tuple[Frame, set[str], dict[str, set[str]]]]:
    """Each step frame with the cards both players had seen up to it (every face-up top, the
    upcard, cards known taken from the pile) and what each seat had held in the deal."""
    out = []
    public: set[str] = set()
    held: dict[str, set[str]] = {"a": set(), "b": set()}
    for frame in frames:
        if frame.event != "step":
            continue
        step = frame.data["step"]
        if frame.data["index"] == 0:
            public, held = set(), {"a": set(), "b": set()}
        if step["top"] is not None:
            public.add(step["top"])
        for cards in step.get("known", {}).values():
            public |= set(cards)
        for seat in ("a", "b"):
            held[seat] |= _cards(step["hands"][seat])
        out.append((frame, set(public), {s: set(c) for s, c in held.items()}))
    return out


@pytest.mark.parametrize(
    ("view", "allowed"),
    [
        ("public", lambda public, held: public),
        ("a", lambda public, held: public | held["a"]),
        ("b", lambda public, held: public | held["b"]),
    ],
)
def test_a_running_view_names_only_cards_its_viewer_has_seen(
    events: list[dict[str, Any]], view: str, allowed: Any
) -> None:
    feed = _feed(events, twin=False)
    checked = 0
    for frame, public, held in _seen(feed.frames):
        shown = feed.render(frame, view)
        data = _data(shown)
        unseen = card_tokens(data) - allowed(public, held)
        assert not unseen, f"{view} frame {frame.id} names unseen {sorted(unseen)}: {data}"
        checked += 1
    assert checked > 100


def test_a_seat_view_shows_its_own_hand_and_only_a_count_of_the_other(
    events: list[dict[str, Any]],
) -> None:
    feed = _feed(events, twin=False)
    for frame in feed.frames:
        if frame.event != "step":
            continue
        step = _data(feed.render(frame, "a"))["step"]
        assert step["hands"]["a"] == frame.data["step"]["hands"]["a"]
        assert set(step["hands"]["b"]) == {"count"}
        public = _data(feed.render(frame, "public"))["step"]
        assert {frozenset(h) for h in public["hands"].values()} == {frozenset({"count"})}


def test_a_stock_draw_is_named_only_to_the_drawer(events: list[dict[str, Any]]) -> None:
    feed = _feed(events, twin=False)
    draws = [
        f
        for f in feed.frames
        if f.event == "step" and f.data["step"]["action"].get("kind") == "draw_stock"
    ]
    assert draws
    for frame in draws:
        drawer = frame.data["step"]["action"]["seat"]
        other = "b" if drawer == "a" else "a"
        mine = _data(feed.render(frame, drawer))["step"]
        assert mine.get("joined") == frame.data["step"]["joined"]
        for view in ("public", other):
            step = _data(feed.render(frame, view))["step"]
            assert "joined" not in step
            assert step["action"]["text"] == "draws from the stock"


def test_the_hands_show_at_the_end_of_each_deal(events: list[dict[str, Any]]) -> None:
    feed = _feed(events, twin=False)
    deals = [f for f in feed.frames if f.event == "deal"]
    assert deals
    for frame in deals:
        data = _data(feed.render(frame, "public"))
        assert data["steps"][-1]["showdown"] == data["result"]
        assert "melds" in data["steps"][0]["hands"]["a"]


def test_while_a_duplicate_twin_is_open_no_view_names_a_card(
    events: list[dict[str, Any]],
) -> None:
    feed = _feed(events, twin=True)
    for frame in feed.frames:
        for view in ("public", "a", "b"):
            data = _data(feed.render(frame, view))
            assert not card_tokens(data), f"{view} frame {frame.id} names cards: {data}"
    kinds = {f.data["step"]["action"].get("kind") for f in feed.frames if f.event == "step"}
    assert {"draw_stock", "discard"} <= kinds


def test_faults_keep_their_kind_but_their_detail_only_for_their_own_seat(
    events: list[dict[str, Any]],
) -> None:
    feed = _feed(events, twin=False)
    faulted = [f for f in feed.frames if f.event == "step" and "fault" in f.data["step"]["action"]]
    assert faulted
    for frame in faulted:
        fault = frame.data["step"]["action"]["fault"]
        assert fault["detail"].startswith("turn ")
        assert _data(feed.render(frame, "b"))["step"]["action"]["fault"] == fault
        public = _data(feed.render(frame, "public"))["step"]["action"]["fault"]
        assert public["kind"] == "timeout" and public["detail"] == ""


def _data(encoded: bytes) -> Any:
    line = next(x for x in encoded.decode().split("\n") if x.startswith("data: "))
    return json.loads(line.removeprefix("data: "))


def test_frames_made_while_the_twin_question_is_asked_reach_nobody_until_it_is_answered(
    events: list[dict[str, Any]],
) -> None:
    asked: list[threading.Event] = []
    answers = iter([False, True, True] + [False] * 1000)  # start: no twin; the first deal: one

    def twin_open(_match: int) -> bool:
        gate = threading.Event()
        asked.append(gate)
        assert gate.wait(60)
        return next(answers)

    first_dealt = next(i for i, e in enumerate(events) if e["k"] == "dealt")
    with ThreadPoolExecutor(1) as checks:
        feed = MatchFeed(1, twin_open=twin_open, checks=checks)
        for event in events[: first_dealt + 5]:
            assert feed.apply(event)
        assert feed.since(1, 0)[1] == []  # the start's question is not answered yet
        asked[0].set()
        deadline = time.monotonic() + 60
        while len(asked) < 2:  # answered: the first deal's frames go out; then the next asks
            assert time.monotonic() < deadline
            time.sleep(0.01)
        decided = feed.since(1, 0)[1]
        assert decided and not any(f.withheld for f in decided)
        assert decided[-1].event == "deal"  # the frames after the deal wait for the answer
        assert len(feed.frames) > len(decided)
        asked[1].set()
        for event in events[first_dealt + 5 :]:
            assert feed.apply(event)
        while True:
            for gate in asked:
                gate.set()
            _, frames, ended = feed.since(1, 0)
            if ended:
                break
            assert time.monotonic() < deadline
            time.sleep(0.01)
    second = frames[len(decided) :]
    next_deal = next(i for i, f in enumerate(second) if f.event == "deal")
    assert all(f.withheld for f in second[: next_deal + 1])  # the twin was open then
    assert frames == feed.frames
