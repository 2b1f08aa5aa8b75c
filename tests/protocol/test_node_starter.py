"""The Node.js starter (``examples/starter_bot.js``) passes ``gin-arena bot check`` as written.

It runs under ``node`` on loopback, with and without a secret, against the real command. On a
machine without ``node`` these tests skip with one loud line; under ``CI=true`` a missing
``node`` fails them instead.
"""

from __future__ import annotations

import os
import re
import shutil
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from hostile import house, running
from loopback import free_port

from arena.playing.match import play_match
from arena.protocol.http_player import HttpPlayer
from arena.protocol.signing import generate_secret
from arena.rules.ruleset import RuleSet

ROOT = Path(__file__).resolve().parents[2]
STARTER = ROOT / "examples" / "starter_bot.js"
NODE = shutil.which("node")


@pytest.fixture(scope="module", autouse=True)
def node() -> str:
    if NODE is not None:
        return NODE
    message = "node is not on the PATH: the Node.js starter is not checked"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"{message}; CI=true requires it")
    print(f"\n!!! SKIPPING NODE STARTER TESTS: {message} !!!")
    pytest.skip(message)


def _wait_for(port: int, proc: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the Node starter exited"
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=1):
                return
        except OSError:
            time.sleep(0.05)
    raise AssertionError(f"the Node starter did not listen on {port} within {timeout_s} s")


@contextmanager
def starter(*args: str, env: dict[str, str] | None = None) -> Iterator[str]:
    """``node examples/starter_bot.js --port P ARGS``; its URL."""
    assert NODE is not None
    port = free_port()
    proc = subprocess.Popen(
        [NODE, str(STARTER), "--port", str(port), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env={**os.environ, **(env or {})},
    )
    try:
        _wait_for(port, proc)
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def bot_check(url: str, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "arena.cli", "bot", "check", url, "--repeats", "5", *args],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_the_node_starter_is_short_and_uses_the_standard_library_alone() -> None:
    text = STARTER.read_text(encoding="utf-8")
    assert len(text.splitlines()) < 80
    assert sorted(set(re.findall(r"require\('([^']+)'\)", text))) == ["crypto", "http"]


def test_the_node_starter_passes_bot_check_without_a_secret() -> None:
    with starter() as url:
        done = bot_check(url)
    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[-1] == "RESULT: PASS"
    assert not [line for line in lines if "[FAIL]" in line]


@pytest.mark.parametrize("how", ["argument", "environment"])
def test_the_node_starter_passes_bot_check_with_a_secret(how: str) -> None:
    secret = generate_secret()
    args, env = (
        (["--secret", secret], None) if how == "argument" else ([], {"GIN_ARENA_SECRET": secret})
    )
    with starter(*args, env=env) as url:
        done = bot_check(url, "--secret", secret)
    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "[PASS] refuses an unsigned request: refused (HTTP 401)" in out
    assert "[PASS] refuses a forged signature: refused (HTTP 401)" in out
    assert "[PASS] refuses a stale timestamp: refused (HTTP 401)" in out
    assert "[PASS] refuses a replayed webhook-id: refused (HTTP 409)" in out
    assert out.splitlines()[-1] == "RESULT: PASS"


def test_the_node_starter_refuses_an_arena_with_another_secret() -> None:
    with starter("--secret", generate_secret()) as url:
        done = bot_check(url, "--secret", generate_secret())
    assert done.returncode == 1
    assert "401" in done.stdout and done.stdout.splitlines()[-1] == "RESULT: FAIL"


def test_the_node_starter_plays_a_whole_match_without_a_fault() -> None:
    secret = generate_secret()
    opponent = house("strong")
    with starter("--secret", secret) as url, running(opponent):
        players = [
            HttpPlayer(url, name="node", secret=secret, allow_loopback=True),
            HttpPlayer(opponent.url, name="strong", allow_loopback=True),
        ]
        record = play_match(players, RuleSet(target=100, best_of=1), seed=5).to_dict()
    assert record["forfeit"] is None and record["faults"] == []
    assert sum(len(h["actions"]) for g in record["games"] for h in g["hands"]) > 50
