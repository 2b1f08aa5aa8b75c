"""Every ``/act`` body of real play rebuilds from its own history (property test of ``rebuild``).

Random legal play, with misknocks thrown in, under each misknock policy and the last-chance and
Association variants: at every turn the body the arena would send passes
:func:`rebuild.inconsistencies`. This guards the rebuilder the checker tests rely on (it must not
reject a reachable position) and the wire's promise that a request is self-contained.
"""

from __future__ import annotations

import random
from collections.abc import Sequence

from hypothesis import given, settings
from hypothesis import strategies as st
from rebuild import inconsistencies

from arena.playing.players import Turn
from arena.protocol.wire import act_request
from arena.rules.actions import Action, ActionError, ActionKind, Phase, knock
from arena.rules.hand import legal_actions, new_deal, play
from arena.rules.observation import observe
from arena.rules.ruleset import MisknockPolicy, RuleSet

RULES = st.builds(
    RuleSet,
    misknock=st.sampled_from(list(MisknockPolicy)),
    last_discard_chance=st.booleans(),
    allow_discard_of_taken_card=st.booleans(),
    dead_hand_stock=st.sampled_from([0, 2, 10]),
)


def _move(state_rng: random.Random, legal: tuple[Action, ...], hand: Sequence[int]) -> Action:
    if legal and legal[0].kind is ActionKind.DISCARD and state_rng.random() < 0.08:
        return knock(state_rng.choice(hand))  # within the limit or not: a knock or a misknock
    return state_rng.choice(legal)


@settings(max_examples=100)
@given(seed=st.integers(0, 10**6), rules=RULES)
def test_every_request_of_random_play_rebuilds_from_its_history(seed: int, rules: RuleSet) -> None:
    rng = random.Random(seed)
    state = new_deal(rules, seed % 2, rng=rng)
    turns = 0
    while not state.is_over:
        seat = state.to_act
        obs = observe(state, seat)
        turn = Turn(obs, "m", 0, 0, f"m-r{turns + 1}", rules, (0, 0), (0, 0), 1000)
        body = act_request(turn, rules.to_dict())
        assert inconsistencies(body) == [], (turns, body.phase, [str(e) for e in body.history])
        allowed = [c for c in obs.hand if c != obs.taken] if obs.phase is Phase.DISCARD else []
        action = _move(rng, obs.legal_actions, allowed)
        if action.kind is ActionKind.KNOCK and action not in legal_actions(state):
            try:
                state = play(state, seat, action)
            except ActionError:  # a card the rules forbid now: play a listed action instead
                state = play(state, seat, rng.choice(obs.legal_actions))
        else:
            state = play(state, seat, action)
        turns += 1
