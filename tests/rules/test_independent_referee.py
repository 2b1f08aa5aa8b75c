"""The independent referee (``independent_referee.py``, written from docs/RULES.md without the
engine's source) re-scores whole matches played by the engine, under every preset and every
variant field, and must find no difference.

The players are in-process: the house heuristic, the uniform random player, and a chaotic
player that also misknocks, declares melds (often not the best ones), claims big gin with
declared melds, takes back its own returned discard, and commits faults, so that the
referee's checks of misknocks, declared melds, the proviso and fault fallbacks are exercised.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pytest
from independent_referee import (
    cards_of,
    mask_of,
    min_deadwood,
    name,
    optimal_arrangements,
    parse,
    referee_match,
)

from arena.playing.match import play_match
from arena.playing.players import (
    Fault,
    FaultKind,
    HeuristicPlayer,
    MatchContext,
    Player,
    RandomPlayer,
    Turn,
)
from arena.rules import Action, RuleSet

VARIANTS: dict[str, RuleSet] = {
    "standard": RuleSet.standard(),
    "oklahoma": RuleSet.oklahoma(),
    "straight": RuleSet.straight(),
    "spade_discard_doubles": RuleSet(spade_discard_doubles=True),
    "oklahoma + spade_discard_doubles": RuleSet.oklahoma(spade_discard_doubles=True),
    "shutout_total_multiplier (blitz)": RuleSet(shutout_multiplier=1, shutout_total_multiplier=2),
    "both shutout doublings": RuleSet(shutout_total_multiplier=2),
    "hollywood": RuleSet(match_scoring="hollywood", best_of=3),
    "hollywood best of 5, penalty points": RuleSet(
        match_scoring="hollywood", misknock="penalty_points", target=100
    ),
    "big gin only after a stock draw": RuleSet(big_gin_after_taking_discard=False),
    "discard of taken card (proviso)": RuleSet(allow_discard_of_taken_card=True),
    "opponent may accept": RuleSet(misknock="opponent_may_accept"),
    "penalty points, low target": RuleSet(misknock="penalty_points", target=60),
    "last discard chance, empty stock": RuleSet(last_discard_chance=True, dead_hand_stock=0),
    "loser deals, other after dead, no tie undercut": RuleSet(
        next_dealer="loser", dead_hand_dealer="other", undercut_on_tie=False, big_gin_bonus=None
    ),
    "winner deals, short deals": RuleSet(next_dealer="winner", max_actions_per_deal=20),
    "short deals with the last chance": RuleSet(last_discard_chance=True, max_actions_per_deal=24),
    "last chance on a long dead stock": RuleSet(
        last_discard_chance=True, dead_hand_stock=25, knock_limit=20
    ),
    "accepted misknocks with spades doubling": RuleSet.oklahoma(
        misknock="opponent_may_accept", spade_discard_doubles=True
    ),
    "seed 004 house rules": RuleSet(
        spade_discard_doubles=True,
        box_bonus=20,
        target=100,
        next_dealer="loser",
        allow_discard_of_taken_card=True,
        last_discard_chance=True,
        big_gin_after_taking_discard=False,
    ),
}


def _engine_action(data: dict[str, Any]) -> Action:
    return Action.from_dict(data)


@dataclass
class ChaosPlayer:
    """Mostly greedy and legal; sometimes misknocks, declares melds, or commits a fault."""

    seed: int
    name: str = "chaos"
    fault_rate: float = 0.004
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def start(self, context: MatchContext) -> Fault | None:
        self.rng = random.Random(f"{self.seed}:{context.seat}")
        return None

    def end(self, summary: dict[str, object]) -> None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        obs, rng = turn.observation, self.rng
        legal = list(obs.legal_actions)
        if rng.random() < self.fault_rate:
            return Fault(FaultKind.TIMEOUT, "chaos")
        kinds = {a.kind.value for a in legal}
        if "discard" not in kinds and "knock" not in kinds and "big_gin" not in kinds:
            if "take_discard" in kinds and rng.random() < 0.5:
                return next(a for a in legal if a.kind.value == "take_discard")
            return rng.choice(legal)
        hand = mask_of(parse(str(c)) for c in obs.hand)
        taken = None if obs.taken is None else parse(str(obs.taken))
        big = [a for a in legal if a.kind.value == "big_gin"]
        if big and rng.random() < 0.7:
            arrangement = rng.choice(optimal_arrangements(hand))
            melds = [[name(c) for c in cards_of(m)] for m in arrangement]
            return _engine_action({"action": "big_gin", "melds": melds})
        knocks = [a for a in legal if a.kind.value == "knock"]
        roll = rng.random()
        if knocks and roll < 0.6:
            action = rng.choice(knocks)
            return self._with_melds(action, hand) if rng.random() < 0.5 else action
        if roll < 0.05 and "discard" in kinds:  # a knock with any card: often a misknock
            choices = [c for c in cards_of(hand) if c != taken]
            card = rng.choice(choices)
            data: dict[str, Any] = {"action": "knock", "card": name(card)}
            if rng.random() < 0.3:
                rest = hand & ~(1 << card)
                arrangement = rng.choice(optimal_arrangements(rest))
                data["melds"] = [[name(c) for c in cards_of(m)] for m in arrangement[:-1]]
            return _engine_action(data)
        discards = [a for a in legal if a.kind.value == "discard"]
        if not discards:
            return rng.choice(legal)
        if rng.random() < 0.3:
            return rng.choice(discards)
        return min(
            discards,
            key=lambda a: min_deadwood(hand & ~(1 << parse(str(a.card)))),
        )

    def _with_melds(self, action: Action, hand: int) -> Action:
        card = parse(str(action.card))
        rest = hand & ~(1 << card)
        arrangement = list(self.rng.choice(optimal_arrangements(rest)))
        if len(arrangement) > 1 and self.rng.random() < 0.3:
            arrangement.pop()  # fewer melds than the best: more deadwood, maybe a misknock
        melds = [[name(c) for c in cards_of(m)] for m in arrangement]
        return _engine_action({"action": "knock", "card": name(card), "melds": melds})


def pairings(seed: int) -> list[tuple[Player, Player]]:
    return [
        (HeuristicPlayer(), HeuristicPlayer(name="heuristic-2", late_knock=8)),
        (ChaosPlayer(seed), HeuristicPlayer()),
        (RandomPlayer(seed), ChaosPlayer(seed + 1)),
        (ChaosPlayer(seed, fault_rate=0.0), ChaosPlayer(seed + 7, fault_rate=0.0)),
    ]


def referee_records(
    rules: RuleSet, seeds: range, seen: Counter[str] | None = None
) -> tuple[int, int, list[str]]:
    """Play a match per seed (rotating the pairings) and referee it: matches, deals, diffs."""
    diffs: list[str] = []
    deals = 0
    for seed in seeds:
        players = pairings(seed)[seed % 4]
        record = json.loads(json.dumps(play_match(players, rules, seed=seed).to_dict()))
        deals += sum(len(g["hands"]) for g in record["games"])
        diffs += referee_match(record, seen)
    return len(seeds), deals, diffs


@cache
def refereed(variant: str) -> tuple[int, tuple[str, ...], tuple[tuple[str, int], ...]]:
    """A few matches of ``variant`` (one game each outside Hollywood, to stay fast; the long
    runs are ``referee_records`` over many seeds): deals, differences, rules paths seen."""
    rules = VARIANTS[variant]
    if rules.match_scoring.value == "games":
        rules = rules.replace(best_of=1)
    seen: Counter[str] = Counter()
    _, deals, diffs = referee_records(rules, range(4), seen)
    return deals, tuple(diffs), tuple(seen.items())


@pytest.mark.parametrize("variant", list(VARIANTS))
def test_independent_referee_agrees_with_the_engine(variant: str) -> None:
    deals, diffs, _ = refereed(variant)
    assert deals > 0
    assert list(diffs) == []


#: Rules paths the short runs above must go through, with a variant that goes through each.
PATHS = {
    "outcome knock": "standard",
    "outcome undercut": "standard",
    "outcome gin": "standard",
    "outcome dead": "standard",
    "outcome tie": "loser deals, other after dead, no tie undercut",
    "lay-offs": "standard",
    "misknock": "straight",
    "declared melds (knock)": "standard",
    "fault fallback in draw": "standard",
    "accept_knock": "opponent may accept",
    "open_hand": "opponent may accept",
    "multiplier 2": "oklahoma",
    "multiplier 4": "accepted misknocks with spades doubling",
    "proviso take-back": "discard of taken card (proviso)",
    "last-chance take": "last chance on a long dead stock",
    "misknock on the last chance": "last chance on a long dead stock",
    "dead at the safeguard": "winner deals, short deals",
    "shutout": "shutout_total_multiplier (blitz)",
    "hollywood win after a closed game it had not entered": "hollywood best of 5, penalty points",
}


@pytest.mark.parametrize("path", list(PATHS))
def test_the_refereed_matches_go_through_every_rules_path(path: str) -> None:
    """The referee's agreement means something only if the matches reach each rule."""
    _, _, seen = refereed(PATHS[path])
    assert dict(seen).get(path, 0) > 0, f"{PATHS[path]!r} never went through {path!r}"


def test_the_referee_finds_a_changed_score() -> None:
    record = play_match([HeuristicPlayer(), HeuristicPlayer()], RuleSet(), seed=3).to_dict()
    record = json.loads(json.dumps(record))
    game = record["games"][0]
    scored = next(h for h in game["hands"] if h["winner"] is not None)
    scored["points"] += 1
    game["net"] += 1
    diffs = referee_match(record)
    assert any("points: referee" in d for d in diffs)
