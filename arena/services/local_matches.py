"""A match played outside the arena's workers (``gin-arena match``), stored so that the pages
show it: ``gin-arena match --view`` keeps it in a database of its own and serves the replay
viewer over it.

The match is stored the way a worker stores one: its two bots registered (names made valid and
distinct), the match scheduled unrated on its seed and rules, claimed, and its record written
by :func:`arena.services.recording.record_match_result`, so the pages and the API read it
like any finished match.
"""

from __future__ import annotations

import re

from arena.db.session import Database
from arena.playing.records import MatchRecord
from arena.services.bots import register_bot
from arena.services.matches import claim_match, schedule_match
from arena.services.recording import record_match_result

__all__ = ["store_played_match"]

#: Who "owns" the bots of a match stored this way.
OWNER = "gin-arena match"
_INVALID = re.compile(r"[^A-Za-z0-9_.-]+")


def bot_names(players: tuple[str, str]) -> tuple[str, str]:
    """Registrable names for the two players (``house-strong (a)`` -> ``house-strong-a``),
    distinct; each 1 to 64 characters, starting with a letter or digit.

    >>> bot_names(("house-strong (a)", "house-strong (b)"))
    ('house-strong-a', 'house-strong-b')
    >>> bot_names(("?", "?"))
    ('bot-a', 'bot-b')
    """
    out: list[str] = []
    for seat, name in zip("ab", players, strict=True):
        clean = _INVALID.sub("-", name).strip("-._")[:62] or f"bot-{seat}"
        out.append(clean)
    if out[0] == out[1]:
        out = [f"{out[0]}-a", f"{out[1]}-b"]
    return out[0], out[1]


def store_played_match(
    db: Database, record: MatchRecord, urls: tuple[str, str], *, duration_ms: int = 0
) -> int:
    """Store ``record`` (played between the bots at ``urls``) in ``db``, a database of its
    own with the current schema; the stored match's id."""
    names = bot_names(record.players)
    ids = [
        register_bot(db, name=name, owner=OWNER, url=url).bot_id
        for name, url in zip(names, urls, strict=True)
    ]
    seed = record.seed if isinstance(record.seed, int) else int(record.seed)
    with db.session() as session:
        match_id = schedule_match(
            session, ids[0], ids[1], rules=record.rules, seed=seed, rated=False
        ).id
    claim = claim_match(db, match_id, OWNER, lease_seconds=3600, max_attempts=1)
    assert claim is not None, "a match just scheduled in a database of its own is claimable"
    bot_time = sum(sum(seat) for seat in record.latencies)
    record_match_result(
        db, claim, record, duration_ms=duration_ms, bot_time_ms=round(bot_time), elo_k=0.0
    )
    return match_id
