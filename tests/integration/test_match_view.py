"""`gin-arena match ... --view`: after the match, its replay viewer on loopback, from the same
record the command printed; Ctrl-C stops it quietly and leaves no database behind."""

from __future__ import annotations

import json
import os
import queue
import signal
import subprocess
import threading
import time
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import IO, Any

import pytest
from arena_procs import gin_arena_argv

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer

START_TIMEOUT_S = 120


@pytest.fixture
def bots() -> Iterator[tuple[BotServer, BotServer]]:
    a, b = house_bot("greedy").start(), house_bot("strong").start()
    yield a, b
    a.stop()
    b.stop()


def _drain(stream: IO[str], into: queue.Queue[str]) -> None:
    for line in stream:
        into.put(line)


def _get(url: str) -> tuple[int, str, bytes]:
    with urllib.request.urlopen(url, timeout=30) as answer:
        return answer.status, answer.headers.get("Content-Type", ""), answer.read()


def test_match_view_serves_the_replay_of_the_match_it_printed(
    bots: tuple[BotServer, BotServer], tmp_path: Path
) -> None:
    a, b = bots
    argv = [*gin_arena_argv(), "match", a.url, b.url, "--seed", "4", "--quiet", "--view"]
    argv += ["--rule", "target=100", "--rule", "best_of=1", "--view-port", "0"]
    proc = subprocess.Popen(
        argv,
        cwd=tmp_path,
        env={**os.environ, "TMPDIR": str(tmp_path)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    assert proc.stdout is not None and proc.stderr is not None
    out: queue.Queue[str] = queue.Queue()
    err: queue.Queue[str] = queue.Queue()
    readers = [
        threading.Thread(target=_drain, args=(proc.stdout, out), daemon=True),
        threading.Thread(target=_drain, args=(proc.stderr, err), daemon=True),
    ]
    for reader in readers:
        reader.start()
    seen = ""
    deadline = time.monotonic() + START_TIMEOUT_S
    try:
        while "replay viewer: " not in seen:
            try:
                seen += err.get(timeout=1)
            except queue.Empty:
                assert proc.poll() is None, f"exited with {proc.returncode}:\n{seen}"
            assert time.monotonic() < deadline, seen
        url = seen.split("replay viewer: ", 1)[1].split()[0]
        assert url.startswith("http://127.0.0.1:") and "/matches/" in url
        status, kind, page = _get(url)
        base, match_id = url.split("/matches/")
        replay_status, replay_kind, replay = _get(f"{base}/api/v1/matches/{match_id}/replay")
    finally:
        os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C does
        code = proc.wait(timeout=60)
        for reader in readers:
            reader.join(timeout=30)
        proc.stdout.close()
        proc.stderr.close()
    errors = seen + "".join(err.queue)
    assert code == 0, errors
    assert "Traceback" not in errors and "KeyboardInterrupt" not in errors
    printed: dict[str, Any] = json.loads("".join(out.queue))
    assert status == 200 and kind.startswith("text/html")
    assert b"house-greedy" in page and b"house-strong" in page
    served = json.loads(replay)
    assert replay_status == 200 and replay_kind.startswith("application/json")
    # The viewer's replay is the record the command printed, deal for deal.
    assert served["match_id"] == printed["match_id"] == "match-4"
    assert served["games"] == printed["games"] and served["winner"] == printed["winner"]
    assert not list(tmp_path.glob("gin-arena-view-*")), "the view's database is removed"


def test_a_bad_view_port_is_one_line_before_the_match(
    bots: tuple[BotServer, BotServer], tmp_path: Path
) -> None:
    a, b = bots
    done = subprocess.run(
        [*gin_arena_argv(), "match", a.url, b.url, "--seed", "1", "--view", "--view-port", "70000"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 2 and done.stdout == ""
    assert done.stderr.strip().splitlines() == [
        "gin-arena: error: --view-port must be 0 to 65535 (0: any free port), not 70000"
    ]
