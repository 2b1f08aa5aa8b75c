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
import time
from contextlib import suppress

import pytest

from arena.protocol.transport import HttpResult, Transport, TransportError, tcp_arrival_age

ANSWER = b'HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{"action":"pass"}'


class KeptAliveBot:
    """Answers its first request at once (or ``delay_s`` after reading it); its second the
    same way (or never, ``silent``), then sets ``answered``. One connection, kept alive."""

    def __init__(self, *, silent: bool = False, delay_s: float = 0.0) -> None:
        self.silent = silent
        self.delay_s = delay_s
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
                    time.sleep(self.delay_s)
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


class TimerFirstPoll:
    """A ``poll`` whose timed waits end on their timer even when the socket is ready, as a
    cooperative scheduler's may (gevent serving the timer first, or late): it waits until the
    bot has answered, then says nothing is there. A look without waiting is the real one."""

    def __init__(self, real: object, answered: threading.Event) -> None:
        self.real = real
        self.answered = answered

    def modify(self, fd: int, events: int) -> None:
        self.real.modify(fd, events)  # type: ignore[attr-defined]

    def poll(self, timeout_ms: float) -> list[tuple[int, int]]:
        if timeout_ms > 0:
            assert self.answered.wait(10), "the bot did not answer"
            return []
        return self.real.poll(0)  # type: ignore[attr-defined, no-any-return]


class TimerFirstSocket:
    """The same for a gevent socket (the gevent pool, where the transport waits through the
    socket's own timeout, not ``poll``): a read with a timeout waits until the bot has
    answered, then times out; a read without waiting is the real one."""

    def __init__(self, real: socket.socket, answered: threading.Event) -> None:
        self.real = real
        self.answered = answered
        self.timeout: float | None = None

    def settimeout(self, timeout: float | None) -> None:
        self.timeout = timeout
        self.real.settimeout(timeout)

    def recv(self, size: int, flags: int = 0) -> bytes:
        if self.timeout:
            assert self.answered.wait(10), "the bot did not answer"
            raise TimeoutError("timed out")
        return self.real.recv(size, flags)

    def __getattr__(self, name: str) -> object:
        return getattr(self.real, name)


@pytest.mark.parametrize(("age", "taken"), [(59.5, True), (0.001, False)])
def test_a_wait_that_ends_on_its_timer_looks_once_more_and_judges_by_arrival(
    age: float, taken: bool
) -> None:
    """The timed wait ends empty though the answer is in the socket, and the clock then reads
    60 s: the answer that arrived at 0.5 s is taken (500 ms), one that arrived at 59.999 s is
    a timeout (1,000 ms), exactly as when the thread itself wakes late."""
    bot = KeptAliveBot()
    readings = iter([0.0, 0.0])  # the exchange's start and its wait's time left; then late
    late = False

    def clock() -> float:
        return next(readings, 60.0) if late else 0.0

    def connect(timeout: float) -> socket.socket:
        return socket.create_connection(("127.0.0.1", bot.port), timeout=timeout)

    transport = Transport("127.0.0.1", connect, clock=clock, arrival_age=lambda _sock: age)
    try:
        transport.request("POST", "/act", b"{}", {}, 1.0)
        if transport._cooperative:
            transport._sock = TimerFirstSocket(transport._sock, bot.answered)  # type: ignore[arg-type, assignment]
        else:
            transport._poll = TimerFirstPoll(transport._poll, bot.answered)  # type: ignore[assignment]
        late = True
        try:
            result: HttpResult | TransportError = transport.request("POST", "/act", b"{}", {}, 1.0)
        except TransportError as exc:
            result = exc
    finally:
        transport.close()
        bot.close()
    if taken:
        assert isinstance(result, HttpResult), result
        assert result.latency_ms == pytest.approx(500.0)
    else:
        assert isinstance(result, TransportError) and result.kind == "timeout", result
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


class StalledClock:
    """A clock that stands still except when the arena stalls: ``stall()`` moves it 5 s on, as
    a thread waiting that long for the interpreter lock (or a greenlet for the CPU) sees."""

    def __init__(self) -> None:
        self.now = 0.0

    def __call__(self) -> float:
        return self.now

    def stall(self) -> None:
        self.now += 5.0


@pytest.mark.parametrize("where", ["looking at the idle connection", "making the request"])
def test_time_the_arena_stalls_before_sending_is_not_the_bots(where: str) -> None:
    """The bot answers 50 ms after it reads the request; the arena stalls 5 s (by its clock)
    before sending it, on a kept connection, with a 1 s deadline. The bot had its whole second:
    the answer is taken. (With the clock started before the stall, the one look past the
    deadline came before the answer, and the bot was charged a timeout: 117 and 243 of them in
    two runs of ``bench_load.py`` on the threads pool, none with it.)"""
    bot = KeptAliveBot(delay_s=0.05)
    clock = StalledClock()
    stalling = False

    def sign() -> dict[str, str]:
        if stalling and where == "making the request":
            clock.stall()
        return {}

    def connect(timeout: float) -> socket.socket:
        return socket.create_connection(("127.0.0.1", bot.port), timeout=timeout)

    transport = Transport("127.0.0.1", connect, clock=clock)
    look = transport._idle_is_readable

    def stalled_look() -> bool:
        if stalling and where == "looking at the idle connection":
            clock.stall()
        return look()

    transport._idle_is_readable = stalled_look  # type: ignore[method-assign]
    try:
        transport.request("POST", "/act", b"{}", {}, 1.0, sign=sign)
        stalling = True
        result: HttpResult | TransportError = transport.request(
            "POST", "/act", b"{}", {}, 1.0, sign=sign
        )
    except TransportError as exc:
        result = exc
    finally:
        transport.close()
        bot.close()
    assert isinstance(result, HttpResult), result
    assert result.body == b'{"action":"pass"}' and 0.0 <= result.latency_ms <= 1000.0
