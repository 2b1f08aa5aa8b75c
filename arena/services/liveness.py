"""Whether a lease's holder is a process of this host that no longer exists.

A Celery worker's lease owner is ``celery-<hostname>-<pid>-<task id>``
(:func:`workers.tasks.run_match`). A sweep running on the same host can ask the kernel whether
that process is still there: if not (the worker was SIGKILLed, its container restarted with a
new process), its matches need not wait for their leases to run out. Only owners of this
host (same hostname, hence the same process table: one container, one machine) are judged;
every other lease is left to expire. A wrong "dead" could only come from two hosts sharing a
hostname; it would cost a replay, never a second result: the new claim fences the old
attempt out (:mod:`arena.services.matches`).

>>> is_dead_here(f"celery-{socket.gethostname()}-{os.getpid()}-task")
False
>>> is_dead_here("celery-another-host-1-task")
False
"""

from __future__ import annotations

import os
import socket

__all__ = ["is_dead_here"]


def is_dead_here(owner: str) -> bool:
    """Whether ``owner`` is a worker process of this host that has exited."""
    prefix = f"celery-{socket.gethostname()}-"
    if not owner.startswith(prefix):
        return False
    pid = owner[len(prefix) :].split("-", 1)[0]
    if not pid.isdigit():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return True
    except PermissionError:  # it exists, under another user
        return False
    return False
