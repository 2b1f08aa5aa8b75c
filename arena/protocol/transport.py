"""HTTP/1.1 to one bot: keep-alive, a deadline on the whole exchange, a cap on the answer.

Built on the standard library's ``http.client`` (the cheapest client in CPU on loopback) with one
change that matters: every socket operation gets the time *left until the deadline* as its
timeout, so a bot trickling one byte every half second cannot outlive the deadline (a plain
per-read timeout would let it). Redirects are never followed. Failures raise
:class:`TransportError` with a fault kind; nothing else escapes.
"""

from __future__ import annotations

import http.client
import io
import socket
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass

__all__ = ["HttpResult", "Transport", "TransportError"]

MAX_BODY = 64 * 1024


class TransportError(Exception):
    """The exchange failed; ``kind`` is a fault kind (timeout, connection, status ...)."""

    def __init__(self, kind: str, detail: str, latency_ms: float = 0.0) -> None:
        super().__init__(detail)
        self.kind = kind
        self.detail = detail
        self.latency_ms = latency_ms


@dataclass(frozen=True, slots=True)
class HttpResult:
    """A complete 2xx answer."""

    status: int
    body: bytes
    latency_ms: float


class _Deadline:
    """A socket whose every send and receive is bounded by one shared deadline."""

    __slots__ = ("clock", "deadline", "sock")

    def __init__(self, sock: socket.socket, clock: Callable[[], float]) -> None:
        self.sock = sock
        self.clock = clock
        self.deadline = 0.0

    def arm(self) -> None:
        remaining = self.deadline - self.clock()
        if remaining <= 0:
            raise TimeoutError("deadline passed")
        self.sock.settimeout(remaining)

    # The parts of the socket interface http.client uses.
    def sendall(self, data: bytes) -> None:
        self.arm()
        self.sock.sendall(data)

    def makefile(self, mode: str) -> io.BufferedReader:
        return io.BufferedReader(_DeadlineReader(self))

    def close(self) -> None:
        self.sock.close()


class _DeadlineReader(io.RawIOBase):
    def __init__(self, owner: _Deadline) -> None:
        self.owner = owner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: memoryview) -> int:  # type: ignore[override]
        self.owner.arm()
        return self.owner.sock.recv_into(buffer)


class _Connection(http.client.HTTPConnection):
    """An HTTPConnection whose socket comes from ``connect_fn`` and obeys a deadline."""

    def __init__(
        self, host: str, port: int, connect_fn: Callable[[float], socket.socket], clock: Callable[[], float]
    ) -> None:
        super().__init__(host, port)
        self._connect_fn = connect_fn
        self._clock = clock
        self.deadline = 0.0
        self.connect_timeout = 2.0

    def connect(self) -> None:
        remaining = self.deadline - self._clock()
        if remaining <= 0:
            raise TimeoutError("deadline passed before connecting")
        raw = self._connect_fn(min(remaining, self.connect_timeout))
        guarded = _Deadline(raw, self._clock)
        guarded.deadline = self.deadline
        self.sock = guarded  # type: ignore[assignment]

    def set_deadline(self, deadline: float) -> None:
        self.deadline = deadline
        if isinstance(self.sock, _Deadline):
            self.sock.deadline = deadline


class Transport:
    """Requests to one bot over one keep-alive connection (not thread-safe: one per match seat).

    ``connect_fn(timeout)`` opens the TCP (or TLS) socket to an address that was checked by the
    URL guard; ``host_header`` is what the bot sees as ``Host``.
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
    ) -> None:
        host, _, port = host_header.partition(":")
        self._conn = _Connection(host, int(port or 80), connect_fn, clock)
        self._conn.connect_timeout = connect_timeout_s
        self._host_header = host_header
        self._base = base_path.rstrip("/")
        self._max_body = max_body
        self._clock = clock
        self._used = False

    def close(self) -> None:
        """Close the connection (the next request opens a new one)."""
        self._conn.close()
        self._used = False

    def request(
        self, method: str, path: str, body: bytes | None, headers: Mapping[str, str], timeout_s: float
    ) -> HttpResult:
        """One exchange within ``timeout_s`` (connect, send, answer and body all included)."""
        start = self._clock()
        deadline = start + timeout_s
        try:
            try:
                return self._exchange(method, path, body, headers, deadline, start)
            except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError):
                # A reused keep-alive connection may have been closed by the bot while idle:
                # try once more on a fresh one, within the same deadline.
                if not self._used_before_failure:
                    raise
                self._conn.close()
                return self._exchange(method, path, body, headers, deadline, start)
        except TransportError as exc:
            self.close()
            exc.latency_ms = (self._clock() - start) * 1000.0
            raise
        except TimeoutError:
            self.close()
            raise TransportError(
                "timeout", f"no complete answer within {timeout_s * 1000:.0f} ms", timeout_s * 1000
            ) from None
        except (http.client.HTTPException, OSError) as exc:
            self.close()
            latency = (self._clock() - start) * 1000.0
            raise TransportError("connection", _describe(exc), latency) from None

    _used_before_failure = False

    def _exchange(
        self,
        method: str,
        path: str,
        body: bytes | None,
        headers: Mapping[str, str],
        deadline: float,
        start: float,
    ) -> HttpResult:
        conn = self._conn
        self._used_before_failure = conn.sock is not None
        conn.set_deadline(deadline)
        all_headers = {"Host": self._host_header, "Connection": "keep-alive", **headers}
        conn.request(method, self._base + path, body=body, headers=all_headers)
        response = conn.getresponse()
        status = response.status
        if 300 <= status < 400:
            location = response.getheader("location", "")
            raise TransportError("redirect", f"HTTP {status} redirect to {location!r} (not followed)")
        length = response.getheader("content-length")
        if length is not None and length.isdigit() and int(length) > self._max_body:
            raise TransportError(
                "body_too_large", f"answer of {length} bytes is over the {self._max_body}-byte cap"
            )
        data = response.read(self._max_body + 1)
        if len(data) > self._max_body:
            raise TransportError("body_too_large", f"answer is over the {self._max_body}-byte cap")
        if not response.isclosed():
            rest = response.read(self._max_body + 1 - len(data))
            if rest:
                raise TransportError("body_too_large", f"answer is over the {self._max_body}-byte cap")
        if response.will_close:
            conn.close()
        latency = (self._clock() - start) * 1000.0
        if status != 200:
            snippet = data[:200].decode("utf-8", "replace")
            raise TransportError("status", f"HTTP {status}: {snippet}")
        return HttpResult(status, data, latency)


def _describe(exc: BaseException) -> str:
    if isinstance(exc, ConnectionRefusedError):
        return "connection refused"
    if isinstance(exc, http.client.RemoteDisconnected):
        return "the bot closed the connection without answering"
    if isinstance(exc, http.client.IncompleteRead):
        return "the answer ended early (incomplete body)"
    if isinstance(exc, http.client.HTTPException):
        return f"malformed HTTP answer ({type(exc).__name__}: {exc})"
    return f"{type(exc).__name__}: {exc}"
