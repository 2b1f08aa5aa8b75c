"""A bot refusing the arena's signature at the start is reported as such (issue 10, 2.10), over
real HTTP: the forfeit reason names the refusal and the bot's own words, never "unreachable"."""

from __future__ import annotations

import pytest
from hostile import house, running

from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.playing.match import play_match
from arena.protocol.http_player import HttpPlayer
from arena.protocol.signing import generate_secret
from arena.rules.ruleset import RuleSet

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
SHORT = RuleSet(deadline_ms=2000, target=50, best_of=1)


@pytest.mark.parametrize(
    ("arena_secret", "says"),
    [
        (None, "unsigned POST /start (HTTP 401"),
        (generate_secret(), "signed POST /start (HTTP 401"),
    ],
    ids=["arena-holds-no-secret", "arena-holds-another-secret"],
)
def test_a_signature_refused_at_the_start_is_a_signature_refusal_not_unreachable(
    arena_secret: str | None, says: str
) -> None:
    bots = [house("greedy"), BotServer(greedy, name="signed", secret=SECRET)]
    with running(*bots):
        players = [
            HttpPlayer(bots[0].url, allow_loopback=True),
            HttpPlayer(bots[1].url, allow_loopback=True, secret=arena_secret),
        ]
        d = play_match(players, SHORT, seed=3).to_dict()
    assert d["forfeit"]["seat"] == "b" and d["winner"] == "a"
    reason = d["forfeit"]["reason"]
    assert reason.startswith("refused the arena's signature at the start (signature_refused:")
    assert says in reason and "unreachable" not in reason
