"""An independent referee: re-scores a match record from the record alone, by docs/RULES.md.

It was written from ``docs/RULES.md``, the seeds and the record format
(``arena/playing/records.py``, the JSON of ``gin-arena match``) without reading the engine
(``arena/rules/``), and imports nothing from ``arena``: cards, melds, deadwood, lay-offs, the
deal's state machine, scoring, game bonuses, Hollywood scoring and the match winner are all
computed here again, so that a mistake shared by the engine and its own tests still shows up as a
difference.

:func:`referee_match` takes a record as JSON (a dict, as ``MatchRecord.to_dict()`` or
``gin-arena match`` gives it), replays every deal from its deck and actions, checks that every
action was legal for the player whose turn it was (and that every fault's fallback is the one
RULES.md names), recomputes every deal's outcome, points, multiplier, lay-offs and final
hands, every game's points, bonuses, totals, winner and ``net``, and the match winner, and
returns the differences as sentences (an empty list when the record agrees). What RULES.md
leaves to the engine (the canonical order among equally good knocker arrangements, the seeded
deck and cut) is checked only as far as RULES.md pins it.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, replace
from functools import lru_cache
from itertools import product
from typing import Any

__all__ = ["RefereeError", "referee_match"]

RANKS = "A23456789TJQK"
SUITS = "cdhs"
SPADES = 3


class RefereeError(Exception):
    """A recorded action the rules do not allow, or a record the referee cannot follow."""


def parse(text: str) -> int:
    """``"Td"`` -> suit * 13 + rank (the referee's own numbering)."""
    if len(text) != 2 or text[0] not in RANKS or text[1] not in SUITS:
        raise RefereeError(f"not a canonical card: {text!r}")
    return SUITS.index(text[1]) * 13 + RANKS.index(text[0])


def name(card: int) -> str:
    return RANKS[card % 13] + SUITS[card // 13]


def value(card: int) -> int:
    return min(card % 13 + 1, 10)


def mask_of(cards: Any) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def show(mask: int) -> str:
    return " ".join(name(c) for c in cards_of(mask))


def _all_melds() -> list[int]:
    melds = []
    for rank in range(13):
        four = [s * 13 + rank for s in range(4)]
        melds.append(mask_of(four))
        for skip in four:
            melds.append(mask_of(c for c in four if c != skip))
    for suit in range(4):
        for lo in range(13):
            for hi in range(lo + 2, 13):
                melds.append(mask_of(suit * 13 + r for r in range(lo, hi + 1)))
    return melds


ALL_MELDS = _all_melds()
MELD_SET = frozenset(ALL_MELDS)
MELDS_WITH = [[m for m in ALL_MELDS if m >> c & 1] for c in range(52)]


def is_meld(mask: int) -> bool:
    return mask in MELD_SET


def deadwood_of(mask: int) -> int:
    return sum(value(c) for c in cards_of(mask))


@lru_cache(maxsize=1 << 18)
def min_deadwood(mask: int) -> int:
    """The least deadwood over every arrangement of ``mask`` into disjoint melds."""
    if not mask:
        return 0
    low = mask & -mask
    c = low.bit_length() - 1
    best = value(c) + min_deadwood(mask ^ low)
    for m in MELDS_WITH[c]:
        if m & mask == m:
            best = min(best, min_deadwood(mask ^ m))
    return best


@lru_cache(maxsize=1 << 14)
def optimal_arrangements(mask: int) -> tuple[tuple[int, ...], ...]:
    """Every partition of ``mask`` into melds (and deadwood) with the least deadwood."""
    if not mask:
        return ((),)
    target = min_deadwood(mask)
    low = mask & -mask
    c = low.bit_length() - 1
    out: list[tuple[int, ...]] = []
    if value(c) + min_deadwood(mask ^ low) == target:
        out.extend(optimal_arrangements(mask ^ low))
    for m in MELDS_WITH[c]:
        if m & mask == m and min_deadwood(mask ^ m) == target:
            out.extend((m, *rest) for rest in optimal_arrangements(mask ^ m))
    return tuple(out)


def _run_bounds(meld: int) -> tuple[int, int, int] | None:
    """(suit, low rank, high rank) of a run, None for a set."""
    cs = cards_of(meld)
    if len({c // 13 for c in cs}) != 1:
        return None
    return cs[0] // 13, cs[0] % 13, cs[-1] % 13


def layoffs_valid(melds: list[int], laid: list[tuple[int, int]]) -> bool:
    """Whether laying each ``(card, meld index)`` off at once leaves every meld a meld."""
    extended = list(melds)
    for card, i in laid:
        if not 0 <= i < len(melds) or extended[i] >> card & 1:
            return False
        extended[i] |= 1 << card
    for i, m in enumerate(melds):
        if extended[i] == m:
            continue
        added = extended[i] & ~m
        bounds = _run_bounds(m)
        if bounds is None:  # a set: only its fourth card
            if added.bit_count() != 1 or len(cards_of(m)) != 3 or not is_meld(extended[i]):
                return False
        elif not is_meld(extended[i]) or _run_bounds(extended[i]) is None:
            return False
    return True


def defender_best(defender: int, melds: list[int]) -> tuple[int, list[tuple[int, int]]]:
    """The defender's least deadwood after their own melds and lay-offs onto ``melds``."""
    options: list[tuple[int, list[int]]] = []
    for card in cards_of(defender):
        fits = []
        for i, m in enumerate(melds):
            bounds = _run_bounds(m)
            if bounds is None:
                if card % 13 == cards_of(m)[0] % 13 and m.bit_count() == 3:
                    fits.append(i)
            elif card // 13 == bounds[0]:
                fits.append(i)
        if fits:
            options.append((card, fits))
    best = min_deadwood(defender)
    best_laid: list[tuple[int, int]] = []
    choices = [[None, *fits] for _, fits in options]
    for pick in product(*choices):
        laid = [(options[k][0], i) for k, i in enumerate(pick) if i is not None]
        if not laid or not layoffs_valid(melds, laid):
            continue
        dw = min_deadwood(defender & ~mask_of(c for c, _ in laid))
        if dw < best:
            best, best_laid = dw, laid
    return best, best_laid


@dataclass
class Rules:
    """The rule set fields the referee reads (from the record's ``rules``)."""

    raw: dict[str, Any]

    def __getattr__(self, key: str) -> Any:
        try:
            return self.raw[key]
        except KeyError:
            raise AttributeError(key) from None


@dataclass
class DealOutcome:
    outcome: str
    winner: int | None
    points: int
    multiplier: int
    knocker: int | None
    knocker_deadwood: int | None
    defender_deadwood: int | None
    penalties: list[int]
    misknocks: list[tuple[int, int, int]]
    hands: list[int]
    #: The knocker's melds (declared, or every arrangement RULES.md allows), for the check.
    knocker_melds_allowed: list[list[int]] | None = None
    #: The defender's least deadwood with the recorded knocker melds, for the check.
    defender_melds_checked: bool = False


def _melds_from(action: dict[str, Any]) -> list[int] | None:
    melds = action.get("melds")
    if not melds:  # absent, null and [] all mean "not declared"
        return None
    out = []
    for meld in melds:
        cards = meld.split() if isinstance(meld, str) else list(meld)
        out.append(mask_of(parse(c) for c in cards))
    return out


def _valid_declared(melds: list[int], hand: int, cards: int) -> bool:
    """Declared melds: each a meld, disjoint, from ``hand``; ``cards`` is their expected count
    of cards (all of them for big gin) or None."""
    seen = 0
    for m in melds:
        if not is_meld(m) or m & seen or m & ~hand:
            return False
        seen |= m
    return cards < 0 or seen == hand


@dataclass
class Deal:
    """One deal replayed from its deck and actions, by RULES.md."""

    rules: Rules
    dealer: int
    deck: list[int]
    hands: list[int] = field(default_factory=lambda: [0, 0])
    stock: list[int] = field(default_factory=list)
    #: The face-up pile, bottom first, with each card's original discarder (None: the upcard).
    pile: list[tuple[int, int | None]] = field(default_factory=list)
    phase: str = "first_upcard"
    to_act: int = 0
    stock_only: bool = False
    taken: int | None = None
    taken_owner: int | None = None
    drew_stock: int | None = None
    only_knocks: bool = False
    #: A last-chance discard was taken: a misknock with it leaves the deal to die.
    last_chance_taken: bool = False
    events: int = 0
    face_down: int | None = None
    penalties: list[int] = field(default_factory=lambda: [0, 0])
    misknocks: list[tuple[int, int, int]] = field(default_factory=list)
    pending: tuple[int, int, int, list[int] | None, int | None] | None = None
    outcome: DealOutcome | None = None
    upcard: int = 0
    limit: int = 10
    #: Which rules paths this deal went through (for tests that the runs cover them).
    seen: Counter[str] = field(default_factory=Counter)

    def __post_init__(self) -> None:
        if sorted(self.deck) != list(range(52)):
            raise RefereeError("the deck is not 52 distinct cards")
        nd = 1 - self.dealer
        self.hands[nd] = mask_of(self.deck[0:20:2])
        self.hands[self.dealer] = mask_of(self.deck[1:20:2])
        self.upcard = self.deck[20]
        self.pile = [(self.upcard, None)]
        self.stock = list(self.deck[21:])
        self.to_act = nd
        r = self.rules
        self.limit = r.knock_limit
        if r.upcard_sets_knock_limit:
            self.limit = 0 if self.upcard % 13 == 0 else value(self.upcard)

    # -- what a player may do ---------------------------------------------------------------

    def knock_possible(self, hand: int, taken: int, *, after_discard_take: bool) -> bool:
        """Whether ``hand`` (eleven cards, ``taken`` just taken) allows a knock within the
        limit, gin or big gin."""
        r = self.rules
        for k in cards_of(hand):
            if k == taken and not r.allow_discard_of_taken_card:
                continue
            if min_deadwood(hand & ~(1 << k)) <= self.limit:
                return True
        return self.big_gin_allowed(after_discard_take) and min_deadwood(hand) == 0

    def big_gin_allowed(self, after_discard_take: bool) -> bool:
        r = self.rules
        if r.big_gin_bonus is None:
            return False
        return not after_discard_take or r.big_gin_after_taking_discard

    def card_count(self) -> int:
        n = sum(h.bit_count() for h in self.hands) + len(self.stock) + len(self.pile)
        # the face-down knock card, or a misknock card awaiting the opponent's choice
        return n + (self.face_down is not None or self.pending is not None)

    # -- applying an action -----------------------------------------------------------------

    def apply(self, seat: int, action: dict[str, Any]) -> None:
        if self.outcome is not None:
            raise RefereeError("an action after the deal ended")
        if seat != self.to_act:
            raise RefereeError(f"seat {'ab'[seat]} acted out of turn ({self.phase})")
        kind = action.get("action")
        self.events += 1
        handler = getattr(self, f"_phase_{self.phase}")
        handler(seat, kind, action)
        if self.card_count() != 52:
            raise RefereeError(f"{self.card_count()} cards accounted for")

    def _phase_first_upcard(self, seat: int, kind: str, action: dict[str, Any]) -> None:
        if kind == "pass":
            if seat != self.dealer:
                self.to_act = self.dealer
            else:
                self.phase, self.to_act, self.stock_only = "draw", 1 - self.dealer, True
        elif kind == "take_discard":
            self._take(seat)
        else:
            raise RefereeError(f"{kind} at the first upcard")

    def _take(self, seat: int) -> None:
        card, owner = self.pile.pop()
        self.hands[seat] |= 1 << card
        self.taken, self.taken_owner, self.drew_stock = card, owner, None
        self.phase = "discard"

    def _phase_draw(self, seat: int, kind: str, action: dict[str, Any]) -> None:
        if kind == "draw_stock":
            if not self.stock:
                raise RefereeError("draw from an empty stock")
            card = self.stock.pop(0)
            self.hands[seat] |= 1 << card
            self.taken, self.taken_owner, self.drew_stock = None, None, card
            self.phase = "discard"
            self.only_knocks = False
        elif kind == "take_discard":
            if self.stock_only:
                raise RefereeError("take_discard after both players passed the upcard")
            top, owner = self.pile[-1]
            proviso = self.rules.allow_discard_of_taken_card and owner == seat
            if proviso and not self.knock_possible(
                self.hands[seat] | 1 << top, top, after_discard_take=True
            ):
                raise RefereeError(
                    f"took back own discard {name(top)} without a knock (the proviso)"
                )
            self._take(seat)
            self.only_knocks = proviso
            self.seen["proviso take-back"] += proviso
        else:
            raise RefereeError(f"{kind} in the draw")
        self.stock_only = False

    def _phase_last_chance(self, seat: int, kind: str, action: dict[str, Any]) -> None:
        if kind == "pass":
            self._end_dead()
        elif kind == "take_discard":
            top = self.pile[-1][0]
            if not self.knock_possible(self.hands[seat] | 1 << top, top, after_discard_take=True):
                raise RefereeError("last-chance take without a knock")
            self._take(seat)
            self.only_knocks = self.last_chance_taken = True
            self.seen["last-chance take"] += 1
        else:
            raise RefereeError(f"{kind} at the last chance")

    def _phase_misknock_response(self, seat: int, kind: str, action: dict[str, Any]) -> None:
        assert self.pending is not None
        knocker, card, dw, melds, top = self.pending
        self.seen[kind] += 1
        if kind == "accept_knock":
            self.pending, self.face_down = None, card
            self._showdown(knocker, melds, top, misknock_deadwood=dw)
        elif kind == "open_hand":
            self.pending = None
            self._face_up(knocker, card, returned_owner=None)
        else:
            raise RefereeError(f"{kind} in a misknock response")

    def _phase_discard(self, seat: int, kind: str, action: dict[str, Any]) -> None:
        r = self.rules
        hand = self.hands[seat]
        after_take = self.taken is not None
        card = parse(action["card"]) if action.get("card") is not None else None
        melds = _melds_from(action)
        if kind == "big_gin":
            if not self.big_gin_allowed(after_take):
                raise RefereeError("big gin is not allowed here")
            if min_deadwood(hand):
                raise RefereeError(f"big gin with deadwood {min_deadwood(hand)}")
            if melds is not None and not _valid_declared(melds, hand, hand.bit_count()):
                raise RefereeError("big gin with invalid declared melds")
            top = self.pile[-1][0] if self.pile else None
            self._showdown(seat, melds, top, big=True)
            return
        if card is None or not hand >> card & 1:
            raise RefereeError(f"{kind} of a card not in the hand: {action.get('card')}")
        if card == self.taken and not r.allow_discard_of_taken_card:
            raise RefereeError(f"{kind} of the card just taken ({name(card)})")
        rest = hand & ~(1 << card)
        if kind == "discard":
            if self.only_knocks:
                raise RefereeError("a discard where only a knock is allowed")
            self.hands[seat] = rest
            self._face_up(seat, card, returned_owner=self.taken_owner if card == self.taken else -1)
            return
        if kind != "knock":
            raise RefereeError(f"{kind} in the discard phase")
        if melds is not None:
            if not _valid_declared(melds, rest, -1):
                raise RefereeError("a knock with invalid declared melds")
            dw = deadwood_of(rest & ~mask_of_all(melds))
        else:
            dw = min_deadwood(rest)
        top = self.pile[-1][0] if self.pile else None
        self.hands[seat] = rest
        if dw <= self.limit:
            self.face_down = card
            self._showdown(seat, melds, top)
            return
        self.misknocks.append((seat, card, dw))
        self.seen["misknock" + (" after a take-back" if self.only_knocks else "")] += 1
        policy = r.misknock
        if policy == "opponent_may_accept":
            self.pending = (seat, card, dw, melds, top)
            self.phase, self.to_act = "misknock_response", 1 - seat
            return
        if policy == "penalty_points":
            self.penalties[1 - seat] += r.misknock_penalty
        self._face_up(seat, card, returned_owner=self.taken_owner if card == self.taken else -1)

    def _face_up(self, seat: int, card: int, returned_owner: int | None) -> None:
        """``card`` goes face up on the pile (a discard, or a misknock card standing as one);
        ``returned_owner`` is the original discarder when it is the card just taken, else -1."""
        owner = seat if returned_owner == -1 else returned_owner
        self.pile.append((card, owner))
        self.taken = self.taken_owner = self.drew_stock = None
        self.only_knocks = False
        r = self.rules
        other = 1 - seat
        if len(self.stock) <= r.dead_hand_stock:
            if self.last_chance_taken:  # a misknock on the last chance: no second chance
                self.seen["misknock on the last chance"] += 1
                self._end_dead()
                return
            if r.last_discard_chance:  # asked even when only a pass is possible
                self.phase, self.to_act = "last_chance", other
                return
            self._end_dead()
            return
        if self.events >= r.max_actions_per_deal:  # the arena's safeguard: dead at once
            self._end_dead()
            return
        self.phase, self.to_act = "draw", other

    def _end_dead(self) -> None:
        safeguard = self.phase != "last_chance" and len(self.stock) > self.rules.dead_hand_stock
        self.seen["dead at the safeguard" if safeguard else "dead"] += 1
        self.outcome = DealOutcome(
            "dead", None, 0, 1, None, None, None, self.penalties, self.misknocks, self.hands
        )
        self.phase = "over"

    def _multiplier(self, top: int | None) -> int:
        r = self.rules
        m = 1
        if r.spade_upcard_doubles and self.upcard // 13 == SPADES:
            m *= 2
        if r.spade_discard_doubles and top is not None and top // 13 == SPADES:
            m *= 2
        return m

    def _showdown(
        self,
        knocker: int,
        melds: list[int] | None,
        top: int | None,
        *,
        big: bool = False,
        misknock_deadwood: int | None = None,
    ) -> None:
        r = self.rules
        kh, dh = self.hands[knocker], self.hands[1 - knocker]
        if melds is not None:
            allowed = [melds]
            kdw = deadwood_of(kh & ~mask_of_all(melds))
        else:
            allowed = [list(a) for a in optimal_arrangements(kh)]
            kdw = min_deadwood(kh)
        if misknock_deadwood is not None and misknock_deadwood != kdw:
            raise RefereeError("accepted misknock deadwood changed")
        mult = self._multiplier(top)
        if big or kdw == 0:
            ddw = min_deadwood(dh)
            outcome = "big_gin" if big else "gin"
            bonus = r.big_gin_bonus if big else r.gin_bonus
            winner: int | None = knocker
            points = ddw + bonus
        else:
            results = [defender_best(dh, a)[0] for a in allowed]
            ddw = max(results)
            allowed = [a for a, d in zip(allowed, results, strict=True) if d == ddw]
            if ddw < kdw or (ddw == kdw and r.undercut_on_tie):
                outcome, winner, points = "undercut", 1 - knocker, kdw - ddw + r.undercut_bonus
            elif ddw == kdw:
                outcome, winner, points = "tie", None, 0
            else:
                outcome, winner, points = "knock", knocker, ddw - kdw
        self.outcome = DealOutcome(
            outcome,
            winner,
            points * mult,
            mult,
            knocker,
            kdw,
            ddw,
            self.penalties,
            self.misknocks,
            self.hands,
            knocker_melds_allowed=allowed,
        )
        self.phase = "over"

    # -- the fallback a fault must get --------------------------------------------------------

    def fallback_ok(self, action: dict[str, Any]) -> bool:
        """Whether ``action`` is the safe fallback RULES.md names for the current phase."""
        kind = action.get("action")
        if self.phase in ("first_upcard", "last_chance"):
            return kind == "pass"
        if self.phase == "draw":
            return kind == "draw_stock"
        if self.phase == "misknock_response":
            return kind == "open_hand"
        if kind != "discard":
            return False
        card = parse(action["card"])
        if self.drew_stock is not None:
            return card == self.drew_stock
        hand = self.hands[self.to_act]
        if card == self.taken and not self.rules.allow_discard_of_taken_card:
            return False
        # "the highest-value deadwood card" (of a best arrangement of the eleven cards)
        dead = set()
        for arr in optimal_arrangements(hand):
            dead |= set(cards_of(hand & ~mask_of_all(list(arr))))
        dead.discard(self.taken if not self.rules.allow_discard_of_taken_card else -1)
        if not dead:
            return hand >> card & 1 == 1
        return card in dead and value(card) == max(value(c) for c in dead)


def mask_of_all(melds: list[int]) -> int:
    m = 0
    for x in melds:
        m |= x
    return m


# -- checking a deal's record -------------------------------------------------------------------


def _seat(letter: str | None) -> int | None:
    return None if letter is None else "ab".index(letter)


def referee_deal(
    rules: Rules, hand: dict[str, Any], where: str, seen: Counter[str] | None = None
) -> tuple[DealOutcome, list[str]]:
    """Replay one deal record; the outcome and the differences from the record. ``seen``
    counts the rules paths the deal went through."""
    diffs: list[str] = []
    deck_text = hand["deck"]
    deck = [parse(deck_text[i : i + 2]) for i in range(0, len(deck_text), 2)]
    deal = Deal(rules, _seat(hand["dealer"]) or 0, deck)
    for n, entry in enumerate(hand["actions"]):
        seat, action = entry[0], entry[1]
        fault = entry[3] if len(entry) > 3 else None
        if action.get("melds"):
            deal.seen[f"declared melds ({action['action']})"] += 1
        if fault is not None:
            deal.seen[f"fault fallback in {deal.phase}"] += 1
        if fault is not None and not deal.fallback_ok(action):
            diffs.append(f"{where}: action {n} fallback {action} is not RULES.md's for {fault}")
        try:
            deal.apply(seat, action)
        except RefereeError as exc:
            raise RefereeError(f"{where}: action {n} {action}: {exc}") from None
    out = deal.outcome
    if out is None:
        raise RefereeError(f"{where}: the actions end before the deal does ({deal.phase})")
    if seen is not None:
        seen.update(deal.seen)
        seen[f"outcome {out.outcome}"] += 1
        seen[f"multiplier {out.multiplier}"] += out.knocker is not None
        seen["lay-offs"] += bool(hand["layoffs"])

    def differ(key: str, mine: object, theirs: object) -> None:
        if mine != theirs:
            diffs.append(f"{where}: {key}: referee {mine!r}, record {theirs!r}")

    differ("outcome", out.outcome, hand["outcome"])
    differ("winner", out.winner, _seat(hand["winner"]))
    differ("points", out.points, hand["points"])
    differ("knocker", out.knocker, _seat(hand["knocker"]))
    differ("knocker_deadwood", out.knocker_deadwood, hand["knocker_deadwood"])
    differ("defender_deadwood", out.defender_deadwood, hand["defender_deadwood"])
    if out.knocker is not None:
        differ("multiplier", out.multiplier, hand["multiplier"])
    differ("penalties", out.penalties, [hand["penalties"]["a"], hand["penalties"]["b"]])
    recorded_mk = [(_seat(m["seat"]), parse(m["card"]), m["deadwood"]) for m in hand["misknocks"]]
    differ("misknocks", out.misknocks, recorded_mk)
    for s in (0, 1):
        got = mask_of(parse(c) for c in hand["hands"]["ab"[s]].split())
        differ(f"hand {'ab'[s]}", show(out.hands[s]), show(got))
    if out.knocker is not None and out.knocker_melds_allowed is not None:
        km = [mask_of(parse(c) for c in m.split()) for m in hand["knocker_melds"]]
        if not any(sorted(km) == sorted(a) for a in out.knocker_melds_allowed):
            diffs.append(
                f"{where}: knocker_melds {hand['knocker_melds']} not an arrangement RULES.md"
                f" allows ({[show(x) for x in out.knocker_melds_allowed[0]]} would be)"
            )
        _check_defender(out, hand, km, where, diffs)
    return out, diffs


def _check_defender(
    out: DealOutcome, hand: dict[str, Any], km: list[int], where: str, diffs: list[str]
) -> None:
    assert out.knocker is not None
    dh = out.hands[1 - out.knocker]
    dm = [mask_of(parse(c) for c in m.split()) for m in hand["defender_melds"]]
    laid = [(parse(x["card"]), x["meld"]) for x in hand["layoffs"]]
    if out.outcome in ("gin", "big_gin") and laid:
        diffs.append(f"{where}: lay-offs after {out.outcome}")
    if not _valid_declared(dm, dh, -1):
        diffs.append(f"{where}: defender_melds {hand['defender_melds']} are not melds of the hand")
        return
    laid_mask = mask_of(c for c, _ in laid)
    if laid_mask & mask_of_all(dm) or laid_mask & ~dh or not layoffs_valid(km, laid):
        diffs.append(f"{where}: layoffs {hand['layoffs']} are not valid")
        return
    shown = deadwood_of(dh & ~mask_of_all(dm) & ~laid_mask)
    if shown != hand["defender_deadwood"]:
        diffs.append(
            f"{where}: the defender's melds and lay-offs leave {shown},"
            f" defender_deadwood says {hand['defender_deadwood']}"
        )


# -- games and the match ------------------------------------------------------------------------


@dataclass
class GameTally:
    points: list[int] = field(default_factory=lambda: [0, 0])
    won: list[int] = field(default_factory=lambda: [0, 0])
    reached: int | None = None

    def over(self, target: int) -> bool:
        return max(self.points) >= target


def settle(rules: Rules, t: GameTally) -> dict[str, Any]:
    """A closed game's bonuses, totals, winner and net, by RULES.md."""
    reacher = t.reached
    if reacher is None:
        reacher = 0 if t.points[0] >= t.points[1] else 1
    other = 1 - reacher
    shutout = t.points[other] == 0
    game_bonus = [0, 0]
    game_bonus[reacher] = rules.game_bonus * (rules.shutout_multiplier if shutout else 1)
    box = [rules.box_bonus * t.won[s] for s in (0, 1)]
    totals = [t.points[s] + game_bonus[s] + box[s] for s in (0, 1)]
    if shutout:
        totals[reacher] *= rules.shutout_total_multiplier
    winner = reacher if totals[reacher] >= totals[other] else other
    return {
        "winner": winner,
        "points": t.points,
        "totals": totals,
        "game_bonus": game_bonus,
        "box_bonus": box,
        "hands_won": t.won,
        "shutout": shutout,
        "net": totals[winner] - totals[1 - winner],
    }


def _next_dealer(rules: Rules, dealer: int, out: DealOutcome) -> int:
    if out.knocker is None and out.outcome == "dead":
        return dealer if rules.dead_hand_dealer == "same" else 1 - dealer
    if out.winner is None or rules.next_dealer == "alternate":
        return 1 - dealer
    return 1 - out.winner if rules.next_dealer == "loser" else out.winner


def _add(t: GameTally, seat: int, points: int, target: int, *, win: bool) -> None:
    """Points to ``seat``; the first seat taken to the target by them reached it first."""
    if not points and not win:
        return
    t.points[seat] += points
    if win:
        t.won[seat] += 1
    if t.reached is None and t.points[seat] >= target:
        t.reached = seat


def _score_deal(t: GameTally, out: DealOutcome, target: int, *, penalties: bool = True) -> None:
    """A deal's misknock penalties (scored during the deal, so first), then its winner's
    points."""
    if penalties:
        for s in (0, 1):
            _add(t, s, out.penalties[s], target, win=False)
    if out.winner is not None:
        _add(t, out.winner, out.points, target, win=True)


def _compare_game(mine: dict[str, Any], game: dict[str, Any], where: str) -> list[str]:
    diffs = []
    for key, val in mine.items():
        theirs = game[key]
        if isinstance(theirs, dict):
            theirs = [theirs["a"], theirs["b"]]
        if key == "winner":
            theirs = _seat(theirs)
        if val != theirs:
            diffs.append(f"{where}: {key}: referee {val!r}, record {theirs!r}")
    return diffs


def referee_match(record: dict[str, Any], seen: Counter[str] | None = None) -> list[str]:
    """Every difference between ``record`` and RULES.md's reading of its decks and actions;
    ``seen`` (if given) counts the rules paths the match went through."""
    rules = Rules(record["rules"])
    seen = Counter() if seen is None else seen
    try:
        if rules.match_scoring == "hollywood":
            return _referee_hollywood(rules, record, seen)
        return _referee_games(rules, record, seen)
    except RefereeError as exc:
        return [f"seed {record['seed']}: {exc}"]


def _referee_games(rules: Rules, record: dict[str, Any], seen: Counter[str]) -> list[str]:
    diffs: list[str] = []
    seed = record["seed"]
    need = rules.best_of // 2 + 1
    wins = [0, 0]
    first = _seat(record["games"][0]["first_dealer"]) if record["games"] else None
    for game in record["games"]:
        where = f"seed {seed} game {game['index']}"
        gd = _seat(game["first_dealer"])
        if first is not None and gd != (first + game["index"]) % 2:
            diffs.append(f"{where}: first dealer {game['first_dealer']} does not alternate")
        t = GameTally()
        dealer = gd
        for hand in game["hands"]:
            hw = f"{where} deal {hand['index']}"
            if t.over(rules.target):
                diffs.append(f"{hw}: played after the game reached the target")
            if _seat(hand["dealer"]) != dealer:
                diffs.append(f"{hw}: dealer {hand['dealer']}, RULES.md says {'ab'[dealer or 0]}")
            out, d = referee_deal(rules, hand, hw, seen)
            diffs += d
            _score_deal(t, out, rules.target)
            dealer = _next_dealer(rules, _seat(hand["dealer"]) or 0, out)
        if not t.over(rules.target):
            diffs.append(f"{where}: the game ended before the target")
        diffs += _close_game(rules, t, game, where, seen, wins)
    diffs += _forfeited(rules, record, seen)
    diffs += _match_end(record, wins, need, rules)
    return diffs


def _close_game(
    rules: Rules,
    t: GameTally,
    game: dict[str, Any],
    where: str,
    seen: Counter[str],
    wins: list[int],
) -> list[str]:
    """Settle one game from its tally, count what it reached, compare it with the record's
    game and add its winner to ``wins``."""
    mine = settle(rules, t)
    seen["shutout"] += mine["shutout"]
    seen["box bonus overturns the target"] += mine["winner"] != t.reached
    wins[mine["winner"]] += 1
    return _compare_game(mine, game, where)


def _forfeited(rules: Rules, record: dict[str, Any], seen: Counter[str]) -> list[str]:
    """A forfeit's unfinished game (its deals and points) and the deal it cut short (every
    action legal, the deal not over)."""
    diffs: list[str] = []
    seed = record["seed"]
    unfinished = record["unfinished_game"]
    if record["forfeit"] is None or unfinished is None:
        return diffs
    seen["forfeit"] += 1
    t = GameTally()
    for hand in unfinished["hands"]:
        out, d = referee_deal(rules, hand, f"seed {seed} unfinished deal {hand['index']}", seen)
        diffs += d
        _score_deal(t, out, rules.target)
    points = [unfinished["points"]["a"], unfinished["points"]["b"]]
    if t.points != points:
        diffs.append(f"seed {seed}: unfinished game points referee {t.points}, record {points}")
    cut = record["interrupted_deal"]
    if cut is not None:
        deck = [parse(cut["deck"][i : i + 2]) for i in range(0, 104, 2)]
        deal = Deal(rules, _seat(cut["dealer"]) or 0, deck)
        for n, entry in enumerate(cut["actions"]):
            try:
                deal.apply(entry[0], entry[1])
            except RefereeError as exc:
                diffs.append(f"seed {seed}: interrupted deal action {n}: {exc}")
                break
    return diffs


def _match_end(record: dict[str, Any], wins: list[int], need: int, rules: Rules) -> list[str]:
    diffs: list[str] = []
    seed = record["seed"]
    games_won = [record["games_won"]["a"], record["games_won"]["b"]]
    if wins != games_won:
        diffs.append(f"seed {seed}: games_won referee {wins}, record {games_won}")
    if record["forfeit"] is not None:
        seat = _seat(record["forfeit"]["seat"])
        expect = None if seat is None else 1 - seat
        if _seat(record["winner"]) != expect:
            diffs.append(f"seed {seed}: forfeit by {seat} but winner {record['winner']}")
        return diffs
    if rules.match_scoring == "hollywood":
        if len(record["games"]) != rules.best_of:
            diffs.append(f"seed {seed}: {len(record['games'])} games, not {rules.best_of}")
    elif max(wins) != need or sum(wins) != len(record["games"]):
        diffs.append(f"seed {seed}: the match stopped at {wins} games won (need {need})")
    winner = 0 if wins[0] > wins[1] else 1
    if _seat(record["winner"]) != winner:
        diffs.append(f"seed {seed}: match winner referee {'ab'[winner]}, record {record['winner']}")
    return diffs


def _referee_hollywood(rules: Rules, record: dict[str, Any], seen: Counter[str]) -> list[str]:
    diffs: list[str] = []
    seed = record["seed"]
    n = rules.best_of
    tallies = [GameTally() for _ in range(n)]
    deals = [(g["index"], h) for g in record["games"] for h in g["hands"]]
    if record["unfinished_game"]:
        deals += [(len(record["games"]), h) for h in record["unfinished_game"]["hands"]]
    dealer: int | None = None
    for gi, hand in deals:
        hw = f"seed {seed} hollywood game {gi} deal {hand['index']}"
        open_games = [g for g in range(n) if not tallies[g].over(rules.target)]
        if not open_games:
            diffs.append(f"{hw}: played after every game closed")
            break
        if gi != open_games[0]:
            diffs.append(f"{hw}: recorded under game {gi}, earliest open is {open_games[0]}")
        if dealer is not None and _seat(hand["dealer"]) != dealer:
            diffs.append(f"{hw}: dealer {hand['dealer']}, RULES.md says {'ab'[dealer]}")
        out, d = referee_deal(rules, hand, hw, seen)
        diffs += d
        entered: list[int] = []
        if out.winner is not None:
            w = out.winner
            entered = [g for g in open_games if tallies[g].won[w]]
            entered += [g for g in open_games if not tallies[g].won[w]][:1]
            seen["hollywood win after a closed game it had not entered"] += any(
                not tallies[g].won[w] for g in range(open_games[0])
            )
        scored_in = set(entered)
        if any(out.penalties):
            scored_in.add(open_games[0])
        for g in open_games:
            _score_deal(
                tallies[g],
                out if g in entered else replace(out, winner=None),
                rules.target,
                penalties=g == open_games[0],
            )
        recorded = hand.get("scored_in")
        if recorded is None or sorted(recorded) != sorted(scored_in):
            diffs.append(f"{hw}: scored_in referee {sorted(scored_in)}, record {recorded}")
        dealer = _next_dealer(rules, _seat(hand["dealer"]) or 0, out)
    wins = [0, 0]
    for game in record["games"]:
        where = f"seed {seed} hollywood game {game['index']}"
        t = tallies[game["index"]]
        if not t.over(rules.target):
            diffs.append(f"{where}: recorded as closed below the target")
        diffs += _close_game(rules, t, game, where, seen, wins)
    diffs += _match_end(record, wins, n // 2 + 1, rules)
    return diffs
