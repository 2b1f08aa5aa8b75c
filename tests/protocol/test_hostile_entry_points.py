"""Hostile HTTP answers through every entry point that talks to a bot (issue 10, 1.1).

The same table of misbehaving answers (nested JSON, huge numbers, invalid UTF-8, NUL bytes,
lone surrogates, duplicate keys, the 64 KiB cap and one byte over, bad chunk sizes, HTTP/1.0
without a length, lying ``Content-Length``, 1xx and 101 answers, ``text/html``, hostile melds
and cards) is served by a real loopback bot, on ``POST /act`` or on ``GET /``, to
``gin-arena match``, ``gin-arena bot check``, ``gin-arena bot register`` and the API's
``POST /api/v1/bots`` and ``POST /api/v1/bots/{id}/check``. Each must come out as a fault (or
an action, or a refused check), never an exception, a traceback or a 500.
"""

from __future__ import annotations

import functools
import itertools
import json
import shutil
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import msgspec
import pytest
from loopback import HttpMessage, LoopbackServer, http_response

import arena.services.bots
from arena.api import close_app, create_app
from arena.bots.check import check_bot
from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.bots.strategies import greedy
from arena.cards import CARDS
from arena.cli import main
from arena.db.session import Database
from arena.playing.match import play_match
from arena.protocol.http_player import HttpPlayer
from arena.protocol.transport import MAX_BODY
from arena.protocol.wire import PROTOCOL_VERSION, ActRequest
from arena.rules.ruleset import RuleSet
from arena.settings import Settings

_act = msgspec.json.Decoder(ActRequest)
_encode = msgspec.json.Encoder().encode


def padded(body: bytes, size: int) -> bytes:
    return body + b" " * (size - len(body))


#: name -> the whole HTTP answer, given the good JSON body (the greedy action, or bot info).
ANSWERS: dict[str, Callable[[bytes], bytes]] = {
    "nested_1000": lambda g: http_response(
        b'{"action":"pass","x":' + b"[" * 1000 + b"]" * 1000 + b"}"
    ),
    "nested_100k": lambda g: http_response(
        b'{"action":"pass","x":' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    ),
    "nested_under_cap": lambda g: http_response(b"[" * 32_000 + b"]" * 32_000),
    "huge_float": lambda g: http_response(g[:-1] + b',"x":1e999999}'),
    "int_of_60k_digits": lambda g: http_response(g[:-1] + b',"x":' + b"9" * 60_000 + b"}"),
    "huge_int_card": lambda g: http_response(b'{"action":"discard","card":' + b"9" * 60_000 + b"}"),
    "invalid_utf8": lambda g: http_response(g[:-1] + b',"x":"\xff\xfe"}'),
    "nul_byte": lambda g: http_response(g[:-1] + b',"x":"\x00"}'),
    "nul_escape": lambda g: http_response(g[:-1] + b',"x":"\\u0000"}'),
    "lone_surrogate": lambda g: http_response(g[:-1] + b',"x":"\\ud800"}'),
    "surrogate_card": lambda g: http_response(b'{"action":"discard","card":"\\ud800"}'),
    "duplicate_keys": lambda g: http_response(g[:-1] + b',"action":"knock"}'),
    "exactly_the_cap": lambda g: http_response(padded(g, MAX_BODY)),
    "one_byte_over_the_cap": lambda g: http_response(padded(g, MAX_BODY + 1)),
    "bad_chunk_size": lambda g: (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n" + g + b"\r\n0\r\n\r\n"
    ),
    "chunk_size_overflow": lambda g: (
        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n" + b"f" * 20 + b"\r\n" + g
    ),
    "http_1_0_without_length": lambda g: b"HTTP/1.0 200 OK\r\n\r\n" + g,
    "content_length_short": lambda g: (
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(g) - 3, g)
    ),
    "content_length_long": lambda g: (
        b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(g) + 30, g)
    ),
    "content_length_negative": lambda g: b"HTTP/1.1 200 OK\r\nContent-Length: -5\r\n\r\n" + g,
    "100_continue_first": lambda g: b"HTTP/1.1 100 Continue\r\n\r\n" + http_response(g),
    "103_early_hints_first": lambda g: (
        b"HTTP/1.1 103 Early Hints\r\nLink: </a>\r\n\r\n" + http_response(g)
    ),
    "101_switching_protocols": lambda g: (
        b"HTTP/1.1 101 Switching Protocols\r\nUpgrade: h2c\r\nConnection: Upgrade\r\n\r\n"
        + http_response(g)
    ),
    "204_no_content": lambda g: b"HTTP/1.1 204 No Content\r\n\r\n",
    "text_html_json": lambda g: http_response(g, content_type="text/html"),
    "text_html_page": lambda g: http_response(
        b"<html><body>hello</body></html>", content_type="text/html"
    ),
    "error_page_with_nul": lambda g: (
        b"HTTP/1.1 500 Oops\r\nContent-Length: 9\r\n\r\n\x00\xff\xed\xa0\x80boom"
    ),
    "knock_with_an_empty_meld": lambda g: http_response(
        b'{"action":"knock","card":"As","melds":[["As","2s","3s"],[]]}'
    ),
    "melds_object": lambda g: http_response(b'{"action":"knock","card":"As","melds":{}}'),
    "melds_null": lambda g: http_response(b'{"action":"knock","card":"As","melds":null}'),
    "card_a_number": lambda g: http_response(b'{"action":"discard","card":10}'),
    "empty_body": lambda g: http_response(b""),
    "not_http": lambda g: g,
}
#: Not hostile: the answer as it should be (a bot turns hostile by changing its mode).
SOUND = {"sound": http_response}


def _not_held(obs: ActRequest, n: int) -> list[str]:
    return [str(c) for c in CARDS if str(c) not in obs.hand][:n]


def _takes_then(knock: Callable[[ActRequest], object]) -> Callable[[ActRequest], object]:
    """Take every discard it may; at each discard, answer ``knock(obs)`` (JSON-able)."""

    def act(obs: ActRequest) -> object:
        if obs.phase == "discard":
            return knock(obs)
        if any(a.action == "take_discard" for a in obs.legal_actions):
            return {"action": "take_discard"}
        return msgspec.to_builtins(greedy(obs))

    return act


#: name -> a hostile knock at every discard (a real hand in the discard phase, not a wrong
#: phase): each must be a fault (or a misknock, a rules event), never an exception.
KNOCKS: dict[str, Callable[[ActRequest], object]] = {
    "knock_with_the_card_just_taken": _takes_then(
        lambda o: {"action": "knock", "card": o.taken_card or o.hand[0]}
    ),
    "melds_with_a_duplicate_card": _takes_then(
        lambda o: {"action": "knock", "card": o.hand[0], "melds": [[o.hand[1]] * 3]}
    ),
    "melds_with_cards_not_in_hand": _takes_then(
        lambda o: {"action": "knock", "card": o.hand[0], "melds": [_not_held(o, 3)]}
    ),
    "melds_with_an_empty_meld": _takes_then(
        lambda o: {"action": "knock", "card": o.hand[0], "melds": [o.hand[1:4], []]}
    ),
    "melds_an_empty_object": _takes_then(
        lambda o: {"action": "knock", "card": o.hand[0], "melds": {}}
    ),
    "melds_the_knock_card": _takes_then(
        lambda o: {"action": "knock", "card": o.hand[0], "melds": [o.hand[0:3]]}
    ),
    "big_gin_with_a_card": _takes_then(lambda o: {"action": "big_gin", "card": o.hand[0]}),
}


class HostileBot(LoopbackServer):
    """A loopback bot answering ``/act`` (``where="act"``) or ``GET /`` (``"info"``) with
    ``ANSWERS[mode]``, and soundly otherwise (the greedy house strategy)."""

    def __init__(self, mode: str, where: str = "act") -> None:
        super().__init__(f"hostile-{mode}")
        self.mode, self.where = mode, where

    def _answer(self, head: bytes, body: bytes) -> bytes:
        if self.mode in KNOCKS and head.startswith(b"POST /act "):
            return http_response(_encode(KNOCKS[self.mode](_act.decode(body))))
        hostile = {**ANSWERS, **SOUND}.get(self.mode, SOUND["sound"])
        if head.startswith(b"GET "):
            info = json.dumps({"protocol": PROTOCOL_VERSION, "name": "hostile"}).encode()
            return hostile(info) if self.where == "info" else http_response(info)
        if head.startswith(b"POST /act "):
            good = _encode(greedy(_act.decode(body)))
            return hostile(good) if self.where == "act" else http_response(good)
        return hostile(b"{}") if self.where == "start" else http_response(b"{}")

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        conn.sendall(self._answer(request.head, request.body))
        # After these the connection's end is the body's end.
        return self.mode not in ("http_1_0_without_length", "not_http")

    def __enter__(self) -> HostileBot:
        return self.start()

    def __exit__(self, *_: object) -> None:
        self.stop()


CASES = [(m, w) for m in ANSWERS for w in ("act", "info")] + [(m, "act") for m in KNOCKS]
IDS = [f"{m}-on-{w}" for m, w in CASES]


@pytest.fixture(scope="module")
def house_url() -> Iterator[str]:
    server = house_bot("greedy", name="house-greedy")
    server.start()
    yield server.url
    server.stop()


def run_cli(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str, str]:
    """``gin-arena ARGV`` in this process: exit code, stdout, stderr (an exception fails)."""
    code = main(list(argv))
    out, err = capsys.readouterr()
    return code, out, err


def one_line_error(err: str) -> bool:
    lines = [line for line in err.splitlines() if line.startswith("gin-arena: error: ")]
    return len(lines) == 1 and "Traceback" not in err


def test_a_101_upgrade_answer_is_a_status_fault_not_a_crash(house_url: str) -> None:
    """httptools raises ``HttpParserUpgrade`` (not an ``HttpParserError``) on a 101: it escaped
    the transport, and ``gin-arena match`` died with a traceback."""
    with HostileBot("101_switching_protocols") as bot:
        players = [HttpPlayer(u, allow_loopback=True) for u in (bot.url, house_url)]
        record = play_match(players, RuleSet(target=30, best_of=1), seed=1, match_id="up")
    assert record.forfeit is not None and record.forfeit[0] == 0
    assert {f.kind for f in record.faults} == {"status"}
    assert "HTTP 101" in record.faults[0].detail


@pytest.mark.parametrize(("mode", "where"), CASES, ids=IDS)
def test_gin_arena_match_turns_any_hostile_answer_into_a_fault_or_one_line(
    capsys: pytest.CaptureFixture[str], house_url: str, mode: str, where: str
) -> None:
    with HostileBot(mode, where) as bot:
        url = bot.url
        code, out, err = run_cli(
            capsys, "match", "--seed", "1", "--quiet", "--rule", "target=30",
            "--rule", "best_of=1", bot.url, house_url,
        )  # fmt: skip
    assert "Traceback" not in err
    if code == 2:  # GET / did not give bot info: one line naming the URL, no record
        assert where == "info" and one_line_error(err) and url in err, err
        return
    assert code == 0, err
    record = json.loads(out)
    kinds = {f["kind"] for f in record["faults"]}
    assert record["winner"] in ("a", "b")
    if record["forfeit"] is not None:
        assert record["forfeit"]["seat"] == "a" and record["winner"] == "b"
    assert "\x00" not in json.dumps(record["faults"])  # escaped, not raw
    assert kinds <= {
        "bad_json", "schema", "illegal_action", "status", "connection", "timeout",
        "body_too_large",
    }  # fmt: skip


@pytest.mark.parametrize(("mode", "where"), CASES, ids=IDS)
def test_bot_check_reports_any_hostile_answer_as_a_failed_item(
    capsys: pytest.CaptureFixture[str], mode: str, where: str
) -> None:
    with HostileBot(mode, where) as bot:
        # A short deadline and few latency repeats: a bot that never finishes its answer
        # (content_length_long) would otherwise cost 43 timeouts of a second each.
        code, out, err = run_cli(
            capsys, "bot", "check", bot.url, "--deadline-ms", "250", "--repeats", "3"
        )
    assert "Traceback" not in out + err
    assert code in (0, 1), out + err
    assert ("RESULT: PASS" in out) == (code == 0), out
    if code == 1:
        assert "[FAIL]" in out
    assert "\x00" not in out


@pytest.mark.parametrize(("mode", "where"), CASES, ids=IDS)
def test_bot_register_refuses_or_registers_any_hostile_bot_in_one_line(
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
    tmp_path: Path,
    mode: str,
    where: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("ARENA_ALLOW_LOOPBACK", "1")
    monkeypatch.setenv("ARENA_DATABASE_URL", f"sqlite:///{tmp_path / 'arena.db'}")
    assert run_cli(capsys, "db", "upgrade")[0] == 0
    with HostileBot(mode, where) as bot:
        code, out, err = run_cli(capsys, "bot", "register", "hostile", bot.url)
    assert "Traceback" not in out + err
    if code == 0:
        assert "registered" in out
    else:
        assert code == 2 and one_line_error(err), err
        assert "did not pass the registration check" in err and "\x00" not in err


# --- the API: registration and the on-demand check --------------------------------------------


@pytest.fixture(scope="module")
def api_client(tmp_path_factory: pytest.TempPathFactory, sqlite_template: Path) -> Iterator[Any]:
    """The API over a fresh SQLite database (loopback bots allowed, no rate limit)."""
    path = tmp_path_factory.mktemp("hostile-api") / "arena.db"
    shutil.copy(sqlite_template, path)
    url = f"sqlite:///{path}"
    db = Database(url)
    settings = Settings(database_url=url, allow_loopback=True, rate_limit="")
    app = create_app(settings, db=db)  # local settings: submitted matches stay pending
    app.config["TESTING"] = True
    try:
        yield app.test_client()
    finally:
        close_app(app)
        db.dispose()


_names = itertools.count()


@pytest.mark.parametrize(("mode", "where"), CASES, ids=IDS)
def test_api_registration_and_check_answer_any_hostile_bot_without_a_500(
    api_client: Any, mode: str, where: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Registration while the bot is hostile (a 201 or a 422), and ``/check`` of a bot that
    turned hostile after it was registered (a 200 report or a 422), never a 500."""
    # A short deadline, as for `bot check` above: a bot that never finishes its answer
    # (content_length_long) would otherwise cost 30 timeouts of a second each.
    monkeypatch.setattr(
        arena.services.bots, "check_bot", functools.partial(check_bot, deadline_ms=250)
    )
    with HostileBot(mode, where) as bot:
        response = api_client.post(
            "/api/v1/bots", json={"name": f"hostile-{next(_names)}", "url": bot.url, "owner": "o"}
        )
        assert response.status_code in (201, 422), response.get_data(as_text=True)
        assert "\x00" not in response.get_data(as_text=True)
        bot.mode = "sound"
        registered = api_client.post(
            "/api/v1/bots", json={"name": f"turns-{next(_names)}", "url": bot.url, "owner": "o"}
        )
        assert registered.status_code == 201, registered.json
        bot.mode = mode
        check = api_client.post(
            f"/api/v1/bots/{registered.json['id']}/check",
            headers={"Authorization": f"Bearer {registered.json['token']}"},
        )
    assert check.status_code in (200, 422), check.get_data(as_text=True)
    assert "\x00" not in check.get_data(as_text=True)


def test_a_bot_name_with_terminal_escapes_is_shown_escaped_by_gin_arena_match(
    capsys: pytest.CaptureFixture[str], house_url: str
) -> None:
    """The bot names itself in ``GET /``: ``gin-arena match`` printed that name to the terminal
    as it came, so a bot could send escape sequences (colour, clearing the screen, a title)."""
    evil = BotServer(greedy, name="evil\x1b[2J\x1b]0;owned\x07\x00" + "x" * 500, author="t")
    evil.start()
    try:
        code, out, err = run_cli(
            capsys, "match", "--seed", "1", "--rule", "target=30", "--rule", "best_of=1",
            evil.url, house_url,
        )  # fmt: skip
    finally:
        evil.stop()
    assert code == 0
    assert not any(c in err for c in "\x1b\x07\x00"), err[:300]
    assert "evil\\x1b[2J" in err
    assert max(len(line) for line in err.splitlines()) < 200
    assert json.loads(out)["players"]["a"].startswith("evil\\x1b[2J")


def test_two_bots_that_both_fail_their_start_are_one_line_not_a_double_forfeit(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """Both answer ``GET /`` and then fail ``POST /start``: ``gin-arena match`` printed a record
    scoring a loss for both (exit 0); now nothing is played and one line names both URLs."""
    with HostileBot("204_no_content", "start") as a, HostileBot("204_no_content", "start") as b:
        urls = a.url, b.url
        code, out, err = run_cli(capsys, "match", "--seed", "1", "--quiet", *urls)
    assert (code, out) == (2, "")
    assert one_line_error(err) and all(u in err for u in urls), err
    assert "neither player could be started" in err
