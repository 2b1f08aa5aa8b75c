"""The rules of Gin Rummy as a pure library: no I/O, no clock, no global randomness.

The stable names (imported by an external conformance suite) are :class:`RuleSet`,
:func:`deadwood`, :func:`best_discard`, :func:`settle_knock` and :class:`MisknockError`.

>>> deadwood("As 2s 3s 4s 5s 6s 7s 8s 9s Ts")
0
>>> settle_knock("As 2s 3s 4s 5s 6s 7s 8s 9s Ts", "Kc Kd Qc Qd Jc Jd 2h 3h 9d 9h").outcome.value
'gin'
"""

from arena.rules.actions import (
    Action,
    ActionError,
    ActionKind,
    IllegalActionError,
    InvalidActionError,
    Phase,
)
from arena.rules.hand import (
    DealResult,
    EventKind,
    HandEvent,
    HandState,
    Misknock,
    apply,
    fallback_action,
    legal_actions,
    new_deal,
    play,
)
from arena.rules.melds import (
    Arrangement,
    InvalidMeldError,
    arrange,
    best_arrangements,
    best_discard,
    deadwood,
    is_meld,
)
from arena.rules.observation import Observation, observe
from arena.rules.record import DealRecord, ReplayError, replay_deal
from arena.rules.ruleset import (
    DeadHandDealer,
    MatchScoring,
    MisknockPolicy,
    NextDealer,
    RuleSet,
    RuleSetError,
)
from arena.rules.scoring import GameResult, GameScore, HandResult, Outcome, Role
from arena.rules.showdown import MisknockError, settle_knock

__all__ = [
    "Action",
    "ActionError",
    "ActionKind",
    "Arrangement",
    "DeadHandDealer",
    "DealRecord",
    "DealResult",
    "EventKind",
    "GameResult",
    "GameScore",
    "HandEvent",
    "HandResult",
    "HandState",
    "IllegalActionError",
    "InvalidActionError",
    "InvalidMeldError",
    "MatchScoring",
    "Misknock",
    "MisknockError",
    "MisknockPolicy",
    "NextDealer",
    "Observation",
    "Outcome",
    "Phase",
    "ReplayError",
    "Role",
    "RuleSet",
    "RuleSetError",
    "apply",
    "arrange",
    "best_arrangements",
    "best_discard",
    "deadwood",
    "fallback_action",
    "is_meld",
    "legal_actions",
    "new_deal",
    "observe",
    "play",
    "replay_deal",
    "settle_knock",
]
