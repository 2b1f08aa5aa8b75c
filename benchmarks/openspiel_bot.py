"""OpenSpiel's ``SimpleGinRummyBot`` behind the bot protocol: wire observation in, wire action out.

The bot (pyspiel's ``make_simple_gin_rummy_bot``, the ``bench`` extra) reads a pyspiel state, so
each request is turned into one: a pyspiel ``gin_rummy`` deal replayed so that the state the bot
sees holds exactly what the request tells it (its hand, the discard pile with its top card, the
stock count, whose turn and which phase). The opponent's hidden cards are filled in from the cards
the request does not show; the bot never reads them (it reads only its own observation tensor and
the legal actions), so its answer is the one it would give in the real deal.

How the replayed deal is made, with ``k`` cards in the discard pile ``d1..dk`` (bottom to top):
pyspiel player 0 takes a first upcard and discards ``d1``; then each turn draws the next pile card
from the stock and discards it at once, so after ``k`` discards the stock holds ``32 - k`` cards,
as in the real deal (10 + 10 + k + stock = 52), and player ``k % 2`` is to draw. The bot plays
that seat. A first-upcard request is a fresh deal (the bot is pyspiel player 1 when the
opponent has passed). A discard request replays the draw just made (the taken discard, or the
stock card the request shows in the history).

Differences from the pyspiel game, all in the arena's rules: the arena lays off for the defender
(the bot never would), has no "wall" (the standard deal dies when a discard leaves two stock
cards) and has big gin (the bot knocks an eleven-card gin as gin, as in pyspiel). pyspiel lets a
player discard the card just taken from the pile and the standard rules do not: when the bot
picks it, the adapter applies the bot's own discard rule (the highest-ranked deadwood card)
without that card. A request the pyspiel game has no counterpart for (the misknock response)
is answered with ``open_hand``.

>>> from arena.cards import parse_card
>>> [TO_PYSPIEL[parse_card(c)] for c in ("As", "2c", "Kh")]
[0, 14, 51]
"""

from __future__ import annotations

from typing import Any

from arena.cards import RANKS, SUITS
from arena.cards import parse_card as _parse
from arena.protocol.wire import ActRequest, WireAction

__all__ = ["TO_PYSPIEL", "OpenSpielSimpleBot", "load_pyspiel"]

#: Our card index -> pyspiel's (suits ordered s, c, d, h; rank within the suit).
TO_PYSPIEL = tuple("scdh".index(SUITS[c // 13]) * 13 + c % 13 for c in range(52))
FROM_PYSPIEL = tuple(TO_PYSPIEL.index(i) for i in range(52))

DRAW_UPCARD = 52
DRAW_STOCK = 53
PASS = 54
KNOCK = 55
MELD_BASE = 56


def load_pyspiel() -> Any:
    """The ``pyspiel`` module; ImportError (with the install hint) when the extra is missing."""
    try:
        import pyspiel  # noqa: PLC0415
    except ImportError as exc:
        raise ImportError(f"OpenSpiel not installed: pip install -e .[bench] ({exc})") from None
    return pyspiel


def _ps(card: str) -> int:
    return TO_PYSPIEL[_parse(card)]


def _name(ps_card: int) -> str:
    """Our text of a pyspiel card."""
    card = FROM_PYSPIEL[ps_card]
    return RANKS[card % 13] + SUITS[card // 13]


class OpenSpielSimpleBot:
    """A strategy (``ActRequest -> WireAction``) that asks pyspiel's SimpleGinRummyBot."""

    def __init__(self, pyspiel: Any | None = None) -> None:
        self.pyspiel = pyspiel or load_pyspiel()
        self.game = self.pyspiel.load_game("gin_rummy")
        self.initial = self.game.new_initial_state()  # rebuilding it costs ms: clone this one
        params = self.game.get_parameters()
        self.bots = [self.pyspiel.make_simple_gin_rummy_bot(params, p) for p in (0, 1)]
        self.utils = self.pyspiel.gin_rummy.GinRummyUtils(13, 4, 10)
        melds = self.utils.int_to_meld
        self.meld_cards = {i: list(melds[i]) for i in range(len(melds))}

    def __call__(self, obs: ActRequest) -> WireAction:
        legal = {(a.action, a.card) for a in obs.legal_actions}
        if obs.phase in ("first_upcard", "draw"):
            passed = any(e.event == "pass" for e in obs.history)
            first = obs.phase == "first_upcard"
            hand = [_ps(c) for c in obs.hand]
            state, me = self._before_draw(first, passed, hand, obs.discard_pile)
            answer = self._step(state, me)
            if answer == DRAW_UPCARD and ("take_discard", None) in legal:
                return WireAction("take_discard")
            return WireAction("pass" if ("pass", None) in legal else "draw_stock")
        if obs.phase == "discard":
            return self._discard(obs, legal)
        # The pyspiel game has no counterpart (misknock response, last chance): the first of
        # open_hand / pass / whatever is listed.
        for kind in ("open_hand", "pass"):
            if (kind, None) in legal:
                return WireAction(kind)
        return obs.legal_actions[0]

    # --- the replayed deal --------------------------------------------------------------------

    def _step(self, state: Any, me: int) -> int:
        """The bot's answer for pyspiel player ``me`` (restarted: it keeps a knock's plan)."""
        bot = self.bots[me]
        bot.restart()
        return int(bot.step(state))

    def _other_discard(self, hand: list[int], taken: int) -> int:
        """The bot's own discard rule (the highest-ranked card of the deadwood left by a least
        deadwood meld group) without the card just taken, which pyspiel lets a player discard
        and the arena's standard rules do not."""
        melded = {c for meld in self.utils.best_meld_group(hand) for c in meld}
        rest = [c for c in hand if c not in melded and c != taken]
        if rest:
            return max(rest, key=lambda c: (c % 13, c // 13))
        others = [c for c in hand if c != taken]
        return min(others, key=lambda c: self.utils.min_deadwood([x for x in hand if x != c]))

    def _before_draw(
        self, first_upcard: bool, passed: bool, hand: list[int], pile_text: list[str]
    ) -> tuple[Any, int]:
        """A pyspiel state where player ``me`` (returned) holds ``hand`` and is to draw from the
        pile (a first-upcard state, after the opponent's pass if ``passed``)."""
        pile = [_ps(c) for c in pile_text]
        state = self.initial.clone()
        shown = set(hand) | set(pile)
        fill = [c for c in range(52) if c not in shown]
        if first_upcard:
            me = 1 if passed else 0
            other = fill[:10]
            deal = hand + other if me == 0 else other + hand
            for c in [*deal, pile[-1]]:
                state.apply_action(c)
            if passed:
                state.apply_action(PASS)
            return state, me
        k = len(pile)
        me = k % 2
        if me == 0:
            first = hand[0]  # the card player 0 takes as the first upcard
            mine = [c for c in hand if c != first] + [pile[0]]
            deal = [*mine, *fill[:10], first]
        else:
            other = [*fill[:9], pile[0]]
            deal = [*other, *hand, fill[9]]
        for c in deal:
            state.apply_action(c)
        state.apply_action(DRAW_UPCARD)
        state.apply_action(pile[0])
        for c in pile[1:]:
            state.apply_action(DRAW_STOCK)
            state.apply_action(c)  # the chance node: this card comes off the stock
            state.apply_action(c)  # and is discarded at once
        return state, me

    def _discard(self, obs: ActRequest, legal: set[tuple[str, str | None]]) -> WireAction:
        hand = [_ps(c) for c in obs.hand]
        last = obs.history[-1] if obs.history else None
        pile = list(obs.discard_pile)
        if obs.taken_card is not None:
            drawn = _ps(obs.taken_card)
            pile.append(obs.taken_card)
        else:
            assert last is not None and last.event == "draw_stock" and last.card is not None
            drawn = _ps(last.card)
        before = [c for c in hand if c != drawn]
        # The state before this draw: a first upcard if the deal has had no discard yet and the
        # card was taken, else a normal draw.
        first = obs.taken_card is not None and not any(e.event == "discard" for e in obs.history)
        passed = any(e.event == "pass" for e in obs.history)
        state, me = self._before_draw(first, passed, before, pile)
        if obs.taken_card is not None:
            state.apply_action(DRAW_UPCARD)
        else:
            state.apply_action(DRAW_STOCK)
            state.apply_action(drawn)
        bot = self.bots[me]
        bot.restart()
        answer = int(bot.step(state))
        if answer != KNOCK:
            if ("discard", _name(answer)) not in legal:
                answer = self._other_discard(hand, drawn)
            return WireAction("discard", _name(answer))
        state.apply_action(KNOCK)
        card = int(bot.step(state))
        state.apply_action(card)
        melds: list[list[str]] = []
        while True:
            action = int(bot.step(state))
            if action < MELD_BASE:
                break
            melds.append([_name(c) for c in self.meld_cards[action - MELD_BASE]])
            state.apply_action(action)
        if ("knock", _name(card)) in legal:
            return WireAction("knock", _name(card), melds or None)
        # The card it knocks with was just taken: the bot's rule without it (melds: the best).
        card = self._other_discard(hand, drawn)
        kind = "knock" if ("knock", _name(card)) in legal else "discard"
        return WireAction(kind, _name(card))
