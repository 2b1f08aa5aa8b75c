"""Benchmark of the Celery worker's side of the live streams: CPU per event of the Redis sink.

A worker playing many matches publishes one raw event per step of each
(:mod:`arena.live.publish`), through :class:`arena.live.redis_bus.RedisSink`, whose thread sends
them to Redis. This measures what that costs the worker's process: the events of
``--matches`` matches, interleaved as a worker playing them at once publishes them, are fed
to the sink at ``--rate`` events a second (paced, as matches produce them), and the process's
CPU time (every thread's: ``time.process_time``) per event is taken, minus that of the same
paced loop feeding a sink that does nothing.

Three sinks, alternating in order over ``--rounds`` rounds in this one process (a burst of load
on the machine hits them alike):

* ``scripted``: the arena's :class:`~arena.live.redis_bus.RedisSink` (a batch every 25 ms, sent
  as one call of its Lua script, which pushes, trims and expires each match's list and
  publishes the batch);
* ``batched``: the same batches sent as a pipeline, per match one ``RPUSH``, ``LTRIM`` and
  ``EXPIRE``, then one ``PUBLISH`` of the batch, as the sink did from 2026-12-02 to 2026-12-03;
* ``per_event``: the same sink sending each event on its own, as it did before 2026-12-02 (per
  event ``RPUSH``, ``LTRIM``, ``EXPIRE`` and ``PUBLISH``, in one pipeline for what was queued).

    .venv/bin/python benchmarks/bench_live_sink.py          # full run: results/live_sink.json
    .venv/bin/python benchmarks/bench_live_sink.py --quick  # smoke test, writes nothing

Needs this machine's Redis (``--redis-url``, default database 9; its keys of the benchmark's
matches are deleted after each round). Options: ``--matches N`` (200), ``--events N`` per match
(60), ``--rate R`` (4,000), ``--rounds N`` (3), ``--json PATH``.
"""

from __future__ import annotations

import argparse
import json
import queue
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import msgspec
import redis
from run_info import run_header

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from arena.live import redis_bus  # noqa: E402
from arena.live.publish import BATCH_SECONDS, MatchLive, RawEvent  # noqa: E402
from arena.playing.match import MatchRunner  # noqa: E402
from arena.playing.players import HeuristicPlayer, RandomPlayer  # noqa: E402
from arena.rules.ruleset import RuleSet  # noqa: E402

RESULTS = ROOT / "benchmarks" / "results" / "live_sink.json"
#: Match ids of the benchmark's events (far above any real arena's).
FIRST_ID = 2_000_000_000


class _Collect:
    def __init__(self) -> None:
        self.events: list[RawEvent] = []

    def publish(self, event: RawEvent) -> None:
        self.events.append(event)


def match_events() -> list[RawEvent]:
    """The raw events of one played match (heuristic against random, one game to 100)."""
    sink = _Collect()
    rules = RuleSet(target=100, best_of=1, max_strikes=1000)
    live = MatchLive(sink, 1, 1, rules)
    live.started()
    MatchRunner(
        [HeuristicPlayer(), RandomPlayer(seed=3)],
        rules,
        7,
        on_progress=live.dealt,
        on_step=live.step,
    ).run()
    return sink.events


def interleaved(base: list[RawEvent], matches: int, per_match: int) -> list[RawEvent]:
    """``per_match`` events of each of ``matches`` matches, a step of each in turn."""
    return [
        {**base[i % len(base)], "m": FIRST_ID + m} for i in range(per_match) for m in range(matches)
    ]


class PipelinedSink(redis_bus.RedisSink):
    """The sink's batches as a pipeline: three commands per match of a batch, one publish."""

    def _send(self, batch: list[RawEvent]) -> None:
        if not batch:
            return
        encoded = [(event, msgspec.json.encode(event)) for event in batch]
        pipe = self._client.pipeline(transaction=False)
        for match_id, bodies, restarted in redis_bus._by_match(encoded):
            key = redis_bus.history_key(match_id)
            if restarted:
                pipe.delete(key)
            pipe.rpush(key, *bodies)
            pipe.ltrim(key, -redis_bus.MAX_EVENTS, -1)
            pipe.expire(key, redis_bus.TTL_SECONDS)
        pipe.publish(redis_bus.CHANNEL, b"[" + b",".join(body for _, body in encoded) + b"]")
        pipe.execute()


class PerEventSink(redis_bus.RedisSink):
    """The sink as it was before its batches: four commands per event."""

    def _run(self) -> None:
        while True:
            batch = [self._queue.get()]
            while len(batch) < redis_bus.BATCH_EVENTS and None not in batch:
                try:
                    batch.append(self._queue.get_nowait())
                except queue.Empty:
                    break
            done = None in batch
            events = [e for e in batch[: batch.index(None)] if e is not None] if done else batch
            pipe = self._client.pipeline(transaction=False)
            for event in events:
                assert event is not None
                key = redis_bus.history_key(int(event["m"]))
                body = msgspec.json.encode(event)
                if event["k"] == "start":
                    pipe.delete(key)
                pipe.rpush(key, body)
                pipe.ltrim(key, -redis_bus.MAX_EVENTS, -1)
                pipe.expire(key, redis_bus.TTL_SECONDS)
                pipe.publish(redis_bus.CHANNEL, body)
            if events:
                pipe.execute()
            if done:
                return


class NullSink:
    """The paced loop's own cost (nothing sent)."""

    def __init__(self, url: str) -> None:
        pass

    def publish(self, event: RawEvent) -> None:
        pass

    def close(self) -> None:
        pass


def feed(sink: Any, events: list[RawEvent], rate: float) -> tuple[float, float]:
    """CPU microseconds per event and wall seconds to feed ``events`` at ``rate`` a second,
    then close the sink (which sends what is left)."""
    gap = 1.0 / rate
    cpu0, wall0 = time.process_time(), time.perf_counter()
    due = wall0
    for event in events:
        sink.publish(dict(event))
        due += gap
        pause = due - time.perf_counter()
        if pause > 0:
            time.sleep(pause)
    sink.close()
    return (time.process_time() - cpu0) / len(events) * 1e6, time.perf_counter() - wall0


def run(args: argparse.Namespace) -> dict[str, Any]:
    events = interleaved(match_events(), args.matches, args.events)
    client = redis.Redis.from_url(args.redis_url)
    client.ping()
    kinds = {
        "scripted": redis_bus.RedisSink,
        "batched": PipelinedSink,
        "per_event": PerEventSink,
        "null": NullSink,
    }
    rounds: list[dict[str, float]] = []
    for index in range(args.rounds):
        order = list(kinds) if index % 2 == 0 else list(reversed(kinds))
        row: dict[str, float] = {}
        for name in order:
            cpu_us, wall = feed(kinds[name](args.redis_url), events, args.rate)
            row[name] = round(cpu_us, 2)
            row[f"{name}_wall_s"] = round(wall, 3)
            client.delete(*(redis_bus.history_key(FIRST_ID + m) for m in range(args.matches)))
        rounds.append(row)
        print(
            f"round {index + 1}: CPU per event, us: scripted {row['scripted']}, batched"
            f" {row['batched']}, per event {row['per_event']}, paced loop alone {row['null']}"
        )
    client.close()

    def net(name: str) -> float:
        return round(statistics.median(r[name] - r["null"] for r in rounds), 2)

    scripted, batched, per_event = net("scripted"), net("batched"), net("per_event")
    return {
        **run_header("bench_live_sink.py", quick=args.quick),
        "setup": {
            "matches": args.matches,
            "events_per_match": args.events,
            "events": len(events),
            "rate": args.rate,
            "rounds": args.rounds,
            "batch_seconds": BATCH_SECONDS,
        },
        "rounds": rounds,
        "cpu_us_per_event": {"scripted": scripted, "batched": batched, "per_event": per_event},
        "ratio_per_event_over_batched": round(per_event / batched, 2) if batched > 0 else None,
        "ratio_batched_over_scripted": round(batched / scripted, 2) if scripted > 0 else None,
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="a few events; writes nothing")
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--redis-url", default="redis://127.0.0.1:6379/9")
    parser.add_argument("--matches", type=int, default=None, help="matches at once (200)")
    parser.add_argument("--events", type=int, default=None, help="events per match (60)")
    parser.add_argument("--rate", type=float, default=4000.0, help="events a second (4,000)")
    parser.add_argument("--rounds", type=int, default=None, help="rounds of the four (3)")
    args = parser.parse_args(argv)
    args.matches = args.matches or (20 if args.quick else 200)
    args.events = args.events or (10 if args.quick else 60)
    args.rounds = args.rounds or (1 if args.quick else 3)
    if min(args.matches, args.events, args.rounds) < 1 or not args.rate > 0:
        parser.error("--matches, --events and --rounds must be at least 1, --rate above 0")
    try:
        result = run(args)
    except redis.RedisError as exc:
        print(f"bench_live_sink: Redis at {args.redis_url} not usable: {exc}", file=sys.stderr)
        return 2
    cpu = result["cpu_us_per_event"]
    print(
        f"CPU per event, us (paced loop subtracted, median of {args.rounds}):"
        f" scripted {cpu['scripted']}, batched {cpu['batched']}"
        f" ({result['ratio_batched_over_scripted']}x), per event {cpu['per_event']}"
        f" ({result['ratio_per_event_over_batched']}x the batched)"
    )
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(result, indent=2) + "\n")
        print(f"wrote {out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
