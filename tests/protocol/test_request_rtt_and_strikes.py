"""Every ``/act`` carries the bot's previous measured round trip and its strikes so far.

``previous_rtt_ms`` is null at the bot's first request of the match and then the latency the
arena recorded for its previous request (a timeout records the deadline); ``strikes`` counts
the bot's own faults so far against ``max_strikes``. Real HTTP bots on loopback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec
from hostile import RawBot, RecordingBot, play, running

from arena.protocol.wire import ActRequest
from arena.rules.ruleset import RuleSet

DEADLINE_MS = 300
RULES = RuleSet(deadline_ms=DEADLINE_MS, target=50, best_of=1, max_strikes=3)


def _entries(record: dict[str, Any], seat: int) -> list[list[Any]]:
    """One seat's action entries in play order (the deal a forfeit cut short last)."""
    hands = [h for g in record["games"] for h in g["hands"]]
    if record["unfinished_game"]:
        hands += record["unfinished_game"]["hands"]
    if record["interrupted_deal"]:
        hands.append(record["interrupted_deal"])
    return [e for h in hands for e in h["actions"] if e[0] == seat]


def test_the_first_request_has_no_rtt_and_each_later_one_the_previous_latency() -> None:
    bot, other = RecordingBot("rtt"), RecordingBot("other")
    with running(bot, other):
        record = play([bot.url, other.url], RULES, seed=21).to_dict()
    acts = bot.acts()
    latencies = [e[2] for e in _entries(record, 0)]
    assert len(acts) == len(latencies) > 10
    assert acts[0]["previous_rtt_ms"] is None
    assert [a["previous_rtt_ms"] for a in acts[1:]] == latencies[:-1]
    assert all(0 < rtt <= DEADLINE_MS for rtt in latencies)
    assert {json.dumps(a["strikes"]) for a in acts} == {'{"count": 0, "limit": 3}'}


def test_strikes_count_up_after_each_timeout_and_the_rtt_shows_the_deadline() -> None:
    sleeper = RawBot("sleep", on={2, 5}, sleep_s=1.0)  # two timeouts: under max_strikes
    other = RecordingBot("other")
    with running(sleeper, other):
        record = play([sleeper.url, other.url], RULES, seed=22).to_dict()
    assert [f["kind"] for f in record["faults"]] == ["timeout", "timeout"]
    assert record["forfeit"] is None
    acts = [json.loads(b) for b in sleeper.bodies("/act")]
    counts = [a["strikes"]["count"] for a in acts]
    assert counts[:6] == [0, 0, 1, 1, 1, 2] and set(counts[6:]) == {2}
    assert {a["strikes"]["limit"] for a in acts} == {3}
    assert acts[0]["previous_rtt_ms"] is None
    # The request after each timeout reports the deadline: what the record keeps for it.
    assert acts[2]["previous_rtt_ms"] == acts[5]["previous_rtt_ms"] == DEADLINE_MS
    latencies = [e[2] for e in _entries(record, 0)]
    assert [a["previous_rtt_ms"] for a in acts[1:]] == latencies[: len(acts) - 1]
    # The other bot never sees them: its own count stays at zero.
    assert {a["strikes"]["count"] for a in other.acts()} == {0}


def test_requests_without_the_new_fields_still_decode() -> None:
    """Older arenas' requests (no ``previous_rtt_ms``, no ``strikes``) are still requests."""
    example = Path(__file__).resolve().parents[2] / "api_spec/examples/act.draw.request.json"
    body = json.loads(example.read_text(encoding="utf-8"))
    del body["previous_rtt_ms"], body["strikes"]
    request = msgspec.json.decode(json.dumps(body), type=ActRequest)
    assert request.previous_rtt_ms is None and request.strikes is None
