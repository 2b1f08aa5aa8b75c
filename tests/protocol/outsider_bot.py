"""A gin-arena bot written from `api_spec/` and `docs/RULES.md` alone, on the standard library.

It imports nothing from `arena`: it is what a stranger who never saw the code would write, and
the tests play it to check that the published protocol is enough to write a bot that is never
faulted. It keeps no game state between requests: every answer is rebuilt from the `/act` body
(its own deadwood from its hand). The only memory is the set of accepted `webhook-id`s, which
the signing rules require (a replayed id is refused with 409).

While it plays it checks what the spec promises about each body and reports every broken
promise as a line starting with `SURPRISE` (on stderr, and appended to `--log FILE` if given),
so a test can assert that there were none.

Run: `python outsider_bot.py --port 8200 --secret whsec_... [--misknock] [--log FILE]`.
"""

from __future__ import annotations

import argparse
import base64
import hashlib
import hmac
import itertools
import json
import socket
import sys
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

RANKS = "A23456789TJQK"
SUITS = "cdhs"
WINDOW_S = 300
PROTOCOL = "gin-arena/1"

Card = str
Meld = tuple[Card, ...]


def rank(card: Card) -> int:
    """The card's rank, 1 (ace) to 13 (king)."""
    return RANKS.index(card[0]) + 1


def value(card: Card) -> int:
    """The card's deadwood value: ace 1, two to ten face value, faces 10 (RULES.md)."""
    return min(rank(card), 10)


def possible_melds(hand: list[Card]) -> list[Meld]:
    """Every set (3 or 4 of a rank) and run (3+ consecutive of a suit) within the hand."""
    melds: list[Meld] = []
    by_rank: dict[int, list[Card]] = {}
    for card in hand:
        by_rank.setdefault(rank(card), []).append(card)
    for cards in by_rank.values():
        if len(cards) >= 3:
            melds.extend(itertools.combinations(sorted(cards), 3))
        if len(cards) == 4:
            melds.append(tuple(sorted(cards)))
    for suit in SUITS:
        ranks = sorted(rank(c) for c in hand if c[1] == suit)
        for i, start in enumerate(ranks):
            run = [start]
            for nxt in ranks[i + 1 :]:
                if nxt != run[-1] + 1:
                    break
                run.append(nxt)
                if len(run) >= 3:
                    melds.append(tuple(RANKS[r - 1] + suit for r in run))
    return melds


def best_arrangement(hand: list[Card]) -> tuple[int, list[Meld]]:
    """The least deadwood of the hand and one arrangement of disjoint melds reaching it."""
    melds = possible_melds(hand)
    best: tuple[int, list[Meld]] = (sum(value(c) for c in hand), [])

    def search(start: int, used: frozenset[Card], chosen: list[Meld]) -> None:
        nonlocal best
        deadwood = sum(value(c) for c in hand if c not in used)
        if deadwood < best[0]:
            best = (deadwood, list(chosen))
        for i in range(start, len(melds)):
            meld = melds[i]
            if used.isdisjoint(meld):
                chosen.append(meld)
                search(i + 1, used | frozenset(meld), chosen)
                chosen.pop()

    search(0, frozenset(), [])
    return best


def deadwood(hand: list[Card]) -> int:
    """The least deadwood of the hand."""
    return best_arrangement(hand)[0]


def deadwood_with(hand: list[Card], melds: list[list[Card]]) -> int:
    """The deadwood of the hand with exactly these melds laid down."""
    melded = {c for meld in melds for c in meld}
    return sum(value(c) for c in hand if c not in melded)


class Observer:
    """Checks the spec's promises on each body; reports broken ones as SURPRISE lines."""

    def __init__(self, log: str | None = None) -> None:
        self.log = log
        self.lock = threading.Lock()
        self.surprises: list[str] = []
        self.phases: dict[str, int] = {}
        self.ends = 0

    def surprise(self, body: dict[str, Any], text: str) -> None:
        line = f"SURPRISE {body.get('request_id')}: {text}"
        print(line, file=sys.stderr, flush=True)
        with self.lock:
            self.surprises.append(line)
        if self.log:
            with self.lock, open(self.log, "a", encoding="utf-8") as out:
                out.write(line + "\n")

    def check(self, obs: dict[str, Any]) -> None:
        """Check one `/act` body against what the spec promises."""
        phase = obs["phase"]
        with self.lock:
            self.phases[phase] = self.phases.get(phase, 0) + 1
        legal = obs["legal_actions"]
        hand = obs["hand"]
        history = obs["history"]
        rules = obs["rules"]
        if obs["deadline_ms"] != rules["deadline_ms"]:
            self.surprise(obs, "deadline_ms differs from rules.deadline_ms")
        if obs["protocol"] != PROTOCOL:
            self.surprise(obs, f"protocol {obs['protocol']!r}")
        # My own previous round trip (null or within the deadline) and my strikes so far.
        rtt = obs.get("previous_rtt_ms")
        if rtt is not None and not 0 <= rtt <= obs["deadline_ms"]:
            self.surprise(obs, f"previous_rtt_ms {rtt} is not within the deadline")
        strikes = obs.get("strikes")
        if strikes is not None and (
            strikes["limit"] != rules["max_strikes"] or not 0 <= strikes["count"] < strikes["limit"]
        ):
            self.surprise(obs, f"strikes {strikes} do not fit max_strikes {rules['max_strikes']}")
        # previous_deal: the first /act of each deal after the first of a game, else null.
        mine = [e for e in history if e["player"] == "you"]
        first_of_deal = not mine
        prev = obs.get("previous_deal")
        if first_of_deal and obs["deal"] > 0 and prev is None:
            self.surprise(obs, "first request of a later deal without previous_deal")
        if prev is not None and (not first_of_deal or obs["deal"] == 0):
            self.surprise(obs, "previous_deal on a request that is not the first of a deal")
        if prev is not None:
            self.check_previous(obs, prev)
        # After both passed the upcard the non-dealer's draw offers only draw_stock.
        events = [e["event"] for e in history]
        if phase == "draw" and events == ["pass", "pass"] and legal != [{"action": "draw_stock"}]:
            self.surprise(obs, f"draw after both passed offers {legal}")
        # Listed knocks are within the limit; every card that may be discarded and knocked
        # within the limit is listed (legal_actions is complete).
        limit = obs["knock_limit"]
        discards = {a["card"] for a in legal if a["action"] == "discard"}
        knocks = {a["card"] for a in legal if a["action"] == "knock"}
        for card in knocks:
            left = deadwood([c for c in hand if c != card])
            if left > limit:
                self.surprise(obs, f"knock {card} listed with deadwood {left} > {limit}")
        if phase == "discard":
            for card in discards:
                left = deadwood([c for c in hand if c != card])
                if left <= limit and card not in knocks:
                    self.surprise(obs, f"knock {card} (deadwood {left}) missing from legal")
            taken = obs["taken_card"]
            if taken and not rules["allow_discard_of_taken_card"] and taken in discards | knocks:
                self.surprise(obs, "the taken card is offered for discard")
            big = any(a["action"] == "big_gin" for a in legal)
            if (
                big != (rules["big_gin_bonus"] is not None and deadwood(hand) == 0)
                and (rules["big_gin_after_taking_discard"] or obs["taken_card"] is None)
                and discards
            ):  # the proviso's knock-only turn is not checked here
                self.surprise(obs, f"big_gin offered={big} with hand deadwood {deadwood(hand)}")
        # Misknock events: the opponent's deadwood is shown per policy.
        policy = rules["misknock"]
        for event in history:
            if event["event"] != "misknock":
                continue
            shown = "deadwood" in event
            if event["player"] == "you" and not shown:
                self.surprise(obs, "my own misknock event has no deadwood")
            if event["player"] == "opponent":
                expected = policy in ("open_hand", "opponent_may_accept")
                if shown != expected:
                    self.surprise(obs, f"opponent misknock deadwood shown={shown} under {policy}")
        # The opponent's hand is shown only after their misknock (or for my response).
        opp_misknocked = any(
            e["event"] == "misknock" and e["player"] == "opponent" for e in history
        )
        if obs["opponent_hand"] is not None:
            if not opp_misknocked or policy == "penalty_points":
                self.surprise(obs, "opponent_hand shown without an exposing misknock")
            elif len(obs["opponent_hand"]) != obs["opponent_hand_size"]:
                self.surprise(obs, "opponent_hand length differs from opponent_hand_size")
        elif opp_misknocked and policy == "open_hand" and phase != "misknock_response":
            self.surprise(obs, "opponent misknocked under open_hand but the hand is hidden")
        if phase == "misknock_response":
            pending = obs["pending_misknock"]
            if pending is None or obs["opponent_hand"] is None:
                self.surprise(obs, "misknock_response without pending_misknock/opponent_hand")
            else:
                laid = [c for c in obs["opponent_hand"] if c != pending["card"]]
                melds = pending["melds"]
                counted = deadwood_with(laid, melds) if melds else deadwood(laid)
                if counted != pending["deadwood"]:
                    self.surprise(obs, f"pending deadwood {pending['deadwood']} != {counted}")

    def check_end(self, end: dict[str, Any]) -> None:
        """The `/end` record: no seed, no decks, no raw answers, only my own faults."""
        with self.lock:
            self.ends += 1
        record, me = end["record"], end["you"]
        if me not in ("a", "b") or end["protocol"] != PROTOCOL:
            self.surprise(end, f"/end says you={me!r}, protocol {end['protocol']!r}")
        if record.get("seed") is not None:
            self.surprise(end, "/end record carries the seed")
        games = record["games"] + (
            [record["unfinished_game"]] if record.get("unfinished_game") else []
        )
        for hand in (h for g in games for h in g["hands"]):
            if hand.get("deck"):
                self.surprise(end, "/end record carries a deck")
            if any(len(entry) > 4 for entry in hand["actions"]):
                self.surprise(end, "/end record carries raw answers")
        if any(f["seat"] != me for f in record["faults"]):
            self.surprise(end, "/end record lists the other bot's faults")

    def check_previous(self, obs: dict[str, Any], prev: dict[str, Any]) -> None:
        if prev["outcome"] in ("dead",):
            return
        hands = {"you": prev["your_hand"], "opponent": prev["opponent_hand"]}
        knocker = prev["knocker"]
        if knocker is None:
            return
        defender = "opponent" if knocker == "you" else "you"
        knocker_hand = hands[knocker]
        melded = {c for m in prev["knocker_melds"] for c in m}
        if not melded <= set(knocker_hand):
            self.surprise(obs, "previous_deal knocker_melds are not in the knocker's hand")
        if prev["outcome"] != "big_gin" and len(knocker_hand) != 10:
            self.surprise(obs, f"previous_deal knocker hand has {len(knocker_hand)} cards")
        if deadwood_with(knocker_hand, prev["knocker_melds"]) != prev["knocker_deadwood"]:
            self.surprise(obs, "previous_deal knocker_deadwood does not match its melds")
        if prev["outcome"] in ("gin", "big_gin") and prev["knocker_deadwood"] != 0:
            self.surprise(obs, "gin with knocker deadwood != 0")
        laid_off = {lo["card"] for lo in prev["layoffs"]}
        dmelded = {c for m in prev["defender_melds"] for c in m}
        ddead = sum(value(c) for c in hands[defender] if c not in dmelded | laid_off)
        if ddead != prev["defender_deadwood"]:
            self.surprise(
                obs,
                f"previous_deal defender_deadwood {prev['defender_deadwood']} "
                f"!= {ddead} from its melds and lay-offs",
            )


def other_form(card: Card) -> str:
    """The card as answers may also write it: `10h` for `Th`, else `4H`, `kS` (either case)."""
    return "10" + card[1] if card[0] == "T" else card[0].lower() + card[1].upper()


def seeded(obs: dict[str, Any]) -> int:
    """A number from the request itself, to vary choices without keeping state."""
    return int.from_bytes(hashlib.sha256(obs["request_id"].encode()).digest()[:4], "big")


def choose(obs: dict[str, Any], misknock: bool) -> dict[str, Any]:
    """The answer to one `/act`, from the body alone."""
    phase = obs["phase"]
    legal = obs["legal_actions"]
    hand: list[Card] = obs["hand"]
    actions = {a["action"] for a in legal}
    limit = obs["knock_limit"]
    top = obs["discard_top"]

    if phase == "misknock_response":
        pending = obs["pending_misknock"]
        # Accepting scores it as a knock: an undercut when my deadwood is at most theirs.
        if deadwood(hand) <= pending["deadwood"] and "accept_knock" in actions:
            return {"action": "accept_knock"}
        return {"action": "open_hand"}

    if phase in ("first_upcard", "draw", "last_chance"):
        if "take_discard" in actions and top is not None:
            if phase == "last_chance":
                return {"action": "take_discard"}  # offered only when a knock follows
            now = deadwood(hand)
            after = min(deadwood([c for c in [*hand, top] if c != d]) for d in hand)
            if after < now - 1 and top not in obs["opponent_known"]:
                return {"action": "take_discard"}
            if after <= limit < now:
                return {"action": "take_discard"}
        if "draw_stock" in actions:
            return {"action": "draw_stock"}
        return {"action": "pass"}

    # discard phase
    if "big_gin" in actions:
        _, melds = best_arrangement(hand)
        if seeded(obs) % 2:
            return {"action": "big_gin", "melds": [list(m) for m in melds]}
        return {"action": "big_gin"}
    cards = sorted(
        {a["card"] for a in legal if a["action"] in ("discard", "knock")},
        key=lambda c: (deadwood([x for x in hand if x != c]), -value(c), c),
    )
    best = cards[0]
    rest = [c for c in hand if c != best]
    left, melds = best_arrangement(rest)
    knock_cards = {a["card"] for a in legal if a["action"] == "knock"}
    only_knocks = actions <= {"knock", "big_gin"}
    if left <= limit or only_knocks:
        if only_knocks and best not in knock_cards:
            best = sorted(knock_cards)[0]
            rest = [c for c in hand if c != best]
            left, melds = best_arrangement(rest)
        style = (obs["game"] + obs["deal"]) % 4  # each deal its own style, in turn
        if style == 0:
            return {"action": "knock", "card": best, "melds": []}
        if style == 1:
            return {"action": "knock", "card": best, "melds": [list(m) for m in melds]}
        if style == 2:  # the same melds in another order, cards in the other accepted forms
            scrambled = [[other_form(c) for c in reversed(m)] for m in reversed(melds)]
            return {"action": "knock", "card": other_form(best), "melds": scrambled}
        return {"action": "knock", "card": other_form(best)}
    discardable = {a["card"] for a in legal if a["action"] == "discard"}
    if misknock and best in discardable and left <= limit + 20:
        mine = [e for e in obs["history"] if e["player"] == "you" and e["event"] == "misknock"]
        if not mine and seeded(obs) % 4 == 0:
            if seeded(obs) % 8 == 0:
                return {"action": "knock", "card": best, "melds": [list(m) for m in melds]}
            return {"action": "knock", "card": best}
    return {"action": "discard", "card": best}


class Verifier:
    """Standard Webhooks verification: any v1 signature, 5-minute window, no replayed id."""

    def __init__(self, secret: str | None) -> None:
        self.key = base64.b64decode(secret.removeprefix("whsec_")) if secret else None
        self.seen: dict[str, float] = {}
        self.lock = threading.Lock()

    def fresh(self, stamp: int, now: float) -> bool:
        """Within 5 minutes of the clock, in the past or in the future."""
        return abs(now - stamp) <= WINDOW_S

    def verify(self, headers: Any, body: bytes) -> int:
        """200 when the request is the arena's, else the status to refuse it with."""
        if self.key is None:
            return 200
        wid = headers.get("webhook-id")
        stamp = headers.get("webhook-timestamp")
        signatures = headers.get("webhook-signature")
        if not wid or not stamp or not signatures or not stamp.isdigit():
            return 401
        signed = f"{wid}.{stamp}.".encode() + body
        expected = base64.b64encode(hmac.new(self.key, signed, hashlib.sha256).digest()).decode()
        if not any(
            hmac.compare_digest(expected, s.removeprefix("v1,"))
            for s in signatures.split()
            if s.startswith("v1,")
        ):
            return 401
        now = time.time()
        if not self.fresh(int(stamp), now):
            return 401
        with self.lock:
            for old in [k for k, t in self.seen.items() if t < now - 2 * WINDOW_S]:
                del self.seen[old]
            if wid in self.seen:
                return 409
            self.seen[wid] = now
        return 200


def make_handler(
    verifier: Verifier, observer: Observer, misknock: bool, name: str
) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def setup(self) -> None:
            super().setup()
            self.connection.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def log_message(self, format: str, *args: Any) -> None:
            pass

        def reply(self, status: int, payload: Any) -> None:
            data = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)

        def do_GET(self) -> None:
            if self.path != "/":
                self.reply(404, {"error": "not found"})
                return
            self.reply(200, {"protocol": PROTOCOL, "name": name, "author": "T1", "version": "1"})

        def do_POST(self) -> None:
            length = int(self.headers.get("Content-Length") or 0)
            body = self.rfile.read(length)
            status = verifier.verify(self.headers, body)
            if status != 200:
                self.reply(status, {"error": "refused"})
                return
            if self.path == "/act":
                obs = json.loads(body)
                observer.check(obs)
                self.reply(200, choose(obs, misknock))
            elif self.path == "/end":
                observer.check_end(json.loads(body))
                self.reply(200, {})
            elif self.path == "/start":
                self.reply(200, {})
            else:
                self.reply(404, {"error": "not found"})

    return Handler


def make_server(
    port: int = 0,
    *,
    secret: str | None = None,
    misknock: bool = False,
    name: str = "outsider",
    observer: Observer | None = None,
    verifier: Verifier | None = None,
) -> ThreadingHTTPServer:
    """The bot's HTTP server on 127.0.0.1 (port 0: any free port), not yet serving."""
    handler = make_handler(verifier or Verifier(secret), observer or Observer(), misknock, name)
    return ThreadingHTTPServer(("127.0.0.1", port), handler)


def main(argv: list[str] | None = None) -> None:
    """Serve the bot until interrupted."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("--port", type=int, default=8200)
    parser.add_argument("--secret", default=None)
    parser.add_argument("--name", default="outsider")
    parser.add_argument("--misknock", action="store_true", help="misknock now and then")
    parser.add_argument("--log", default=None, help="append SURPRISE lines to this file")
    args = parser.parse_args(argv)
    server = make_server(
        args.port,
        secret=args.secret,
        misknock=args.misknock,
        name=args.name,
        observer=Observer(args.log),
    )
    print(f"listening on http://127.0.0.1:{server.server_address[1]}", flush=True)
    server.serve_forever()


if __name__ == "__main__":
    main()
