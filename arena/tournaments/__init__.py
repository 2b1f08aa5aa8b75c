"""Tournament planning: pure functions from results to pairings, brackets and standings.

Formats are frozen values (:class:`RoundRobin`, :class:`SingleElimination`,
:class:`DoubleElimination`, :class:`Swiss`, :class:`Gauntlet`, or :func:`make_format` by name)
with one method, ``plan(participants, results, withdrawn, seed) -> Plan``. Participants come
best seed first; ``results`` maps match keys to :class:`MatchResult`; ``withdrawn`` lists
participants that stopped answering. Planning is recomputed from scratch each time, so it is
idempotent: the same inputs give the same plan, keys never change, and a pairing once issued is
never re-paired. No I/O, no clock, no global randomness: persisting plans and running matches
belong to the service layer.

>>> fmt = make_format("single_elimination")
>>> plan = fmt.plan(["ann", "bob"])
>>> [m.key for m in plan.to_play()]
['R1-1']
>>> plan = fmt.plan(["ann", "bob"], {"R1-1": MatchResult("bob", games=(1, 3))})
>>> plan.finished, plan.champion
(True, 'bob')
"""

from arena.tournaments.double_elimination import DoubleElimination
from arena.tournaments.duplicate import combine, match_keys, match_seed, matches_for
from arena.tournaments.factory import FORMAT_NAMES, make_format
from arena.tournaments.gauntlet import Gauntlet
from arena.tournaments.model import (
    BracketRound,
    BracketSection,
    DecidedBy,
    Format,
    FormatError,
    Match,
    MatchResult,
    Pairing,
    PairingResult,
    Plan,
    PlanError,
    ResultError,
    Source,
    SourceKind,
    Standing,
    Status,
    TournamentError,
)
from arena.tournaments.round_robin import RoundRobin
from arena.tournaments.single_elimination import SingleElimination
from arena.tournaments.swiss import Swiss

__all__ = [
    "FORMAT_NAMES",
    "BracketRound",
    "BracketSection",
    "DecidedBy",
    "DoubleElimination",
    "Format",
    "FormatError",
    "Gauntlet",
    "Match",
    "MatchResult",
    "Pairing",
    "PairingResult",
    "Plan",
    "PlanError",
    "ResultError",
    "RoundRobin",
    "SingleElimination",
    "Source",
    "SourceKind",
    "Standing",
    "Status",
    "Swiss",
    "TournamentError",
    "combine",
    "make_format",
    "match_keys",
    "match_seed",
    "matches_for",
]
