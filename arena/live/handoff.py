"""Taking a match stream's connection from waitress, so that one thread writes every stream.

Waitress serves a response from one of its threads until the response's iterator ends, so a
stream served that way holds a thread for as long as it is open. The match streams instead
start there (the view checks the request, waitress sends the status line, the headers and the
stream's first event) and are then handed to :class:`arena.live.writer.StreamWriter`, which
writes every stream from one thread. Waitress offers no public way to give up a connection;
this module is the one place that reaches into it, and only through what a waitress 3 request
carries: the environ's ``waitress.client_disconnected`` is a bound method of the request's
channel, whose ``socket`` is the connection. :meth:`Handoff.take` waits until the channel has
sent everything it was given, duplicates the socket (the writer's descriptor), and cancels the
channel (``cancel()``, as waitress does itself when a client goes away), so waitress closes its
own descriptor and forgets the connection while the client stays connected through the
writer's. Anything else (another server, another major version of waitress, a channel without
those attributes, a ``HEAD`` request) gets None from :func:`waitress_handoff`, and the stream
is served from its thread as before.
"""

from __future__ import annotations

import logging
import socket
import time
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from typing import Any

__all__ = ["Handoff", "quiet_handoffs", "waitress_handoff"]

#: What a channel must have for a hand-off (waitress 3's ``HTTPChannel``).
_CHANNEL = ("socket", "connected", "total_outbufs_len", "cancel")


@cache
def _waitress_major() -> int | None:
    try:
        return int(version("waitress").split(".", 1)[0])
    except (PackageNotFoundError, ValueError):
        return None


class Handoff:
    """The connection of one request being served by waitress (see the module docstring).
    ``chunked``: the response is in chunked transfer coding (an HTTP/1.1 request: waitress
    chunks a response without a length), so the writer goes on framing it so."""

    def __init__(self, channel: Any, *, chunked: bool) -> None:
        self._channel = channel
        self.chunked = chunked

    def take(self, timeout: float = 10.0) -> socket.socket | None:
        """The connection, non-blocking, once waitress has sent all it was given; None if the
        client left or waitress could not send it within ``timeout`` (the stream then stays
        in its thread)."""
        channel = self._channel
        deadline = time.monotonic() + timeout
        while channel.total_outbufs_len:
            if not channel.connected or time.monotonic() > deadline:
                return None
            time.sleep(0.005)
        if not channel.connected:
            return None
        try:
            sock: socket.socket = channel.socket.dup()
        except OSError:
            return None
        sock.setblocking(False)
        channel.cancel()  # waitress closes its descriptor; the connection lives on in ``sock``
        return sock


def waitress_handoff(environ: dict[str, Any]) -> Handoff | None:
    """The hand-off of the request ``environ`` describes, when waitress 3 serves it."""
    if environ.get("REQUEST_METHOD") != "GET" or _waitress_major() != 3:
        return None
    probe = environ.get("waitress.client_disconnected")
    channel = getattr(probe, "__self__", None)
    if channel is None or not all(hasattr(channel, name) for name in _CHANNEL):
        return None
    return Handoff(channel, chunked=environ.get("SERVER_PROTOCOL") == "HTTP/1.1")


class _HandedOff(logging.Filter):
    """Drops waitress's note that a handed-off stream's client "disconnected" (it did not:
    its connection went to the writer, and waitress's end of the response had nowhere to go)."""

    def filter(self, record: logging.LogRecord) -> bool:
        message = record.getMessage()
        return not (
            message.startswith("Client disconnected while serving") and message.endswith("/events")
        )


def quiet_handoffs() -> None:
    """Install the filter above on waitress's logger (once)."""
    logger = logging.getLogger("waitress")
    if not any(isinstance(f, _HandedOff) for f in logger.filters):
        logger.addFilter(_HandedOff())
