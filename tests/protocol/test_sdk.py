"""The bot SDK's server, over real HTTP on loopback; and the starter bot a stranger would copy.

The server checks the arena's signature (401 for a bad, stale or future one; 409 for a replayed
webhook-id), validates every request (400 saying what is wrong), reports an exception in the
author's code as a 500 with its text, answers ``GET /`` with the bot info (a page for a
browser), keeps connections alive and sets TCP_NODELAY.
"""

from __future__ import annotations

import http.client
import json
import select
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from hostile import RecordingBot, house, play, running, sdk_bot, start_quickly
from loopback import free_port

from arena.bots.check import check_bot
from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.playing.match import play_match
from arena.protocol.http_player import HttpPlayer
from arena.protocol.signing import Signer, generate_secret
from arena.protocol.wire import ActRequest, WireAction
from arena.rules.actions import DRAW_STOCK
from arena.rules.ruleset import RuleSet

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE_ACT = (ROOT / "api_spec" / "examples" / "act.discard.request.json").read_bytes()
SECRET = generate_secret()
SHORT = RuleSet(deadline_ms=10_000, target=50, best_of=1)  # no timeout on a loaded machine


class Client:
    """One keep-alive HTTP/1.1 connection to a bot."""

    def __init__(self, url: str) -> None:
        host, port = url.removeprefix("http://").split(":")
        self.conn = http.client.HTTPConnection(host, int(port), timeout=5)

    def close(self) -> None:
        self.conn.close()

    def request(
        self,
        method: str,
        path: str,
        body: bytes | None = None,
        headers: dict[str, str] | None = None,
    ) -> tuple[int, dict[str, str], bytes]:
        self.conn.request(method, path, body=body, headers=headers or {})
        response = self.conn.getresponse()
        data = response.read()
        return response.status, {k.lower(): v for k, v in response.getheaders()}, data

    def post(
        self, path: str, body: bytes, headers: dict[str, str] | None = None
    ) -> tuple[int, Any]:
        status, _, data = self.request(
            "POST", path, body, {"Content-Type": "application/json", **(headers or {})}
        )
        return status, json.loads(data)


@pytest.fixture
def signed() -> Iterator[Client]:
    bot = start_quickly(BotServer(greedy, name="signed", secret=SECRET))
    client = Client(bot.url)
    yield client
    client.close()
    bot.stop()


def signature(
    body: bytes, msg_id: str, *, at: float | None = None, secret: str = SECRET
) -> dict[str, str]:
    return Signer(secret).sign(
        body, msg_id=msg_id, timestamp=int(time.time() if at is None else at)
    )


# --- signatures -----------------------------------------------------------------------------------


def test_a_signed_request_is_answered(signed: Client) -> None:
    status, answer = signed.post("/act", EXAMPLE_ACT, signature(EXAMPLE_ACT, "msg_ok"))
    assert status == 200
    legal = json.loads(EXAMPLE_ACT)["legal_actions"]
    assert answer in legal or answer["action"] == "knock"


@pytest.mark.parametrize(
    ("headers", "detail"),
    [
        (lambda: signature(EXAMPLE_ACT, "msg_forged", secret=generate_secret()), "no signature"),
        (lambda: signature(EXAMPLE_ACT, "msg_stale", at=time.time() - 3600), "old"),
        (lambda: signature(EXAMPLE_ACT, "msg_future", at=time.time() + 3600), "future"),
        (lambda: signature(b'{"other": "body"}', "msg_other_body"), "no signature"),
        (lambda: {}, "missing header"),
        (lambda: {**signature(EXAMPLE_ACT, "msg_mangled"), "webhook-signature": "v1,!!"}, "base64"),
    ],
    ids=["wrong_secret", "stale", "future", "other_body", "unsigned", "malformed"],
)
def test_a_bad_signature_is_refused_with_401(signed: Client, headers: Any, detail: str) -> None:
    status, problem = signed.post("/act", EXAMPLE_ACT, headers())
    assert status == 401
    assert problem["error"] == "bad signature"
    assert detail in problem["detail"]


def test_a_replayed_webhook_id_is_refused_with_409(signed: Client) -> None:
    headers = signature(EXAMPLE_ACT, "msg_once")
    assert signed.post("/act", EXAMPLE_ACT, headers)[0] == 200
    status, problem = signed.post("/act", EXAMPLE_ACT, headers)
    assert status == 409
    assert problem["error"] == "replayed request"
    # A fresh id for the same body is a new message.
    assert signed.post("/act", EXAMPLE_ACT, signature(EXAMPLE_ACT, "msg_twice"))[0] == 200


def test_the_arena_plays_a_signed_bot_twice_with_the_same_match_id() -> None:
    """Every request has a fresh webhook-id: a rematch is no replay (nor is a dotted match id)."""
    bots = [house("greedy"), BotServer(greedy, name="signed", secret=SECRET)]
    with running(*bots):
        for match_id in ("rematch", "rematch", "with.a dot"):
            players = [
                HttpPlayer(bots[0].url, allow_loopback=True),
                HttpPlayer(bots[1].url, allow_loopback=True, secret=SECRET),
            ]
            d = play_match(players, SHORT, seed=3, match_id=match_id).to_dict()
            assert d["forfeit"] is None and d["faults"] == []


def test_a_wrong_secret_in_the_arena_forfeits_at_the_start() -> None:
    bots = [house("greedy"), BotServer(greedy, name="signed", secret=SECRET)]
    with running(*bots):
        players = [
            HttpPlayer(bots[0].url, allow_loopback=True),
            HttpPlayer(bots[1].url, allow_loopback=True, secret=generate_secret()),
        ]
        d = play_match(players, SHORT, seed=3).to_dict()
    assert d["forfeit"]["seat"] == "b"
    reason = d["forfeit"]["reason"]
    # A signature refusal, said as such: not "unreachable" (the bot answered, and said why).
    assert reason.startswith("refused the arena's signature at the start"), reason
    assert "unreachable" not in reason and "HTTP 401" in reason and "bad signature" in reason


# --- requests the SDK refuses ---------------------------------------------------------------------


@pytest.fixture
def plain() -> Iterator[Client]:
    bot = start_quickly(BotServer(greedy, name="plain <b>bot</b>", author="tests"))
    client = Client(bot.url)
    yield client
    client.close()
    bot.stop()


def test_a_request_of_the_wrong_schema_is_a_400_saying_what_is_wrong(plain: Client) -> None:
    status, problem = plain.post("/act", b'{"protocol": "gin-arena/1"}')
    assert status == 400
    assert problem["error"] == "invalid request"
    assert problem["detail"].startswith("/act: ")
    assert "missing required field `match_id`" in problem["detail"]
    wrong_phase = json.loads(EXAMPLE_ACT) | {"phase": "nap"}
    status, problem = plain.post("/act", json.dumps(wrong_phase).encode())
    assert status == 400
    assert "$.phase" in problem["detail"]
    status, problem = plain.post("/start", b"not json")
    assert status == 400
    assert problem["detail"].startswith("/start: ")


@pytest.mark.parametrize("route", ["/act", "/start", "/end"])
def test_a_request_nested_too_deeply_is_a_400_not_a_bot_error(
    plain: Client, route: str, capfd: pytest.CaptureFixture[str]
) -> None:
    body = b'{"protocol": "gin-arena/1", "x": ' + b"[" * 5000 + b"]" * 5000 + b"}"
    status, problem = plain.post(route, body)
    assert status == 400
    assert problem["error"] == "invalid request"
    assert problem["detail"].startswith(f"{route}: ")
    assert "Traceback" not in capfd.readouterr().err


def test_unknown_paths_are_404(plain: Client) -> None:
    assert plain.request("GET", "/act")[0] == 404
    assert plain.post("/move", b"{}")[0] == 404


def test_a_request_without_length_or_too_large_is_refused(plain: Client) -> None:
    host, port = plain.conn.host, plain.conn.port
    for head, status in [
        (b"POST /act HTTP/1.1\r\nHost: x\r\n\r\n", b"411"),
        (b"POST /act HTTP/1.1\r\nHost: x\r\nContent-Length: 9999999\r\n\r\n", b"413"),
    ]:
        with socket.create_connection((host, port), timeout=5) as sock:
            sock.sendall(head)
            assert sock.recv(100).split(b" ")[1] == status


def test_an_exception_in_the_authors_code_is_a_500_with_its_text(
    capfd: pytest.CaptureFixture[str],
) -> None:
    def broken(obs: ActRequest) -> WireAction:
        raise ValueError("no idea what to do with " + obs.phase)

    bot = sdk_bot(broken, "broken")
    client = Client(bot.url)
    with running(bot):
        status, problem = client.post("/act", EXAMPLE_ACT)
        client.close()
    assert status == 500
    assert problem == {
        "error": "bot error",
        "detail": "ValueError: no idea what to do with discard",
        "protocol": "gin-arena/1",
    }
    assert "Traceback" in capfd.readouterr().err


@pytest.mark.parametrize(
    "answer",
    [DRAW_STOCK, {"action": "draw_stock"}, WireAction("draw_stock")],
    ids=["engine_action", "dict", "wire_action"],
)
def test_the_author_may_answer_an_action_a_dict_or_a_wire_action(answer: Any) -> None:
    bot = sdk_bot(lambda obs: answer, "answers")
    client = Client(bot.url)
    with running(bot):
        assert client.post("/act", EXAMPLE_ACT) == (200, {"action": "draw_stock"})
        client.close()


# --- GET / ----------------------------------------------------------------------------------------


def test_get_root_answers_the_bot_info(plain: Client) -> None:
    status, headers, body = plain.request("GET", "/", headers={"Accept": "application/json"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert json.loads(body) == {
        "protocol": "gin-arena/1",
        "name": "plain <b>bot</b>",
        "author": "tests",
        "version": "1",
    }


def test_a_browser_gets_a_page(plain: Client) -> None:
    status, headers, body = plain.request("GET", "/", headers={"Accept": "text/html,*/*"})
    assert status == 200 and headers["content-type"].startswith("text/html")
    page = body.decode()
    assert "<h1>plain &lt;b&gt;bot&lt;/b&gt;</h1>" in page
    assert "gin-arena/1" in page and "gin-arena bot check" in page


# --- connections ----------------------------------------------------------------------------------


def test_connections_are_kept_alive_with_tcp_nodelay() -> None:
    bot = RecordingBot()
    client = Client(bot.url)
    with running(bot):
        for _ in range(5):
            assert client.request("GET", "/")[0] == 200
            status, headers, _ = client.request(
                "POST", "/act", EXAMPLE_ACT, {"Content-Type": "application/json"}
            )
            assert status == 200 and headers["connection"] == "keep-alive"
        sock = client.conn.sock
        assert (
            client.request(
                "POST",
                "/start",
                b'{"protocol": "gin-arena/1", "match_id": "m", "opponent": "o", "rules": {}}',
            )[0]
            == 200
        )
        assert client.conn.sock is sock, "the client never had to reconnect"
        assert bot.connections == 1
        (server_side,) = bot.accepted
        assert server_side.getsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY) != 0
        client.close()


def test_a_burst_of_connections_waits_in_the_backlog() -> None:
    """Fifty matches starting at once: the kernel completes every connection, even before the
    bot accepts one (socketserver's default backlog of 5 dropped them: a 1 s connect stall)."""
    bot = BotServer(greedy, name="burst")  # listening, not serving yet
    clients = [socket.socket() for _ in range(50)]
    try:
        for client in clients:
            client.setblocking(False)
            client.connect_ex(("127.0.0.1", bot.port))
        pending = set(clients)
        deadline = time.monotonic() + 0.5
        while pending and time.monotonic() < deadline:
            _, writable, _ = select.select([], list(pending), [], 0.05)
            pending -= set(writable)
        assert not pending, f"{len(pending)} of 50 connections not established"
        assert all(c.getsockopt(socket.SOL_SOCKET, socket.SO_ERROR) == 0 for c in clients)
    finally:
        for client in clients:
            client.close()
        start_quickly(bot).stop()


# --- the starter bot ------------------------------------------------------------------------------

STARTER = ROOT / "examples" / "starter_bot.py"


def _wait_for(url: str, proc: subprocess.Popen[bytes], timeout_s: float = 15.0) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        assert proc.poll() is None, "the starter bot exited"
        client = Client(url)
        try:
            if client.request("GET", "/")[0] == 200:
                return
        except OSError:
            time.sleep(0.05)
        finally:
            client.close()
    raise AssertionError(f"{url} did not answer within {timeout_s} s")


@pytest.fixture(scope="module")
def starter_url() -> Iterator[str]:
    port = free_port()
    proc = subprocess.Popen(
        [sys.executable, str(STARTER), "--port", str(port)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_for(url, proc)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=10)


def test_the_starter_bot_is_short() -> None:
    assert len(STARTER.read_text(encoding="utf-8").splitlines()) < 40


def test_the_starter_bot_passes_bot_check(starter_url: str) -> None:
    report = check_bot(starter_url, repeats=5)
    assert report.passed, report.render()
    assert not [i for i in report.items if not i.passed and not i.warning]


def test_the_starter_bot_plays_a_match_from_the_command_line(starter_url: str) -> None:
    bot = house("greedy")
    with running(bot):
        done = subprocess.run(
            [
                sys.executable,
                "-m",
                "arena.cli",
                "match",
                starter_url,
                bot.url,
                "--seed",
                "7",
                "--rule",
                "target=100",
                "--rule",
                "best_of=1",
                "--quiet",
                "--compact",
            ],
            capture_output=True,
            timeout=60,
            check=False,
        )
    assert done.returncode == 0, done.stderr.decode()
    record = json.loads(done.stdout)
    assert {"winner", "forfeit", "games", "faults", "misknocks"} <= set(record)
    assert record["winner"] in ("a", "b") and record["forfeit"] is None
    # `gin-arena match` names each bot by the name its `GET /` gives.
    assert record["faults"] == [] and record["players"]["a"] == "starter-bot"
    (game,) = record["games"]
    assert {"winner", "points", "totals", "hands"} <= set(game)
    for hand in game["hands"]:
        assert hand["outcome"] in ("knock", "undercut", "gin", "big_gin", "dead", "tie")
        assert {"winner", "points"} <= set(hand)


def test_the_starter_bot_plays_a_whole_match_without_a_fault(starter_url: str) -> None:
    """Best of five against the strong house bot: every answer legal, no fault."""
    bot = house("strong")
    with running(bot):
        d = play([starter_url, bot.url], RuleSet(deadline_ms=10_000), seed=21).to_dict()
    assert d["faults"] == [] and d["forfeit"] is None and d["winner"] in ("a", "b")


def test_a_client_that_resets_mid_request_prints_no_traceback(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """An arena worker killed mid-request resets its connection: the bot's server goes on
    without a stack trace on its stderr (it is not the bot's error)."""
    server = BotServer(greedy, name="reset", port=0).start()
    try:
        host, port = server.url.removeprefix("http://").split(":")
        for _ in range(3):
            sock = socket.create_connection((host, int(port)))
            sock.sendall(b"POST /act HTTP/1.1\r\nHost: x\r\nContent-Length: 100\r\n\r\n{")
            sock.setsockopt(
                socket.SOL_SOCKET, socket.SO_LINGER, b"\x01\x00\x00\x00\x00\x00\x00\x00"
            )
            sock.close()  # linger 0: a reset, not a close
        conn = http.client.HTTPConnection(host, int(port), timeout=30)
        conn.request("GET", "/")  # still serving
        assert conn.getresponse().status == 200
        conn.close()
    finally:
        server.stop()
    assert "Traceback" not in capsys.readouterr().err
