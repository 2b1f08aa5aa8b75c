"""Benchmark probe: times the database writes of each match inside arena worker processes.

Python imports ``sitecustomize`` at start-up from ``sys.path``; ``bench_tournament.py`` puts
this directory on the ``PYTHONPATH`` of the worker processes it measures (LocalExecutor's
spawned processes, ``gin-arena worker``) and sets ``ARENA_BENCH_TIMINGS`` to a directory.
Without that variable this module does nothing.

It wraps, before ``arena.playing.jobs`` imports them, :func:`record_match_result` (the one
transaction that writes a match's result, games, deals, statistics and Elo) and
:func:`advance_for_match` (the tournament advance after it, with the rating refit), and appends one
line per call to ``<dir>/<pid>.tsv``: ``kind<TAB>match id<TAB>milliseconds``.
"""

from __future__ import annotations

import os
import threading
import time
from typing import Any


def _install(out_dir: str) -> None:
    # Imported only when active: this module runs in every process started with it on the path.
    import arena.services.recording as recording  # noqa: PLC0415
    import arena.services.tournaments as tournaments  # noqa: PLC0415

    lock = threading.Lock()
    path = os.path.join(out_dir, f"{os.getpid()}.tsv")

    def log(kind: str, match_id: int, started: float) -> None:
        ms = (time.perf_counter() - started) * 1000
        with lock, open(path, "a", encoding="utf-8") as out:
            out.write(f"{kind}\t{match_id}\t{ms:.3f}\n")

    record = recording.record_match_result
    advance = tournaments.advance_for_match

    def record_match_result(db: Any, claim: Any, *args: Any, **kwargs: Any) -> bool:
        started = time.perf_counter()
        try:
            return record(db, claim, *args, **kwargs)
        finally:
            log("record", claim.match_id, started)

    def advance_for_match(db: Any, match_id: int, *args: Any, **kwargs: Any) -> None:
        started = time.perf_counter()
        try:
            advance(db, match_id, *args, **kwargs)
        finally:
            log("advance", match_id, started)

    recording.record_match_result = record_match_result  # type: ignore[assignment]
    tournaments.advance_for_match = advance_for_match  # type: ignore[assignment]


if os.environ.get("ARENA_BENCH_TIMINGS"):
    _install(os.environ["ARENA_BENCH_TIMINGS"])
