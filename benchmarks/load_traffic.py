"""The load benchmark's API traffic: an open-loop generator, run as a process of its own.

Request *i* is due at ``start + i / rate`` whatever happened before (open loop), cycling over a
list of paths, and goes out on the first free of ``connections`` keep-alive connections (the
HTTP/1.1 client of ``bench_api.py``); its latency runs from its due time to the last byte of the
answer, so a stalled server, a busy connection or a late generator is counted, not hidden (no
coordinated omission). A request that fails (connection refused or reset, no answer within
``timeout_s``) is an error, its connection opened afresh for the next one; a request still
waiting for a connection when the generator stops is ``unsent``, its latency counted to then.

    python benchmarks/load_traffic.py '{"host": "127.0.0.1", "port": 8000, "rate": 200,
        "connections": 64, "timeout_s": 10, "paths": ["/api/v1/ratings"]}'

It prints ``ready`` once started, sends until a line (or the end) arrives on its standard
input, waits for the requests in flight, then prints one JSON object: ``t0`` (the first due
time, ``time.monotonic()``, the same clock in every process), the generator's CPU seconds,
and one row per request:
``[due - t0 (s), latency (ms), status or error, path index]``.
"""

from __future__ import annotations

import asyncio
import json
import resource
import sys
import threading
from typing import Any

from bench_api import Connection


async def generate(config: dict[str, Any], stop: asyncio.Event) -> dict[str, Any]:
    """Send the requests until ``stop`` is set (see the module docstring)."""
    loop = asyncio.get_running_loop()
    host, port, rate = config["host"], int(config["port"]), float(config["rate"])
    paths: list[str] = config["paths"]
    timeout_s = float(config.get("timeout_s", 10.0))
    queue: asyncio.Queue[tuple[int, float] | None] = asyncio.Queue()
    rows: list[list[Any]] = []
    start = loop.time() + 0.05

    async def dispatch() -> None:
        i = 0
        while not stop.is_set():
            due = start + i / rate
            delay = due - loop.time()
            if delay > 0:
                await asyncio.sleep(delay)
            queue.put_nowait((i, due))
            i += 1
        for _ in range(int(config["connections"])):
            queue.put_nowait(None)

    async def work(conn: Connection) -> None:
        while (item := await queue.get()) is not None:
            i, due = item
            index = i % len(paths)
            outcome: int | str
            if stop.is_set():  # due, still waiting for a connection: counted, not sent
                rows.append([round(due - start, 4), round((loop.time() - due) * 1000, 3),
                             "unsent", index])  # fmt: skip
                continue
            try:
                outcome, _ = await asyncio.wait_for(conn.get(paths[index]), timeout_s)
            except TimeoutError:
                outcome = "timeout"
                conn.close()
            except (OSError, asyncio.IncompleteReadError, ValueError) as exc:
                outcome = type(exc).__name__
                conn.close()
            rows.append(
                [round(due - start, 4), round((loop.time() - due) * 1000, 3), outcome, index]
            )
        conn.close()

    conns = [Connection(host, port) for _ in range(int(config["connections"]))]
    await asyncio.gather(dispatch(), *(work(c) for c in conns))
    rows.sort()
    return {"t0": start, "rows": rows}


def main(argv: list[str] | None = None) -> int:
    config = json.loads((argv or sys.argv[1:])[0])

    async def run() -> dict[str, Any]:
        loop = asyncio.get_running_loop()
        stop = asyncio.Event()

        def wait_for_stop() -> None:
            sys.stdin.readline()
            loop.call_soon_threadsafe(stop.set)

        threading.Thread(target=wait_for_stop, daemon=True).start()
        return await generate(config, stop)

    print("ready", flush=True)  # imported: the parent starts the matches now
    result = asyncio.run(run())
    usage = resource.getrusage(resource.RUSAGE_SELF)
    result["cpu_s"] = round(usage.ru_utime + usage.ru_stime, 3)
    sys.stdout.write(json.dumps(result) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
