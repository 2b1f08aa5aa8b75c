"""The ladder's policy, pure: who plays whom in a round (:mod:`~arena.ladder.matchmaker`) and
the time slots rounds belong to (:mod:`~arena.ladder.clock`).

No I/O, no clock, no global randomness: the service layer (:mod:`arena.services.ladder`) reads
the inputs, calls :func:`plan_round` and schedules what it returns.
"""

from arena.ladder.clock import DAY_SECONDS, RoundTime, slot_of
from arena.ladder.matchmaker import Entrant, LadderMatch, LadderPolicy, pace, plan_round

__all__ = [
    "DAY_SECONDS",
    "Entrant",
    "LadderMatch",
    "LadderPolicy",
    "RoundTime",
    "pace",
    "plan_round",
    "slot_of",
]
