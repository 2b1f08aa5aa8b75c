"""The record of a deal and its replay.

A :class:`DealRecord` keeps what determines a deal: the rule set, the dealer, the deck order
and every action in order (with the seat that took it). Replaying it through the engine
rebuilds every state and must reproduce the recorded result.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from arena.cards import Card, parse_card, parse_cards
from arena.rules.actions import Action, ActionError
from arena.rules.hand import HandState, apply, fallback_action, new_deal, play
from arena.rules.ruleset import RuleSet

__all__ = ["DealRecord", "ReplayError", "replay_deal"]


class ReplayError(ValueError):
    """A record does not replay: an action is illegal, or the result differs."""


@dataclass(frozen=True, slots=True)
class DealRecord:
    """Everything that determines a deal."""

    rules: RuleSet
    dealer: int
    deck: tuple[Card, ...]
    actions: tuple[tuple[int, Action], ...]

    @classmethod
    def from_states(cls, final: HandState, actions: Sequence[tuple[int, Action]]) -> DealRecord:
        return cls(final.rules, final.dealer, final.deck, tuple(actions))

    def to_dict(self) -> dict[str, Any]:
        """Compact JSON form: the deck as one string, actions as ``[seat, action]`` pairs."""
        return {
            "dealer": self.dealer,
            "deck": "".join(str(c) for c in self.deck),
            "actions": [[seat, action.to_dict()] for seat, action in self.actions],
        }

    @classmethod
    def from_dict(cls, rules: RuleSet, data: Mapping[str, Any]) -> DealRecord:
        deck = parse_deck(data["deck"])
        # Entries are ``[seat, action, ...]``; a match record adds latency and fault after them.
        actions = tuple((int(e[0]), Action.from_dict(e[1])) for e in data["actions"])
        dealer = data["dealer"]
        # A match record names seats "a" and "b"; the engine's own form is 0 and 1.
        seat = {"a": 0, "b": 1}.get(dealer, dealer) if isinstance(dealer, str) else dealer
        return cls(rules, int(seat), deck, actions)


def replay_deal(record: DealRecord, *, validate: bool = True) -> Iterator[HandState]:
    """Yield every state of the deal, from the deal to the end.

    With ``validate`` (the default) each action is checked as if a bot sent it; the one
    fallback that is not otherwise legal (a discard after taking a last-chance card) is
    accepted when it is exactly the fallback.
    """
    state = new_deal(record.rules, record.dealer, deck=record.deck)
    yield state
    for i, (seat, action) in enumerate(record.actions):
        if state.is_over:
            raise ReplayError(f"action {i} ({action}) comes after the end of the deal")
        if seat != state.to_act:
            raise ReplayError(
                f"action {i} ({action}) by seat {seat}, but seat {state.to_act} was to act"
            )
        if not validate or (state.knock_only and action == fallback_action(state)):
            state = apply(state, action)
        else:
            try:
                state = play(state, seat, action)
            except ActionError as exc:
                raise ReplayError(f"action {i} ({action}) by seat {seat}: {exc}") from None
        yield state
    if not state.is_over:
        raise ReplayError("the record ends before the deal does")


def parse_deck(text: str) -> tuple[Card, ...]:
    """A deck from its compact form (``"As2c..."``) or space-separated cards."""
    if " " in text.strip():
        return parse_cards(text)
    return tuple(parse_card(text[i : i + 2]) for i in range(0, len(text), 2))
