"""The ``expert`` house bot: legal, deterministic, and clearly stronger than ``random``.

Its legality on the conformance checker (``gin-arena bot check``) is pinned with every house
bot's in ``test_bot_check.py``; here: the same request gets the same answer (in one process and
across two matches), the exact lookahead helper agrees with trying every discard, it never
passes up gin, and over a fixed set of seeds (so the result cannot vary between runs) it beats
``random`` in nearly every match, over the real protocol.
"""

from __future__ import annotations

import random
from typing import Any

import msgspec
from hostile import running

from arena.bots.expert import _min_discard, expert
from arena.bots.house import house_bot
from arena.playing.match import play_match
from arena.protocol.http_player import HttpPlayer
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.melds import deadwood_mask
from arena.rules.ruleset import RuleSet

RULES = RuleSet(target=100, best_of=1)


def request(**fields: object) -> ActRequest:
    """A discard-phase request with the given fields over sensible defaults."""
    hand = fields.get("hand", ["As", "2s", "3s", "7h", "7d", "7c", "9c", "Tc", "Jc", "Kd", "5h"])
    assert isinstance(hand, list)
    body = {
        "protocol": "gin-arena/1",
        "match_id": "m",
        "request_id": "r",
        "game": 0,
        "deal": 0,
        "phase": "discard",
        "hand": hand,
        "discard_top": "Qs",
        "discard_pile": ["Qs"],
        "stock_count": 20,
        "upcard": "Qs",
        "knock_limit": 10,
        "multiplier": 1,
        "dealer": "you",
        "opponent_hand_size": 10,
        "opponent_known": [],
        "opponent_hand": None,
        "taken_card": None,
        "pending_misknock": None,
        "history": [{"player": "you", "event": "draw_stock", "card": hand[-1]}],
        "legal_actions": [{"action": "discard", "card": c} for c in hand],
        "deadline_ms": 1000,
        "scores": {"you": 0, "opponent": 0},
        "games_won": {"you": 0, "opponent": 0},
        "rules": {},
        **fields,
    }
    return msgspec.convert(body, ActRequest)


def test_min_discard_is_the_least_deadwood_of_every_discard() -> None:
    rng = random.Random(13)
    for _ in range(400):
        cards = rng.sample(range(52), 11)
        hand = sum(1 << c for c in cards)
        brute = min(deadwood_mask(hand & ~(1 << c)) for c in cards)
        assert _min_discard(hand) == brute, cards


def test_the_same_request_gets_the_same_answer() -> None:
    obs = request()
    answers = {msgspec.json.encode(expert(obs)) for _ in range(3)}
    assert len(answers) == 1


def test_expert_goes_gin_when_it_can() -> None:
    hand = ["As", "2s", "3s", "7h", "7d", "7c", "9c", "Tc", "Jc", "Kd", "Qc"]
    legal = [{"action": "discard", "card": c} for c in hand]
    legal.append({"action": "knock", "card": "Kd"})
    answer = expert(request(hand=hand, legal_actions=legal))
    assert (answer.action, answer.card) == ("knock", "Kd")


def test_expert_takes_big_gin() -> None:
    hand = ["As", "2s", "3s", "7h", "7d", "7c", "9c", "Tc", "Jc", "Qc", "Kc"]
    legal = [{"action": "discard", "card": c} for c in hand] + [{"action": "big_gin"}]
    assert expert(request(hand=hand, legal_actions=legal)) == WireAction("big_gin")


def play(urls: list[str], seed: int, match_id: str) -> dict[str, Any]:
    players = [
        HttpPlayer(u, name=f"seat-{'ab'[i]}", allow_loopback=True) for i, u in enumerate(urls)
    ]
    return play_match(players, RULES, seed=seed, match_id=match_id).to_dict()


def decisions(record: dict[str, Any]) -> list[Any]:
    """Every action entry of the match, its measured latency (index 2) left out."""
    return [
        [entry[:2], entry[3:]]
        for game in record["games"]
        for hand in game["hands"]
        for entry in hand["actions"]
    ]


def test_expert_replays_a_match_exactly() -> None:
    a, b = house_bot("expert"), house_bot("strong")
    with running(a, b):
        first, second = (play([a.url, b.url], seed=5, match_id="again") for _ in range(2))
    assert decisions(first) == decisions(second) and decisions(first)
    assert first["winner"] == second["winner"]


def test_expert_beats_random_in_nearly_every_match_of_a_fixed_seed_set() -> None:
    wins = 0
    e, r = house_bot("expert"), house_bot("random")
    with running(e, r):
        for seed in range(3):
            wins += play([e.url, r.url], seed, f"h{seed}")["winner"] == "a"
            wins += play([r.url, e.url], seed, f"h{seed}s")["winner"] == "b"
    assert wins >= 5
