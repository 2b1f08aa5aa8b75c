"""Benchmark of the bot protocol path (issue: bots over HTTP), in one run.

1. Raw floor: sequential keep-alive round trips from the standard library's ``http.client``
   to a house bot: client CPU microseconds per call.
2. The arena: matches between two bots that answer at once (house ``greedy``): the arena's CPU
   microseconds per bot call (engine, observation, signing, JSON, HTTP) and calls per second.
   Target: at most 2x the raw floor's CPU per call.
3. Concurrency: bots that think 50 ms per action; one arena process running 1, 10 and 50
   matches at once. Target: throughput scales at least 40x from 1 to 50.

The bots run in a separate process, so the arena's CPU time (``time.process_time``) is its own.

    .venv/bin/python benchmarks/bench_protocol.py [--quick] [--json PATH]

A full run writes ``benchmarks/results/protocol.json``; ``--quick`` writes nothing unless given
``--json``.
"""

from __future__ import annotations

import argparse
import http.client
import json
import multiprocessing
import os
import platform
import random
import socket
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import msgspec

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.playing.match import play_match
from arena.playing.players import HeuristicPlayer, Turn
from arena.protocol.http_player import HttpPlayer
from arena.protocol.wire import ActRequest, WireAction, act_request
from arena.rules.hand import new_deal, play
from arena.rules.observation import observe
from arena.rules.ruleset import RuleSet

RESULTS = Path(__file__).parent / "results" / "protocol.json"

SECRET = "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"


def _slow_greedy(delay_s: float) -> Any:
    def act(obs: ActRequest) -> WireAction:
        time.sleep(delay_s)
        return greedy(obs)

    return act


def _serve_bots(ports: Any, ready: Any, think_ms: int) -> None:
    """Child process: two instant greedy bots and two that think ``think_ms``."""
    servers = [
        house_bot("greedy", name="greedy-0").start(),  # unsigned, for the raw floor
        house_bot("greedy", name="greedy-1", secret=SECRET).start(),
        house_bot("greedy", name="greedy-2", secret=SECRET).start(),
        BotServer(_slow_greedy(think_ms / 1000), name="slow-1", secret=SECRET).start(),
        BotServer(_slow_greedy(think_ms / 1000), name="slow-2", secret=SECRET).start(),
    ]
    for i, s in enumerate(servers):
        ports[i] = s.port
    ready.set()
    while True:
        time.sleep(3600)


def _typical_act_body() -> bytes:
    """A real ``/act`` body from the middle of a deal (what the arena sends)."""
    rules = RuleSet()
    state = new_deal(rules, 0, rng=random.Random(5))
    player = HeuristicPlayer()
    for _ in range(12):
        if state.is_over:
            break
        turn = Turn(observe(state, state.to_act), "m", 0, 0, "r", rules, (0, 0), (0, 0), 1000)
        state = play(state, state.to_act, player.act(turn))  # type: ignore[arg-type]
    turn = Turn(observe(state, state.to_act), "m", 0, 0, "r", rules, (0, 0), (0, 0), 1000)
    return msgspec.json.encode(act_request(turn, rules.to_dict()))


def raw_floor(url: str, calls: int) -> dict[str, Any]:
    """Client CPU per keep-alive round trip with http.client (TCP_NODELAY, as any sane client).

    ``get``: ``GET /`` (the least a round trip costs); ``post_act``: ``POST /act`` with a real
    observation body, the same exchange the arena makes, minus everything the arena adds.
    """
    host, port = url.split("//")[1].split(":")
    out: dict[str, Any] = {"calls": calls}
    body = _typical_act_body()
    out["act_body_bytes"] = len(body)
    for name, method, path, payload in (
        ("get", "GET", "/", None),
        ("post_act", "POST", "/act", body),
    ):
        conn = http.client.HTTPConnection(host, int(port))
        conn.connect()
        assert conn.sock is not None
        conn.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        headers = {"Content-Type": "application/json"} if payload else {}
        for _ in range(50):  # warm up
            conn.request(method, path, payload, headers)
            conn.getresponse().read()
        cpu0, wall0 = time.process_time(), time.perf_counter()
        for _ in range(calls):
            conn.request(method, path, payload, headers)
            conn.getresponse().read()
        cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
        conn.close()
        out[name] = {"cpu_us_per_call": cpu / calls * 1e6, "wall_us_per_call": wall / calls * 1e6}
    return out


def _players(urls: tuple[str, str]) -> list[HttpPlayer]:
    return [
        HttpPlayer(u, name=f"bot-{i}", secret=SECRET, allow_loopback=True)
        for i, u in enumerate(urls)
    ]


def arena_cost(urls: tuple[str, str], matches: int, rules: RuleSet) -> dict[str, float]:
    """Arena CPU per bot call over whole matches between two instant bots."""
    play_match(_players(urls), rules, seed=999)  # warm up
    calls = 0
    cpu0, wall0 = time.process_time(), time.perf_counter()
    for seed in range(matches):
        record = play_match(_players(urls), rules, seed=seed)
        calls += len(record.latencies[0]) + len(record.latencies[1])
    cpu, wall = time.process_time() - cpu0, time.perf_counter() - wall0
    return {
        "matches": matches,
        "calls": calls,
        "cpu_us_per_call": cpu / calls * 1e6,
        "calls_per_second": calls / wall,
        "wall_s": wall,
    }


def concurrency(urls: tuple[str, str], levels: list[int], rules: RuleSet) -> dict[str, Any]:
    """Matches per minute with N matches at once in one process (threads).

    Every match uses the same seed, so every match is the same work and the figure measures
    the runner, not the luck of the draw.
    """
    out: dict[str, Any] = {}
    for n in levels:
        wall0 = time.perf_counter()
        with ThreadPoolExecutor(max_workers=n) as pool:
            records = list(
                pool.map(
                    lambda i, n=n: play_match(_players(urls), rules, seed=7, match_id=f"c{n}-{i}"),
                    range(n),
                )
            )
        wall = time.perf_counter() - wall0
        calls = sum(len(r.latencies[0]) + len(r.latencies[1]) for r in records)
        out[str(n)] = {
            "matches": n,
            "wall_s": wall,
            "matches_per_minute": n / wall * 60,
            "calls": calls,
            "calls_per_second": calls / wall,
        }
    base = out[str(levels[0])]["matches_per_minute"]
    for n in levels:
        out[str(n)]["scale_vs_1"] = out[str(n)]["matches_per_minute"] / base
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small counts (a smoke test); writes no JSON"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--think-ms", type=int, default=50)
    args = parser.parse_args(argv)

    ctx = multiprocessing.get_context("spawn")
    ports = ctx.Array("i", 5)
    ready = ctx.Event()
    child = ctx.Process(target=_serve_bots, args=(ports, ready, args.think_ms), daemon=True)
    child.start()
    try:
        if not ready.wait(30):
            print("bots did not start", file=sys.stderr)
            return 1
        floor_url = f"http://127.0.0.1:{ports[0]}"
        fast = (f"http://127.0.0.1:{ports[1]}", f"http://127.0.0.1:{ports[2]}")
        slow = (f"http://127.0.0.1:{ports[3]}", f"http://127.0.0.1:{ports[4]}")
        results: dict[str, Any] = {
            "python": platform.python_version(),
            "cpus": os.cpu_count(),
            "command": "benchmarks/bench_protocol.py" + (" --quick" if args.quick else ""),
        }
        results["raw_floor"] = raw_floor(floor_url, 500 if args.quick else 5000)
        results["arena"] = arena_cost(fast, 1 if args.quick else 5, RuleSet())
        arena_cpu = results["arena"]["cpu_us_per_call"]
        ratio = arena_cpu / results["raw_floor"]["get"]["cpu_us_per_call"]
        ratio_post = arena_cpu / results["raw_floor"]["post_act"]["cpu_us_per_call"]
        results["arena"]["ratio_to_floor_get"] = ratio
        results["arena"]["ratio_to_floor_post_act"] = ratio_post
        short = RuleSet(best_of=1, target=60 if args.quick else 100)
        levels = [1, 5] if args.quick else [1, 10, 50]
        results["concurrency"] = concurrency(slow, levels, short)
    finally:
        child.terminate()
        child.join(5)

    rf, ar, cc = results["raw_floor"], results["arena"], results["concurrency"]
    print(
        f"raw floor, http.client keep-alive: GET / {rf['get']['cpu_us_per_call']:.0f} us CPU"
        " per call;"
        f" POST /act ({rf['act_body_bytes']} B body) {rf['post_act']['cpu_us_per_call']:.0f} us"
    )
    print(
        f"arena (whole matches, instant bots): {ar['cpu_us_per_call']:.0f} us CPU per bot call, "
        f"{ar['calls_per_second']:.0f} calls/s; {ratio:.2f}x the GET floor, "
        f"{ratio_post:.2f}x the POST /act floor (target <= 2x)"
    )
    for n, row in cc.items():
        print(
            f"concurrency {n:>3}: {row['matches_per_minute']:.1f} matches/min, "
            f"{row['calls_per_second']:.0f} calls/s, scale {row['scale_vs_1']:.1f}x"
        )
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    threading.current_thread().name = "bench"
    sys.exit(main())
