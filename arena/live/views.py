"""What each view of a running match may see: the embargo of the live streams.

A frame is made once, omniscient (:mod:`arena.live.feed`); each view is cut from it here:

* ``public``: both hands as card counts; a card drawn from the stock is named nowhere (no
  ``joined``, the action reads "draws from the stock"), nor a card discarded face down by a
  knock; what both players see stays (the discard pile's top, cards taken from it (``known``),
  the stock count, scores). Faults keep their kind and fallback, not their detail. The
  showdown (and every hand) comes with the ``deal`` frame at the end of the deal.
* ``a`` / ``b``: the same, except that the seat's own hand, its own draws and its own faults
  show in full.
* withheld (any view, while the match's seed is shared with another open match: the other leg
  of a duplicate pair would learn its deals): no card face at all, only counts, who acted,
  action kinds and scores; the ``deal`` frame keeps only its result's outcome, winner and
  points.

>>> step = {"hands": {"a": {"melds": [["As", "2s", "3s"]], "deadwood": ["Kd"], "dw": 10},
...                   "b": {"melds": [], "deadwood": ["Kc", "Qc"], "dw": 20}},
...         "top": "Qh", "pile": 1, "stock": 30, "phase": "discard", "to_act": "b",
...         "action": {"seat": "b", "text": "draws 10\u2660 from the stock",
...                    "kind": "draw_stock", "latency": 1.0}, "joined": "Ts"}
>>> public = step_view(step, "public", withheld=False)
>>> public["hands"], public["action"]["text"], "joined" in public
({'a': {'count': 4}, 'b': {'count': 2}}, 'draws from the stock', False)
>>> step_view(step, "b", withheld=False)["joined"]
'Ts'
>>> step_view(step, "a", withheld=True)["top"] is None
True
"""

from __future__ import annotations

from typing import Any

__all__ = ["VIEWS", "deal_view", "step_view"]

VIEWS = ("public", "a", "b")

#: Action texts that name no card, for actions whose card the viewer did not see.
_HIDDEN_TEXT = {
    "draws ": "draws from the stock",
    "knocks": "knocks, discarding face down",
    "goes gin, ": "goes gin, discarding face down",
}
#: Action texts of the withheld view: who did what, no card.
_KIND_TEXT = {
    "pass": "passes",
    "take_discard": "takes the discard",
    "draw_stock": "draws from the stock",
    "discard": "discards",
    "knock": "knocks",
    "big_gin": "goes big gin",
    "accept_knock": "accepts the knock",
    "open_hand": "refuses the misknock",
}


def _count(hand: dict[str, Any]) -> dict[str, int]:
    return {"count": sum(len(m) for m in hand["melds"]) + len(hand["deadwood"])}


def _hidden_part(part: str, misknock: dict[str, Any] | None) -> str:
    if part.startswith("misknocks") and misknock is not None:
        return f"misknocks: {misknock['deadwood']} deadwood is over the limit"
    for prefix, plain in _HIDDEN_TEXT.items():
        if part.startswith(prefix):
            return plain
    return part


def _hidden_text(text: str, misknock: dict[str, Any] | None) -> str:
    return "; ".join(_hidden_part(part, misknock) for part in text.split("; "))


def step_view(step: dict[str, Any], view: str, *, withheld: bool) -> dict[str, Any]:
    """One omniscient step (as :func:`arena.web.replay_steps.deal_steps` makes it) as ``view``
    (``public``, ``a`` or ``b``) sees it while the match runs; ``withheld``: no card faces."""
    out = dict(step)
    hands = step["hands"]
    out["hands"] = {
        seat: hand if seat == view and not withheld else _count(hand)
        for seat, hand in hands.items()
    }
    out.pop("showdown", None)
    action = dict(step["action"])
    actor = action.get("seat")
    own = actor is not None and actor == view and not withheld
    if withheld:
        out["top"] = None
        out.pop("known", None)
        out.pop("joined", None)
        kind = action.get("kind")
        action["text"] = "the deal: ten cards each" if kind is None else _KIND_TEXT[kind]
        if "misknock" in action:
            action["misknock"] = {k: v for k, v in action["misknock"].items() if k != "card"}
    elif not own:
        if action.get("kind") == "draw_stock":
            out.pop("joined", None)
        action["text"] = _hidden_text(action["text"], action.get("misknock"))
        if "misknock" in action:
            action["misknock"] = {k: v for k, v in action["misknock"].items() if k != "card"}
    if "fault" in action and not own:
        fault = dict(action["fault"])
        fault["detail"] = ""
        if withheld:
            fault["fallback"] = str(fault["fallback"]).split(" ", 1)[0]
        action["fault"] = fault
    out["action"] = action
    return out


def deal_view(deal: dict[str, Any], *, withheld: bool) -> dict[str, Any]:
    """A finished deal (every view sees it whole: the deal is over), or, ``withheld``, only
    how it ended."""
    if not withheld:
        return deal
    result = deal.get("result") or {}
    return {
        **{
            k: deal[k]
            for k in ("game", "deal", "dealer", "limit", "score", "games", "after")
            if k in deal
        },
        "result": {k: result.get(k) for k in ("outcome", "winner", "points", "knocker")},
        "withheld": True,
    }
