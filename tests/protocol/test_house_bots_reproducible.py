"""A rerun of a match reproduces it: the ``random`` house bot draws each choice from the request.

Played over real HTTP house bots on loopback: the same seeded match twice against the same
servers, against servers in fresh processes (``gin-arena bot serve``), and interleaved with
another match on the same server, must give the same record (timings aside).
"""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from hostile import running

from arena.bots.house import house_bot
from arena.playing.match import play_match
from arena.playing.players import HeuristicPlayer, MatchContext, RandomPlayer
from arena.protocol.http_player import HttpPlayer
from arena.rules.ruleset import RuleSet

# A deadline no answer of a healthy bot misses, however loaded the machine: a timeout is a
# fault in the record, so one slow first answer of a fresh process (seen on a loaded CI
# machine at the default 1000 ms) would make two runs differ for a reason these tests don't pin.
RULES = RuleSet(target=100, best_of=1, deadline_ms=60_000)


def without_timings(record: dict[str, Any]) -> dict[str, Any]:
    """The record with every measured latency removed (the only thing a rerun may change)."""

    def strip(value: Any) -> Any:
        if isinstance(value, dict):
            return {k: strip(v) for k, v in value.items() if k != "latency_ms"}
        if isinstance(value, list):
            if len(value) >= 3 and isinstance(value[0], int) and isinstance(value[1], dict):
                return [value[0], value[1], *value[3:]]  # an action entry: drop its latency
            return [strip(v) for v in value]
        return value

    out = strip(record)
    assert isinstance(out, dict)
    return out


def play(urls: list[str], rules: RuleSet, *, seed: int, match_id: str) -> Any:
    """One match over the real HTTP player; the players named by seat, not by URL."""
    players = [
        HttpPlayer(u, name=f"seat-{'ab'[i]}", allow_loopback=True) for i, u in enumerate(urls)
    ]
    return play_match(players, rules, seed=seed, match_id=match_id)


def decisions(record: dict[str, Any]) -> int:
    return sum(len(h["actions"]) for g in record["games"] for h in g["hands"])


@contextmanager
def served(kind: str) -> Iterator[str]:
    """A house bot in a fresh process (``gin-arena bot serve``); its URL."""
    process = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "bot", "serve", "--kind", kind, "--port", "0"],
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stderr is not None
        line = process.stderr.readline()
        found = re.search(r"http://127\.0\.0\.1:\d+", line)
        assert found, f"no URL in {line!r}"
        yield found.group(0)
    finally:
        process.terminate()
        process.wait(timeout=10)
        if process.stderr is not None:
            process.stderr.close()


def test_random_house_bot_replays_a_seeded_match_exactly_on_the_same_server() -> None:
    a, b = house_bot("random", name="r1"), house_bot("random", name="r2", seed=5)
    with running(a, b):
        first = play([a.url, b.url], RULES, seed=11, match_id="m-11").to_dict()
        # Another match in between moves any generator a process would keep.
        play([a.url, b.url], RULES, seed=12, match_id="m-12")
        second = play([a.url, b.url], RULES, seed=11, match_id="m-11").to_dict()
    assert decisions(first) > 20
    assert without_timings(first) == without_timings(second)


def test_random_house_bot_replays_a_seeded_match_in_a_fresh_process() -> None:
    records = []
    for _ in range(2):
        with served("random") as url_a, served("random") as url_b:
            records.append(play([url_a, url_b], RULES, seed=7, match_id="m-7").to_dict())
    assert decisions(records[0]) > 20
    assert without_timings(records[0]) == without_timings(records[1])


def test_random_house_bot_in_process_and_fresh_process_agree() -> None:
    """The choices depend on the bot's seed and the request only, not on the process."""
    local = house_bot("random", name="local")  # the seed `bot serve` uses (0)
    with running(local), served("random") as url:
        here = play([local.url, url], RULES, seed=3, match_id="m-3").to_dict()
        there = play([url, local.url], RULES, seed=3, match_id="m-3").to_dict()
    assert without_timings(here)["games"] == without_timings(there)["games"]


def test_random_house_bot_choices_differ_between_matches() -> None:
    """Seeding from the request is not a constant: other match ids choose differently."""
    a, b = house_bot("random", name="r1"), house_bot("random", name="r2", seed=5)
    with running(a, b):
        one = play([a.url, b.url], RULES, seed=11, match_id="m-11").to_dict()
        other = play([a.url, b.url], RULES, seed=11, match_id="m-other").to_dict()
    assert without_timings(one)["games"] != without_timings(other)["games"]


def test_random_player_reused_for_a_rerun_plays_it_again() -> None:
    player = RandomPlayer(seed=4)
    first = play_match([HeuristicPlayer(), player], RULES, seed=9, match_id="x").to_dict()
    second = play_match([HeuristicPlayer(), player], RULES, seed=9, match_id="x").to_dict()
    assert without_timings(first) == without_timings(second)


def test_a_house_bot_served_for_a_match_is_reached_over_http() -> None:
    """The fresh-process helper really serves the protocol (guards the tests above)."""
    with served("random") as url:
        player = HttpPlayer(url, allow_loopback=True)
        assert player.start(MatchContext("probe", 0, RULES, "x", 0)) is None
        assert player.info is not None and player.info.name == "house-random"
        player.end({"match_id": "probe", "faults": []})
