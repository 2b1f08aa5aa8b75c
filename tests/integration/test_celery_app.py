"""The Celery app is built when first asked for, from the environment of that moment, never at
import: importing the workers package reads no setting and makes no app, yet Celery's own
command line (``celery -A workers.celery_app``) still finds the app, with its tasks."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

from conftest import REDIS_URL

ROOT = Path(__file__).resolve().parents[2]

PROBE = textwrap.dedent(
    """
    import os
    import celery._state
    import workers.celery_app as module
    import workers.tasks

    from arena.settings import SettingsError

    assert not list(celery._state._apps), "a Celery app was made at import"
    assert module.celery_app.cache_info().currsize == 0
    try:
        module.app
    except SettingsError as exc:  # read now, when the app is asked for
        print("refused:", exc)
    os.environ["ARENA_WORKER_THREADS"] = "3"
    from celery.app.utils import find_app

    app = find_app("workers.celery_app")
    assert app is module.app is module.celery_app()
    assert app.conf.arena_settings.worker_threads == 3
    assert app.conf.broker_url == os.environ["ARENA_BROKER_URL"]
    names = ("run_match", "sweep", "ladder", "health", "webhooks")
    assert {f"workers.tasks.{name}" for name in names} <= set(app.tasks)
    print("built on demand")
    """
)


def test_the_celery_app_is_not_built_at_import() -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(ARENA_WORKER_THREADS="many", ARENA_BROKER_URL=REDIS_URL)
    done = subprocess.run(
        [sys.executable, "-c", PROBE],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines() == [
        "refused: ARENA_WORKER_THREADS: must be a whole number, not 'many'",
        "built on demand",
    ]
