"""Keeping the leases of the matches a process plays: one thread renews them all.

A claimed match holds a lease (``lease_expires_at``) for ``ARENA_LEASE_SECONDS``; the attempt
playing it renews it every ``ARENA_LEASE_RENEW_FRACTION`` of that while it plays, and a
worker that dies leaves its match to the sweep once the lease has run out
(:mod:`arena.services.sweeper`). The renewals of every match a process plays go through one
:class:`LeaseKeeper` per :class:`~arena.db.session.Database`: at each beat one thread renews
every lease it holds in one guarded ``UPDATE`` (:func:`~arena.services.matches.renew_leases`),
where a thread per match sent a statement per match (200 matches at once: 200 threads and 40
statements a second, 12 to 16% of the worker's time in ``bench_load.py``'s profile). A lease
missing from the answer was fenced out (the sweep gave the match to another attempt): its
:attr:`Lease.lost` is set, and the match's job stops after the deal in play.

A beat renews every lease held, however recent, so a lease is renewed at most one interval
after it was taken and then every interval. A renewal that fails (the database unreachable,
the pool dry, even a bug) is logged and tried again at the next beat: a lease outlasts at
least one missed renewal (the fraction is at most a half), and if renewals keep failing it runs
out, another attempt takes the match over and this one's record is fenced out. The thread ends
when the keeper holds no lease, and starts again with the next.
"""

from __future__ import annotations

import logging
import threading
import time
import weakref
from collections.abc import Callable, Iterable

from arena.db.errors import TRANSIENT_ERRORS
from arena.db.session import Database
from arena.services.matches import Claim, renew_leases

__all__ = ["Lease", "LeaseKeeper", "keeper_for"]

log = logging.getLogger(__name__)

#: Match ids a failed renewal's log line names (then how many more).
SHOWN = 5

Renew = Callable[[Database, Iterable[Claim], int], set[tuple[int, int]]]


def _renew(db: Database, claims: Iterable[Claim], lease_seconds: int) -> set[tuple[int, int]]:
    return renew_leases(db, claims, lease_seconds=lease_seconds)


class Lease:
    """One held lease: renewed by its keeper until :meth:`LeaseKeeper.drop`; ``lost`` is set
    once a renewal finds the attempt fenced out."""

    __slots__ = ("claim", "lease_seconds", "lost", "renew_every")

    def __init__(self, claim: Claim, lease_seconds: int, renew_every: float) -> None:
        self.claim = claim
        self.lease_seconds = lease_seconds
        self.renew_every = renew_every
        self.lost = threading.Event()


class LeaseKeeper:
    """The leases one process holds on one database, renewed together (see the module
    docstring). Thread-safe; ``renew`` is a seam for tests."""

    def __init__(self, db: Database, *, renew: Renew = _renew) -> None:
        self._db = weakref.ref(db)  # the keeper is kept by the db's key in a weak mapping
        self._renew = renew
        self._held: set[Lease] = set()
        self._renewing: set[Lease] = set()
        self._cond = threading.Condition()
        self._thread: threading.Thread | None = None
        self._next_beat = 0.0

    def hold(self, claim: Claim, *, lease_seconds: int, renew_every: float) -> Lease:
        """Keep ``claim``'s lease renewed (every ``renew_every`` seconds at most) until
        :meth:`drop`."""
        lease = Lease(claim, lease_seconds, renew_every)
        with self._cond:
            due = time.monotonic() + renew_every
            self._next_beat = min(self._next_beat, due) if self._held else due
            self._held.add(lease)
            if self._thread is None:
                self._thread = threading.Thread(target=self._run, name="leases", daemon=True)
                self._thread.start()
            self._cond.notify_all()
        return lease

    def drop(self, lease: Lease) -> None:
        """Stop renewing ``lease``; once this returns, no renewal of it is under way."""
        with self._cond:
            self._held.discard(lease)
            while lease in self._renewing:
                self._cond.wait()
            self._cond.notify_all()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._held and time.monotonic() < self._next_beat:
                    self._cond.wait(self._next_beat - time.monotonic())
                if not self._held:
                    self._thread = None
                    return
                leases = list(self._held)
                self._renewing = set(self._held)
                self._next_beat = time.monotonic() + min(lease.renew_every for lease in leases)
            try:
                self._beat(leases)
            finally:
                with self._cond:
                    self._renewing = set()
                    self._cond.notify_all()

    def _beat(self, leases: list[Lease]) -> None:
        """Renew ``leases`` (one statement per lease length); set ``lost`` on those fenced
        out and stop holding them."""
        db = self._db()
        if db is None:  # nobody can hold a lease on a database that is gone
            return
        by_length: dict[int, list[Lease]] = {}
        for lease in leases:
            by_length.setdefault(lease.lease_seconds, []).append(lease)
        for lease_seconds, group in by_length.items():
            try:
                held = self._renew(db, [lease.claim for lease in group], lease_seconds)
            except TRANSIENT_ERRORS as exc:  # the next beat may succeed (lease slack)
                log.warning(
                    "lease renewal for %s failed, trying again at the next beat: %s",
                    _matches(group),
                    " ".join(str(exc).split()),
                )
                continue
            except Exception:  # never stop renewing over a bug: the thread is every lease
                log.exception(
                    "lease renewal for %s failed, trying again at the next beat", _matches(group)
                )
                continue
            for lease in group:
                if (lease.claim.match_id, lease.claim.attempt) not in held:
                    lease.lost.set()
                    with self._cond:
                        self._held.discard(lease)


def _matches(group: list[Lease]) -> str:
    """``match 7``, or ``matches 7, 9 and 12`` (the ids of a renewal's leases).

    >>> from types import SimpleNamespace as N
    >>> _matches([N(claim=N(match_id=7))])
    'match 7'
    >>> _matches([N(claim=N(match_id=i)) for i in (7, 9, 12)])
    'matches 7, 9 and 12'
    >>> _matches([N(claim=N(match_id=i)) for i in range(1, 201)])
    'matches 1, 2, 3, 4, 5 and 195 more'
    """
    ids = [str(lease.claim.match_id) for lease in group]
    if len(ids) == 1:
        return f"match {ids[0]}"
    if len(ids) > SHOWN:
        return f"matches {', '.join(ids[:SHOWN])} and {len(ids) - SHOWN} more"
    return f"matches {', '.join(ids[:-1])} and {ids[-1]}"


_keepers: weakref.WeakKeyDictionary[Database, LeaseKeeper] = weakref.WeakKeyDictionary()
_keepers_lock = threading.Lock()


def keeper_for(db: Database) -> LeaseKeeper:
    """The process's :class:`LeaseKeeper` for ``db`` (made at the first call)."""
    with _keepers_lock:
        keeper = _keepers.get(db)
        if keeper is None:
            keeper = _keepers[db] = LeaseKeeper(db)
        return keeper
