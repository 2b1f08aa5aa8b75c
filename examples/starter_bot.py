"""A starter Gin Rummy bot for gin-arena: copy it, change `act`, run it, register its URL.

Run it with `python examples/starter_bot.py --port 8200`, then check it with
`gin-arena bot check http://127.0.0.1:8200`. In Node.js: `examples/starter_bot.js`.
"""

import argparse

from arena.bots.sdk import serve
from arena.rules import deadwood


def act(obs):
    """Take the discard if it lowers deadwood, keep the least deadwood, knock when legal."""
    hand, kinds = obs.hand, {a.action for a in obs.legal_actions}
    if obs.phase == "misknock_response":  # the opponent knocked over the limit
        return {"action": "open_hand"}
    if obs.phase in ("first_upcard", "draw", "last_chance"):
        top = obs.discard_top
        if "take_discard" in kinds and top:
            best = min(deadwood([c for c in hand if c != out] + [top]) for out in hand)
            if best < deadwood(hand):
                return {"action": "take_discard"}
        return {"action": "pass"} if "pass" in kinds else {"action": "draw_stock"}
    # Discard phase: legal_actions lists every allowed discard and every knock within the limit.
    finishes = [a for a in obs.legal_actions if a.action in ("big_gin", "knock")]
    return min(finishes or obs.legal_actions, key=lambda a: kept_deadwood(hand, a.card))


def kept_deadwood(hand, card):
    """Deadwood of the ten cards kept after laying `card` down (big gin lays down nothing)."""
    return deadwood([c for c in hand if c != card]) if card else 0


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="a starter gin-arena bot")
    parser.add_argument("--port", type=int, default=8200)
    serve(act, name="starter-bot", port=parser.parse_args().port)
