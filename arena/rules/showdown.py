"""The showdown after a knock, gin or big gin, and the public ``settle_knock``.

The knocker's melds are the declared ones, or the least-deadwood arrangement that leaves the
defender the most deadwood; the defender then melds and lays off (chains included, only after a
plain knock) to minimise their own deadwood; the scoring table decides the rest.

>>> r = settle_knock("As 2s 3s Kd Kh Kc 7h 8h 9h 5c", "4s 5s Qd Jd 9c 9d 2h 3h Th Ac")
>>> r.outcome.value, r.winner.value, r.knocker_deadwood, r.defender_deadwood, r.points
('knock', 'knocker', 5, 44, 39)
"""

from __future__ import annotations

from collections.abc import Iterable

from arena.cards import (
    CARD_VALUES,
    Card,
    DuplicateCardError,
    cards_to_mask,
    mask_to_cards,
    parse_card,
    parse_hand,
)
from arena.rules.actions import parse_melds
from arena.rules.melds import (
    Arrangement,
    best_arrangements,
    check_declared_melds,
    deadwood_mask,
    knocker_melds_for,
    settle_layoffs,
    value_mask,
)
from arena.rules.ruleset import RuleSet
from arena.rules.scoring import HandResult, Outcome, score_showdown

__all__ = ["MisknockError", "settle", "settle_knock"]


class MisknockError(ValueError):
    """A knock over the limit, or a big gin that is not all melded or not allowed."""


def knock_deadwood(hand: int, melds: tuple[int, ...] | None) -> int:
    """The knocker's deadwood: with declared melds if any, else the least possible."""
    if melds is None:
        return deadwood_mask(hand)
    return value_mask(hand & ~check_declared_melds(hand, melds))


def settle(
    rules: RuleSet,
    kind: Outcome,
    knocker: int,
    defender: int,
    melds: tuple[int, ...] | None,
    multiplier: int = 1,
) -> HandResult:
    """Settle a showdown between two hand masks (kind: knock, gin or big gin)."""
    if melds is not None:
        used = check_declared_melds(knocker, melds)
        arrangement = Arrangement(melds, knocker & ~used, value_mask(knocker & ~used))
    else:
        arrangement = knocker_melds_for(knocker, defender, kind is Outcome.KNOCK)
    if kind is Outcome.KNOCK:
        lay = settle_layoffs(defender, arrangement.melds)
        ddw, dmelds, dcards, layoffs = lay.deadwood, lay.melds, lay.deadwood_cards, lay.layoffs
    else:
        darr = best_arrangements(defender)[0]
        ddw, dmelds, dcards, layoffs = darr.deadwood, darr.melds, darr.deadwood_cards, ()
    scored = score_showdown(
        rules,
        kind,
        knocker_deadwood=arrangement.deadwood,
        defender_deadwood=ddw,
        multiplier=multiplier,
    )
    return HandResult(
        outcome=scored.outcome,
        winner=scored.winner,
        points=scored.points,
        knocker_deadwood=scored.knocker_deadwood,
        defender_deadwood=scored.defender_deadwood,
        multiplier=multiplier,
        knocker_melds=tuple(mask_to_cards(m) for m in arrangement.melds),
        knocker_deadwood_cards=mask_to_cards(arrangement.deadwood_cards),
        defender_melds=tuple(mask_to_cards(m) for m in dmelds),
        defender_deadwood_cards=mask_to_cards(dcards),
        layoffs=layoffs,
    )


def settle_knock(
    knocker: str | Iterable[str | Card],
    defender: str | Iterable[str | Card],
    rules: RuleSet | None = None,
    *,
    knocker_melds: Iterable[Iterable[str | Card]] | None = None,
    upcard: str | Card | None = None,
    discard_top: str | Card | None = None,
) -> HandResult:
    """The showdown after a knock (10 knocker cards: knock or gin) or a big gin (11 cards).

    Raises :class:`MisknockError` for a knock over the limit (with the declared melds, if
    any) or a big gin that is not all melded or not allowed; ``upcard`` is required under
    Oklahoma (it sets the limit and the spade doubling). ``discard_top`` is the face-up card
    the knock card was laid on, for ``spade_discard_doubles`` (None: an empty pile).
    """
    rules = rules if rules is not None else RuleSet()
    k_cards = parse_hand(knocker, (10, 11))
    d_cards = parse_hand(defender, (10,))
    k_mask, d_mask = cards_to_mask(k_cards), cards_to_mask(d_cards)
    overlap = k_mask & d_mask
    if overlap:
        raise DuplicateCardError(f"card {mask_to_cards(overlap)[0]} is in both hands")
    melds = None
    if knocker_melds is not None:
        melds = parse_melds([list(m) for m in knocker_melds])
    limit = rules.knock_limit
    multiplier = 1
    if rules.upcard_sets_knock_limit or rules.spade_upcard_doubles:
        if upcard is None:
            raise ValueError("Oklahoma rules need the upcard: it sets the limit and the doubling")
        up = parse_card(upcard)
        limit = rules.knock_limit_for(CARD_VALUES[up])
        multiplier = 2 if rules.spade_upcard_doubles and up.suit == 3 else 1
    if rules.spade_discard_doubles and discard_top is not None:
        top = parse_card(discard_top)
        if top.suit == 3:
            multiplier *= 2
        if cards_to_mask((top,)) & (k_mask | d_mask):
            raise DuplicateCardError(f"card {top} is both on the discard pile and in a hand")
    dw = knock_deadwood(k_mask, melds)
    if len(k_cards) == 11:
        if not rules.big_gin_allowed:
            raise MisknockError("big gin is not allowed under these rules")
        if dw:
            raise MisknockError(f"not big gin: {dw} points of the eleven cards are unmelded")
        kind = Outcome.BIG_GIN
    elif dw > limit:
        raise MisknockError(f"misknock: deadwood {dw} is over the knock limit {limit}")
    else:
        kind = Outcome.GIN if dw == 0 else Outcome.KNOCK
    return settle(rules, kind, k_mask, d_mask, melds, multiplier)
