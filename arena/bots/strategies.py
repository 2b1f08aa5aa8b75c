"""The house bots' strategies: functions from a wire observation to a wire action.

* ``random``: a random legal move, except that it knocks (or goes gin) whenever it may, so its
  games end. Its choices are drawn from the request itself (match id, game, deal, position in
  the deal), not from a generator kept by the process: a rerun of a match reproduces it.
* ``greedy``: minimises deadwood at every step and knocks at the first chance.
* ``lazy``: greedy, but never takes from the discard pile.
* ``strong``: tracks the discard pile and the opponent's known cards; discards what the
  opponent is least likely to use; chases gin while the stock is long; weighs the undercut
  risk (an estimate of the opponent's deadwood) before knocking; and declares, among its least
  deadwood arrangements, the one that offers the fewest lay-off spots for unseen cards.
* ``expert`` (:mod:`arena.bots.expert`): card tracking and a one-draw lookahead over the
  unseen cards; the strongest.

Variants of ``strong`` differ only in when they knock (:class:`KnockPolicy`): ``cautious``,
``aggressive``, ``gin-hunter`` and ``balanced``. They read only the observation, as any bot
must.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from dataclasses import dataclass

from arena.bots.expert import make_expert
from arena.bots.melding import fewest_layoff_spots, neighbours
from arena.cards import CARD_VALUES, parse_card
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.melds import (
    deadwood_mask,
    min_discard_deadwood_mask,
)

__all__ = [
    "STRATEGIES",
    "KnockPolicy",
    "choice_generator",
    "greedy",
    "lazy",
    "make_random",
    "make_strong",
    "strong",
]

Strategy = Callable[[ActRequest], WireAction]


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


def _card(text: str | None) -> int:
    assert text is not None
    return int(parse_card(text))


def _kinds(obs: ActRequest) -> dict[str, list[WireAction]]:
    out: dict[str, list[WireAction]] = {}
    for a in obs.legal_actions:
        out.setdefault(a.action, []).append(a)
    return out


def _gin_or_big_gin(obs: ActRequest, kinds: dict[str, list[WireAction]]) -> WireAction | None:
    if "big_gin" in kinds:
        return kinds["big_gin"][0]
    hand = _mask(obs.hand)
    for a in kinds.get("knock", []):
        if deadwood_mask(hand & ~(1 << _card(a.card))) == 0:
            return a
    return None


def choice_generator(seed: int | str, obs: ActRequest) -> random.Random:
    """The generator for one decision: seeded by the bot's seed and where the request stands.

    The coordinates are the match id, the game, the deal, the phase and the number of events
    of the deal so far (every action adds at least one, so no two decisions of a match share
    them). A rerun of a match (same id, same seed, so the same deals) therefore asks the same
    questions and gets the same answers, on the same server or a fresh process, and matches
    played at once against one server do not disturb each other's choices.
    """
    return random.Random(
        f"house-random:{seed}:{obs.match_id}:{obs.game}:{obs.deal}:{obs.phase}:{len(obs.history)}"
    )


def make_random(seed: int | str = 0) -> Strategy:
    """A random player that knocks whenever it may (each choice from :func:`choice_generator`)."""

    def act(obs: ActRequest) -> WireAction:
        rng = choice_generator(seed, obs)
        kinds = _kinds(obs)
        for kind in ("big_gin", "knock"):
            if kind in kinds:
                return rng.choice(kinds[kind])
        return rng.choice(obs.legal_actions)

    return act


def greedy(obs: ActRequest) -> WireAction:
    """Least deadwood now; knock at once."""
    kinds = _kinds(obs)
    hand = _mask(obs.hand)
    phase = obs.phase
    if phase == "misknock_response":
        return WireAction("open_hand")
    if phase in ("first_upcard", "draw", "last_chance"):
        if "take_discard" in kinds and obs.discard_top is not None:
            top = _card(obs.discard_top)
            after = min_discard_deadwood_mask(hand | (1 << top), 1 << top)
            if after < deadwood_mask(hand) or phase == "last_chance":
                return WireAction("take_discard")
        return WireAction("pass") if "pass" in kinds else WireAction("draw_stock")
    finish = _gin_or_big_gin(obs, kinds)
    if finish is not None:
        return finish
    if "knock" in kinds:
        return min(kinds["knock"], key=lambda a: deadwood_mask(hand & ~(1 << _card(a.card))))
    return min(
        kinds["discard"],
        key=lambda a: (deadwood_mask(hand & ~(1 << _card(a.card))), -CARD_VALUES[_card(a.card)]),
    )


# --- strong -----------------------------------------------------------------------------------


def _useful_to(hand: int, card: int) -> int:
    """How many cards of ``hand`` the card connects with (a rough meld potential)."""
    return (neighbours(card) & hand).bit_count()


class _View:
    """What the strong bot derives from one observation."""

    def __init__(self, obs: ActRequest) -> None:
        self.obs = obs
        self.hand = _mask(obs.hand)
        self.discards = _mask(obs.discard_pile)
        self.opp_known = _mask(obs.opponent_known)
        opp_hand = _mask(obs.opponent_hand) if obs.opponent_hand is not None else 0
        self.opp_exposed = opp_hand
        seen = self.hand | self.discards | self.opp_known | opp_hand
        self.unseen = ((1 << 52) - 1) & ~seen
        # Cards the opponent passed over or threw away: evidence of what they do not collect.
        self.opp_discarded = 0
        for event in obs.history:
            if event.player == "opponent" and event.event == "discard" and event.card:
                self.opp_discarded |= 1 << _card(event.card)

    def danger(self, card: int) -> float:
        """How likely the opponent can use this discard (higher is worse)."""
        if self.opp_exposed:
            return 3.0 * _useful_to(self.opp_exposed, card)
        score = 2.0 * _useful_to(self.opp_known, card)
        # Neighbours the opponent threw away suggest they are not collecting around it.
        score -= 0.5 * _useful_to(self.opp_discarded, card)
        # A card whose neighbours are all gone can't be melded by anybody.
        live = (neighbours(card) & (self.unseen | self.opp_known)).bit_count()
        return score + 0.15 * live

    def outs(self, hand: int) -> int:
        """Unseen cards that would lower this hand's deadwood if drawn."""
        now = deadwood_mask(hand)
        count = 0
        candidates = self.unseen
        near = 0
        m = hand
        while m:
            low = m & -m
            m ^= low
            near |= neighbours(low.bit_length() - 1)
        candidates &= near
        while candidates:
            low = candidates & -candidates
            candidates ^= low
            if min_discard_deadwood_mask(hand | low, low) < now:
                count += 1
        return count

    def opponent_deadwood_estimate(self) -> float:
        """A rough estimate of the opponent's deadwood after lay-offs."""
        if self.opp_exposed:
            return float(deadwood_mask(self.opp_exposed))
        turns = len(
            [e for e in self.obs.history if e.player == "opponent" and e.event in ("discard",)]
        )
        # A fresh random hand holds ~55 deadwood; a competent player sheds it quickly.
        return max(6.0, 55.0 - 6.5 * turns)


def _declare(view: _View, hand10: int) -> list[list[str]] | None:
    """Among least-deadwood arrangements, the one with the fewest live lay-off spots."""
    return fewest_layoff_spots(hand10, view.unseen | view.opp_known | view.opp_exposed)


@dataclass(frozen=True, slots=True)
class KnockPolicy:
    """When the strong bot knocks: always at or below ``sure``; otherwise only with a
    ``margin`` under the opponent's estimated deadwood, or once the stock is down to ``late``;
    while the stock is long and the hand is ``chase`` or less from gin with outs, never."""

    sure: int = 3
    margin: float = 4.0
    late: int = 8
    chase: int = 3


def make_strong(policy: KnockPolicy = KnockPolicy()) -> Strategy:
    """The strong bot with a knock policy (the house variants differ only in it)."""

    def act(obs: ActRequest) -> WireAction:
        return strong(obs, policy)

    return act


def strong(obs: ActRequest, policy: KnockPolicy = KnockPolicy()) -> WireAction:
    """The strongest house bot (see the module docstring)."""
    kinds = _kinds(obs)
    view = _View(obs)
    hand = view.hand
    phase = obs.phase
    if phase == "misknock_response":
        pending = obs.pending_misknock
        mine = deadwood_mask(hand)
        # Accepting scores it as a knock: worth it when we undercut.
        if pending is not None and mine <= pending.deadwood:
            return WireAction("accept_knock")
        return WireAction("open_hand")
    if phase in ("first_upcard", "draw", "last_chance"):
        if "take_discard" in kinds and obs.discard_top is not None:
            top = _card(obs.discard_top)
            now = deadwood_mask(hand)
            after = min_discard_deadwood_mask(hand | (1 << top), 1 << top)
            melds_it = deadwood_mask(hand | (1 << top)) < now  # the card joins a meld
            if phase == "last_chance" or (melds_it and after < now) or now - after >= 8:
                return WireAction("take_discard")
        return WireAction("pass") if "pass" in kinds else WireAction("draw_stock")

    finish = _gin_or_big_gin(obs, kinds)
    if finish is not None:
        return finish
    candidates = list(kinds.get("discard", []))
    if not candidates:  # last chance: only knocks
        return min(kinds["knock"], key=lambda a: deadwood_mask(hand & ~(1 << _card(a.card))))

    def score(a: WireAction) -> tuple[float, ...]:
        card = _card(a.card)
        rest = hand & ~(1 << card)
        dw = deadwood_mask(rest)
        return (dw + 1.5 * view.danger(card) - 0.3 * _useful_to(rest, card), -CARD_VALUES[card])

    choice = min(candidates, key=score)
    knocks = kinds.get("knock", [])
    if knocks:
        best = min(knocks, key=lambda a: deadwood_mask(hand & ~(1 << _card(a.card))))
        rest = hand & ~(1 << _card(best.card))
        dw = deadwood_mask(rest)
        stock = obs.stock_count
        # Chase gin while the stock is long and the hand is close with live outs.
        chase = stock >= 18 and dw <= policy.chase and view.outs(rest) >= 3
        risk = view.opponent_deadwood_estimate()
        if not chase and (dw <= policy.sure or dw < risk - policy.margin or stock <= policy.late):
            return WireAction("knock", best.card, _declare(view, rest))
    return choice


def lazy(obs: ActRequest) -> WireAction:
    """Greedy, except that it never takes from the discard pile."""
    if obs.phase in ("first_upcard", "last_chance"):
        return WireAction("pass")
    if obs.phase == "draw":
        return WireAction("draw_stock")
    return greedy(obs)


#: House bot kinds: name -> factory of a strategy from a seed.
STRATEGIES: dict[str, Callable[[int | str], Strategy]] = {
    "random": make_random,
    "greedy": lambda seed: greedy,
    "lazy": lambda seed: lazy,
    "strong": lambda seed: make_strong(),
    "expert": lambda seed: make_expert(),
    "cautious": lambda seed: make_strong(KnockPolicy(sure=1, margin=10.0, late=4, chase=5)),
    "aggressive": lambda seed: make_strong(KnockPolicy(sure=10, chase=0)),
    "gin-hunter": lambda seed: make_strong(KnockPolicy(sure=0, margin=30.0, late=6, chase=8)),
    "balanced": lambda seed: make_strong(KnockPolicy(sure=5, margin=2.0, late=10, chase=2)),
}
