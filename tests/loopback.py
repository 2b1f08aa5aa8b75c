"""The socket plumbing of the tests' hand-written HTTP servers, written once (``tests/`` is on
``sys.path`` through its conftest).

:class:`LoopbackServer` listens on 127.0.0.1 (a free port), accepts in a thread of its own and
serves each connection in another, one request after another: a subclass writes
:meth:`LoopbackServer.answer` (the hostile ``RawBot`` of ``tests/protocol/hostile.py``, the
echoing bot of ``tests/protocol/test_answers.py``, the bot of
``tests/integration/test_hostile_records.py``) or the whole connection,
:meth:`LoopbackServer.serve` (the dropping proxy of ``tests/protocol/test_retry_ids.py``).
``stop()`` shuts every socket still open, joins every thread and closes the listener (the suite
runs with ``filterwarnings = error``).

:func:`read_message` reads one HTTP/1.1 message (a request or an answer) delimited by its
``Content-Length``; :func:`http_head` and :func:`http_response` write one. :func:`free_port`
is a port for a server another process starts.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from typing import NamedTuple, Self

__all__ = [
    "HttpMessage",
    "LoopbackServer",
    "free_port",
    "http_head",
    "http_response",
    "read_message",
]

_RECV = 65536


def free_port() -> int:
    """A loopback port free a moment ago (for a server started by another process)."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


class HttpMessage(NamedTuple):
    """One HTTP/1.1 message as it came: its head (start line and headers) and its body."""

    head: bytes
    body: bytes

    @property
    def start_line(self) -> bytes:
        return self.head.split(b"\r\n", 1)[0]

    @property
    def target(self) -> tuple[str, str]:
        """A request's method and path: ``("POST", "/act")``."""
        method, path, _version = self.start_line.decode("latin-1").split(" ", 2)
        return method, path

    def header(self, name: bytes) -> bytes | None:
        """The value of header ``name`` (case-insensitive), or None."""
        for line in self.head.split(b"\r\n")[1:]:
            key, _, value = line.partition(b":")
            if key.strip().lower() == name.lower():
                return value.strip()
        return None

    @property
    def raw(self) -> bytes:
        """The message's bytes, as they came."""
        return self.head + b"\r\n\r\n" + self.body


def read_message(sock: socket.socket, buffer: bytes) -> tuple[HttpMessage, bytes] | None:
    """The next message from ``sock`` (after what ``buffer`` already holds) and the bytes after
    it; None if the peer closed first. A message without ``Content-Length`` has no body."""
    while b"\r\n\r\n" not in buffer:
        chunk = sock.recv(_RECV)
        if not chunk:
            return None
        buffer += chunk
    head, _, rest = buffer.partition(b"\r\n\r\n")
    length = int(HttpMessage(head, b"").header(b"content-length") or 0)
    while len(rest) < length:
        chunk = sock.recv(_RECV)
        if not chunk:
            return None
        rest += chunk
    return HttpMessage(head, rest[:length]), rest[length:]


def http_head(status: str, headers: dict[str, str]) -> bytes:
    """An answer's status line and headers, with the blank line that ends them."""
    lines = [f"HTTP/1.1 {status}"] + [f"{k}: {v}" for k, v in headers.items()]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("latin-1")


def http_response(
    body: bytes, status: str = "200 OK", content_type: str = "application/json"
) -> bytes:
    """A whole answer (JSON unless told) with its ``Content-Length``."""
    return (
        http_head(status, {"Content-Type": content_type, "Content-Length": str(len(body))}) + body
    )


class LoopbackServer:
    """A threaded server on 127.0.0.1: a subclass answers each request in :meth:`answer` (or a
    whole connection in :meth:`serve`).

    ``connections`` counts the TCP connections accepted; an ``OSError`` in :meth:`serve` (the
    peer hung up, or ``stop()`` shut the socket) ends that connection quietly.
    """

    def __init__(self, name: str) -> None:
        self.name = name
        #: TCP connections accepted so far.
        self.connections = 0
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._listener.settimeout(0.05)
        self._threads: list[threading.Thread] = []
        self._open: set[socket.socket] = set()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self._listener.getsockname()[1]}"

    def serve(self, conn: socket.socket) -> None:
        """Answer one connection's requests in turn until :meth:`answer` says to close it (the
        connection is closed afterwards)."""
        buffer = b""
        while not self._stopping.is_set():
            got = read_message(conn, buffer)
            if got is None:
                return
            request, buffer = got
            if not self.answer(conn, request):
                return

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        """Answer one request on ``conn``; False to close the connection."""
        raise NotImplementedError

    def start(self) -> Self:
        self._spawn(self._accept_loop, "accept")
        return self

    def stop(self) -> None:
        self._stopping.set()
        with self._lock:
            threads = list(self._threads)
            for sock in self._open:
                with suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)
        for thread in threads:
            thread.join(timeout=5)
        self._listener.close()

    @contextmanager
    def tracked(self, sock: socket.socket) -> Iterator[socket.socket]:
        """Hold ``sock`` open until the block ends (``stop()`` shuts it meanwhile), then close
        it: for a socket a connection opens itself, such as a proxy's to its upstream."""
        with self._lock:
            self._open.add(sock)
        try:
            yield sock
        finally:
            with self._lock:
                self._open.discard(sock)
            sock.close()

    def _spawn(self, target: Callable[..., None], role: str, *args: object) -> None:
        thread = threading.Thread(target=target, args=args, name=f"{self.name}-{role}", daemon=True)
        with self._lock:
            self._threads.append(thread)
        thread.start()

    def _accept_loop(self) -> None:
        while not self._stopping.is_set():
            try:
                conn, _ = self._listener.accept()
            except TimeoutError:
                continue
            except OSError:
                return
            conn.settimeout(None)
            with self._lock:
                self.connections += 1
                self._open.add(conn)
            self._spawn(self._connection, "conn", conn)

    def _connection(self, conn: socket.socket) -> None:
        with self.tracked(conn), suppress(OSError):
            self.serve(conn)
