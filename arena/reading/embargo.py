"""What must stay secret while it could still help a bot: seeds and deals of unplayed matches.

A match's seed decides every deal, and a tournament's seed decides every match seed; a
duplicate pairing plays two matches on the same seed. So:

* a match's seed and its replay (decks, hands) are public once it is settled and no match on
  the same seed in its tournament (for a match of no tournament, in none: a ladder pair's
  other leg) is still pending or running;
* a tournament's seed (and the match seeds in its bracket) once it is finished or cancelled
  and none of its matches is pending or running.
* an SPRT test's seed (which decides every pair's seed) once it is finished and none of its
  matches is pending or running; its matches' seeds follow the first rule (a pair's two legs
  share one seed).

Until then the seeds read as ``null`` and the replay is a 409 problem. This module decides;
what it needs to know is read by :mod:`arena.reading.queries`.
"""

from __future__ import annotations

from typing import Any

from arena.db.session import Database
from arena.reading.queries import matches as match_queries
from arena.reading.queries import tournaments as tournament_queries
from arena.states import MatchStatus, TournamentStatus

__all__ = [
    "OPEN",
    "match_deals_public",
    "redact_bracket",
    "redact_sprt_test",
    "tournament_seed_public",
    "tournament_seed_public_by_id",
]

OPEN = (MatchStatus.PENDING, MatchStatus.RUNNING)
SETTLED = frozenset(s.value for s in MatchStatus) - {s.value for s in OPEN}
DONE = (TournamentStatus.FINISHED, TournamentStatus.CANCELLED)


def match_deals_public(db: Database, match: dict[str, Any]) -> bool:
    """Whether the deals of a match (a :func:`~arena.reading.queries.matches.match_detail` or
    :func:`~arena.reading.queries.matches.match_state` dict) show."""
    if match["status"] not in SETTLED:
        return False
    # Outside tournaments too: a ladder pair's two legs share one seed.
    return not match_queries.seed_twin_in(db, match, OPEN)


def tournament_seed_public(detail: dict[str, Any]) -> bool:
    """Whether a tournament's seed (a
    :func:`~arena.reading.queries.tournaments.tournament_detail` dict) may be shown."""
    done = detail["status"] in {s.value for s in DONE}
    counts = detail["matches"]
    return done and not any(counts.get(s.value, 0) for s in OPEN)


def tournament_seed_public_by_id(db: Database, tournament_id: int) -> bool:
    """As :func:`tournament_seed_public`, by id in one query
    (:class:`~arena.errors.NotFoundError` if there is no such tournament)."""
    status, any_open = tournament_queries.tournament_state(db, tournament_id, OPEN)
    return status in DONE and not any_open


def redact_sprt_test(detail: dict[str, Any]) -> dict[str, Any]:
    """An SPRT test's report (a :func:`~arena.reading.queries.sprt_tests.sprt_test_detail`
    dict) with its seed replaced by null unless the test is over and none of its matches is
    pending or running (in place, and returned)."""
    open_ = {s.value for s in OPEN}
    over = detail["status"] == "finished"
    if not over or any(m["status"] in open_ for m in detail["matches"]):
        detail["seed"] = None
    return detail


def redact_bracket(bracket: dict[str, Any]) -> dict[str, Any]:
    """The bracket with every match seed replaced by null (in place, and returned)."""
    for section in bracket["sections"]:
        for r in section["rounds"]:
            for pairing in r["pairings"]:
                for m in pairing["matches"]:
                    m["seed"] = None
    return bracket
