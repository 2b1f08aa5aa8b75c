"""How the benchmarks that start Celery workers run each of ``gin-arena worker --pool``'s pools:
a match worker's options, and the results file of a full run on a pool."""

from __future__ import annotations

from pathlib import Path

from arena.cli.worker import POOLS

__all__ = ["DEFAULT_POOL", "POOLS", "match_worker_options", "results_for_pool"]

DEFAULT_POOL = POOLS[0]


def match_worker_options(pool: str) -> list[str]:
    """A match worker's ``gin-arena worker`` options on ``pool``: none on the default (threads)
    pool; on gevent, the pool and the match queue alone, as ``deploy/README.md`` runs it (the
    periodic jobs need a threads worker with beat beside it).

    >>> match_worker_options("threads"), match_worker_options("gevent")
    ([], ['--pool', 'gevent', '--queues', 'celery'])
    """
    return [] if pool == DEFAULT_POOL else ["--pool", pool, "--queues", "celery"]


def results_for_pool(default: Path, pool: str) -> Path:
    """Where a full run on ``pool`` writes: ``default`` on the default pool, else
    ``<stem>_<pool>.json`` beside it.

    >>> results_for_pool(Path("results/load.json"), "gevent").name
    'load_gevent.json'
    """
    return default if pool == DEFAULT_POOL else default.with_name(f"{default.stem}_{pool}.json")
