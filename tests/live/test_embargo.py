"""The embargo of each live view, over every frame of a whole played match (with faults): the
public view never names a card neither player could see, a seat view names only what that seat
could see, and while a duplicate twin is open no view names any card."""

from __future__ import annotations

import json
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
