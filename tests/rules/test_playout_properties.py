"""Property tests over random playouts (STYLE.md): whatever legal (and some illegal) actions the
players take, under every variant, the engine keeps its invariants.

Hypothesis draws a seed and a rule set; the seed drives a random player that mostly picks a
legal action, but also tries misknocks (knocks with any card, through ``play``) and illegal
actions, which must be refused without changing anything.
"""

from __future__ import annotations

import json
import random
from collections import Counter
from dataclasses import dataclass, field

import reference_melds as ref
from hypothesis import given
from hypothesis import strategies as st
from rules_support import assert_no_leak, examples

from arena.cards import CARDS, mask_to_cards
from arena.playing.match import play_match
from arena.playing.players import Fault, FaultKind, HeuristicPlayer, MatchContext, Turn
from arena.playing.stored import parse_record
from arena.reading.replay import verify_record
from arena.rules import (
    Action,
    ActionKind,
    DealRecord,
    EventKind,
    HandState,
    IllegalActionError,
    Outcome,
    Phase,
    RuleSet,
    legal_actions,
    new_deal,
    play,
    replay_deal,
)
from arena.rules.actions import TAKE_DISCARD, big_gin, discard, knock
from arena.rules.melds import deadwood_mask, min_discard_deadwood_mask

VARIANTS = {
    "standard": RuleSet(),
    "oklahoma": RuleSet.oklahoma(),
    "straight": RuleSet.straight(),
    "opponent may accept": RuleSet(misknock="opponent_may_accept"),
    "penalty points": RuleSet(misknock="penalty_points", misknock_penalty=15),
    "last discard chance": RuleSet(last_discard_chance=True),
    "discard of taken card": RuleSet(allow_discard_of_taken_card=True),
    "no tie undercut, no big gin": RuleSet(undercut_on_tie=False, big_gin_bonus=None),
    "house rules of the seeds": RuleSet(
        allow_discard_of_taken_card=True,
        spade_discard_doubles=True,
        big_gin_after_taking_discard=False,
        dead_hand_stock=0,
    ),
    "hollywood, blitz": RuleSet(
        match_scoring="hollywood", shutout_multiplier=1, shutout_total_multiplier=2
    ),
    "everything at once": RuleSet.oklahoma(
        misknock="opponent_may_accept",
        last_discard_chance=True,
        allow_discard_of_taken_card=True,
        dead_hand_stock=6,
        undercut_bonus=10,
        gin_bonus=20,
        big_gin_bonus=50,
    ),
}

seeds = st.integers(min_value=0, max_value=2**32 - 1)
rule_sets = st.sampled_from(list(VARIANTS.values()))
MAX_STEPS = 2000


def chaotic_action(state: HandState, rng: random.Random) -> Action:
    """A random player with a greedy streak (so deals reach gin and big gin, not only dead
    hands) that sometimes knocks with any card (a misknock when over the limit), claims big
    gin, or discards any card (often illegal)."""
    r = rng.random()
    hand = state.hands[state.to_act]
    if state.phase is Phase.DISCARD and r < 0.03:
        return knock(rng.choice(state.hand_of(state.to_act)))
    if state.phase is Phase.DISCARD and r < 0.04:
        return big_gin()
    if r < 0.06:
        return discard(rng.choice(CARDS))
    legal = legal_actions(state)
    if rng.random() < 0.25:
        return rng.choice(legal)
    enders = [a for a in legal if a.kind in (ActionKind.KNOCK, ActionKind.BIG_GIN)]
    if enders:
        gins = [
            a
            for a in enders
            if a.kind is ActionKind.BIG_GIN or deadwood_mask(hand & ~(1 << a.card)) == 0
        ]  # type: ignore[operator]
        if gins:
            return rng.choice(gins)
        if rng.random() < 0.3:
            return rng.choice(enders)
    if TAKE_DISCARD in legal and state.discard_top is not None:
        top = state.discard_top
        if min_discard_deadwood_mask(hand | 1 << top, 1 << top) < deadwood_mask(hand):
            return TAKE_DISCARD
    discards = [a for a in legal if a.kind is ActionKind.DISCARD]
    if discards:
        return min(discards, key=lambda a: deadwood_mask(hand & ~(1 << a.card)))  # type: ignore[operator]
    return rng.choice(legal)


def cards_accounted_for(state: HandState) -> None:
    """Every state, terminal ones included, holds each of the 52 cards exactly once in its
    hands, face-up discard pile, stock and the face-down knock card (seeds 000 and 004: a
    knock lays its card face down on the pile). A pending misknock's card is still in hand."""
    face_down = () if state.knock_card is None else (state.knock_card,)
    cards = [*state.hand_of(0), *state.hand_of(1), *state.discards, *state.stock, *face_down]
    assert Counter(cards) == Counter(CARDS), "cards lost or duplicated"
    assert len(state.hand_of(state.to_act)) in (10, 11)
    result = state.result
    knocked = result is not None and result.outcome not in (Outcome.DEAD, Outcome.BIG_GIN)
    assert (state.knock_card is not None) == knocked
    if result is not None:
        assert result.knock_card == state.knock_card
        showdown = [e for e in state.events if e.kind in (EventKind.KNOCK, EventKind.GIN)]
        if knocked and showdown:
            assert showdown[-1].card == state.knock_card


def check_discard_phase_actions(state: HandState) -> None:
    """Every allowed knock and discard is listed, and nothing else (RULES.md turn, rules 3-4)."""
    rules = state.rules
    hand = state.hands[state.to_act]
    allowed = hand
    if state.taken is not None and not rules.allow_discard_of_taken_card:
        allowed &= ~(1 << state.taken)
    legal = legal_actions(state)
    knocks = {a.card for a in legal if a.kind is ActionKind.KNOCK}
    assert knocks == {
        c for c in mask_to_cards(allowed) if deadwood_mask(hand & ~(1 << c)) <= state.knock_limit
    }
    big = any(a.kind is ActionKind.BIG_GIN for a in legal)
    after_draw = state.taken is None or rules.big_gin_after_taking_discard
    assert big == (deadwood_mask(hand) == 0 and rules.big_gin_allowed and after_draw)
    discards = {a.card for a in legal if a.kind is ActionKind.DISCARD}
    assert discards == (set() if state.knock_only else set(mask_to_cards(allowed)))
    if state.knock_only:  # a last-chance card, or a returned card taken back (GRA proviso)
        assert knocks or big
    assert state.knock_limit == rules.knock_limit_for(state.upcard.value)


def fingerprint(state: HandState) -> tuple[object, ...]:
    """A deep fingerprint of a state, much cheaper than a deep copy at every step.

    States are immutable values all the way down, so a change would have to reassign a field
    (caught by the identities) or something inside one (caught by the hash). The event logs
    only grow and are plain tuples of frozen events: their identity and length are enough.
    """
    events, views = state.events, state.views
    rest = state._replace(events=(), views=((), ()))
    return (hash(rest), len(events), len(views[0]), len(views[1]), *map(id, state))


def playout(seed: int, rules: RuleSet) -> tuple[HandState, list[tuple[int, Action]], int]:
    """Play one deal with the chaotic player, checking the per-step invariants."""
    rng = random.Random(seed)
    state = new_deal(rules, rng.randrange(2), rng=rng)
    actions: list[tuple[int, Action]] = []
    refused = 0
    for _ in range(MAX_STEPS):
        if state.is_over:
            break
        cards_accounted_for(state)
        seat = state.to_act
        assert legal_actions(state), "the player to act always has a legal action"
        assert legal_actions(state, 1 - seat) == ()
        for viewer in (0, 1):
            assert_no_leak(state, viewer, full_history=False)
        if state.phase is Phase.DISCARD:
            check_discard_phase_actions(state)
        if state.returned is not None:  # the GRA proviso: back only to knock that same turn
            assert state.rules.allow_discard_of_taken_card
            assert state.returned == state.discard_top and state.phase is not Phase.DISCARD
        move = chaotic_action(state, rng)
        snapshot = fingerprint(state)
        try:
            after = play(state, seat, move)
        except IllegalActionError:
            refused += 1
            assert fingerprint(state) == snapshot
            continue
        assert fingerprint(state) == snapshot, "play/apply changed its input"
        actions.append((seat, move))
        state = after
    else:
        raise AssertionError(f"deal not over after {MAX_STEPS} steps")
    cards_accounted_for(state)
    for viewer in (0, 1):
        assert_no_leak(state, viewer)
    return state, actions, refused


def check_result(state: HandState) -> None:
    """The result agrees with the scoring table and the hands."""
    deal = state.result
    assert deal is not None
    rules = state.rules
    res = deal.result
    spade_up = rules.spade_upcard_doubles and state.upcard.suit == 3
    top = state.discard_top  # the knock card is face down, not on top of the face-up pile
    spade_top = rules.spade_discard_doubles and top is not None and top.suit == 3
    assert deal.penalties == state.penalties
    if rules.misknock.value == "penalty_points":
        expected = [0, 0]
        for mk in deal.misknocks:
            expected[1 - mk.seat] += rules.misknock_penalty
        assert deal.penalties == tuple(expected)
    else:
        assert deal.penalties == (0, 0)
    if deal.knocker is None:
        assert (res.outcome, res.winner, res.points, deal.winner) == (Outcome.DEAD, None, 0, None)
        assert state.stock_count <= rules.dead_hand_stock
        assert all(len(h) == 10 for h in deal.hands)
        return
    assert res.multiplier == (2 if spade_up else 1) * (2 if spade_top else 1)
    m = res.multiplier
    knocker = mask_to_cards(_mask(deal.hands[deal.knocker]))
    defender = deal.hands[1 - deal.knocker]
    assert len(defender) == 10
    accepted = any(e.kind is EventKind.ACCEPT_KNOCK for e in state.events)
    assert res.knocker_deadwood == deadwood_mask(_mask(knocker))
    if accepted:
        assert res.knocker_deadwood > state.knock_limit
    else:
        assert res.knocker_deadwood <= state.knock_limit
    kdw, ddw = res.knocker_deadwood, res.defender_deadwood
    if res.outcome is Outcome.BIG_GIN:
        assert len(knocker) == 11 and kdw == 0 and rules.big_gin_bonus is not None
        assert ddw == ref.deadwood(defender)
        assert res.points == (ddw + rules.big_gin_bonus) * m
        assert res.layoffs == ()
        return
    assert len(knocker) == 10
    if res.outcome is Outcome.GIN:
        assert kdw == 0 and not accepted
        assert ddw == ref.deadwood(defender)
        assert res.points == (ddw + rules.gin_bonus) * m
        assert res.layoffs == ()
        return
    assert kdw > 0
    knocker_melds = [list(mm) for mm in res.knocker_melds]
    assert ddw == ref.layoff_deadwood(defender, knocker_melds)
    assert ddw == ref.knocker_tiebreak_deadwood(knocker, defender)
    if ddw > kdw:
        assert (res.outcome, res.winner, res.points) == ("knock", "knocker", (ddw - kdw) * m)
        assert deal.winner == deal.knocker
    elif ddw == kdw and not rules.undercut_on_tie:
        assert (res.outcome, res.winner, res.points, deal.winner) == ("tie", None, 0, None)
    else:
        bonus = rules.undercut_bonus
        assert (res.outcome, res.winner) == ("undercut", "defender")
        assert res.points == (kdw - ddw + bonus) * m
        assert deal.winner == 1 - deal.knocker


def _mask(cards: tuple[int, ...] | list[int]) -> int:
    out = 0
    for c in cards:
        out |= 1 << c
    return out


@examples(150)
@given(seed=seeds, rules=rule_sets)
def test_random_playouts_keep_the_invariants(seed: int, rules: RuleSet) -> None:
    final, _, _ = playout(seed, rules)
    check_result(final)


@examples(60)
@given(seed=seeds, rules=rule_sets)
def test_a_deal_record_replays_to_the_same_states(seed: int, rules: RuleSet) -> None:
    final, actions, _ = playout(seed, rules)
    record = DealRecord.from_states(final, actions)
    states = list(replay_deal(record))
    assert states[-1] == final
    assert len(states) == len(actions) + 1
    # Through the JSON form too.
    again = DealRecord.from_dict(rules, json.loads(json.dumps(record.to_dict())))
    assert again == record
    assert list(replay_deal(again, validate=False))[-1] == final


@examples(25)
@given(seed=seeds)
def test_bounded_playout_with_only_legal_actions_ends(seed: int) -> None:
    rng = random.Random(seed)
    for rules in VARIANTS.values():
        state = new_deal(rules, seed % 2, rng=rng)
        steps = 0
        while not state.is_over:
            state = play(state, state.to_act, rng.choice(legal_actions(state)))
            steps += 1
            assert steps < MAX_STEPS
        check_result(state)


# --- whole matches ------------------------------------------------------------------------------


@dataclass
class ChaosPlayer:
    """A player that mostly plays legal moves but also misknocks, sends illegal actions and
    faults, so match records hold every kind of entry."""

    seed: int
    name: str = "chaos"
    rng: random.Random = field(init=False)

    def __post_init__(self) -> None:
        self.rng = random.Random(self.seed)

    def start(self, context: MatchContext) -> Fault | None:
        return None

    def end(self, summary: dict[str, object]) -> None:
        return None

    def act(self, turn: Turn) -> Action | Fault:
        obs = turn.observation
        r = self.rng.random()
        if r < 0.02:
            return Fault(FaultKind.TIMEOUT, "scripted timeout")
        if r < 0.04:
            return discard(self.rng.choice(CARDS))
        if obs.phase is Phase.DISCARD and r < 0.08:
            return knock(self.rng.choice(obs.hand))
        return self.rng.choice(obs.legal_actions)


@examples(15)
@given(seed=seeds, rules=st.sampled_from(list(VARIANTS.values())))
def test_a_match_record_replays_hand_by_hand(seed: int, rules: RuleSet) -> None:
    rules = rules.replace(max_strikes=10_000, target=min(rules.target, 100), best_of=3)
    record = play_match([ChaosPlayer(seed), HeuristicPlayer()], rules, seed=seed)
    assert record.forfeit is None
    if rules.match_scoring == "hollywood":  # every game is played out
        assert sum(record.games_won) == 3 and max(record.games_won) >= 2
    else:
        assert max(record.games_won) == 2
    assert verify_record(parse_record(json.loads(json.dumps(record.to_dict())))) == []
    for _, hand in record.all_hands():
        states = list(replay_deal(hand.deal_record(rules)))
        final = states[-1]
        assert final.result == hand.result
        check_result(final)
    for fault in record.faults:
        assert fault.seat == 0, "the heuristic house player never faults"
        assert fault.fallback is not None and fault.fallback["action"] != "knock"
