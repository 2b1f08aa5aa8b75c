"""A retry is a new request with a new ``webhook-id`` (issue 10, 2.4).

The arena retries a request once on a fresh connection when the bot's end of a kept-alive
connection closed before any byte of the answer came back. The bot may already have seen that
request (it read it, then the connection died under its answer): a bot that refuses an id seen
before (``409``, as the SDK's :class:`~arena.bots.sdk.BotServer` does) must not turn the retry
into a ``status`` fault. So every HTTP attempt is signed afresh, with its own ``webhook-id``; the
body's ``request_id`` is what says it is the same turn.

A loopback proxy in front of a real signing ``BotServer`` forwards every request and drops the
answers to chosen ``/act`` requests by closing the arena's connection instead of relaying them.
"""

from __future__ import annotations

import json
import random
import socket
from collections.abc import Collection

from hostile import running
from loopback import LoopbackServer, read_message

from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.playing.match import play_match
from arena.playing.players import MatchContext, Turn
from arena.protocol.http_player import HttpPlayer
from arena.rules.actions import Action
from arena.rules.hand import new_deal
from arena.rules.observation import observe
from arena.rules.ruleset import RuleSet

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
RULES = RuleSet(deadline_ms=5000, target=50, best_of=1)


class DroppingProxy(LoopbackServer):
    """Relays to ``upstream``; the answers to the ``/act`` requests numbered in ``drop`` (from 1)
    reach the bot but never the arena: the proxy closes the arena's connection instead."""

    def __init__(self, upstream_port: int, drop: Collection[int]) -> None:
        super().__init__("dropping-proxy")
        self.upstream_port = upstream_port
        self.drop = set(drop)
        #: (webhook-id, request_id, upstream status) of every /act relayed, in order.
        self.acts: list[tuple[str, str, int]] = []

    def serve(self, conn: socket.socket) -> None:
        upstream = socket.create_connection(("127.0.0.1", self.upstream_port))
        inbound = outbound = b""
        with self.tracked(upstream):
            while True:
                got = read_message(conn, inbound)
                if got is None:
                    return
                request, inbound = got
                upstream.sendall(request.raw)
                answered = read_message(upstream, outbound)
                if answered is None:
                    return
                answer, outbound = answered
                if request.target == ("POST", "/act"):
                    webhook_id = request.header(b"webhook-id")
                    assert webhook_id is not None
                    status = int(answer.start_line.split(b" ", 2)[1])
                    with self._lock:
                        self.acts.append(
                            (webhook_id.decode(), json.loads(request.body)["request_id"], status)
                        )
                        number = len(self.acts)
                    if number in self.drop:
                        return  # the bot answered; the arena never hears it
                conn.sendall(answer.raw)


def _turn(rules: RuleSet) -> Turn:
    state = new_deal(rules, 0, rng=random.Random(2))
    return Turn(
        observe(state, state.to_act), "retry", 0, 0, "retry-r1", rules, (0, 0), (0, 0), 5000
    )


def test_a_retry_after_a_dropped_connection_gets_a_fresh_webhook_id() -> None:
    signed = BotServer(greedy, name="signed", secret=SECRET)  # 409 for a webhook-id seen before
    with running(signed):
        proxy = DroppingProxy(signed.port, drop={1}).start()
        try:
            player = HttpPlayer(proxy.url, secret=SECRET, allow_loopback=True)
            assert player.start(MatchContext("retry", 0, RULES, "opponent", 0)) is None
            reply = player.act(_turn(RULES))
            player.end({})
        finally:
            proxy.stop()
    assert isinstance(reply, Action), reply
    (first_id, first_req, first_status), (retry_id, retry_req, retry_status) = proxy.acts[:2]
    assert first_req == retry_req == "retry-r1"  # the same turn...
    assert first_id != retry_id  # ...in a new request, with its own id
    assert (first_status, retry_status) == (200, 200)  # the bot answered both; no 409


def test_a_match_through_dropped_answers_has_no_faults() -> None:
    a, b = BotServer(greedy, name="a"), BotServer(greedy, name="b", secret=SECRET)
    with running(a, b):
        proxy = DroppingProxy(b.port, drop={1, 4, 9}).start()
        try:
            players = [
                HttpPlayer(a.url, allow_loopback=True),
                HttpPlayer(proxy.url, secret=SECRET, allow_loopback=True),
            ]
            record = play_match(players, RULES, seed=5).to_dict()
        finally:
            proxy.stop()
    assert record["faults"] == [] and record["forfeit"] is None
    ids = [webhook_id for webhook_id, _, _ in proxy.acts]
    assert len(ids) == len(set(ids)) and len(ids) > 9
    assert all(status == 200 for _, _, status in proxy.acts)
