"""The HTTP transport's own CPU per bot call, 200 at once, on each of the worker's pools.

One process serves (asyncio; every request answered 50 ms after it was read, a 40-byte JSON
answer); another plays the arena's side: ``--concurrency`` loops, each sending ``POST /act``
(a 600-byte body) through its own :class:`arena.protocol.transport.Transport` one after
another on one keep-alive connection, for ``--seconds`` after a 2 s warm-up. The client's CPU
time (user and system, from ``os.times``) over its calls is the figure. Modes, each in a fresh
client process:

* ``threads``: one thread a loop, the transport waiting in ``poll`` (the threads pool);
* ``gevent``: ``gevent.monkey.patch_all()`` first, one greenlet a loop, the transport waiting
  through the socket's own timeout (the gevent pool, as it runs);
* ``gevent-poll``: the same, but the transport forced onto its ``poll`` path, which gevent
  serves by emulation (what the gevent pool ran before 2026-12-03): the baseline.

The modes alternate, ``--rounds`` times each, in one session, so a noisy machine hits all alike.

    .venv/bin/python benchmarks/bench_transport.py            # full run: results/transport.json
    .venv/bin/python benchmarks/bench_transport.py --quick    # 20 loops, 1 s, writes nothing
"""

from __future__ import annotations

import argparse
import json
import os
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from run_info import run_header

HERE = Path(__file__).resolve().parent
RESULTS = HERE / "results" / "transport.json"
MODES = ("threads", "gevent", "gevent-poll")
ANSWER = b'{"action":{"kind":"draw","source":"s"}}'
REPLY = b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
    len(ANSWER),
    ANSWER,
)
BODY = b'{"pad":"' + b"x" * 590 + b'"}'


def serve(port: int, think_s: float) -> None:
    """The bots' side: answer every request ``think_s`` after it was read."""
    import asyncio  # noqa: PLC0415 - the server's process only

    async def handle(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n"):
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                await reader.readexactly(length)
                await asyncio.sleep(think_s)
                writer.write(REPLY)
        except (asyncio.IncompleteReadError, ConnectionError):
            writer.close()

    async def main() -> None:
        server = await asyncio.start_server(handle, "127.0.0.1", port, backlog=4096)
        async with server:
            await server.serve_forever()

    asyncio.run(main())


def client(mode: str, port: int, loops: int, seconds: float) -> dict[str, Any]:
    """The arena's side, in this process (patched first under the gevent modes)."""
    if mode.startswith("gevent"):
        from gevent import monkey  # noqa: PLC0415 - before anything else opens a socket

        monkey.patch_all()
    import threading  # noqa: PLC0415 - after the patch

    from arena.protocol.transport import Transport  # noqa: PLC0415

    def connect(timeout: float) -> socket.socket:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)

    calls = [0]
    stop = threading.Event()

    def loop() -> None:
        transport = Transport("127.0.0.1", connect)
        if mode == "gevent-poll":
            transport._cooperative = False  # the baseline: gevent's poll emulation
        while not stop.is_set():
            transport.request("POST", "/act", BODY, {"Content-Type": "application/json"}, 2.0)
            calls[0] += 1
        transport.close()

    if mode.startswith("gevent"):
        import gevent  # noqa: PLC0415

        workers = [gevent.spawn(loop) for _ in range(loops)]
        pause = gevent.sleep
    else:
        workers = [threading.Thread(target=loop, daemon=True) for _ in range(loops)]
        for w in workers:
            w.start()
        pause = time.sleep
    pause(2.0)
    c0, t0, w0 = calls[0], os.times(), time.perf_counter()
    pause(seconds)
    c1, t1, w1 = calls[0], os.times(), time.perf_counter()
    stop.set()
    for w in workers:
        w.join(10)
    n = max(1, c1 - c0)
    return {
        "mode": mode,
        "calls": c1 - c0,
        "calls_per_second": round((c1 - c0) / (w1 - w0), 1),
        "cpu_us_per_call": round(((t1.user - t0.user) + (t1.system - t0.system)) / n * 1e6, 1),
        "user_us_per_call": round((t1.user - t0.user) / n * 1e6, 1),
        "system_us_per_call": round((t1.system - t0.system) / n * 1e6, 1),
    }


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def run(args: argparse.Namespace) -> dict[str, Any]:
    port = free_port()
    me = [sys.executable, str(Path(__file__).resolve())]
    server = subprocess.Popen([*me, "--serve", str(port)])
    runs: list[dict[str, Any]] = []
    header = run_header("bench_transport.py", quick=args.quick)
    try:
        deadline = time.monotonic() + 30
        while True:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    raise
                time.sleep(0.05)
        for round_ in range(args.rounds):
            for mode in MODES:
                out = subprocess.run(
                    [*me, "--client", mode, str(port), str(args.concurrency), str(args.seconds)],
                    check=True,
                    capture_output=True,
                    text=True,
                ).stdout
                result = json.loads(out.strip().splitlines()[-1])
                result["round"] = round_ + 1
                runs.append(result)
                print(json.dumps(result), file=sys.stderr)
    finally:
        server.terminate()
        server.wait(10)
    summary = {
        mode: {
            "cpu_us_per_call_median": statistics.median(
                r["cpu_us_per_call"] for r in runs if r["mode"] == mode
            ),
            "calls_per_second_median": statistics.median(
                r["calls_per_second"] for r in runs if r["mode"] == mode
            ),
        }
        for mode in MODES
    }
    base = summary["gevent-poll"]["cpu_us_per_call_median"]
    return {
        **header,
        "load_after": round(os.getloadavg()[0], 2),
        "setup": {
            "concurrency": args.concurrency,
            "seconds": args.seconds,
            "rounds": args.rounds,
            "think_ms": 50,
            "request_bytes": len(BODY),
            "answer_bytes": len(ANSWER),
        },
        "runs": runs,
        "summary": summary,
        "gevent_over_gevent_poll": round(summary["gevent"]["cpu_us_per_call_median"] / base, 3),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="20 loops for 1 s; writes nothing")
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--concurrency", type=int, default=200)
    parser.add_argument("--seconds", type=float, default=10.0)
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--serve", type=int, help=argparse.SUPPRESS)
    parser.add_argument("--client", nargs=4, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.serve:
        serve(args.serve, 0.05)
        return 0
    if args.client:
        mode, port, loops, seconds = args.client
        print(json.dumps(client(mode, int(port), int(loops), float(seconds))))
        return 0
    if args.quick:
        args.concurrency, args.seconds, args.rounds = 20, 1.0, 1
    result = run(args)
    for mode, row in result["summary"].items():
        print(
            f"{mode:12s} {row['cpu_us_per_call_median']:7.1f} us CPU a call"
            f"  ({row['calls_per_second_median']:.0f} calls/s)"
        )
    print(f"gevent / gevent-poll: {result['gevent_over_gevent_poll']}")
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
