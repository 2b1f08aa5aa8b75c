"""Phases, actions and the errors raised for actions that cannot be applied.

Actions are small frozen values; the common ones are interned (``DRAW_STOCK``, ``discard(c)``).
An action's wire form is the dict of PROTOCOL.md: ``{"action": "knock", "card": "7h",
"melds": [["7c", "7d", "7s"]]}``.

>>> discard(parse_card("7h")).to_dict()
{'action': 'discard', 'card': '7h'}
>>> Action.from_dict({"action": "knock", "card": "7H", "melds": [["7c","7d","7s"]]}).to_dict()
{'action': 'knock', 'card': '7h', 'melds': [['7c', '7d', '7s']]}
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from enum import StrEnum
from typing import Any, Final

from arena.cards import (
    CARDS,
    Card,
    CardError,
    cards_to_mask,
    mask_to_cards,
    parse_card,
    parse_cards,
)

__all__ = [
    "ACCEPT_KNOCK",
    "DRAW_STOCK",
    "OPEN_HAND",
    "PASS",
    "TAKE_DISCARD",
    "Action",
    "ActionError",
    "ActionKind",
    "IllegalActionError",
    "InvalidActionError",
    "Phase",
    "big_gin",
    "discard",
    "knock",
]


class Phase(StrEnum):
    """Where a deal stands; the player to act acts in this phase."""

    FIRST_UPCARD = "first_upcard"
    DRAW = "draw"
    DISCARD = "discard"
    MISKNOCK_RESPONSE = "misknock_response"
    LAST_CHANCE = "last_chance"
    DONE = "done"


class ActionKind(StrEnum):
    """Every kind of action a player can take."""

    PASS = "pass"
    TAKE_DISCARD = "take_discard"
    DRAW_STOCK = "draw_stock"
    DISCARD = "discard"
    KNOCK = "knock"
    BIG_GIN = "big_gin"
    ACCEPT_KNOCK = "accept_knock"
    OPEN_HAND = "open_hand"


class ActionError(ValueError):
    """An action cannot be applied."""


class InvalidActionError(ActionError):
    """The action is malformed: unknown kind, bad card text, missing or extra fields."""


class IllegalActionError(ActionError):
    """The action is well formed but not allowed here (wrong phase, card not held ...)."""


_WITH_CARD: Final = frozenset({ActionKind.DISCARD, ActionKind.KNOCK})
_WITH_MELDS: Final = frozenset({ActionKind.KNOCK, ActionKind.BIG_GIN})


@dataclass(frozen=True, slots=True)
class Action:
    """One action; ``melds`` (masks) only for knock and big gin, ``None`` when not declared."""

    kind: ActionKind
    card: Card | None = None
    melds: tuple[int, ...] | None = None

    def __str__(self) -> str:
        text = self.kind.value
        if self.card is not None:
            text += f" {self.card}"
        if self.melds is not None:
            text += (
                " ["
                + " | ".join(" ".join(str(c) for c in mask_to_cards(m)) for m in self.melds)
                + "]"
            )
        return text

    def to_dict(self) -> dict[str, Any]:
        """The wire form."""
        out: dict[str, Any] = {"action": self.kind.value}
        if self.card is not None:
            out["card"] = str(self.card)
        if self.melds is not None:
            out["melds"] = [[str(c) for c in mask_to_cards(m)] for m in self.melds]
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Action:
        """Parse the wire form, raising :class:`InvalidActionError` with the reason."""
        if not isinstance(data, Mapping):
            raise InvalidActionError(f"an action must be a JSON object, not {type(data).__name__}")
        raw_kind = data.get("action")
        try:
            kind = ActionKind(str(raw_kind))
        except ValueError:
            allowed = ", ".join(k.value for k in ActionKind)
            raise InvalidActionError(
                f"unknown action {raw_kind!r}; expected one of {allowed}"
            ) from None
        extra = set(data) - {"action", "card", "melds"}
        if extra:
            raise InvalidActionError(f"unexpected field(s) {sorted(extra)} in a {kind} action")
        card: Card | None = None
        if kind in _WITH_CARD:
            if "card" not in data or data["card"] is None:
                raise InvalidActionError(f"a {kind} action needs a card")
            try:
                card = parse_card(data["card"])
            except CardError as exc:
                raise InvalidActionError(str(exc)) from None
        elif data.get("card") is not None:
            raise InvalidActionError(f"a {kind} action takes no card")
        melds: tuple[int, ...] | None = None
        if data.get("melds") is not None:
            if kind not in _WITH_MELDS:
                raise InvalidActionError(f"a {kind} action takes no melds")
            melds = parse_melds(data["melds"])
        if kind is ActionKind.DISCARD:
            return discard(card)  # type: ignore[arg-type]
        if kind is ActionKind.KNOCK:
            return knock(card, melds)  # type: ignore[arg-type]
        if kind is ActionKind.BIG_GIN:
            return big_gin(melds)
        return _SIMPLE[kind]


def parse_melds(raw: object) -> tuple[int, ...]:
    """Parse declared melds (a list of card lists) into masks; structure only, not legality."""
    if not isinstance(raw, Sequence) or isinstance(raw, str):
        raise InvalidActionError("melds must be a list of card lists")
    melds = []
    for meld in raw:
        if not isinstance(meld, Sequence) or isinstance(meld, str):
            raise InvalidActionError("each meld must be a list of cards")
        try:
            melds.append(cards_to_mask(parse_cards(list(meld))))
        except CardError as exc:
            raise InvalidActionError(f"in melds: {exc}") from None
    return tuple(melds)


PASS: Final = Action(ActionKind.PASS)
TAKE_DISCARD: Final = Action(ActionKind.TAKE_DISCARD)
DRAW_STOCK: Final = Action(ActionKind.DRAW_STOCK)
ACCEPT_KNOCK: Final = Action(ActionKind.ACCEPT_KNOCK)
OPEN_HAND: Final = Action(ActionKind.OPEN_HAND)
BIG_GIN: Final = Action(ActionKind.BIG_GIN)
_SIMPLE: Final = {a.kind: a for a in (PASS, TAKE_DISCARD, DRAW_STOCK, ACCEPT_KNOCK, OPEN_HAND)}
_DISCARDS: Final = tuple(Action(ActionKind.DISCARD, c) for c in CARDS)
_KNOCKS: Final = tuple(Action(ActionKind.KNOCK, c) for c in CARDS)


def simple(kind: ActionKind) -> Action:
    """The action of a kind that takes no card (pass, draw, take, big gin, responses)."""
    if kind is ActionKind.BIG_GIN:
        return BIG_GIN
    try:
        return _SIMPLE[kind]
    except KeyError:
        raise InvalidActionError(f"a {kind} action needs a card") from None


def discard(card: int) -> Action:
    """Discard a card face up."""
    return _DISCARDS[card]


def knock(card: int, melds: tuple[int, ...] | None = None) -> Action:
    """Knock, discarding ``card`` face down, optionally declaring melds.

    No melds (``None`` or an empty tuple) means *not declared*, as ``"melds": []`` does on the
    wire: the engine lays down the best arrangement, never every card as deadwood.
    """
    return Action(ActionKind.KNOCK, CARDS[card], melds) if melds else _KNOCKS[card]


def big_gin(melds: tuple[int, ...] | None = None) -> Action:
    """Big gin: all eleven cards melded, no discard (no melds means not declared)."""
    return Action(ActionKind.BIG_GIN, None, melds) if melds else BIG_GIN
