"""A TCP listener on loopback, served by a thread of its own: the bare server of the transport's
tests (a subclass says how it serves, in ``_serve``)."""

from __future__ import annotations

import socket
import threading
from contextlib import suppress


class LoopbackServer:
    """Listens on a free loopback port from construction on; ``close`` stops it."""

    def __init__(self) -> None:
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def _serve(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        with suppress(OSError):
            self._listener.shutdown(socket.SHUT_RDWR)  # wakes a thread waiting in accept (Linux)
        self._listener.close()
        self._thread.join(5)
