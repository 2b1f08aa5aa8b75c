"""The CLI as a user meets it, run for real in subprocesses: every user error is one line and
exit status 2, never a traceback; Ctrl-C ends a long-running command quietly; ``match`` against
a URL with no bot is an error naming the URL, not a forfeit; its progress is numbered and
named as the record is, and not wrapped; read-only commands never create a database."""

from __future__ import annotations

import json
import os
import pty
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from io import StringIO
from pathlib import Path

import pytest
from rich.console import Console
from sqlalchemy import select

from arena.bots.house import house_bot
from arena.bots.sdk import BotServer
from arena.db.migrate import upgrade
from arena.db.models import MatchRow, TournamentRow
from arena.db.session import Database
from arena.reading.progress import watch_tournament
from arena.services.bots import register_bot
from arena.services.tournaments import create_tournament
from arena.states import MatchStatus, TournamentStatus

GIN_ARENA = Path(sys.executable).with_name("gin-arena")
START_TIMEOUT_S = 120.0


def _env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env.update(extra)
    return env


def run(cwd: Path, *argv: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(GIN_ARENA), *argv],
        cwd=cwd,
        env=_env(**env),
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


def one_line_error(done: subprocess.CompletedProcess[str], *fragments: str) -> str:
    err = done.stderr.strip()
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode == 2, (done.returncode, done.stderr)
    assert len(err.splitlines()) == 1, err
    assert err.startswith("gin-arena: error: "), err
    for fragment in fragments:
        assert fragment in err, err
    return err


@pytest.fixture
def busy_port() -> Iterator[int]:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        yield sock.getsockname()[1]


@pytest.fixture
def bots() -> Iterator[tuple[BotServer, BotServer]]:
    a = house_bot("greedy", name="greedy-one", seed=1).start()
    b = house_bot("random", name="random-two", seed=2).start()
    try:
        yield a, b
    finally:
        a.stop()
        b.stop()


def test_serve_on_a_busy_port_is_one_line(tmp_path: Path, busy_port: int) -> None:
    done = run(tmp_path, "serve", "--port", str(busy_port))
    one_line_error(done, f"cannot listen on 127.0.0.1:{busy_port}", "in use")


@pytest.mark.parametrize(
    "argv",
    [
        ("serve", "--port", "-1"),
        ("serve", "--port", "99999"),
        ("bot", "serve", "--kind", "random", "--port", "99999"),
        ("demo", "--port", "70000"),
    ],
    ids=["serve-negative", "serve-too-big", "bot-serve-too-big", "demo-too-big"],
)
def test_an_out_of_range_port_is_refused_not_replaced(tmp_path: Path, argv: tuple[str]) -> None:
    done = run(tmp_path, *argv)
    one_line_error(done, "--port must be 0 to 65535")
    assert "serving" not in done.stderr and "listening" not in done.stderr
    assert not (tmp_path / "arena.db").exists()


def test_a_gevent_worker_with_beat_is_refused_in_one_line(tmp_path: Path) -> None:
    """Celery runs no beat in a gevent worker: refused before any worker starts."""
    argv = ("worker", "--pool", "gevent", "--beat")
    done = run(tmp_path, *argv, ARENA_BROKER_URL="redis://127.0.0.1:6379/15")
    one_line_error(done, "--beat needs the threads pool", "--beat --queues control")
    assert "celery@" not in done.stdout + done.stderr


@pytest.mark.parametrize("host", ["203.0.113.7", "no-such-host.invalid"])
def test_serve_on_a_host_it_cannot_bind_is_one_line(tmp_path: Path, host: str) -> None:
    one_line_error(run(tmp_path, "serve", "--host", host, "--port", "0"), "cannot listen on")


@pytest.mark.parametrize(
    "argv",
    [
        ("bot", "serve", "--kind", "random", "--port", "0", "--secret", "s3cret"),
        ("bot", "serve", "--kind", "random", "--port", "0", "--secret", "whsec_AAAA"),
        ("bot", "check", "http://127.0.0.1:9", "--secret", "whsec_!!"),
        ("match", "http://127.0.0.1:9", "http://127.0.0.1:9", "--seed", "1", "--secret-a", "x"),
        ("bot", "register", "x", "http://127.0.0.1:9", "--secret", "nope"),
    ],
    ids=["bot-serve-no-prefix", "bot-serve-short", "bot-check", "match", "bot-register"],
)
def test_a_malformed_secret_is_one_line(tmp_path: Path, argv: tuple[str]) -> None:
    one_line_error(run(tmp_path, *argv), "secret")


@pytest.mark.parametrize(
    "url", ["mysql://arena:pw@127.0.0.1/arena", "oracle://arena:pw@db/arena", "not a url"]
)
def test_an_unsupported_database_url_is_one_line(tmp_path: Path, url: str) -> None:
    err = one_line_error(run(tmp_path, "serve", "--port", "0", ARENA_DATABASE_URL=url))
    assert "ARENA_DATABASE_URL" in err and "pw" not in err


def _spawn(cwd: Path, *argv: str, **env: str) -> subprocess.Popen[str]:
    """Start a long-running command in its own process group (as a terminal's foreground job)."""
    return subprocess.Popen(
        [str(GIN_ARENA), *argv],
        cwd=cwd,
        env=_env(**env),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )


def _start(cwd: Path, *argv: str, ready: str) -> tuple[subprocess.Popen[str], str]:
    """:func:`_spawn` the command; wait for ``ready`` on stderr."""
    proc = _spawn(cwd, *argv, COLUMNS="200")
    assert proc.stderr is not None
    seen = ""
    deadline = time.monotonic() + START_TIMEOUT_S
    while ready not in seen:
        line = proc.stderr.readline()
        if not line and proc.poll() is not None:
            pytest.fail(f"exited with {proc.returncode} before {ready!r}:\n{seen}")
        seen += line
        assert time.monotonic() < deadline, seen
    return proc, seen


def _wait_for_matches(
    db: Database, proc: subprocess.Popen[str], until: Callable[[set[MatchStatus]], bool]
) -> None:
    """Poll the statuses of the command's matches until ``until`` holds of them; the command
    must keep running meanwhile."""
    deadline = time.monotonic() + START_TIMEOUT_S
    while True:
        with db.session() as session:
            statuses = set(session.scalars(select(MatchRow.status)))
        if until(statuses):
            return
        assert proc.poll() is None and time.monotonic() < deadline, statuses
        time.sleep(0.02)


def _ctrl_c(proc: subprocess.Popen[str]) -> tuple[int, str]:
    """What a terminal's Ctrl-C does: SIGINT to every process of the foreground group."""
    os.killpg(proc.pid, signal.SIGINT)
    _, err = proc.communicate(timeout=120)
    return proc.returncode, err


def test_serve_announces_the_port_it_listens_on_and_ctrl_c_is_quiet(tmp_path: Path) -> None:
    proc, seen = _start(tmp_path, "serve", "--port", "0", ready="serving ")
    url = seen.split("serving ", 1)[1].split()[0]
    assert not url.endswith(":0/"), url
    with socket.create_connection(("127.0.0.1", int(url.rstrip("/").rsplit(":", 1)[1]))):
        pass
    code, err = _ctrl_c(proc)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 0, err


def test_demo_ctrl_c_while_serving_is_quiet(tmp_path: Path) -> None:
    argv = ["demo", "--port", "0", "--seed", "3", "--format", "round_robin"]
    argv += ["--rule", "target=60", "--rule", "best_of=1"]
    proc, _ = _start(tmp_path, *argv, ready="pages: ")
    code, err = _ctrl_c(proc)
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 0, err


def test_demo_ctrl_c_during_the_tournament_is_one_line(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path, "demo", "--port", "0", "--seed", "3", ready="tournament 1:")
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:  # Ctrl-C with matches being played, not before the first one
        _wait_for_matches(db, proc, lambda s: {MatchStatus.FINISHED, MatchStatus.RUNNING} <= s)
        code, err = _ctrl_c(proc)
        with db.session() as session:
            tournament = session.get_one(TournamentRow, 1)
            assert tournament.status is TournamentStatus.CANCELLED  # a demo cut short ends
    finally:
        db.dispose()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 130 and err.rstrip().endswith("\ngin-arena: interrupted"), (code, err)


def test_tournament_start_ctrl_c_stops_the_local_workers_quietly(tmp_path: Path) -> None:
    servers = [house_bot("strong", name=f"strong-{i}", seed=i).start() for i in range(4)]
    try:
        assert run(tmp_path, "db", "upgrade").returncode == 0
        for i, server in enumerate(servers):
            done = run(tmp_path, "bot", "register", f"s{i}", server.url, ARENA_ALLOW_LOOPBACK="1")
            assert done.returncode == 0, done.stderr
        assert run(tmp_path, "tournament", "create").stdout.strip() == "1"
        proc = _spawn(tmp_path, "tournament", "start", "1", ARENA_ALLOW_LOOPBACK="1")
        db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
        try:  # Ctrl-C while matches are being played
            _wait_for_matches(db, proc, lambda s: MatchStatus.RUNNING in s)
        finally:
            db.dispose()
        code, err = _ctrl_c(proc)
    finally:
        for server in servers:
            server.stop()
    assert "Traceback" not in err and "KeyboardInterrupt" not in err, err
    assert code == 130 and err.rstrip().endswith("\ngin-arena: interrupted"), (code, err)


def test_bot_serve_ctrl_c_is_quiet(tmp_path: Path) -> None:
    proc, _ = _start(tmp_path, "bot", "serve", "--kind", "random", "--port", "0", ready="listen")
    code, err = _ctrl_c(proc)
    assert "Traceback" not in err, err
    assert code == 0, err


@pytest.mark.parametrize("dead", ["a", "b"])
def test_match_against_a_url_with_no_bot_names_it_and_fails(
    tmp_path: Path, bots: tuple[BotServer, BotServer], dead: str
) -> None:
    with socket.socket() as placeholder:  # a port nothing listens on
        placeholder.bind(("127.0.0.1", 0))
        nowhere = f"http://127.0.0.1:{placeholder.getsockname()[1]}"
    urls = [bots[0].url, nowhere] if dead == "b" else [nowhere, bots[1].url]
    done = run(tmp_path, "match", *urls, "--seed", "1")
    one_line_error(done, nowhere)
    assert done.stdout == ""  # no forfeit record


def test_match_progress_is_numbered_and_named_as_the_record_and_not_wrapped(
    tmp_path: Path, bots: tuple[BotServer, BotServer]
) -> None:
    done = run(
        tmp_path,
        "match",
        bots[0].url,
        bots[1].url,
        "--seed",
        "4",
        "--rule",
        "best_of=3",
        "--rule",
        "target=60",
    )
    assert done.returncode == 0, done.stderr
    record = json.loads(done.stdout)
    assert record["players"] == {"a": "greedy-one", "b": "random-two"}
    assert f"a: greedy-one at {bots[0].url}" in done.stderr
    shown = [
        tuple(int(n) for n in line.split(":", 1)[0].split()[1::2])
        for line in done.stderr.splitlines()
        if line.startswith("game ")
    ]
    recorded = [(g["index"], h["index"]) for g in record["games"] for h in g["hands"]]
    assert shown == recorded and shown[0] == (0, 0)
    summaries = [
        int(line.split()[1].rstrip(":"))
        for line in done.stderr.splitlines()
        if line.startswith("Game ")
    ]
    assert summaries == [g["index"] for g in record["games"]]
    assert any(len(line) > 80 for line in done.stderr.splitlines()), "nothing long to check"
    assert all(not line.startswith(" ") for line in done.stderr.splitlines()), done.stderr


@pytest.mark.parametrize(
    "argv", [("tournament", "status", "1"), ("tournament", "cancel", "1"), ("bot", "list")]
)
def test_read_only_commands_in_an_empty_directory_create_no_database(
    tmp_path: Path, argv: tuple[str]
) -> None:
    one_line_error(run(tmp_path, *argv), "no database at", "gin-arena db upgrade")
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize("challenger", ["bob", "2"])
def test_the_gauntlet_challenger_is_a_bot_name_or_id(tmp_path: Path, challenger: str) -> None:
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        assert run(tmp_path, "db", "upgrade").returncode == 0
        for name in ("alice", "bob", "carol"):
            register_bot(db, name=name, owner="o", url="http://127.0.0.1:9")
    finally:
        db.dispose()
    done = run(
        tmp_path,
        "tournament",
        "create",
        "--format",
        "gauntlet",
        "--option",
        f"challenger={challenger}",
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "1"
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        with db.session() as session:
            assert session.get_one(TournamentRow, 1).options["challenger"] == "2"  # bob's id
    finally:
        db.dispose()
    one_line_error(
        run(tmp_path, "tournament", "create", "--format", "gauntlet", "--option", "challenger=zed"),
        "no bot named 'zed'",
    )


def test_bot_register_then_list(tmp_path: Path, bots: tuple[BotServer, BotServer]) -> None:
    refused = run(tmp_path, "bot", "register", "greedy", bots[0].url)
    one_line_error(refused, "ARENA_ALLOW_LOOPBACK=1")
    done = run(
        tmp_path,
        "bot",
        "register",
        "greedy",
        bots[0].url,
        "--owner",
        "ann@example.org",
        ARENA_ALLOW_LOOPBACK="1",
    )
    assert done.returncode == 0, done.stderr
    assert f"bot 1 'greedy' registered at {bots[0].url}" in done.stdout
    assert "gat_" in done.stdout and "whsec_" in done.stdout
    again = run(tmp_path, "bot", "register", "greedy", bots[1].url, ARENA_ALLOW_LOOPBACK="1")
    one_line_error(again, "already exists")
    listed = run(tmp_path, "bot", "list", "--json")
    assert listed.returncode == 0, listed.stderr
    rows = json.loads(listed.stdout)
    assert [(r["id"], r["name"], r["status"], r["owner"], r["url"]) for r in rows] == [
        (1, "greedy", "active", "ann@example.org", bots[0].url)
    ]


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        (("match", "http://127.0.0.1:9", "http://127.0.0.1:9"), "required: --seed"),
        (("bot", "serve"), "required: --kind"),
        (("serve", "--port", "abc"), "invalid int value: 'abc'"),
        (("frob",), "invalid choice: 'frob'"),
        (("worker", "--pool", "prefork"), "invalid choice: 'prefork'"),
        ((), "required: COMMAND"),
    ],
    ids=[
        "match-no-seed",
        "bot-serve-no-kind",
        "port-not-a-number",
        "no-such-command",
        "worker-unknown-pool",
        "none",
    ],
)
def test_a_mistyped_command_line_is_one_line_not_a_usage_block(
    tmp_path: Path, argv: tuple[str], fragment: str
) -> None:
    done = run(tmp_path, *argv)
    err = done.stderr.strip()
    assert done.returncode == 2 and "Traceback" not in err, done.stderr
    assert len(err.splitlines()) == 1 and "usage:" not in err, err
    assert err.startswith("gin-arena") and ": error: " in err and fragment in err, err
    assert err.endswith("--help`)"), err  # says where to read how to type it


@pytest.mark.parametrize(
    ("variable", "value", "fragment"),
    [
        ("ARENA_ALLOW_LOOPBACK", "yes", "ARENA_ALLOW_LOOPBACK: must be 1 or 0 (or true or false)"),
        ("ARENA_ELO_K", "abc", "ARENA_ELO_K: must be a number, not 'abc'"),
        ("ARENA_ELO_K", "nan", "ARENA_ELO_K must be a number above 0"),
        ("ARENA_ELO_K", "-5", "ARENA_ELO_K must be a number above 0"),
        ("ARENA_WORKER_THREADS", "2.5", "ARENA_WORKER_THREADS: must be a whole number, not '2.5'"),
        ("ARENA_PROVISIONAL_MATCHES", "-1", "ARENA_PROVISIONAL_MATCHES must be 0 or more"),
        ("ARENA_ALOW_LOOPBACK", "1", "did you mean ARENA_ALLOW_LOOPBACK?"),
        ("ARENA_DATABASE_UR", "sqlite:///x.db", "did you mean ARENA_DATABASE_URL?"),
    ],
)
def test_a_bad_or_misspelt_setting_is_one_line_naming_it_not_a_silent_default(
    tmp_path: Path, variable: str, value: str, fragment: str
) -> None:
    one_line_error(run(tmp_path, "bot", "list", **{variable: value}), fragment)
    assert list(tmp_path.iterdir()) == []


def test_the_last_progress_line_ends_before_what_follows_when_not_a_terminal(
    tmp_path: Path,
) -> None:
    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        upgrade(db)
        ids = [register_bot(db, name=n, owner="o", url="http://127.0.0.1:9").bot_id for n in "ab"]
        tournament_id = create_tournament(db, name="t", format_name="round_robin", bot_ids=ids)
        out = StringIO()
        watch_tournament(db, tournament_id, Console(file=out, soft_wrap=True), poll_s=0)
    finally:
        db.dispose()
    assert out.getvalue().startswith("created") and out.getvalue().endswith(" s\n"), out.getvalue()


@pytest.mark.parametrize("command", ["match", "bot check"])
def test_a_bot_still_starting_on_the_line_before_is_waited_for_not_refused(
    tmp_path: Path, bots: tuple[BotServer, BotServer], command: str
) -> None:
    """The README starts a bot with ``&`` and runs ``match`` / ``bot check`` on the next line:
    pasted as a block, the bot may not listen yet. The command waits (it says so on a terminal,
    which is how this test knows it is waiting), then plays."""
    with socket.socket() as placeholder:  # a free port: connections to it are refused
        placeholder.bind(("127.0.0.1", 0))
        port = placeholder.getsockname()[1]
    late = f"http://127.0.0.1:{port}"
    if command == "match":
        argv = ["match", bots[0].url, late, "--seed", "1", "--rule", "best_of=1"]
        argv += ["--rule", "target=60", "--wait", "600"]
    else:
        argv = ["bot", "check", late, "--repeats", "1", "--wait", "600"]
    leader, follower = pty.openpty()  # stderr on a terminal
    proc = subprocess.Popen(
        [str(GIN_ARENA), *argv],
        cwd=tmp_path,
        env=_env(COLUMNS="200"),
        stdout=subprocess.PIPE,
        stderr=follower,
        text=True,
    )
    os.close(follower)
    seen = b""
    server: BotServer | None = None
    try:
        while b"waiting up to 600 s for a bot at " + late.encode() not in seen:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the terminal closed: the command ended without waiting
                chunk = b""
            if not chunk:
                proc.wait(timeout=60)
                pytest.fail(f"exited with {proc.returncode} without waiting:\n{seen.decode()}")
            seen += chunk
        server = house_bot("strong", name="late-starter", port=port).start()  # binds now
        out, _ = proc.communicate(timeout=300)
    finally:
        if server is not None:
            server.stop()
        os.close(leader)
        if proc.poll() is None:
            proc.kill()
            proc.wait(timeout=60)
    assert proc.returncode == 0, out
    if command == "match":
        assert json.loads(out)["players"] == {"a": "greedy-one", "b": "late-starter"}
    else:
        assert "RESULT: PASS" in out, out
