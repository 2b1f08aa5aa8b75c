"""The production server: waitress in front of the app, and ``gin-arena serve`` end to end
(real HTTP bots registered through the API, a challenge played by the local executor that
runs alongside, its replay read back)."""

from __future__ import annotations

import gzip
import json
import os
import re
import signal
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest
from api_fixtures import *  # noqa: F403 - the fixtures
from api_support import HouseBots

from arena.api.server import ApiServer
from arena.settings import Settings

ADMIN = "serve-test-admin"


def call(base: str, path: str, body: Any = None, token: str | None = None, **headers: str) -> Any:
    data = None if body is None else json.dumps(body).encode()
    request = urllib.request.Request(base + path, data=data, method="POST" if data else "GET")
    if data:
        request.add_header("Content-Type", "application/json")
    if token:
        request.add_header("Authorization", f"Bearer {token}")
    for name, value in headers.items():
        request.add_header(name.replace("_", "-"), value)
    with urllib.request.urlopen(request, timeout=30) as response:
        raw = response.read()
        if response.headers.get("Content-Encoding") == "gzip":
            raw = gzip.decompress(raw)
        return response.status, dict(response.headers), json.loads(raw) if raw else None


def test_waitress_serves_the_app(db_url: str):
    server = ApiServer(
        Settings(database_url=db_url, rate_limit=""), port=0, threads=2, with_executor=False
    )
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        status, headers, body = call(server.url, "/healthz")
        assert status == 200 and body == {"status": "ok"}
        status, headers, body = call(server.url, "/api/v1/openapi.json", Accept_Encoding="gzip")
        assert headers["Content-Encoding"] == "gzip" and body["openapi"].startswith("3.1")
        try:
            call(server.url, "/api/v1/bots/1")
        except urllib.error.HTTPError as exc:
            assert exc.code == 404
            assert exc.headers["Content-Type"] == "application/problem+json"
            exc.close()
    finally:
        server.stop()
        thread.join(10)
    assert not thread.is_alive()


def announced_url(proc: subprocess.Popen[bytes]) -> str:
    """The address ``gin-arena serve --port 0`` announces on stderr once bound; the rest of its
    stderr is drained by a thread (a port picked here and passed in could be taken by another
    test's server before the child binds it, and requests would then reach that server)."""
    assert proc.stderr is not None
    seen = []
    for raw in iter(proc.stderr.readline, b""):
        line = raw.decode(errors="replace")
        seen.append(line)
        found = re.search(r"serving (http://127\.0\.0\.1:\d+)/", line)
        if found:
            threading.Thread(target=proc.stderr.read, daemon=True).start()
            return found.group(1)
    raise AssertionError("gin-arena serve announced no address:\n" + "".join(seen))


def wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 30.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else ""
        try:
            call(base, "/readyz")
            return
        except (urllib.error.URLError, ConnectionError):
            time.sleep(0.2)
    raise AssertionError("gin-arena serve did not become ready")


def test_gin_arena_serve_plays_a_challenge_end_to_end(tmp_path: Path, house: HouseBots):
    env = {
        **os.environ,
        "ARENA_DATABASE_URL": f"sqlite:///{tmp_path / 'serve.db'}",
        "ARENA_ALLOW_LOOPBACK": "true",
        "ARENA_ADMIN_TOKEN": ADMIN,
        "ARENA_WORKER_PROCESSES": "1",
        "ARENA_WORKER_THREADS": "4",
    }
    env.pop("ARENA_BROKER_URL", None)
    env.pop("ARENA_EXECUTOR", None)
    proc = subprocess.Popen(
        [sys.executable, "-m", "arena.cli", "serve", "--port", "0", "--threads", "4"],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        cwd=tmp_path,
    )
    try:
        base = announced_url(proc)
        wait_ready(base, proc)
        ids, tokens = [], []
        for i, url in enumerate(house.urls[:2]):
            _, _, body = call(base, "/api/v1/bots", {"name": f"e2e-{i}", "url": url, "owner": "t"})
            ids.append(body["id"])
            tokens.append(body["token"])
        challenge = {
            "bot_id": ids[0],
            "opponent_id": ids[1],
            "rules": {"fields": {"target": 50, "best_of": 1}},
        }
        status, headers, match = call(base, "/api/v1/challenges", challenge, token=tokens[0])
        assert status == 201
        deadline = time.monotonic() + 60
        while match["status"] in ("pending", "running"):
            assert time.monotonic() < deadline, match
            time.sleep(0.3)
            _, _, match = call(base, f"/api/v1/matches/{match['id']}")
        assert match["status"] == "finished" and match["winner"] in ("a", "b")
        _, headers, replay = call(base, f"/api/v1/matches/{match['id']}/replay?seat=a")
        assert replay["steps"] and "immutable" in headers["Cache-Control"]
        _, _, board = call(base, "/api/v1/ratings")
        # A challenge is unrated by default: both bots are listed, apart, as unrated.
        assert board["items"] == [] and {e["id"] for e in board["unrated"]} == set(ids)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            code = proc.wait(30)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
            if proc.stderr:
                proc.stderr.close()
    assert code == 0


def test_the_url_of_a_server_on_an_ipv6_address_has_brackets(db_url: str):
    if not socket.has_ipv6:
        pytest.skip("no IPv6 on this machine")
    try:
        server = ApiServer(
            Settings(database_url=db_url, rate_limit=""),
            host="::1",
            port=0,
            threads=1,
            with_executor=False,
        )
    except OSError as exc:  # ::1 not configured on this host's loopback
        pytest.skip(f"cannot bind ::1: {exc}")
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    try:
        assert server.url == f"http://[::1]:{server.port}"
        status, _, body = call(server.url, "/healthz")
        assert status == 200 and body == {"status": "ok"}
    finally:
        server.stop()
        thread.join(10)
