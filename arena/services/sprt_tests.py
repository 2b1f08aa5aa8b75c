"""SPRT tests: "is my new version better?" as unrated duplicate pairs, stopped by the
sequential probability ratio test of :mod:`arena.measures.sprt`.

**A test** names a candidate and a baseline: two bots, or one bot against itself (the null
test, which should accept H0). Each side plays at the version that is its bot's current one
when the test is created, and only at that one: an older version cannot be named (its URL may
be gone and its secret is not kept), so an author who wants to keep the old code playing
registers it as a bot of its own. If a side's bot changes version, or stops being active,
while the test runs, the test ends ``cancelled`` with the reason (its later pairs would measure
something else).

**Pairs.** Pair ``n`` is two unrated matches on one seed, keys ``n:1`` (candidate in seat
``a``) and ``n:2`` (seats swapped), with the test's rules. Its seed is :func:`pair_seed` of the
test's seed (given at creation, or drawn then, and stored) and ``n``: the same test seed gives
the same deals pair by pair. At most ``concurrency`` pairs are scheduled and not yet counted;
after each recorded match (:func:`advance_for_test_match`, called where tournaments advance)
and on every sweep (:func:`advance_running_tests`) the test is **advanced**:

* its state is recomputed from its stored matches, never incremented: the candidate's score in
  each leg (a win 1, a loss 0, a void or undecided match 1/2), and the pairs counted **in pair
  number order**: pair ``n`` is counted once its two legs are over and every earlier pair is
  counted (a pair that finished before an earlier one waits for it; a pair with a cancelled leg
  is skipped), with the LLR after each. So the LLR path, the stop and the verdict depend only
  on the pairs' outcomes, never on the order the matches finished in;
* the first pair after which the LLR is out of its bounds decides (H0 below, H1 above); with
  none, reaching ``max_pairs`` pairs caps the test. Pairs still in flight when it stops are
  cancelled if not started and not counted if they finish later;
* otherwise new pairs are scheduled to fill the flight, never past the cap.

The advance takes the test's row lock first (a no-op ``UPDATE``), and its new matches are unique
on test and key: run twice, at once or after a crash, it schedules nothing twice and computes
the same state. Its matches are submitted after the commit. A finished test emits
``test.finished`` in the transaction that finishes it.
"""

from __future__ import annotations

import hashlib
import random
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from sqlalchemy import select, update
from sqlalchemy.orm import Session

from arena.db.models import BotRow, BotVersionRow, MatchRow, SprtTestRow, utcnow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.events import EventType
from arena.measures.sprt import (
    Pentanomial,
    SprtParams,
    Verdict,
    elo_estimate,
    llr,
    pair_bucket,
)
from arena.rules.ruleset import RuleSet
from arena.services.challenges import BotInactiveError
from arena.services.events import emit
from arena.services.matches import Submit, schedule_match
from arena.states import BotStatus, MatchStatus

__all__ = [
    "SEED_BITS",
    "PairOutcome",
    "TestState",
    "TestStateError",
    "VersionNotPlayableError",
    "advance_for_test_match",
    "advance_running_tests",
    "advance_test",
    "cancel_test",
    "create_test",
    "pair_seed",
    "recompute_state",
]

RUNNING = "running"
FINISHED = "finished"
#: The width of a test's seed and of its pairs' seeds (as the ladder's and the tournaments').
SEED_BITS = 62
_OVER = (MatchStatus.FINISHED, MatchStatus.FAILED)


class TestStateError(ValueError):
    """The test cannot do that now (cancelling a test that is already over)."""

    __test__ = False  # not a pytest class


class VersionNotPlayableError(ValueError):
    """A side named a version of its bot that is not the bot's current one."""

    def __init__(self, bot_id: int, number: int, current: int | None) -> None:
        super().__init__(
            f"version {number} of bot {bot_id} is not its current version"
            f" ({'none' if current is None else current}): only the current version plays"
            " (an older one's URL may be gone and its secret is not kept); register the older"
            " code as a bot of its own to test against it"
        )
        self.bot_id = bot_id


@dataclass(frozen=True, slots=True)
class PairOutcome:
    """A counted pair: its number and bucket (0..4, the candidate's pair score times two)."""

    pair: int
    bucket: int


@dataclass(frozen=True, slots=True)
class TestState:
    """A test's numbers recomputed from its matches: the counted pairs in pair number order,
    the LLR after each, the verdict they give (None: undecided), and the pairs not counted."""

    __test__ = False  # not a pytest class

    counted: tuple[PairOutcome, ...]
    path: tuple[float, ...]
    verdict: Verdict | None
    #: Pairs scheduled and not counted: playing, or over and waiting for an earlier pair (or,
    #: once decided, past the deciding pair). They fill the flight.
    in_flight: int
    #: Pairs with a leg cancelled (skipped: not counted, not in flight).
    dropped: int

    @property
    def pentanomial(self) -> Pentanomial:
        return Pentanomial.from_buckets(p.bucket for p in self.counted)


def pair_seed(test_seed: int, pair: int) -> int:
    """The seed of a test's pair ``pair``: a keyed BLAKE2b hash of the pair number under the
    test's seed, cut to the :data:`SEED_BITS` bits the test seed has. Stable across runs and
    machines; one pair's seed tells nothing of another's without the test seed.

    >>> pair_seed(7, 1) == pair_seed(7, 1) != pair_seed(7, 2)
    True
    >>> 0 <= pair_seed(2**62 - 1, 5000) < 2**62
    True
    """
    key = test_seed.to_bytes(8, "big")
    digest = hashlib.blake2b(f"sprt-pair:{pair}".encode(), key=key, digest_size=8).digest()
    return int.from_bytes(digest, "big") >> (64 - SEED_BITS)


def _leg_score(winner: str | None, leg: int) -> float:
    """The candidate's score in a leg: it sits in seat ``a`` in leg 1 and ``b`` in leg 2."""
    if winner is None:
        return 0.5
    return 1.0 if winner == ("a" if leg == 1 else "b") else 0.0


def recompute_state(
    matches: Iterable[tuple[str, MatchStatus, str | None]],
    params: SprtParams,
    max_pairs: int,
) -> TestState:
    """The state of a test from its matches ``(match_key, status, winner)``, in any order
    (pure; see the module docstring): pairs are counted in pair number order, each only once
    every earlier pair is counted or skipped, so the order the matches finished in is not an
    input at all."""
    legs: dict[int, dict[int, tuple[MatchStatus, str | None]]] = {}
    for key, status, winner in matches:
        number, _, leg = key.partition(":")
        legs.setdefault(int(number), {})[int(leg)] = (status, winner)
    counts = Pentanomial((0, 0, 0, 0, 0))
    counted: list[PairOutcome] = []
    path: list[float] = []
    verdict: Verdict | None = None
    blocked = False  # an earlier pair is still playing: later ones wait
    uncounted = dropped = 0
    for pair, both in sorted(legs.items()):
        statuses = [both[leg][0] for leg in (1, 2) if leg in both]
        if MatchStatus.CANCELLED in statuses or len(statuses) < 2:
            dropped += 1
            continue
        over = all(s in _OVER for s in statuses)
        blocked = blocked or not over
        if blocked or verdict is not None:
            uncounted += 1
            continue
        scores = [
            0.5 if both[leg][0] is MatchStatus.FAILED else _leg_score(both[leg][1], leg)
            for leg in (1, 2)
        ]
        outcome = PairOutcome(pair, pair_bucket(scores[0], scores[1]))
        counts = counts.add(outcome.bucket)
        value = llr(counts, params.elo0, params.elo1)
        counted.append(outcome)
        path.append(value)
        if value <= params.lower:
            verdict = Verdict.H0
        elif value >= params.upper:
            verdict = Verdict.H1
        elif len(counted) >= max_pairs:
            verdict = Verdict.CAPPED
    return TestState(tuple(counted), tuple(path), verdict, uncounted, dropped)


def _params(test: SprtTestRow) -> SprtParams:
    return SprtParams(test.elo0, test.elo1, test.alpha, test.beta)


def create_test(
    db: Database,
    *,
    candidate_id: int,
    baseline_id: int,
    params: SprtParams,
    max_pairs: int,
    concurrency: int,
    rules: RuleSet,
    created_by: str,
    submit: Submit,
    candidate_version: int | None = None,
    baseline_version: int | None = None,
    seed: int | None = None,
) -> int:
    """Create a test and schedule its first pairs (submitted after the commit): its id.

    ``seed`` (0 to 2**62 - 1) decides every pair's deals (:func:`pair_seed`); without it one
    is drawn from the system's generator. Either way it is stored with the test.

    Raises :class:`~arena.errors.NotFoundError` for a bot that does not exist,
    :class:`~arena.services.challenges.BotInactiveError` for one that is not active, and
    :class:`VersionNotPlayableError` for a version number that is not its bot's current one.
    """
    if max_pairs < 1 or concurrency < 1:
        raise ValueError("max_pairs and concurrency must be at least 1")
    if seed is None:
        seed = random.SystemRandom().getrandbits(SEED_BITS)
    elif not 0 <= seed < 1 << SEED_BITS:
        raise ValueError(f"seed must be 0 to 2**{SEED_BITS} - 1, not {seed}")
    with db.session() as session:
        versions = []
        for bot_id, number in ((candidate_id, candidate_version), (baseline_id, baseline_version)):
            bot = session.get(BotRow, bot_id)
            if bot is None:
                raise NotFoundError("bot", bot_id)
            if bot.status is not BotStatus.ACTIVE:
                raise BotInactiveError(bot_id, bot.status)
            current = _current_number(session, bot)
            if number is not None and number != current:
                raise VersionNotPlayableError(bot_id, number, current)
            versions.append(bot.current_version_id)
        test = SprtTestRow(
            candidate_id=candidate_id,
            baseline_id=baseline_id,
            candidate_version_id=versions[0],
            baseline_version_id=versions[1],
            elo0=params.elo0,
            elo1=params.elo1,
            alpha=params.alpha,
            beta=params.beta,
            max_pairs=max_pairs,
            concurrency=concurrency,
            rules=rules.to_dict(),
            seed=seed,
            status=RUNNING,
            created_by=created_by,
            scheduled_pairs=0,
            pairs=0,
            pentanomial=[0, 0, 0, 0, 0],
            llr=0.0,
            llr_history=[],
            created_at=utcnow(),
        )
        session.add(test)
        session.flush()
        test_id = test.id
        ids = _advance(session, test)
    submit(ids)
    return test_id


def _current_number(session: Session, bot: BotRow) -> int | None:
    if bot.current_version_id is None:
        return None
    return session.scalar(
        select(BotVersionRow.number).where(BotVersionRow.id == bot.current_version_id)
    )


def _lock(session: Session, test_id: int) -> SprtTestRow | None:
    """The running test, under its row lock (a no-op UPDATE: the write lock on SQLite too);
    None if it does not exist or is over."""
    locked = session.execute(
        update(SprtTestRow)
        .where(SprtTestRow.id == test_id, SprtTestRow.status == RUNNING)
        .values(scheduled_pairs=SprtTestRow.scheduled_pairs)
    )
    if not locked.rowcount:  # type: ignore[attr-defined]
        return None
    return session.get(SprtTestRow, test_id, populate_existing=True)


def advance_test(db: Database, test_id: int, submit: Submit) -> list[int]:
    """Recompute a running test from its matches; finish it at a bound or the cap, or schedule
    pairs to fill its flight (submitted after the commit): the new matches' ids. Nothing for a
    test that is over (or does not exist)."""
    with db.session() as session:
        test = _lock(session, test_id)
        if test is None:
            return []
        ids = _advance(session, test)
    submit(ids)
    return ids


def _unplayable(session: Session, test: SprtTestRow) -> str | None:
    """Why a side can no longer play the test's version (None: both can)."""
    for bot, version_id in (
        (test.candidate, test.candidate_version_id),
        (test.baseline, test.baseline_version_id),
    ):
        if bot.status is not BotStatus.ACTIVE:
            return f"bot {bot.id} ({bot.name}) became {bot.status.value} during the test"
        if bot.current_version_id != version_id:
            return f"bot {bot.id} ({bot.name}) changed version during the test"
    played = session.execute(
        select(MatchRow.version_a_id, MatchRow.version_b_id, MatchRow.match_key).where(
            MatchRow.test_id == test.id, MatchRow.status == MatchStatus.FINISHED
        )
    ).all()
    expected = {1: (test.candidate_version_id, test.baseline_version_id)}
    expected[2] = expected[1][::-1]
    for version_a, version_b, key in played:
        want = expected[int(str(key).rpartition(":")[2])]
        if None not in want and (version_a, version_b) != want:
            return f"match {key} of the test was played by another version of a side"
    return None


def _advance(session: Session, test: SprtTestRow) -> list[int]:
    """The advance of a locked, running test (see the module docstring)."""
    rows = session.execute(
        select(MatchRow.match_key, MatchRow.status, MatchRow.winner).where(
            MatchRow.test_id == test.id
        )
    ).all()
    state = recompute_state(((str(k), s, w) for k, s, w in rows), _params(test), test.max_pairs)
    counts = state.pentanomial
    test.pairs = counts.pairs
    test.pentanomial = list(counts.counts)
    test.llr = state.path[-1] if state.path else 0.0
    test.llr_history = list(state.path)
    if state.verdict is not None:
        _finish(session, test, state.verdict, None)
        return []
    reason = _unplayable(session, test)
    if reason is not None:
        _finish(session, test, Verdict.CANCELLED, reason)
        return []
    room = min(test.concurrency - state.in_flight, test.max_pairs - state.in_flight - counts.pairs)
    if room <= 0:
        return []
    rules = RuleSet.from_dict(test.rules)
    matches = []
    for pair in range(test.scheduled_pairs + 1, test.scheduled_pairs + room + 1):
        seed = pair_seed(test.seed, pair)
        for leg, (a, b) in enumerate(
            ((test.candidate_id, test.baseline_id), (test.baseline_id, test.candidate_id)),
            start=1,
        ):
            matches.append(
                schedule_match(
                    session,
                    a,
                    b,
                    rules=rules,
                    seed=seed,
                    rated=False,
                    match_key=f"{pair}:{leg}",
                    test_id=test.id,
                )
            )
    test.scheduled_pairs = test.scheduled_pairs + room
    session.flush()
    return [m.id for m in matches]


def _finish(session: Session, test: SprtTestRow, verdict: Verdict, reason: str | None) -> None:
    """End the test: its verdict, its pending matches cancelled, ``test.finished`` emitted."""
    test.status = FINISHED
    test.verdict = verdict.value
    test.reason = reason
    test.finished_at = utcnow()
    session.execute(
        update(MatchRow)
        .where(MatchRow.test_id == test.id, MatchRow.status == MatchStatus.PENDING)
        .values(status=MatchStatus.CANCELLED, finished_at=test.finished_at)
    )
    emit(
        session,
        EventType.TEST_FINISHED,
        finished_event(test),
        audience=(test.candidate_id, test.baseline_id),
    )


def finished_event(test: SprtTestRow) -> dict[str, Any]:
    """The ``data`` of ``test.finished`` (see :class:`arena.events.EventType`)."""
    params = _params(test)
    estimate = elo_estimate(Pentanomial(tuple(test.pentanomial)))
    return {
        "test": test.id,
        "candidate": {"id": test.candidate.id, "name": test.candidate.name},
        "baseline": {"id": test.baseline.id, "name": test.baseline.name},
        "verdict": test.verdict,
        "reason": test.reason,
        "llr": test.llr,
        "bounds": {"lower": params.lower, "upper": params.upper},
        "elo0": test.elo0,
        "elo1": test.elo1,
        "pairs": test.pairs,
        "pentanomial": list(test.pentanomial),
        # Revealed once the test is over (as the report does), so its pairs can be replayed.
        "seed": test.seed,
        "elo": None
        if estimate is None
        else {"estimate": estimate.elo, "ci_low": estimate.ci_low, "ci_high": estimate.ci_high},
        "los": None if estimate is None else estimate.los,
        "links": {"api": f"/api/v1/tests/{test.id}", "page": f"/tests/{test.id}"},
    }


def cancel_test(db: Database, test_id: int) -> list[int]:
    """Stop a running test (verdict ``cancelled``): its pending matches are cancelled (their
    ids returned); finished ones stay. :class:`TestStateError` if it is over already."""
    with db.session() as session:
        test = _lock(session, test_id)
        if test is None:
            verdict = session.scalar(select(SprtTestRow.verdict).where(SprtTestRow.id == test_id))
            if verdict is None:
                raise NotFoundError("test", test_id)
            raise TestStateError(f"test {test_id} is already over ({verdict})")
        pending = list(
            session.scalars(
                select(MatchRow.id).where(
                    MatchRow.test_id == test_id, MatchRow.status == MatchStatus.PENDING
                )
            )
        )
        _finish(session, test, Verdict.CANCELLED, "cancelled by request")
    return pending


def advance_for_test_match(db: Database, match_id: int, submit: Submit) -> bool:
    """After a recorded (or void) match: advance its test, if a test scheduled it. Whether
    one did."""
    with db.session() as session:
        test_id = session.scalar(select(MatchRow.test_id).where(MatchRow.id == match_id))
    if test_id is None:
        return False
    advance_test(db, test_id, submit)
    return True


def advance_running_tests(db: Database, submit: Submit) -> list[int]:
    """Advance every running test (the sweep's pass: a worker may have died between recording
    a match and advancing its test): the matches scheduled."""
    with db.session() as session:
        ids = list(session.scalars(select(SprtTestRow.id).where(SprtTestRow.status == RUNNING)))
    return [m for test_id in ids for m in advance_test(db, test_id, submit)]
