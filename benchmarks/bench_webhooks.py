"""Benchmark of webhook delivery: deliveries per second per worker against a loopback receiver.

A receiver in a child process (asyncio, HTTP/1.1 keep-alive, ``204`` to every ``POST``, the
body read and dropped) stands for the owners' endpoints: ``--endpoints`` endpoints (one bot
each) on it. For each database (SQLite file, scratch PostgreSQL database) the run commits
``--deliveries`` events, one per bot in turn (each queues one delivery through the outbox,
:func:`arena.services.events.emit`), then calls the periodic job,
:func:`arena.services.webhooks.deliver_due`, in this one process until nothing is due: what one
worker (a Celery task, or the local executor's timer) does. Reported per round: deliveries
per second (wall), this process's CPU per delivery, and the attempts' latency as logged;
best of ``--rounds`` by rate.

It also measures the HTTP client: signed ``POST``s, one after another on one keep-alive
connection to the same receiver, through the arena's sender
(:class:`arena.webhooks.sender.Sender`, the bot transport) and through the standard library's
``http.client``, CPU microseconds per request.

    .venv/bin/python benchmarks/bench_webhooks.py          # full run, writes results/webhooks.json
    .venv/bin/python benchmarks/bench_webhooks.py --quick  # smoke test, writes nothing

Needs this machine's PostgreSQL for the PostgreSQL figures (``--pg-admin-url``; a scratch
database is created and dropped; ``--databases sqlite`` leaves it out).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import http.client
import json
import multiprocessing
import statistics
import sys
import tempfile
import time
import uuid
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from run_info import run_header
from sqlalchemy import create_engine, func, select, text

from arena.db.migrate import upgrade
from arena.db.models import WebhookAttemptRow, WebhookDeliveryRow
from arena.db.session import Database
from arena.events import EventType
from arena.protocol.signing import Signer, generate_secret, new_message_id
from arena.services.bots import register_bot
from arena.services.events import emit
from arena.services.webhook_endpoints import create_endpoint
from arena.services.webhooks import CLAIM_BATCH, SENDING_THREADS, deliver_due
from arena.settings import Settings, load_settings
from arena.states import DeliveryStatus
from arena.webhooks.payload import encode_body
from arena.webhooks.sender import Delivery, Sender

RESULTS = Path(__file__).parent / "results" / "webhooks.json"
DATABASES = ("sqlite", "postgresql")
#: The ``data`` of each event (about the size of a ``match.finished``).
DATA: dict[str, Any] = {
    "match": 1,
    "bots": {"a": {"id": 1, "name": "bench-a", "version": 1}, "b": {"id": 2, "name": "bench-b"}},
    "winner": "a",
    "score": {"a": 3, "b": 1},
    "forfeit": None,
    "rated": True,
    "tournament": None,
    "ladder": "standard",
    "links": {"api": "/api/v1/matches/1", "replay": "/api/v1/matches/1/replay", "page": "/m/1"},
}


# --- the receiver (child process) ----------------------------------------------------------------


async def _connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while True:
            head = await reader.readuntil(b"\r\n\r\n")
            length = 0
            for line in head.split(b"\r\n"):
                name, _, value = line.partition(b":")
                if name.strip().lower() == b"content-length":
                    length = int(value)
            await reader.readexactly(length)
            writer.write(b"HTTP/1.1 204 No Content\r\nContent-Length: 0\r\n\r\n")
            await writer.drain()
    except (asyncio.IncompleteReadError, ConnectionError):
        return
    finally:
        writer.close()


def _serve(port: Any, ready: Any) -> None:
    async def main() -> None:
        server = await asyncio.start_server(_connection, "127.0.0.1", 0, backlog=512)
        port.value = server.sockets[0].getsockname()[1]
        ready.set()
        await server.serve_forever()

    asyncio.run(main())


@contextlib.contextmanager
def receiver() -> Iterator[str]:
    """The receiver's base URL while it runs."""
    ctx = multiprocessing.get_context("spawn")
    port, ready = ctx.Value("i", 0), ctx.Event()
    child = ctx.Process(target=_serve, args=(port, ready), daemon=True)
    child.start()
    try:
        if not ready.wait(30):
            raise RuntimeError("the receiver did not start")
        yield f"http://127.0.0.1:{port.value}"
    finally:
        child.terminate()
        child.join(5)


# --- databases ---------------------------------------------------------------------------------


@contextlib.contextmanager
def database(kind: str, admin_url: str) -> Iterator[str]:
    """A fresh, migrated database URL of ``kind``, removed afterwards."""
    if kind == "sqlite":
        with tempfile.TemporaryDirectory() as tmp:
            url = f"sqlite:///{tmp}/bench.db"
            _migrate(url)
            yield url
        return
    name = f"arena_bench_{uuid.uuid4().hex[:8]}"
    admin = create_engine(admin_url, isolation_level="AUTOCOMMIT")
    try:
        with admin.connect() as conn:
            conn.execute(text(f'CREATE DATABASE "{name}"'))
        try:
            url = admin_url.rsplit("/", 1)[0] + "/" + name
            _migrate(url)
            yield url
        finally:
            with admin.connect() as conn:
                conn.execute(text(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)'))
    finally:
        admin.dispose()


def _migrate(url: str) -> None:
    db = Database(url)
    upgrade(db)
    db.dispose()


# --- the measures ------------------------------------------------------------------------------


def _queue(db: Database, bots: list[int], deliveries: int) -> None:
    """Commit ``deliveries`` events, one per bot in turn, 200 to a transaction."""
    for start in range(0, deliveries, 200):
        with db.session() as session:
            for i in range(start, min(start + 200, deliveries)):
                emit(session, EventType.MATCH_FINISHED, DATA, audience=[bots[i % len(bots)]])


def delivery_round(url: str, base: str, endpoints: int, deliveries: int) -> dict[str, Any]:
    """One round on a fresh database: queue, then deliver everything in this process."""
    settings: Settings = load_settings({}, database_url=url, allow_loopback=True)
    db = Database(url)
    try:
        bots = [
            register_bot(db, name=f"hooked-{i}", owner="bench", url="http://127.0.0.1:9").bot_id
            for i in range(endpoints)
        ]
        for bot in bots:
            create_endpoint(
                db, settings, bot, url=f"{base}/hooks/{bot}", event_types=["match.finished"]
            )
        _queue(db, bots, deliveries)
        runs = 0
        cpu, wall = time.process_time(), time.perf_counter()
        while deliver_due(db, settings, lambda _ids: None):
            runs += 1
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        with db.session() as session:
            delivered = session.scalar(
                select(func.count()).where(WebhookDeliveryRow.status == DeliveryStatus.DELIVERED)
            )
            latencies = list(session.scalars(select(WebhookAttemptRow.latency_ms)))
            attempts = len(latencies)
    finally:
        db.dispose()
    if delivered != deliveries or attempts != deliveries:
        raise RuntimeError(f"{delivered} delivered in {attempts} attempts of {deliveries}")
    ordered = sorted(x for x in latencies if x is not None)
    return {
        "deliveries": deliveries,
        "runs": runs,
        "seconds": round(wall, 3),
        "deliveries_per_s": round(deliveries / wall, 1),
        "cpu_ms_per_delivery": round(cpu * 1000 / deliveries, 3),
        "latency_ms_p50": round(statistics.median(ordered), 3),
        "latency_ms_p99": round(ordered[int(0.99 * (len(ordered) - 1))], 3),
    }


def bench_delivery(
    kind: str, admin_url: str, base: str, endpoints: int, deliveries: int, rounds: int
) -> dict[str, Any]:
    rows = []
    for _ in range(rounds):
        with database(kind, admin_url) as url:
            rows.append(delivery_round(url, base, endpoints, deliveries))
    best = max(rows, key=lambda r: r["deliveries_per_s"])
    return {"best": best, "rounds": [r["deliveries_per_s"] for r in rows]}


def bench_client(base: str, requests: int) -> dict[str, Any]:
    """CPU microseconds per signed POST on one keep-alive connection: the arena's sender
    against ``http.client`` (the signing and the body are the same for both)."""
    secret = generate_secret()
    body = encode_body("match.finished", datetime.now(UTC), DATA)
    signer = Signer(secret)
    out: dict[str, Any] = {"requests": requests, "body_bytes": len(body)}

    sender = Sender(timeout_s=10.0, allow_loopback=True)
    delivery = Delivery(1, 1, f"{base}/hooks/1", (secret,), new_message_id(), body)
    sender.send(delivery, timestamp=int(time.time()))  # connect outside the timed region
    cpu = time.process_time()
    for _ in range(requests):
        outcome = sender.send(delivery, timestamp=int(time.time()))
        assert outcome.delivered, outcome
    out["arena_sender_us"] = round((time.process_time() - cpu) * 1e6 / requests, 1)
    sender.close()

    host, port = base.removeprefix("http://").split(":")
    conn = http.client.HTTPConnection(host, int(port), timeout=10)
    msg_id = new_message_id()
    cpu = time.process_time()
    for _ in range(requests):
        headers = signer.sign(body, msg_id=msg_id, timestamp=int(time.time()))
        headers.update({"Content-Type": "application/json", "User-Agent": "bench"})
        conn.request("POST", "/hooks/1", body, headers)
        response = conn.getresponse()
        response.read()
        assert response.status == 204
    out["http_client_us"] = round((time.process_time() - cpu) * 1e6 / requests, 1)
    conn.close()
    out["ratio"] = round(out["arena_sender_us"] / out["http_client_us"], 2)
    return out


def format_report(results: dict[str, Any]) -> str:
    lines = [
        f"webhook deliveries, one worker ({results['threads']} sending threads,"
        f" {results['endpoints']} endpoints on one loopback receiver):",
        "| database | deliveries/s (best; rounds) | CPU ms per delivery | latency p50 / p99 ms |",
        "|---|---|---|---|",
    ]
    for kind, row in results["delivery"].items():
        best = row["best"]
        rounds = ", ".join(f"{r:.0f}" for r in row["rounds"])
        lines.append(
            f"| {kind} | {best['deliveries_per_s']:.0f} ({rounds}) | {best['cpu_ms_per_delivery']}"
            f" | {best['latency_ms_p50']} / {best['latency_ms_p99']} |"
        )
    client = results["client"]
    lines.append(
        f"HTTP client, CPU per signed POST on keep-alive ({client['body_bytes']} B body):"
        f" arena sender {client['arena_sender_us']} us, http.client {client['http_client_us']} us"
        f" ({client['ratio']}x)"
    )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument(
        "--quick", action="store_true", help="small counts (a smoke test); writes no JSON"
    )
    parser.add_argument("--json", type=Path, help=f"where to write (default {RESULTS})")
    parser.add_argument("--deliveries", type=int, help="per round (default 2000; quick 100)")
    parser.add_argument("--endpoints", type=int, default=20)
    parser.add_argument("--rounds", type=int, help="per database (default 3; quick 1)")
    parser.add_argument("--databases", default=",".join(DATABASES))
    parser.add_argument(
        "--pg-admin-url", default="postgresql+psycopg://postgres@127.0.0.1:5432/test"
    )
    args = parser.parse_args(argv)
    kinds = [k for k in args.databases.split(",") if k]
    if not kinds or any(k not in DATABASES for k in kinds):
        parser.error(f"--databases takes a comma-separated list of {', '.join(DATABASES)}")
    deliveries = args.deliveries or (100 if args.quick else 2000)
    rounds = args.rounds or (1 if args.quick else 3)
    results: dict[str, Any] = {
        **run_header("bench_webhooks.py", quick=args.quick),
        "threads": SENDING_THREADS,
        "claim_batch": CLAIM_BATCH,
        "endpoints": args.endpoints,
        "delivery": {},
    }
    with receiver() as base:
        for kind in kinds:
            results["delivery"][kind] = bench_delivery(
                kind, args.pg_admin_url, base, args.endpoints, deliveries, rounds
            )
        results["client"] = bench_client(base, 200 if args.quick else 3000)
    print(format_report(results))
    out = args.json or (None if args.quick else RESULTS)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(json.dumps(results, indent=2) + "\n", encoding="utf-8")
        print(f"results written to {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
