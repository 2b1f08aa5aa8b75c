"""Benchmark of the deadline cut-off: how far past ``deadline_ms`` the arena gives up on a bot.

Three bots run in a child process on loopback: one never answers ``/act`` (``silent``), one
trickles an answer a byte every 20 ms (``trickle``), and one answers at the deadline plus an
offset from -40 to +40 ms (``late``), noting when it sent each answer. The arena's real HTTP
player (:class:`arena.protocol.http_player.HttpPlayer`, signing on) sends them many ``/act``
requests, and each request is compared with the deadline:

* ``overshoot``: how long after the deadline ``HttpPlayer.act`` returned, the deadline
  running from the exchange's start (the transport's first clock reading) as it does in the
  arena: the cut-off;
* ``act_overshoot``: the same from the call of ``act`` (encoding and signing the request
  included, and any wait for a CPU before the exchange starts);
* ``recorded``: the latency the player reports for the request, which the match record keeps
  (a timeout records exactly the deadline; it must never say more);
* ``verdicts`` (``late`` bot): which answers were taken and which cut off, against when they
  were sent: the cut-off holds if no answer sent more than a few ms after the deadline was
  taken and none sent more than a few ms before it was cut off, however late the arena woke.

Scenarios: a quiet machine; the machine made busy by ``--load`` CPU-burning processes (default:
twice the CPU count); and the busy machine with ``--threads`` players at once in this process
(matches run as threads in a worker) and two pure-Python threads holding the GIL beside them.

    .venv/bin/python benchmarks/bench_deadline.py          # full run, writes results/deadline.json
    .venv/bin/python benchmarks/bench_deadline.py --quick  # smoke test, writes nothing
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import multiprocessing
import os
import platform
import queue
import random
import statistics
import sys
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from arena.playing.players import Fault, MatchContext, Turn
from arena.protocol.http_player import HttpPlayer
from arena.rules.hand import new_deal
from arena.rules.observation import observe
from arena.rules.ruleset import RuleSet

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"
RESULTS = Path(__file__).parent / "results" / "deadline.json"
TRICKLE_S = 0.02
SCENARIOS = ("quiet", "busy", "busy_threads_gil")
MODES = ("silent", "trickle", "late")
#: When the ``late`` bot answers, relative to the deadline (by request number).
LATE_OFFSETS_MS = (-40, -15, -6, -2, 2, 6, 15, 40)


@dataclass(frozen=True, slots=True)
class Row:
    """One request: its id, when the exchange started (``perf_counter``, the same clock in
    every process), ms from that start and from the call of ``act`` until ``act`` returned,
    the latency the player recorded, and the outcome (``answer`` or a fault kind)."""

    request_id: str
    start: float
    cutoff_ms: float
    act_ms: float
    recorded_ms: float | None
    outcome: str


# --- the bots (child process) -------------------------------------------------------------------


def _http(body: bytes) -> bytes:
    return b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: %d\r\n\r\n%s" % (
        len(body),
        body,
    )


async def _connection(
    mode: str, reader: asyncio.StreamReader, writer: asyncio.StreamWriter, sent: Any
) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            body = await reader.readexactly(length)
            if head.startswith(b"GET / "):
                writer.write(_http(b'{"protocol":"gin-arena/1","name":"%s"}' % mode.encode()))
            elif not head.startswith(b"POST /act "):
                writer.write(_http(b"{}"))
            elif mode == "silent":
                await reader.read()  # until the arena hangs up
                return
            elif mode == "trickle":
                for byte in _http(b'{"action":"pass"}'):
                    writer.write(bytes([byte]))
                    await writer.drain()
                    await asyncio.sleep(TRICKLE_S)
                return
            else:  # late: answer at the deadline plus this request's offset
                request = json.loads(body)
                number = int(request["request_id"].rsplit("-r", 1)[1])
                offset_ms = LATE_OFFSETS_MS[number % len(LATE_OFFSETS_MS)]
                await asyncio.sleep((request["deadline_ms"] + offset_ms) / 1000)
                before = time.perf_counter()
                writer.write(_http(b'{"action":"pass"}'))  # loopback: delivered in the call
                sent.put((request["request_id"], before, time.perf_counter()))
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        return
    finally:
        writer.close()


def _serve_bots(ports: Any, ready: Any, sent: Any) -> None:
    """Child process: one server per bot mode; ``sent`` gets each late answer's send times."""

    async def main() -> None:
        servers = []
        for i, mode in enumerate(MODES):

            async def handle(
                r: asyncio.StreamReader, w: asyncio.StreamWriter, m: str = mode
            ) -> None:
                await _connection(m, r, w, sent)

            server = await asyncio.start_server(handle, "127.0.0.1", 0, backlog=512)
            ports[i] = server.sockets[0].getsockname()[1]
            servers.append(server)
        ready.set()
        await asyncio.Event().wait()

    asyncio.run(main())


# --- load ---------------------------------------------------------------------------------------


def _burn(stop: Any) -> None:
    while not stop.is_set():
        for _ in range(200_000):
            pass


@contextlib.contextmanager
def busy_machine(processes: int) -> Iterator[None]:
    """``processes`` CPU-burning processes for the duration of the block."""
    ctx = multiprocessing.get_context("spawn")
    stop = ctx.Event()
    burners = [ctx.Process(target=_burn, args=(stop,), daemon=True) for _ in range(processes)]
    for p in burners:
        p.start()
    time.sleep(0.5)  # let them get going
    try:
        yield
    finally:
        stop.set()
        for p in burners:
            p.join(5)
            if p.is_alive():
                p.terminate()


@contextlib.contextmanager
def gil_hogs(threads: int) -> Iterator[None]:
    """Pure-Python threads in this process that hold the GIL whenever they may."""
    stop = threading.Event()

    def hog() -> None:
        while not stop.is_set():
            for _ in range(10_000):
                pass

    workers = [threading.Thread(target=hog, daemon=True) for _ in range(threads)]
    for t in workers:
        t.start()
    try:
        yield
    finally:
        stop.set()
        for t in workers:
            t.join()


# --- measuring ----------------------------------------------------------------------------------


def _turn(rules: RuleSet, tag: str, n: int) -> Turn:
    state = new_deal(rules, 0, rng=random.Random(n))
    return Turn(observe(state, state.to_act), "bench", 0, 0, f"bench-{tag}-r{n}", rules, (0, 0),
                (0, 0), rules.deadline_ms)  # fmt: skip


def _player(url: str, rules: RuleSet) -> HttpPlayer:
    # Started with a generous deadline (a loaded machine must not fail the start), then held
    # to the measured one for every /act.
    player = HttpPlayer(url, name="bench", secret=SECRET, allow_loopback=True)
    fault = player.start(MatchContext("bench", 0, RuleSet(deadline_ms=10_000), "opponent", 0))
    if fault is not None:
        raise SystemExit(f"the benchmark bot did not start: {fault.detail}")
    player._deadline_s = rules.deadline_ms / 1000
    return player


class _StartClock:
    """The transport's clock, noting its first reading of each request: the exchange's start,
    from which the deadline runs (encoding the request comes before it)."""

    def __init__(self) -> None:
        self.start: float | None = None

    def __call__(self) -> float:
        now = time.perf_counter()
        if self.start is None:
            self.start = now
        return now


def _requests(url: str, rules: RuleSet, count: int, tag: str) -> list[Row]:
    """``count`` sequential ``/act`` requests from one player."""
    player = _player(url, rules)
    clock = _StartClock()
    assert player._transport is not None
    player._transport._clock = clock
    out: list[Row] = []
    try:
        for n in range(count):
            turn = _turn(rules, tag, n)
            clock.start = None
            t0 = time.perf_counter()
            reply = player.act(turn)
            t1 = time.perf_counter()
            assert clock.start is not None
            recorded = _recorded_latency(player)
            kind = reply.kind.value if isinstance(reply, Fault) else "answer"
            out.append(
                Row(turn.request_id, clock.start, (t1 - clock.start) * 1000.0,
                    (t1 - t0) * 1000.0, recorded, kind)
            )  # fmt: skip
    finally:
        player.end({})
    return out


def _recorded_latency(player: HttpPlayer) -> float | None:
    exchange = player.take_exchange()
    return None if exchange is None else exchange.latency_ms


def _spread(values: list[float]) -> dict[str, float]:
    ordered = sorted(values)
    n = len(ordered)
    return {
        "median": round(statistics.median(ordered), 3),
        "p99": round(ordered[min(n - 1, int(0.99 * n))], 3),
        "max": round(ordered[-1], 3),
    }


def _summary(rows: list[Row], deadline_ms: int) -> dict[str, Any]:
    recorded = [r.recorded_ms for r in rows if r.recorded_ms is not None]
    kinds: dict[str, int] = {}
    for r in rows:
        kinds[r.outcome] = kinds.get(r.outcome, 0) + 1
    return {
        "requests": len(rows),
        "faults": kinds,
        "overshoot_ms": _spread([r.cutoff_ms - deadline_ms for r in rows]),
        "act_overshoot_ms": _spread([r.act_ms - deadline_ms for r in rows]),
        "recorded_latency_ms_max": round(max(recorded), 3) if recorded else None,
    }


def _verdicts(rows: list[Row], sent: dict[str, tuple[float, float]], deadline_ms: int) -> Any:
    """How the late bot's answers were judged against when they were sent: the latest answer
    taken and the earliest cut off, in ms after the deadline (negative: before it).

    A loopback send delivers during the call, so an answer reached the arena's socket between
    the bot's two readings around it: "taken" counts the first (the least late it can have
    been), "cut off" the second (the least early).
    """
    taken, cut = [], []
    for r in rows:
        if r.request_id not in sent:
            continue
        before, after = sent[r.request_id]
        deadline = r.start + deadline_ms / 1000
        if r.outcome == "answer":
            taken.append((before - deadline) * 1000)
        else:
            cut.append((after - deadline) * 1000)
    return {
        "taken": len(taken),
        "cut_off": len(cut),
        "latest_taken_ms": round(max(taken), 3) if taken else None,
        "earliest_cut_off_ms": round(min(cut), 3) if cut else None,
        "taken_more_than_5ms_late": sum(t > 5 for t in taken),
        "cut_off_more_than_5ms_early": sum(c < -5 for c in cut),
    }


def _parallel(url: str, rules: RuleSet, count: int, threads: int) -> list[Row]:
    """``threads`` players at once against one bot, ``count`` requests each."""
    rows: list[Row] = []
    lock = threading.Lock()

    def run(tag: str) -> None:
        got = _requests(url, rules, count, tag)
        with lock:
            rows.extend(got)

    workers = [threading.Thread(target=run, args=(f"t{i}",)) for i in range(threads)]
    for t in workers:
        t.start()
    for t in workers:
        t.join()
    return rows


def _sent_times(sent: Any, rows: list[Row]) -> dict[str, tuple[float, float]]:
    """The late bot's send times for these requests (it sends even after a cut-off; a send
    that never came is left out after a few seconds)."""
    wanted = {r.request_id for r in rows}
    times: dict[str, tuple[float, float]] = {}
    while not wanted <= times.keys():
        try:
            request_id, before, after = sent.get(timeout=5)
        except queue.Empty:
            break
        times[request_id] = (before, after)
    return times


def scenario(
    urls: dict[str, str], rules: RuleSet, count: int, threads: int, sent: Any
) -> dict[str, dict[str, Any]]:
    """Each bot, ``threads`` players at once, ``count`` requests each."""
    out = {}
    for mode, url in urls.items():
        rows = _parallel(url, rules, count, threads)
        out[mode] = _summary(rows, rules.deadline_ms)
        if mode == "late":
            out[mode]["verdicts"] = _verdicts(rows, _sent_times(sent, rows), rules.deadline_ms)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--quick", action="store_true", help="small counts; writes nothing")
    parser.add_argument("--json", type=Path, default=None, help=f"where to write ({RESULTS})")
    parser.add_argument("--deadline-ms", type=int, default=200)
    parser.add_argument("--requests", type=int, default=None, help="per player and bot")
    parser.add_argument("--load", type=int, default=2 * (os.cpu_count() or 1))
    parser.add_argument("--threads", type=int, default=8)
    parser.add_argument(
        "--switch-interval-ms",
        type=float,
        default=None,
        help="sys.setswitchinterval for this process (Python's default is 5 ms)",
    )
    parser.add_argument(
        "--only", choices=SCENARIOS, action="append", help="run only these scenarios"
    )
    args = parser.parse_args(argv)
    if args.switch_interval_ms is not None:
        sys.setswitchinterval(args.switch_interval_ms / 1000)
    only = set(args.only or SCENARIOS)
    count = args.requests or (8 if args.quick else 40)
    rules = RuleSet(deadline_ms=args.deadline_ms)

    ctx = multiprocessing.get_context("spawn")
    ports = ctx.Array("i", len(MODES))
    ready = ctx.Event()
    sent = ctx.Queue()
    child = ctx.Process(target=_serve_bots, args=(ports, ready, sent), daemon=True)
    child.start()
    results: dict[str, Any] = {
        "python": platform.python_version(),
        "cpus": os.cpu_count(),
        "command": "benchmarks/bench_deadline.py" + (" --quick" if args.quick else ""),
        "deadline_ms": args.deadline_ms,
        "load_processes": args.load,
        "threads": args.threads,
        "switch_interval_ms": sys.getswitchinterval() * 1000,
        "trickle_byte_every_ms": TRICKLE_S * 1000,
        "load_average_1min_before": round(os.getloadavg()[0], 2),
    }
    try:
        if not ready.wait(30):
            print("bots did not start", file=sys.stderr)
            return 1
        urls = {m: f"http://127.0.0.1:{ports[i]}" for i, m in enumerate(MODES)}
        if "quiet" in only:
            results["quiet"] = scenario(urls, rules, count, 1, sent)
        with busy_machine(args.load):
            if "busy" in only:
                results["busy"] = scenario(urls, rules, count, 1, sent)
            if "busy_threads_gil" in only:
                with gil_hogs(2):
                    results["busy_threads_gil"] = scenario(urls, rules, count, args.threads, sent)
    finally:
        child.terminate()
        child.join(5)

    print(f"deadline {args.deadline_ms} ms; overshoot past it, ms (median / p99 / max), from the"
          " exchange's start and from the call of act; the largest latency recorded")  # fmt: skip
    for name in SCENARIOS:
        for mode, row in results.get(name, {}).items():
            o, a = row["overshoot_ms"], row["act_overshoot_ms"]
            print(
                f"  {name:<17} {mode:<8} {row['requests']:>4} requests:"
                f" {o['median']:6.2f} / {o['p99']:6.2f} / {o['max']:6.2f};"
                f" act {a['median']:6.2f} / {a['p99']:6.2f} / {a['max']:6.2f};"
                f" recorded max {row['recorded_latency_ms_max']} ms; {row['faults']}"
            )
            v = row.get("verdicts")
            if v:
                print(
                    f"  {'':<17} {'':<8} verdicts: {v['taken']} taken (latest sent"
                    f" {v['latest_taken_ms']} ms after the deadline), {v['cut_off']} cut off"
                    f" (earliest sent {v['earliest_cut_off_ms']} ms after it); wrong by over"
                    f" 5 ms: {v['taken_more_than_5ms_late'] + v['cut_off_more_than_5ms_early']}"
                )
    target = args.json if args.json is not None else (None if args.quick else RESULTS)
    if target is not None:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
