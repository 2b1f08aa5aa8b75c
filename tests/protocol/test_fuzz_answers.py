"""Generated bot answers through a real loopback server and the HTTP player (issue 14, 2b):
none raises, each is an action or a fault, and the one the generator's oracle names.

The generator, the raw server and the oracle are ``benchmarks/bench_fuzz.py``'s (its full run
sends 10,000 answers); here a few hundred, seeded, and the answers that the first full run
found misclassified, each sent in one packet and in two, on a new connection and on the retry
after a kept one (the verdict must depend on neither).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from benchmark_module import load_benchmark

from arena.protocol.transport import MAX_BODY

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "bench_fuzz.py"


fuzz = load_benchmark("bench_fuzz")


def test_generated_answers_never_raise_and_each_gets_the_verdict_the_oracle_names() -> None:
    tally = fuzz.run_fuzz(300, 2026)
    assert tally.answers == 300
    assert tally.escaped == []
    assert tally.misclassified == []
    assert tally.unknown_kinds == [] and tally.nul_in_detail == 0
    assert tally.checked > 200  # most answers have a known verdict, not just "no exception"
    assert sum(tally.outcomes.values()) == 300
    # The families all came up, and the answers reached more than one verdict each way.
    assert {"clean", "status", "size", "cut", "broken"} <= set(tally.families)
    assert {"action", "connection", "status", "body_too_large", "schema"} <= set(tally.outcomes)


@dataclass
class Exchange:
    """The fuzz server, the player that asks it (the generous deadline) and a turn to ask."""

    server: Any
    steady: Any
    turn: Any
    send: Callable[..., str]


@pytest.fixture(scope="module")
def exchange() -> Iterator[Exchange]:
    server = fuzz.FuzzServer().start()
    try:
        with fuzz.players(server) as (steady, _hasty, turn):

            def send(*pieces: bytes, after: bytes) -> str:
                """The outcome of an answer sent in ``pieces``, after one answered ``after``
                (the server closes each connection after its answer)."""
                server.plan = (fuzz.Send(after), fuzz.End("close"))
                steady.act(turn)
                plan = []
                for piece in pieces:
                    plan += [fuzz.Send(piece), fuzz.Pause(0.02)]
                server.plan = (*plan, fuzz.End("close"))
                return str(fuzz.outcome_of(steady.act(turn)))

            yield Exchange(server, steady, turn, send)
    finally:
        server.stop()


def _both_ways(data: bytes, at: int) -> list[tuple[bytes, ...]]:
    """``data`` in one packet, and split at ``at``."""
    return [(data,), (data[:at], data[at:])]


ACTION = b'{"action": "pass"}'
MANY_HEADERS = b"".join(b"X-H-%d: %s\r\n" % (i, b"v" * 1000) for i in range(20))
CHUNKED_OVER_CAP = b"".join(b"2000\r\n%s\r\n" % (b" " * 0x2000) for _ in range(9)) + b"0\r\n\r\n"


SPLITS = [
    # Over a cap on the retry after a kept connection: called malformed ("connection").
    (
        "headers_over_the_cap",
        b"HTTP/1.1 200 OK\r\n" + MANY_HEADERS + b"Content-Length: 18\r\n\r\n" + ACTION,
        9000,
        "body_too_large",
    ),
    (
        "chunked_body_over_the_cap",
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + CHUNKED_OVER_CAP,
        100,
        "body_too_large",
    ),
    (
        "body_to_the_close_over_the_cap",
        b"HTTP/1.0 200 OK\r\n\r\n" + ACTION + b" " * MAX_BODY,
        30,
        "body_too_large",
    ),
    # Bytes after the declared body: in the same packet the parser read them as the next
    # answer and called the whole thing malformed; in a later one the answer was taken.
    (
        "content_length_shorter_than_the_body",
        b"HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n" + ACTION + b"trailing junk",
        50,
        "action",
    ),
    (
        "two_answers_in_one_packet",
        b"HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n" + ACTION + b"HTTP/1.1 500 No\r\n\r\n",
        50,
        "action",
    ),
    # An interim answer first: in the same packet as the final one it was read past; in a
    # packet of its own the exchange ended on it (a "status" fault, HTTP 100).
    (
        "100_continue_then_the_answer",
        b"HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n" + ACTION,
        25,
        "action",
    ),
    (
        "103_early_hints_twice_then_the_answer",
        b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" * 2
        + b"HTTP/1.1 200 OK\r\nContent-Length: 18\r\n\r\n"
        + ACTION,
        40,
        "action",
    ),
    (
        "100_continue_then_a_close",
        b"HTTP/1.1 100 Continue\r\n\r\n",
        10,
        "connection",
    ),
]


@pytest.mark.parametrize(("name", "data", "at", "verdict"), SPLITS, ids=[c[0] for c in SPLITS])
@pytest.mark.parametrize(
    "after",
    [
        # The transport kept the connection; the bot had closed it: the answer comes on the
        # retry, in the handler of the stale connection's exception, where Python replaced
        # the ``__context__`` that httptools set (the cap's verdict was read from it).
        pytest.param(fuzz._whole(ACTION), id="on-the-retry-after-a-kept-connection"),
        pytest.param(b"garbage", id="on-a-new-connection-after-a-fault"),
    ],
)
def test_the_verdict_depends_neither_on_the_packets_nor_on_the_connection(
    exchange: Exchange, name: str, data: bytes, at: int, verdict: str, after: bytes
) -> None:
    got = [exchange.send(*pieces, after=after) for pieces in _both_ways(data, at)]
    assert got == [verdict, verdict], name


def test_the_quick_fuzz_benchmark_reports_and_writes_only_where_told(tmp_path: Path) -> None:
    out = tmp_path / "fuzz.json"
    argv = [sys.executable, str(SCRIPT), "--quick", "--answers", "40", "--json", str(out)]
    done = subprocess.run(argv, capture_output=True, text=True, timeout=240, check=False)
    assert done.returncode == 0, done.stdout + done.stderr
    figures = json.loads(out.read_text(encoding="utf-8"))
    assert figures["mode"] == "quick" and figures["answers"] == 40
    assert figures["exceptions_escaped"] == 0 and figures["misclassified"] == 0
    assert figures["actions"] + figures["faults"] == 40
    assert "exceptions escaped" in done.stdout and "results written" in done.stdout


def test_the_readme_gives_the_figures_of_results_fuzz_json() -> None:
    root = SCRIPT.parent
    figures = json.loads((root / "results" / "fuzz.json").read_text(encoding="utf-8"))
    section = (root / "README.md").read_text(encoding="utf-8").split("## `bench_fuzz.py`", 1)[1]
    section = section.split("\n## ", 1)[0]
    assert figures["mode"] == "full" and figures["answers"] >= 10_000
    assert figures["exceptions_escaped"] == 0 and figures["misclassified"] == 0
    for label, value in [
        ("answers", figures["answers"]),
        ("checked by the oracle", figures["checked_by_oracle"]),
        ("actions", figures["actions"]),
        ("exceptions escaped", figures["exceptions_escaped"]),
        ("misclassified", figures["misclassified"]),
    ]:
        assert f"| {label} | {value:,} |" in section, label
    for kind, count in figures["faults_by_kind"].items():
        assert f"| `{kind}` | {count:,} |" in section, kind
    assert f"{figures['answers_per_s']} answers/s" in section


def test_bytes_that_come_after_a_kept_answer_are_not_the_next_answer(exchange: Exchange) -> None:
    """An answer, then (later, on the connection the arena keeps) a few more bytes: the next
    request went out on that connection and its answer was read from those bytes, a
    "connection" fault for a bot whose next answer was sound (found by the full fuzz run)."""
    server, steady, turn = exchange.server, exchange.steady, exchange.turn
    sent = server.sends
    late = (fuzz.Pause(0.05), fuzz.Send(b'"2h"}'), fuzz.End("stall"))
    server.plan = (fuzz.Send(fuzz._whole(ACTION)), *late)
    assert fuzz.outcome_of(steady.act(turn)) == "action"
    server.plan = (fuzz.Send(fuzz._whole(ACTION)), fuzz.End("close"))
    waited = time.monotonic() + 30
    while server.sends < sent + 2 and time.monotonic() < waited:  # the late bytes went out
        time.sleep(0.01)
    time.sleep(0.05)  # and reached this end of the loopback connection
    assert fuzz.outcome_of(steady.act(turn)) == "action"


@pytest.mark.parametrize(
    "tail",
    [
        pytest.param(b'"2h"}', id="the-rest-of-a-body"),
        pytest.param(b"trailing junk", id="junk"),
        pytest.param(b"\r\n", id="a-stray-line-end"),
    ],
)
def test_bytes_after_a_kept_answer_that_come_after_the_next_request_are_not_its_answer(
    exchange: Exchange, tail: bytes
) -> None:
    """An answer, then more bytes on the connection the arena keeps, sent only once the next
    request has gone out on it: they were read as that request's answer, a "connection"
    fault ("malformed HTTP answer") for a bot whose next answer was sound (2 of the 10,000
    answers of the full fuzz run, a short ``Content-Length`` whose rest came later). The
    request goes again on a new connection, and its answer there is the verdict."""
    server, steady, turn = exchange.server, exchange.steady, exchange.turn
    server.plan = (
        fuzz.Send(fuzz._whole(ACTION)),
        fuzz.AwaitRequest(),
        fuzz.Send(tail),
        fuzz.End("close"),
    )
    assert fuzz.outcome_of(steady.act(turn)) == "action"
    connections = server.connections
    server.plan = (fuzz.Send(fuzz._whole(ACTION)), fuzz.End("close"))
    assert fuzz.outcome_of(steady.act(turn)) == "action"
    assert server.connections == connections + 1  # the request went again, on a new one


def test_an_answer_that_begins_no_http_on_a_new_connection_is_still_a_connection_fault(
    exchange: Exchange,
) -> None:
    """The retry is for a kept connection's stray bytes only: on a fresh connection, bytes that
    begin no HTTP answer are the bot's malformed answer, and tried once."""
    server, steady, turn = exchange.server, exchange.steady, exchange.turn
    server.plan = (fuzz.Send(b"garbage"), fuzz.End("close"))
    steady.act(turn)  # the connection is closed after the fault
    connections = server.connections
    assert exchange.send(b"trailing junk", after=b"garbage") == "connection"
    assert server.connections == connections + 2  # the one after the fault, and this one
