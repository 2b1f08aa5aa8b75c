"""``gin-arena --help`` starts fast: building the parser loads no database, web, task-queue or
service layer (each command imports what it needs when it runs), in a fresh interpreter."""

from __future__ import annotations

import subprocess
import sys

#: What no command needs before it runs: each is imported by the commands that use it.
HEAVY = (
    "alembic",
    "arena.api",
    "arena.db",
    "arena.playing.executors",
    "arena.services",
    "arena.web",
    "celery",
    "flask",
    "sqlalchemy",
    "workers",
)


def test_the_parser_is_built_without_the_database_web_or_task_queue_layers() -> None:
    code = "import sys; from arena.cli import build_parser; build_parser(); print(*sys.modules)"
    done = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    loaded = sorted(
        m for m in done.stdout.split() if any(m == h or m.startswith(f"{h}.") for h in HEAVY)
    )
    assert loaded == []
