"""Rebuild a deal from one ``/act`` body alone, as a stateless bot would, and list what disagrees.

:func:`inconsistencies` replays the request's ``history`` from the deal's start (ten cards each,
the upcard alone on the pile, 31 in the stock, the non-dealer first) and compares the result
with what the body says now: the hand, the discard pile, the stock count, the opponent's hand
size and known cards, the phase, whose turn it is, the card just taken, the pending misknock and
the legal actions. A position no real deal can reach shows up as a non-empty list. It reads the
body only (never the engine's state), so it checks what a bot author can check.
"""

from __future__ import annotations

from arena.cards import parse_card
from arena.protocol.wire import ActRequest
from arena.rules.melds import deadwood_mask

__all__ = ["inconsistencies"]


def _mask(cards: set[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


def inconsistencies(req: ActRequest) -> list[str]:
    """Everything in ``req`` that its own history contradicts (empty: a reachable position)."""
    problems: list[str] = []
    rules = req.rules
    hist = req.history
    hand = set(req.hand)
    if len(hand) != len(req.hand):
        problems.append(f"the hand repeats a card: {req.hand}")
    policy = rules.get("misknock", "open_hand")
    # Walk my own events backwards from the hand I hold now to the hand I was dealt.
    mine = set(hand)
    for i in range(len(hist) - 1, -1, -1):
        e = hist[i]
        if e.player != "you":
            continue
        if e.event in ("take_discard", "draw_stock"):
            if e.card is None:
                problems.append(f"history[{i}]: my own {e.event} carries no card")
            mine.discard(e.card or "?")
        elif e.event == "discard":
            mine.add(e.card or "?")
        elif e.event == "misknock":
            answered = i + 1 < len(hist) and hist[i + 1].event == "open_hand"
            if policy != "opponent_may_accept" or answered:  # the knock card went on the pile
                mine.add(e.card or "?")
    # A misknock of mine awaiting the opponent's answer: it is not my turn.
    if hist and hist[-1].player == "you" and hist[-1].event == "misknock":
        problems.append("asked to act while my own misknock awaits the opponent's answer")
    if len(mine) != 10:
        problems.append(f"the rebuilt starting hand has {len(mine)} cards: {sorted(mine)}")
    if req.upcard in mine:
        problems.append(f"the upcard {req.upcard} is in my starting hand")

    you_first = req.dealer == "opponent"
    to_act = "you" if you_first else "opponent"
    phase = "first_upcard"
    offers = 0
    stock_only = False
    knock_only = False
    taken: str | None = None
    taken_from_opponent = False  # the card just taken was a discard (not the first upcard)
    returned: str | None = None  # taken from a discard and discarded straight back
    pending: str | None = None
    pile = [req.upcard]
    stock = 31
    opp_count = 10
    opp_known: set[str] = set()
    my = set(mine)
    dead_stock = int(rules.get("dead_hand_stock", 2))
    chance = bool(rules.get("last_discard_chance", False))

    def flip(who: str) -> str:
        return "opponent" if who == "you" else "you"

    def lay_down(who: str, card: str) -> None:
        nonlocal opp_count, phase, to_act, taken, knock_only, returned
        if who == "you":
            if card not in my:
                problems.append(f"I discarded {card}, which I did not hold")
            my.discard(card)
        else:
            if card in my or card in pile:
                problems.append(f"the opponent discarded {card}, which is elsewhere")
            opp_known.discard(card)
            opp_count -= 1
        pile.append(card)
        returned = card if card == taken and taken_from_opponent else None
        taken = None
        to_act = flip(who)
        if stock <= dead_stock:
            phase = "last_chance" if chance and not knock_only else "over"
        else:
            phase = "draw"
        knock_only = False

    for i, e in enumerate(hist):
        where = f"history[{i}] ({e.player} {e.event})"
        if e.player != to_act:
            problems.append(f"{where}: it was {to_act}'s turn")
        if e.event == "pass":
            if phase != "first_upcard":
                problems.append(f"{where}: a pass in phase {phase}")
            offers += 1
            to_act = flip(e.player)
            if offers == 2:
                phase, stock_only = "draw", True
        elif e.event == "take_discard":
            if phase not in ("first_upcard", "draw", "last_chance") or stock_only:
                problems.append(f"{where}: a take in phase {phase}")
            if not pile or e.card != pile[-1]:
                problems.append(f"{where}: took {e.card}, the pile's top was {pile[-1:]}")
            if pile:
                pile.pop()
            card = e.card or "?"
            if e.player == "you":
                my.add(card)
            else:
                opp_known.add(card)
                opp_count += 1
            # Only to knock: in the last chance, or taking back a card just returned to you.
            knock_only = phase == "last_chance" or (phase == "draw" and returned is not None)
            taken_from_opponent = phase != "first_upcard"
            phase, taken, offers, returned = "discard", card, 2, None
        elif e.event == "draw_stock":
            if phase != "draw":
                problems.append(f"{where}: a stock draw in phase {phase}")
            stock -= 1
            if e.player == "you":
                my.add(e.card or "?")
            elif e.card is not None:
                problems.append(f"{where}: the opponent's stock draw shows its card")
            else:
                opp_count += 1
            phase, taken, stock_only, returned = "discard", None, False, None
        elif e.event == "discard":
            if phase != "discard":
                problems.append(f"{where}: a discard in phase {phase}")
            if (
                e.card is not None
                and e.card == taken
                and not rules.get("allow_discard_of_taken_card")
            ):
                problems.append(f"{where}: discarded the card just taken")
            lay_down(e.player, e.card or "?")
        elif e.event == "misknock":
            if phase != "discard":
                problems.append(f"{where}: a misknock in phase {phase}")
            if policy == "opponent_may_accept":
                pending, phase, to_act = e.card, "misknock_response", flip(e.player)
            else:
                lay_down(e.player, e.card or "?")
        elif e.event == "open_hand":
            if phase != "misknock_response" or pending is None:
                problems.append(f"{where}: open_hand without a pending misknock")
            else:
                lay_down(flip(e.player), pending)
                pending = None
        else:
            problems.append(f"{where}: the deal would be over")

    def differ(what: str, sent: object, rebuilt: object) -> None:
        if sent != rebuilt:
            problems.append(f"{what}: sent {sent}, the history gives {rebuilt}")

    differ("whose turn", "you", to_act)
    differ("phase", req.phase, phase)
    differ("hand", sorted(hand), sorted(my))
    differ("discard pile", req.discard_pile, pile)
    differ("discard top", req.discard_top, pile[-1] if pile else None)
    differ("stock count", req.stock_count, stock)
    differ("opponent's hand size", req.opponent_hand_size, opp_count)
    differ("opponent's known cards", sorted(req.opponent_known), sorted(opp_known))
    differ("card just taken", req.taken_card, taken if phase == "discard" else None)
    differ(
        "pending misknock",
        None if req.pending_misknock is None else req.pending_misknock.card,
        pending,
    )
    differ("cards accounted for", 52, len(my) + len(pile) + stock + opp_count)
    if req.opponent_hand is not None:
        seen = set(req.opponent_hand)
        differ("exposed hand size", len(req.opponent_hand), req.opponent_hand_size)
        if not opp_known <= seen:
            problems.append("the exposed hand lacks a card the opponent is known to hold")
        if seen & (my | set(pile)):
            problems.append("the exposed hand holds a card that is elsewhere")
    if not rules.get("upcard_sets_knock_limit"):
        differ("knock limit", req.knock_limit, rules.get("knock_limit"))
    problems += _legal_problems(req, phase, stock_only, knock_only, taken)
    return problems


def _legal_problems(
    req: ActRequest, phase: str, stock_only: bool, knock_only: bool, taken: str | None
) -> list[str]:
    """The legal actions a bot can work out itself, against those sent."""
    sent = {(a.action, a.card) for a in req.legal_actions if a.melds is None}
    expect: set[tuple[str, str | None]]
    if phase == "first_upcard":
        expect = {("take_discard", None), ("pass", None)}
    elif phase == "draw":
        take = ("take_discard", None)
        expect = {("draw_stock", None)} if stock_only else {("draw_stock", None), take}
        if req.rules.get("allow_discard_of_taken_card") and take not in sent:
            expect.discard(take)  # a card discarded straight back: taken again only to knock
    elif phase == "misknock_response":
        expect = {("accept_knock", None), ("open_hand", None)}
    elif phase == "last_chance":
        expect = {("pass", None)} | (
            {("take_discard", None)} if ("take_discard", None) in sent else set()
        )
    elif phase == "discard":
        hand = _mask(set(req.hand))
        restricted = "" if req.rules.get("allow_discard_of_taken_card") else (taken or "")
        allowed = [c for c in req.hand if c != restricted]
        expect = set() if knock_only else {("discard", c) for c in allowed}
        for c in allowed:
            if deadwood_mask(hand & ~(1 << parse_card(c))) <= req.knock_limit:
                expect.add(("knock", c))
        after_take = taken is not None and not req.rules.get("big_gin_after_taking_discard", True)
        big_gin = req.rules.get("big_gin_bonus") is not None and not after_take
        if big_gin and deadwood_mask(hand) == 0:
            expect.add(("big_gin", None))
    else:
        return []
    if sent != expect:
        return [
            f"legal actions: sent {sorted(map(str, sent - expect))} too many, "
            f"{sorted(map(str, expect - sent))} missing"
        ]
    return []
