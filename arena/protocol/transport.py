"""HTTP/1.1 to one bot: keep-alive, a deadline on the whole exchange, a cap on the answer.

The request goes out in one ``sendall``; the answer is parsed by ``httptools`` (the C parser
behind uvicorn, llhttp), fed from our own socket reads. That costs about a fifth of the CPU of
the standard library's ``http.client`` per call on loopback (whose header parsing goes through
the ``email`` package), and it lets every socket operation take *the time left until the
deadline* as its timeout, so a bot trickling one byte every half second cannot outlive the
deadline (a per-read timeout, as in httpx, would let it).

The verdict at the deadline does not depend on when this thread runs. On a loaded machine
(other processes, or other matches' threads holding the GIL) it may wake tens of milliseconds
after the deadline; it then takes one last look, without waiting, at what has arrived, and an
answer it finds complete is judged by when its last byte reached the socket, as the kernel
saw it (``TCP_INFO``): in time, it is taken, with that arrival as its latency; late, it is cut
off. So the cut-off holds to the kernel's tick (a few ms) whatever the arena's own lateness,
and no latency is ever recorded over the deadline (a timeout records exactly the deadline).
Nor does lateness before the request goes out count: the clock starts as it is sent (or its
connection opened), after the look at the idle connection and the request's making.
``benchmarks/bench_deadline.py`` measures both on a busy machine. Redirects are never
followed. Interim answers (``100 Continue``, ``103 Early Hints``) are read past to the final
one, and the answer ends where its framing says: bytes after it in the same read change
nothing (the connection is then not reused), and bytes that arrive on a kept connection
before the next request is sent close it (a new one carries the request), as do bytes
after it that hold no status line (the request goes again on a new one), so the verdict
never depends on how the bot's bytes were split into packets or when they came
(``benchmarks/bench_fuzz.py`` checks that). Failures raise :class:`TransportError` with a
fault kind; nothing else escapes.
"""

from __future__ import annotations

import select
import socket
import ssl
import struct
import sys
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import NoReturn, TypeVar

import httptools

__all__ = [
    "ARRIVAL_SLACK_S",
    "MAX_BODY",
    "HttpResult",
    "Transport",
    "TransportError",
    "tcp_arrival_age",
]

_T = TypeVar("_T")
_R = TypeVar("_R")

MAX_BODY = 64 * 1024
#: The kernel's arrival times are in ticks (4 ms at the common HZ=250): an answer judged
#: after the deadline is in time if it arrived within this much of it (in the bot's favour).
ARRIVAL_SLACK_S = 0.004
_MAX_HEAD = 16 * 1024
_RECV = 65536


class TransportError(Exception):
    """The exchange failed; ``kind`` is a fault kind (timeout, connection, status ...)."""

    def __init__(
        self, kind: str, detail: str, latency_ms: float = 0.0, status: int | None = None
    ) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.latency_ms = latency_ms
        #: The answer's HTTP status, when a whole answer came (``status`` and ``redirect``).
        self.status = status


@dataclass(frozen=True, slots=True)
class HttpResult:
    """A complete 200 answer (any 2xx for a transport made with ``any_2xx``)."""

    status: int
    body: bytes
    latency_ms: float


class _TooLargeError(Exception):
    pass


class _Answer:
    """Callbacks for httptools: collects the status, the Location header and the body."""

    __slots__ = (
        "body",
        "delimited",
        "done",
        "head_bytes",
        "headers_done",
        "keep_alive",
        "location",
        "max_body",
        "parser",
        "size",
        "too_large",
    )

    def __init__(self, max_body: int) -> None:
        self.body: list[bytes] = []
        self.size = 0
        self.done = False
        self.location = b""
        self.max_body = max_body
        self.head_bytes = 0
        self.headers_done = False
        #: The body's end is marked (Content-Length or chunked), not the connection's close.
        self.delimited = False
        self.keep_alive = False
        #: Why the answer is over a cap, once it is. httptools hands a callback's exception on
        #: only as the ``__context__`` of its own error, and Python replaces that when the
        #: error is raised within an ``except`` (the retry after a stale connection): the
        #: verdict is read from here.
        self.too_large: str | None = None
        self.parser: httptools.HttpResponseParser | None = None

    def _over(self, why: str) -> NoReturn:
        self.too_large = why
        raise _TooLargeError(why)

    def on_message_begin(self) -> None:
        if self.done:  # a second answer in the same read: it is not this one's
            raise _TrailingBytesError

    def on_headers_complete(self) -> None:
        self.headers_done = True
        # llhttp knows the answer's keep-alive only until the message completes.
        assert self.parser is not None
        self.keep_alive = self.parser.should_keep_alive()

    def on_header(self, name: bytes, value: bytes) -> None:
        self.head_bytes += len(name) + len(value)
        if self.head_bytes > _MAX_HEAD:
            self._over(f"answer headers are over {_MAX_HEAD} bytes")
        lower = name.lower()
        if lower == b"location":
            self.location = value
        elif lower == b"content-length":
            self.delimited = True
            if value.isdigit() and int(value) > self.max_body:
                self._over(f"answer of {int(value)} bytes is over the {self.max_body}-byte cap")
        elif lower == b"transfer-encoding":
            self.delimited = True

    def on_body(self, chunk: bytes) -> None:
        self.size += len(chunk)
        if self.size > self.max_body:
            self._over(f"answer is over the {self.max_body}-byte cap")
        self.body.append(chunk)

    def on_message_complete(self) -> None:
        assert self.parser is not None
        status = self.parser.get_status_code()
        if 100 <= status < 200 and status != 101:
            # An interim answer (100 Continue, 103 Early Hints): a client reads on to the
            # final one (RFC 9110, 15.2), whether it came in the same read or a later one.
            self.headers_done = self.delimited = False
            self.location = b""
            self.body.clear()
            self.size = 0
            return
        self.done = True


class Transport:
    """Requests to one bot over one keep-alive connection (not thread-safe: one per match seat).

    ``connect_fn(timeout)`` opens the TCP (or TLS) socket to an address the URL guard checked;
    ``host_header`` is what the bot sees as ``Host``; ``base_path`` prefixes every path.
    ``any_2xx`` takes every 2xx answer as a result, keeping the connection (webhook receivers
    answer 202 or 204; a bot answers 200, and anything else from it is a fault).
    """

    def __init__(
        self,
        host_header: str,
        connect_fn: Callable[[float], socket.socket],
        *,
        base_path: str = "",
        max_body: int = MAX_BODY,
        connect_timeout_s: float = 2.0,
        clock: Callable[[], float] = time.perf_counter,
        arrival_age: Callable[[socket.socket], float | None] | None = None,
        any_2xx: bool = False,
    ) -> None:
        self._connect_fn = connect_fn
        self._any_2xx = any_2xx
        self._host = host_header.encode("idna" if not host_header.isascii() else "ascii")
        self._base = base_path.rstrip("/").encode()
        self._max_body = max_body
        self._connect_timeout = connect_timeout_s
        self._clock = clock
        self._arrival_age = arrival_age or tcp_arrival_age
        self._sock: socket.socket | None = None
        self._poll: select.poll | None = None
        #: Sockets are gevent's (the worker's gevent pool): waits go through the socket's own
        #: timeout, which gevent serves from one cached watcher of the connection, instead of
        #: gevent's emulation of ``poll`` (new watchers and a result object for every wait:
        #: about 60 us of CPU a call more, ``benchmarks/bench_transport.py``).
        self._cooperative = _gevent_sockets()
        #: This exchange already took its one look past the deadline (see ``_wait``).
        self._looked_late = False

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        if self._sock is not None:
            try:
                self._sock.close()
            finally:
                self._sock = None
                self._poll = None

    def _open(self, deadline: float) -> socket.socket:
        sock = self._connect_fn(min(self._remaining(deadline), self._connect_timeout))
        # Non-blocking from here on; waits go through poll() with the time left, so there is
        # no settimeout (an fcntl) per operation. A gevent socket's timeout is only the time
        # its greenlet waits (the file stays non-blocking): set per operation, it costs nothing.
        sock.setblocking(False)
        self._sock = sock
        if not self._cooperative or isinstance(sock, ssl.SSLSocket):
            # (A TLS socket's bytes are records: a peek at them is no answer; poll instead.)
            self._poll = select.poll()
            self._poll.register(sock.fileno(), select.POLLIN)
        return sock

    def _wait(self, deadline: float, events: int) -> None:
        assert self._poll is not None and self._sock is not None
        self._poll.modify(self._sock.fileno(), events)
        left_ms = (deadline - self._clock()) * 1000.0
        if left_ms <= 0:
            # Past the deadline: one last look, without waiting, at what is already here. A
            # thread that got the CPU (or the GIL) late must not call an answer that came in
            # time a timeout; and nothing that arrives after this look is read.
            if self._looked_late:
                raise TimeoutError
            self._looked_late = True
            left_ms = 0
        if self._poll.poll(left_ms):
            return
        # The wait ended on its timer. A cooperative scheduler (the gevent pool, where ``poll``
        # is gevent's) may serve the timer before the socket's readiness in the same turn of
        # its loop, or get to both only after the deadline: one last look without waiting, as
        # above, so the verdict is the answer's arrival, not the order the loop served them.
        if self._looked_late or not self._poll.poll(0):
            raise TimeoutError
        self._looked_late = True

    def _send_all(self, sock: socket.socket, payload: bytes, deadline: float) -> None:
        view = memoryview(payload)
        if self._cooperative:
            while view:
                sock.settimeout(0.0)  # at once if the socket's buffer has room, as below
                try:
                    sent = sock.send(view)
                except (BlockingIOError, ssl.SSLWantWriteError, ssl.SSLWantReadError):
                    sent = self._cooperatively(sock.send, sock, deadline, view)
                view = view[sent:]
            return
        while view:
            try:
                sent = sock.send(view)
            except (BlockingIOError, ssl.SSLWantWriteError):
                self._wait(deadline, select.POLLOUT)
                continue
            except ssl.SSLWantReadError:
                self._wait(deadline, select.POLLIN)
                continue
            view = view[sent:]

    def _recv(self, sock: socket.socket, deadline: float) -> bytes:
        if self._cooperative:
            return self._cooperatively(sock.recv, sock, deadline, _RECV)
        while True:
            self._wait(deadline, select.POLLIN)
            try:
                return sock.recv(_RECV)
            except (BlockingIOError, ssl.SSLWantReadError):
                continue
            except ssl.SSLWantWriteError:
                self._wait(deadline, select.POLLOUT)

    def _cooperatively(
        self, op: Callable[[_T], _R], sock: socket.socket, deadline: float, arg: _T
    ) -> _R:
        """``op(arg)`` on a gevent socket, waiting (this greenlet only) at most until the
        deadline, with the same one last look as :meth:`_wait`: past the deadline, or when
        the wait ends on its timer, the operation is tried once more without waiting."""
        left = deadline - self._clock()
        if left > 0:
            sock.settimeout(left)
            try:
                return op(arg)
            except TimeoutError:  # socket.timeout: the wait ended on its timer
                pass
        if self._looked_late:
            raise TimeoutError
        self._looked_late = True
        sock.settimeout(0.0)
        try:
            return op(arg)
        except (BlockingIOError, ssl.SSLWantReadError, ssl.SSLWantWriteError):
            raise TimeoutError from None

    def _request_bytes(
        self, method: str, path: str, body: bytes | None, headers: Mapping[str, str]
    ) -> bytes:
        lines = [
            method.encode(),
            b" ",
            self._base,
            path.encode(),
            b" HTTP/1.1\r\nHost: ",
            self._host,
            b"\r\n",
        ]
        for name, value in headers.items():
            lines += [name.encode(), b": ", value.encode(), b"\r\n"]
        if body is not None:
            lines += [b"Content-Length: ", str(len(body)).encode(), b"\r\n\r\n", body]
        else:
            lines.append(b"\r\n")
        return b"".join(lines)

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: Mapping[str, str],
        timeout_s: float,
        *,
        sign: Callable[[], Mapping[str, str]] | None = None,
    ) -> HttpResult:
        """One exchange within ``timeout_s`` (connect, send, answer and body all included).

        ``sign()``, if given, makes more headers for each attempt afresh: the retry after a
        dropped idle connection is a new HTTP request, so it gets a new ``webhook-id`` (a bot
        that refuses an id seen before must not refuse the retry).

        The latency of a result is the time from the start of the exchange (as the request
        is sent, or its connection opened) until the answer was complete (its arrival, when
        the arena read it only after the deadline), never more than ``timeout_s``; a
        timeout's is exactly ``timeout_s``.
        """
        self._looked_late = False

        def payload() -> bytes:
            extra = headers if sign is None else {**headers, **sign()}
            return self._request_bytes(method, path, body, extra)

        if self._sock is not None and self._idle_is_readable():
            # Bytes (or the close) on a connection nobody asked anything of: the rest of an
            # earlier answer, never this request's. A new connection instead.
            self.close()
        reused = self._sock is not None
        first = payload()
        # The clock starts as the request goes out (or its connection is opened), not before
        # the look at the idle connection and the request's making: a thread that waits there
        # for the interpreter lock on a busy machine (200 matches on the threads pool waited
        # up to 1.4 s, and their bots timed out having had the request for tens of ms) must
        # not spend the bot's time. Nothing between here and the send waits.
        start = self._clock()
        deadline = start + timeout_s
        try:
            try:
                return self._exchange(first, deadline, start, timeout_s, kept=reused)
            except _StaleConnectionError:
                if not reused:
                    raise TransportError(
                        "connection", "the bot closed the connection without answering"
                    ) from None
                # An idle keep-alive connection the bot had closed, or one whose bytes were
                # no answer (the tail of an earlier one): once more on a fresh connection.
                self.close()
                try:
                    return self._exchange(payload(), deadline, start, timeout_s, kept=False)
                except _StaleConnectionError:
                    raise TransportError(
                        "connection", "the bot closed the connection without answering"
                    ) from None
        except TransportError as exc:
            self.close()
            exc.latency_ms = min((self._clock() - start) * 1000.0, timeout_s * 1000)
            raise
        except TimeoutError:
            self.close()
            raise TransportError(
                "timeout", f"no complete answer within {timeout_s * 1000:.0f} ms", timeout_s * 1000
            ) from None
        except OSError as exc:
            self.close()
            latency = min((self._clock() - start) * 1000.0, timeout_s * 1000)
            raise TransportError("connection", _describe(exc), latency) from None

    def _latency(
        self, sock: socket.socket, start: float, deadline: float, timeout_s: float
    ) -> float:
        """The latency (ms) of an answer just read to its end; TimeoutError if it came too late.

        Read by the deadline: the time until now. Read after it (the thread woke up late, or
        ``poll``'s last scan saw bytes that came in meanwhile): the verdict is the kernel's,
        from when its last byte reached the socket (``TCP_INFO``), not when this thread got to
        it. An answer whose last byte came after the deadline is cut off, however the arena's
        own scheduling went; one that came in time is taken at its arrival.
        """
        now = self._clock()
        if now <= deadline:
            return (now - start) * 1000.0
        age = self._arrival_age(sock)
        if age is None:  # no kernel figure (not TCP): the last look found it complete
            return timeout_s * 1000
        arrived = now - age
        if arrived - ARRIVAL_SLACK_S > deadline:
            raise TimeoutError
        return max(0.0, min(arrived - start, timeout_s)) * 1000.0

    def _idle_is_readable(self) -> bool:
        """Whether the kept connection has something to read before a request is sent, or
        cannot be looked at (a reset, say): either way it is not used again."""
        assert self._sock is not None
        try:
            if isinstance(self._sock, ssl.SSLSocket) and self._sock.pending():
                return True
            if self._poll is None:  # a plain gevent socket: a peek, without waiting
                self._sock.settimeout(0.0)
                try:
                    self._sock.recv(1, socket.MSG_PEEK)
                except BlockingIOError:
                    return False
                return True
            self._poll.modify(self._sock.fileno(), select.POLLIN)
            return bool(self._poll.poll(0))
        except OSError:
            return True

    def _remaining(self, deadline: float) -> float:
        left = deadline - self._clock()
        if left <= 0:
            raise TimeoutError
        return left

    def _exchange(
        self, payload: bytes, deadline: float, start: float, timeout_s: float, *, kept: bool
    ) -> HttpResult:
        """One request and its answer on the open connection (a new one if none is open).

        On a ``kept`` connection, bytes that hold no status line by the time they turn out
        malformed or the connection closes are not taken as this request's answer: they may be
        what the bot sent after its previous one, come in after the look at the idle
        connection. :class:`_StaleConnectionError` has the request sent again on a fresh
        connection, where the answer is judged on its own (as when a kept connection closes
        before any byte came).
        """
        sock = self._sock if self._sock is not None else self._open(deadline)
        try:
            self._send_all(sock, payload, deadline)
        except (BrokenPipeError, ConnectionResetError):
            raise _StaleConnectionError from None
        answer = _Answer(self._max_body)
        parser = httptools.HttpResponseParser(answer)
        answer.parser = parser
        try:
            return self._read_answer(sock, answer, parser, deadline, start, timeout_s, kept=kept)
        finally:
            # The parser holds the answer's callbacks and the answer the parser: a cycle,
            # garbage only the collector would find (9 objects a call, which made a loaded
            # worker's collections run every second, each stopping every match it plays).
            answer.parser = None

    def _read_answer(
        self,
        sock: socket.socket,
        answer: _Answer,
        parser: httptools.HttpResponseParser,
        deadline: float,
        start: float,
        timeout_s: float,
        *,
        kept: bool,
    ) -> HttpResult:
        """Read and judge the answer to the request just sent (see :meth:`_exchange`)."""
        received = 0

        def stale() -> bool:
            # No byte of this answer yet, or (kept) none that began one: see the docstring.
            return not received or (kept and parser.get_status_code() == 0)

        while not answer.done:
            try:
                data = self._recv(sock, deadline)
            except ConnectionResetError:
                if not stale():
                    raise
                raise _StaleConnectionError from None
            if not data:
                if answer.headers_done and not answer.delimited:
                    break  # the body ends where the connection does (HTTP/1.0 style)
                if not stale():
                    raise TransportError("connection", "the bot closed the connection mid-answer")
                raise _StaleConnectionError
            received += len(data)
            try:
                parser.feed_data(data)
            except httptools.HttpParserError as exc:
                if answer.too_large is not None:
                    raise TransportError("body_too_large", answer.too_large) from None
                if not answer.done:
                    if stale():
                        raise _StaleConnectionError from None
                    raise TransportError("connection", f"malformed HTTP answer: {exc}") from None
                # Bytes after a whole answer, in the same read: the answer stands as it came
                # (were they in a later read it would have been taken before they arrived),
                # and the connection is not reused (they are no answer to the next request).
                answer.keep_alive = False
            except httptools.HttpParserUpgrade:  # not an HttpParserError: a 101 nobody asked for
                raise TransportError(
                    "status",
                    f"HTTP {parser.get_status_code()}: an upgrade the arena never asks for",
                ) from None
        latency = self._latency(sock, start, deadline, timeout_s)
        status = parser.get_status_code()
        if not answer.keep_alive or not answer.delimited:
            self.close()
        data = b"".join(answer.body)
        if 300 <= status < 400:
            where = _printable(answer.location.decode("latin-1"))
            raise TransportError(
                "redirect", f"HTTP {status} redirect to {where!r} (not followed)", status=status
            )
        if status != 200 and not (self._any_2xx and 200 <= status < 300):
            snippet = _printable(data[:200].decode("utf-8", "replace"))
            raise TransportError("status", f"HTTP {status}: {snippet}", status=status)
        return HttpResult(status, data, latency)


def tcp_arrival_age(sock: socket.socket) -> float | None:
    """Seconds since the kernel last received data on a TCP socket (TLS included), from
    ``TCP_INFO``'s ``tcpi_last_data_recv`` (milliseconds, in kernel ticks of 1 to 10 ms);
    None where that is unavailable (not Linux, not TCP)."""
    option = getattr(socket, "TCP_INFO", None)
    if option is None:
        return None
    try:
        info = sock.getsockopt(socket.IPPROTO_TCP, option, _TCP_INFO_BYTES)
    except OSError:
        return None
    if len(info) < _LAST_DATA_RECV + 4:
        return None
    return int(struct.unpack_from("=I", info, _LAST_DATA_RECV)[0]) / 1000.0


#: ``struct tcp_info``: its size as read, and the offset of ``tcpi_last_data_recv`` (u32, ms).
_TCP_INFO_BYTES = 104
_LAST_DATA_RECV = 52


def _gevent_sockets() -> bool:
    """Whether ``socket`` is gevent's (``gevent.monkey.patch_all()`` ran: the gevent pool)."""
    monkey = sys.modules.get("gevent.monkey")
    return monkey is not None and bool(monkey.is_module_patched("socket"))


class _StaleConnectionError(Exception):
    """The kept connection closed before any byte of the answer arrived, or what came on it
    was no HTTP answer."""


class _TrailingBytesError(Exception):
    """Another answer began after the whole answer, in the same read."""


def _printable(text: str) -> str:
    """``text`` with each unprintable character (NUL, controls) as its escape: the bot's bytes
    quoted in a fault's detail end up in stored text, where PostgreSQL refuses a NUL."""
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else ascii(c)[1:-1] for c in text)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, ConnectionResetError):
        return "connection reset by the bot"
    return f"{type(exc).__name__}: {exc}"
