"""The real API server (:class:`arena.api.server.ApiServer`, waitress) on a free loopback port,
in a thread, for the tests that call it over real HTTP: ``tests/api`` and ``tests/browser``
(``tests/`` is on ``sys.path`` through its conftest).
"""

from __future__ import annotations

import shutil
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from arena.api.server import ApiServer
from arena.settings import Settings

__all__ = ["sqlite_copy", "waitress_serving"]


def sqlite_copy(template: Path, tmp_path: Path) -> str:
    """The URL of a fresh copy of the migrated SQLite ``template``, in ``tmp_path``."""
    path = tmp_path / "arena.db"
    shutil.copy(template, path)
    return f"sqlite:///{path}"


@contextmanager
def waitress_serving(database_url: str) -> Iterator[str]:
    """The app on ``database_url`` under waitress on a free loopback port (never 8000), without
    rate limits or an executor; its base URL. The server is stopped when the block ends."""
    server = ApiServer(
        Settings(database_url=database_url, rate_limit=""), port=0, threads=2, with_executor=False
    )
    thread = threading.Thread(target=server.run, name="api-server", daemon=True)
    thread.start()
    try:
        yield server.url
    finally:
        server.stop()
        thread.join(timeout=30)
