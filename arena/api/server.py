"""``gin-arena serve``: the API (and pages) under waitress, a production WSGI server.

Waitress runs the app in threads of one process, which fits the embedded default: the
:class:`~arena.playing.executors.LocalExecutor` runs alongside in the same command (its worker
processes play the matches), and the app is given it: the services hand it the matches they
schedule. With Celery the app submits to the broker and no executor runs here. For more API
throughput run several ``gin-arena serve`` processes (or gunicorn with
``arena.api:create_app()``; under local settings its matches are picked up by a ``serve``) behind
a proxy, with ``ARENA_RATE_LIMIT_STORAGE`` on Redis so they share rate-limit counters, and
``ARENA_TRUSTED_PROXIES`` set to the number of proxies so limits apply per client address.
"""

from __future__ import annotations

import contextlib
import logging
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import Any

from waitress import wasyncore  # type: ignore[import-untyped, unused-ignore]
from waitress.server import create_server  # type: ignore[import-untyped, unused-ignore]

from arena.api.app import close_app, create_app
from arena.live.handoff import quiet_handoffs
from arena.playing.executors import LocalExecutor
from arena.settings import Settings

__all__ = ["ApiServer", "serve"]

log = logging.getLogger(__name__)

#: Waitress worker threads for requests (bot checks block one for seconds). The server has
#: ``ARENA_MAX_STREAMS`` more for the live streams: a match stream holds one only until its
#: match has a feed (while it waits for a pending match), then its connection goes to the
#: one writer thread (:mod:`arena.live.writer`); a tournament or ladder stream holds one.
THREADS = 8
#: The interpreter's thread switch interval in a serving process (Python's default is 5 ms).
#: A thread that makes a system call (the stream writer's send to each stream, the intake of
#: the matches' events) gives up the interpreter lock, and takes it back only when the thread
#: holding it next reaches this interval: with request threads busy, each such call could
#: wait up to 5 ms, and a writer tick sending to 500 streams fell seconds behind
#: (``benchmarks/bench_streams.py``).
SWITCH_INTERVAL_SECONDS = 0.001


class ApiServer:
    """A started-on-``run()`` waitress server for the app, with its executor (if local)."""

    def __init__(
        self,
        settings: Settings,
        host: str = "127.0.0.1",
        port: int = 8000,
        *,
        threads: int = THREADS,
        with_executor: bool = True,
    ) -> None:
        sys.setswitchinterval(SWITCH_INTERVAL_SECONDS)
        self.executor: LocalExecutor | None = None
        if with_executor and settings.executor_kind == "local":
            self.executor = LocalExecutor(settings, live_events=True)
        self.app = create_app(settings, executor=self.executor)
        quiet_handoffs()
        self._server: Any = create_server(
            self.app,
            host=host,
            port=port,
            threads=threads + settings.max_streams,
            connection_limit=max(100, threads + settings.max_streams + 100),
            # poll(), not select(): select() refuses file descriptors above 1024, which a
            # process holding ARENA_MAX_STREAMS streams reaches.
            asyncore_use_poll=True,
            ident="gin-arena",
            clear_untrusted_proxy_headers=True,
        )
        self.port: int = int(self._server.effective_port)
        self._closed = False
        self._stopping = False
        self.host = host

    @property
    def url(self) -> str:
        host = f"[{self.host}]" if ":" in self.host else self.host  # an IPv6 literal
        return f"http://{host}:{self.port}"

    def run(self) -> None:
        """Serve until :meth:`stop` (or an interrupt); then release everything."""
        try:
            self._server.run()
        except KeyboardInterrupt:
            if self.executor is not None:  # Ctrl-C: stop now, not after the queued matches
                self.executor.terminate()
            raise
        else:
            # Waitress ends its loop on Ctrl-C (and SIGTERM, made one by serve()) and returns:
            # without stop(), that was an interrupt, so stop now as well (a live ladder always
            # has matches queued, and close() would play them first).
            if not self._stopping and self.executor is not None:
                self.executor.terminate()
        finally:
            self.close()

    def stop(self) -> None:
        """Make :meth:`run` return; safe from another thread (the loop shuts itself down)."""
        server = self._server
        self._stopping = True

        def shutdown() -> None:  # runs in the server's loop thread
            server.task_dispatcher.shutdown()
            wasyncore.close_all(server._map)

        with contextlib.suppress(OSError):  # already closed
            server.trigger.pull_trigger(shutdown)

    def close(self) -> None:
        if self._closed:
            return
        self._closed = True
        self._server.task_dispatcher.shutdown()
        wasyncore.close_all(self._server._map)
        # The executor first: its worker processes put their last live events on the queue
        # the app's hub drains, and a process cannot exit while what it put is unread (it
        # waited out the executor's 30 s and was terminated when the hub had stopped first).
        if self.executor is not None:
            self.executor.close()
            self.executor = None
        close_app(self.app)


def serve(
    settings: Settings,
    host: str = "127.0.0.1",
    port: int = 8000,
    *,
    threads: int = THREADS,
    on_ready: Callable[[str], object] | None = None,
) -> None:
    """Serve the API until interrupted (Ctrl-C or SIGTERM); ``on_ready(url)`` runs once the
    socket is bound (``url`` has the port actually listened on)."""
    server = ApiServer(settings, host, port, threads=threads)
    log.info("serving on %s", server.url)
    if on_ready is not None:
        on_ready(server.url)
    if threading.current_thread() is threading.main_thread():

        def on_term(_signum: int, _frame: FrameType | None) -> None:
            raise KeyboardInterrupt

        signal.signal(signal.SIGTERM, on_term)
    server.run()
