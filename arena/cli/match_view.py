"""``gin-arena match ... --view``: the replay viewer for the match just played, on loopback.

The record is stored in a temporary SQLite database of its own
(:func:`arena.services.local_matches.store_played_match`) and the arena's own app serves it
(pages and API, no executor, no ladder) on 127.0.0.1 until Ctrl-C; then the database is gone.
"""

from __future__ import annotations

import contextlib
import signal
import sys
import tempfile
import threading
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING

from arena.cli.options import UsageError, port_option

if TYPE_CHECKING:
    from arena.playing.records import MatchRecord

__all__ = ["serve_view"]


def serve_view(
    record: MatchRecord, urls: tuple[str, str], *, port: int, duration_ms: int = 0
) -> None:
    """Store ``record`` and serve its replay on ``127.0.0.1:port`` (0: any free port) until
    interrupted, printing the page's URL on stderr."""
    from arena.api.server import ApiServer
    from arena.db.migrate import upgrade
    from arena.db.session import Database
    from arena.services.local_matches import store_played_match
    from arena.settings import load_settings

    port_option(port, "--view-port")
    with tempfile.TemporaryDirectory(prefix="gin-arena-view-") as tmp:
        url = f"sqlite:///{Path(tmp) / 'view.db'}"
        db = Database(url)
        try:
            upgrade(db)
            match_id = store_played_match(db, record, urls, duration_ms=duration_ms)
        finally:
            db.dispose()
        # The environment's settings are not this view's: its own database, no broker.
        settings = load_settings({}, database_url=url, allow_loopback=True, rate_limit="")
        try:
            server = ApiServer(settings, "127.0.0.1", port, threads=4, with_executor=False)
        except OSError as exc:
            raise UsageError(f"--view-port {port}: cannot listen: {exc.strerror or exc}") from None
        print(
            f"replay viewer: {server.url}/matches/{match_id}  (Ctrl-C stops)",
            file=sys.stderr,
            flush=True,
        )
        if threading.current_thread() is threading.main_thread():
            signal.signal(signal.SIGTERM, _interrupt)  # as Ctrl-C: the database is removed
        with contextlib.suppress(KeyboardInterrupt):
            server.run()


def _interrupt(_signum: int, _frame: FrameType | None) -> None:
    raise KeyboardInterrupt
