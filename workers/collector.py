"""The cyclic garbage collector of a worker process, tuned for one that holds many matches.

A worker playing 200 matches at once keeps each match's record (every action so far) alive for
the whole match, so the objects the collector tracks grow by thousands a second, and they
survive. Under CPython's default thresholds (700, 10, 10) the survivors are promoted and
scanned again and again: in ``benchmarks/bench_load.py`` (200 matches, the gevent pool) one
run's worker made 5,342 young, 486 middle and 44 full collections, 13.8 s in all, the full ones
up to 224 ms each, and every match of the process stood still meanwhile.

So when the worker is ready (Celery's ``worker_ready``, connected in
:mod:`workers.celery_app`), :func:`tune_collector` collects once, freezes what start-up left
(modules, the app, SQLAlchemy's metadata: about 150,000 objects no collection scans again:
:func:`gc.freeze`) and raises the thresholds to :data:`WORKER_THRESHOLDS`. In the same
benchmark (the counts from a throwaway probe on ``gc.callbacks``): 114 young, 4 middle and 1
full collection, 2.9 s in all; the worker's CPU a bot call 0.247 ms against 0.275. A young
threshold of 100,000 instead made pauses of up to 0.4 s and saved no time. Most of what was
left was garbage of the HTTP transport (an answer and its parser held each other: 9 objects a
bot call that only the collector could free), gone since: 1.1 s of collection in a run.
"""

from __future__ import annotations

import gc

__all__ = ["WORKER_THRESHOLDS", "tune_collector"]

#: The collector's thresholds in a worker (:func:`gc.set_threshold`): a young collection after
#: 20,000 net new tracked objects, a middle one every 20 young, a full one every 10 middle.
WORKER_THRESHOLDS = (20_000, 20, 10)


def tune_collector() -> None:
    """Collect, freeze the survivors and raise the thresholds (see the module docstring)."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*WORKER_THRESHOLDS)
