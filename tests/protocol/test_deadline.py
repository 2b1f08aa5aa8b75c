"""The deadline cut-off as the record sees it (issue 10, 2.11), without asserting on timing.

The transport takes its clock and the kernel's arrival age (``TCP_INFO``) as arguments, so "the
arena's thread got the CPU back only after the deadline" is staged exactly: a clock that jumps
past the deadline once the bot's answer is in the socket buffer, and an arrival time before or
after the deadline. The verdict follows the arrival, not the arena's lateness (an answer that
came in time is taken, one that came late is cut off), and no latency recorded exceeds the
deadline.
"""

from __future__ import annotations

import socket
import threading
from contextlib import suppress

import pytest

from arena.protocol.transport import HttpResult, Transport, TransportError, tcp_arrival_age

ANSWER = b'HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{"action":"pass"}'


class KeptAliveBot:
    """Answers its first request at once; its second at once too (or never, ``silent``), then
    sets ``answered``. One connection, kept alive."""

    def __init__(self, *, silent: bool = False) -> None:
        self.silent = silent
        self.answered = threading.Event()
        self._listener = socket.create_server(("127.0.0.1", 0))
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    @property
    def port(self) -> int:
        return int(self._listener.getsockname()[1])

    def _serve(self) -> None:
        try:
            conn, _ = self._listener.accept()
        except OSError:
            return
        with conn:
            for number in (1, 2):
                data = b""
                while b"\r\n\r\n{}" not in data:
                    chunk = conn.recv(4096)
                    if not chunk:
                        return
                    data += chunk
                if number == 1 or not self.silent:
                    conn.sendall(ANSWER)
            self.answered.set()
            with suppress(OSError):
                conn.recv(4096)  # until the arena hangs up

    def close(self) -> None:
        self._listener.close()
        self._thread.join(5)


class LateClock:
    """A clock that, once ``late`` is set, reads 0.0 once (the start of the exchange) and then,
    as soon as the bot has answered, 60 s: the arena's thread woke up long after the deadline.
    """

    def __init__(self, answered: threading.Event) -> None:
        self.answered = answered
        self.late = False
        self.readings = 0

    def __call__(self) -> float:
        if not self.late:
            return 0.0
        self.readings += 1
        if self.readings == 1:
            return 0.0
        assert self.answered.wait(10), "the bot did not answer"
        return 60.0


def exchange_late(bot: KeptAliveBot, age: float | None) -> HttpResult | TransportError:
    """A first request on time (it opens the connection), then one that the clock makes late,
    the kernel saying the answer's last byte came ``age`` seconds before the late reading."""
    clock = LateClock(bot.answered)

    def connect(timeout: float) -> socket.socket:
        return socket.create_connection(("127.0.0.1", bot.port), timeout=timeout)

    transport = Transport("127.0.0.1", connect, clock=clock, arrival_age=lambda _sock: age)
    try:
        transport.request("POST", "/act", b"{}", {}, 1.0)
        clock.late = True
        return transport.request("POST", "/act", b"{}", {}, 1.0)
    except TransportError as exc:
        return exc
    finally:
        transport.close()
        bot.close()


def test_an_answer_that_arrived_in_time_is_taken_when_the_arena_looks_late() -> None:
    """The thread woke at 60 s; the kernel says the answer came at 0.5 s: in time, 500 ms."""
    result = exchange_late(KeptAliveBot(), age=59.5)
    assert isinstance(result, HttpResult), result
    assert result.body == b'{"action":"pass"}'
    assert result.latency_ms == pytest.approx(500.0)


def test_an_answer_that_arrived_after_the_deadline_is_cut_off_however_late_the_arena_looks() -> (
    None
):
    """Read at 60 s, arrived at 59.999 s: past the 1 s deadline, so a timeout, recorded 1,000."""
    result = exchange_late(KeptAliveBot(), age=0.001)
    assert isinstance(result, TransportError) and result.kind == "timeout"
    assert result.latency_ms == 1000.0


def test_without_a_kernel_arrival_time_an_answer_complete_at_the_last_look_is_taken() -> None:
    result = exchange_late(KeptAliveBot(), age=None)
    assert isinstance(result, HttpResult) and result.latency_ms == 1000.0


def test_a_timeout_records_the_deadline_whatever_the_clock_says() -> None:
    result = exchange_late(KeptAliveBot(silent=True), age=None)
    assert isinstance(result, TransportError) and result.kind == "timeout"
    assert result.latency_ms == 1000.0


def test_the_kernel_arrival_age_of_a_loopback_socket_is_known() -> None:
    server = socket.create_server(("127.0.0.1", 0))
    with server, socket.create_connection(server.getsockname()) as client:
        peer, _ = server.accept()
        with peer:
            peer.sendall(b"x")
            assert client.recv(1) == b"x"
            age = tcp_arrival_age(client)
    assert age is not None and 0.0 <= age < 3600.0
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as udp:
        assert tcp_arrival_age(udp) is None
