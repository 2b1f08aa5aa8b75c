"""The ``expert`` house bot: card tracking and a one-draw lookahead over the unseen cards.

It reads only the observation, as any bot must, and has no randomness: the same request always
gets the same answer.

* **Card tracking.** The unseen cards are those in neither its hand, the discard pile nor the
  opponent's known cards; the history says which discards the opponent took (cards it keeps),
  threw away and let pass (it drew from the stock with the card on top).
* **Discard.** Each discard leaves a ten-card hand, valued by its deadwood plus a penalty for
  the card's use to the opponent (melds it makes with the opponent's known cards or with cards
  still live, less when the opponent threw away or passed its neighbours; a card whose melds
  are all dead costs nothing). The five best are then valued again, less the expected gain of
  the next draw (over every unseen card: the deadwood after drawing it and discarding the best
  card), and the best of those is thrown.
* **Draw.** It takes the discard when the hand it leaves (after the best discard) beats the
  expected hand after a stock draw by a margin, or when taking it lets it knock at once.
* **Knock.** Gin and big gin at once; otherwise it knocks unless it is close to gin with
  enough live gin cards while the stock is long, or the opponent's deadwood, estimated from
  the cards it took and the turns played, is likely to undercut.
* **Melds.** Among its least-deadwood arrangements it declares the one that leaves the fewest
  lay-off spots for the cards the opponent may hold.

The lookahead is exact, and cheap: a draw that connects with no card of the hand is scored in
closed form, and the least deadwood after a discard comes from the hand's free deadwood cards
(:func:`_min_discard`). Its think time is about a millisecond a decision on average
(``benchmarks/bench_strength.py`` measures it).
"""

from __future__ import annotations

from dataclasses import dataclass

from arena.bots.melding import fewest_layoff_spots, neighbours
from arena.cards import CARD_VALUES, mask_to_cards, parse_card
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.melds import (
    RANK_MASKS,
    deadwood_cards_mask,
    deadwood_mask,
)

__all__ = ["ExpertPolicy", "expert", "make_expert"]

ALL = (1 << 52) - 1


@dataclass(frozen=True, slots=True)
class ExpertPolicy:
    """The expert's weights (the house bot uses the defaults)."""

    #: Weight of the next draw's expected deadwood gain in a hand's value.
    lookahead: float = 1.0
    #: Weight of a discard's use to the opponent.
    danger: float = 1.0
    #: Take the discard when it leaves a hand this much better than a stock draw's expectation.
    take_margin: float = 0.0
    #: Candidates valued with the lookahead (the rest by deadwood and danger alone).
    candidates: int = 5
    #: Keep going for gin (not knocking) with at most this deadwood ...
    chase: int = 2
    #: ... at least this many live gin cards ...
    chase_outs: int = 4
    #: ... and at least this many stock cards.
    chase_stock: int = 16
    #: Knock only when the estimated opponent deadwood is more than this above ours ...
    margin: float = 0.0
    #: ... unless ours is at most this.
    sure: int = 4


def _mask(cards: list[str]) -> int:
    m = 0
    for c in cards:
        m |= 1 << parse_card(c)
    return m


def _bits(mask: int) -> list[int]:
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


_NEIGHBOURS = tuple(neighbours(c) for c in range(52))
_RANK_VALUES = tuple(CARD_VALUES[r] for r in range(13))


def _melds_with(card: int) -> list[int]:
    """Every three-card meld containing ``card``, as masks of the two other cards."""
    rank = card % 13
    base = card - rank
    others = _bits(RANK_MASKS[rank] & ~(1 << card))
    out = [(1 << x) | (1 << y) for i, x in enumerate(others) for y in others[i + 1 :]]
    for lo in (-2, -1, 0):
        if rank + lo >= 0 and rank + lo + 2 < 13:
            run = sum(1 << (base + rank + lo + i) for i in range(3))
            out.append(run & ~(1 << card))
    return out


_MELDS_WITH = tuple(_melds_with(c) for c in range(52))


class _Table:
    """What the expert knows in one request."""

    def __init__(self, obs: ActRequest) -> None:
        self.obs = obs
        self.hand = _mask(obs.hand)
        self.pile = _mask(obs.discard_pile)
        self.opp_known = _mask(obs.opponent_known)
        if obs.opponent_hand is not None:
            self.opp_known |= _mask(obs.opponent_hand)
        self.unseen = ALL & ~(self.hand | self.pile | self.opp_known)
        self.opp_threw = 0  # discarded by the opponent
        self.opp_passed = 0  # on top when the opponent drew from the stock or passed
        self.opp_turns = 0
        top: int | None = int(parse_card(obs.upcard))  # the deal's first upcard
        for e in obs.history:
            card = None if e.card is None else int(parse_card(e.card))
            if e.event == "discard" and card is not None:
                if e.player == "opponent":
                    self.opp_threw |= 1 << card
                    self.opp_turns += 1
                top = card
            elif e.player == "opponent" and e.event in ("draw_stock", "pass") and top is not None:
                self.opp_passed |= 1 << top
            elif e.event == "take_discard":
                top = None

    def danger(self, card: int) -> float:
        """How much the opponent may want this card (0 when no meld with it can still form)."""
        # Cards the opponent may hold: unseen or known; not ours, not in the pile.
        theirs = self.unseen | self.opp_known
        score = 0.0
        for pair in _MELDS_WITH[card]:
            if pair & ~theirs:
                continue
            known = (pair & self.opp_known).bit_count()
            score += (0.15, 1.0, 3.0)[known]
        if not score:
            return 0.0
        evidence = _NEIGHBOURS[card] & (self.opp_threw | self.opp_passed)
        if (1 << card) & self.opp_passed:
            score *= 0.3
        return score * (0.5 if evidence else 1.0)

    def draw_gain(self, rest: int) -> float:
        """Expected deadwood saved by the next stock draw to the ten-card hand ``rest``."""
        pool = self.unseen
        n = pool.bit_count()
        if n == 0:
            return 0.0
        now = deadwood_mask(rest)
        if now == 0:
            return 0.0
        cards = _bits(rest)
        nine = min(deadwood_mask(rest ^ (1 << c)) for c in cards)
        near = 0
        for c in cards:
            near |= _NEIGHBOURS[c]
        total = 0
        for x in _bits(pool & ~near):
            after = nine + CARD_VALUES[x]
            if after < now:
                total += now - after
        for x in _bits(pool & near):
            total += now - min(now, _min_discard(rest | (1 << x)))
        return total / n

    def gin_outs(self, rest: int) -> int:
        """Unseen cards that would give the ten-card hand ``rest`` gin."""
        count = 0
        near = 0
        for c in _bits(rest):
            near |= _NEIGHBOURS[c]
        for x in _bits(self.unseen & near):
            with_x = rest | (1 << x)
            if any(deadwood_mask(with_x ^ (1 << c)) == 0 for c in _bits(rest)):
                count += 1
        return count

    def opponent_deadwood(self) -> float:
        """A rough estimate of the opponent's deadwood now."""
        if self.obs.opponent_hand is not None:
            return float(deadwood_mask(_mask(self.obs.opponent_hand)))
        taken = self.opp_known.bit_count()
        return max(4.0, 50.0 - 5.0 * self.opp_turns - 4.0 * taken)


def _min_discard(hand: int) -> int:
    """The least deadwood left by one discard from ``hand``.

    Discarding a card that is deadwood in a least-deadwood arrangement lowers the deadwood by
    its value, and no discard lowers it by more than its own value, so the answer is the
    deadwood less the highest such card (exact for hands without three of a rank; with one,
    every discard is tried).
    """
    free = deadwood_cards_mask(hand)
    dw = deadwood_mask(hand)
    if free:
        return dw - max(CARD_VALUES[c] for c in _bits(free))
    best = dw
    for rank in range(12, -1, -1):  # highest first: stop once no card can beat the best
        if dw - _RANK_VALUES[rank] >= best:
            break
        cards = hand & RANK_MASKS[rank]
        while cards:
            low = cards & -cards
            cards ^= low
            v = deadwood_mask(hand ^ low)
            best = min(best, v)
    return best


def _best_discards(
    table: _Table, hand: int, exclude: int, policy: ExpertPolicy
) -> list[tuple[float, int]]:
    """(value, card) of every discard from ``hand`` (not in ``exclude``), best first."""
    rough = []
    for card in _bits(hand & ~exclude):
        rest = hand ^ (1 << card)
        rough.append(
            (
                deadwood_mask(rest) + policy.danger * table.danger(card),
                -CARD_VALUES[card],
                card,
            )
        )
    rough.sort()
    scored = []
    for value, _, card in rough[: policy.candidates]:
        rest = hand ^ (1 << card)
        scored.append((value - policy.lookahead * table.draw_gain(rest), card))
    scored.sort()
    return scored


def _declare(table: _Table, rest: int) -> list[list[str]] | None:
    """Among least-deadwood arrangements, the one with the fewest live lay-off spots."""
    return fewest_layoff_spots(rest, table.unseen | table.opp_known)


def make_expert(policy: ExpertPolicy = ExpertPolicy()) -> ExpertStrategy:
    """The expert strategy with these weights."""
    return ExpertStrategy(policy)


class ExpertStrategy:
    """A callable strategy: ``ActRequest -> WireAction``."""

    def __init__(self, policy: ExpertPolicy) -> None:
        self.policy = policy

    def __call__(self, obs: ActRequest) -> WireAction:
        return expert(obs, self.policy)


def expert(obs: ActRequest, policy: ExpertPolicy = ExpertPolicy()) -> WireAction:
    """The expert's answer (see the module docstring)."""
    kinds: set[str] = {a.action for a in obs.legal_actions}
    table = _Table(obs)
    if obs.phase == "misknock_response":
        pending = obs.pending_misknock
        if (
            pending is not None
            and "accept_knock" in kinds
            and deadwood_mask(table.hand) <= pending.deadwood
        ):
            return WireAction("accept_knock")
        return WireAction("open_hand")
    if obs.phase in ("first_upcard", "draw", "last_chance"):
        return _draw(obs, table, kinds, policy)
    return _discard(obs, table, policy)


def _draw(obs: ActRequest, table: _Table, kinds: set[str], policy: ExpertPolicy) -> WireAction:
    decline = WireAction("pass") if "pass" in kinds else WireAction("draw_stock")
    if "take_discard" not in kinds or obs.discard_top is None:
        return decline
    top = int(parse_card(obs.discard_top))
    hand = table.hand
    with_top = hand | (1 << top)
    limit = obs.knock_limit
    take_dw = min(deadwood_mask(with_top ^ (1 << c)) for c in _bits(hand))
    if obs.phase == "last_chance":
        return WireAction("take_discard") if take_dw <= limit else decline
    if take_dw <= limit and take_dw < deadwood_mask(hand):
        return WireAction("take_discard")
    # The stock draw's expected deadwood after its best discard, against the take's.
    stock_dw = deadwood_mask(hand) - table.draw_gain(hand)
    if take_dw + policy.take_margin < stock_dw:
        return WireAction("take_discard")
    return decline


def _discard(obs: ActRequest, table: _Table, policy: ExpertPolicy) -> WireAction:
    kinds: dict[str, list[WireAction]] = {}
    for a in obs.legal_actions:
        kinds.setdefault(a.action, []).append(a)
    if "big_gin" in kinds:
        return kinds["big_gin"][0]
    hand = table.hand
    knocks = {int(parse_card(a.card)): a for a in kinds.get("knock", []) if a.card is not None}
    for card, action in knocks.items():
        if deadwood_mask(hand ^ (1 << card)) == 0:
            return WireAction("knock", action.card, _declare(table, hand ^ (1 << card)))
    allowed = 0
    for a in kinds.get("discard", []):
        if a.card is not None:
            allowed |= 1 << int(parse_card(a.card))
    if knocks:
        card = min(knocks, key=lambda c: (deadwood_mask(hand ^ (1 << c)), -CARD_VALUES[c]))
        rest = hand ^ (1 << card)
        if not allowed or _should_knock(obs, table, rest, policy):
            return WireAction("knock", knocks[card].card, _declare(table, rest))
    scored = _best_discards(table, hand, ALL & ~allowed, policy)
    card = scored[0][1]
    return WireAction("discard", str(mask_to_cards(1 << card)[0]))


def _should_knock(obs: ActRequest, table: _Table, rest: int, policy: ExpertPolicy) -> bool:
    dw = deadwood_mask(rest)
    if (
        obs.stock_count >= policy.chase_stock
        and dw <= policy.chase
        and table.gin_outs(rest) >= policy.chase_outs
    ):
        return False
    if dw <= policy.sure:
        return True
    return dw + policy.margin < table.opponent_deadwood()
