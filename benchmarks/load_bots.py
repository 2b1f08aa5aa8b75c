"""The load benchmark's bots: a house strategy behind an asyncio HTTP server that thinks.

Each answer to ``POST /act`` leaves ``think_ms`` after its request was read (the strategy's own
time included), so a bot's latency is the think time however many matches it plays at once.
One process is one asyncio loop; several processes share a port (``SO_REUSEPORT``, the kernel
spreads the connections), so the bots are not what limits the arena (``bench_load.py`` measures
their CPU and how late each answer left). The protocol is the arena's (``GET /``, ``POST
/start``, ``/act``, ``/end``; requests read with the SDK's schema), signatures are not checked.

    python benchmarks/load_bots.py --kind greedy --port 8600 --think-ms 50 --stats out.json

On SIGTERM the process writes its figures to ``--stats`` (requests, and how late past the think
time answers left: median, p99, max in ms) and exits.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import signal
import socket
import sys
import time
from pathlib import Path

import msgspec

try:
    import uvloop
except ImportError:  # pragma: no cover - without the bench extras: asyncio's own loop
    uvloop = None  # type: ignore[assignment]

from arena.bots.strategies import STRATEGIES
from arena.protocol.wire import PROTOCOL_VERSION, ActRequest, BotInfo

_decode_act = msgspec.json.Decoder(ActRequest).decode
_encode = msgspec.json.Encoder().encode


def _answer(body: bytes, status: bytes = b"200 OK") -> bytes:
    head = b"HTTP/1.1 %s\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n"
    return head % (status, len(body)) + body


class ThinkingBot:
    """One process's bot: the strategy, the think time, and the lateness of its answers."""

    def __init__(self, kind: str, think_ms: float) -> None:
        self.act = STRATEGIES[kind](f"load-{kind}")
        self.think_s = think_ms / 1000.0
        self.info = _answer(_encode(BotInfo(PROTOCOL_VERSION, f"load-{kind}", "bench", "1")))
        self.late_ms: list[float] = []

    def reply(self, head: bytes, body: bytes) -> bytes:
        """The answer to one request (an ``/act`` is answered later: see :class:`_Seat`)."""
        if head.startswith(b"GET / "):
            return self.info
        if head.startswith(b"POST /act "):
            return _answer(_encode(self.act(_decode_act(body))))
        if head.startswith((b"POST /start ", b"POST /end ")):
            return _answer(b"{}")
        return _answer(b'{"error":"not found"}', b"404 Not Found")

    def figures(self) -> dict[str, float | int | None]:
        """Requests answered and how late past the think time (ms)."""
        late = sorted(self.late_ms)
        if not late:
            return {"acts": 0, "late_p50_ms": None, "late_p99_ms": None, "late_max_ms": None}
        return {
            "acts": len(late),
            "late_p50_ms": round(late[len(late) // 2], 3),
            "late_p99_ms": round(late[min(len(late) - 1, int(0.99 * len(late)))], 3),
            "late_max_ms": round(late[-1], 3),
        }


class _Seat(asyncio.Protocol):
    """One keep-alive connection (one seat of one match): requests come one at a time; an
    ``/act`` answer is written by a timer at the think time after its request was read.
    A protocol rather than streams: no coroutine per request, so the bot stays cheap."""

    def __init__(self, bot: ThinkingBot) -> None:
        self.bot = bot
        self.buffer = b""
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        # (uvloop's transports are not asyncio.Transport subclasses, but have its methods.)
        self.transport = transport  # type: ignore[assignment]
        sock = transport.get_extra_info("socket")
        if sock is not None:
            sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        while (end := self.buffer.find(b"\r\n\r\n")) >= 0:
            head = self.buffer[:end]
            length = 0
            for line in head.split(b"\r\n")[1:]:
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            if len(self.buffer) < end + 4 + length:
                return
            body = self.buffer[end + 4 : end + 4 + length]
            self.buffer = self.buffer[end + 4 + length :]
            self.handle(head, body)

    def handle(self, head: bytes, body: bytes) -> None:
        received = time.perf_counter()
        answer = self.bot.reply(head, body)
        assert self.transport is not None
        if not head.startswith(b"POST /act "):
            self.transport.write(answer)
            return
        loop = asyncio.get_running_loop()
        due = loop.time() + received + self.bot.think_s - time.perf_counter()
        loop.call_at(due, self.send_late, answer, received)

    def send_late(self, answer: bytes, received: float) -> None:
        if self.transport is not None and not self.transport.is_closing():
            self.transport.write(answer)
            self.bot.late_ms.append((time.perf_counter() - received - self.bot.think_s) * 1000)

    def connection_lost(self, exc: Exception | None) -> None:
        self.transport = None


async def serve(kind: str, port: int, think_ms: float, stats: Path) -> None:
    """Serve on 127.0.0.1:``port`` (shared with other processes) until SIGTERM."""
    bot = ThinkingBot(kind, think_ms)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
    sock.bind(("127.0.0.1", port))
    loop = asyncio.get_running_loop()
    server = await loop.create_server(lambda: _Seat(bot), sock=sock, backlog=socket.SOMAXCONN)
    stop = asyncio.Event()
    loop.add_signal_handler(signal.SIGTERM, stop.set)
    async with server:
        await stop.wait()
    stats.write_text(json.dumps(bot.figures()) + "\n")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--kind", required=True, choices=tuple(STRATEGIES))
    parser.add_argument("--port", type=int, required=True)
    parser.add_argument("--think-ms", type=float, default=50.0)
    parser.add_argument("--stats", type=Path, required=True, help="where to write on SIGTERM")
    args = parser.parse_args(argv)
    # uvloop (the bench extras) when installed: libuv's loop and transports in C, so the
    # bots, which share the machine with the arena they load, cost it less.
    run = asyncio.run if uvloop is None else uvloop.run
    run(serve(args.kind, args.port, args.think_ms, args.stats))
    return 0


if __name__ == "__main__":
    sys.exit(main())
