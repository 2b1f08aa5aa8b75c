"""The CLI on a database it cannot use: one line saying what to do, never a stack trace, and
never a database created by a command that only reads (`replay`, `sweep`, `serve` on a server
database)."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main
from arena.db.migrate import head_revision, upgrade
from arena.db.session import Database
from arena.db.urls import shown_url

#: Nothing listens on port 1 of the loopback: the connection is refused at once.
UNREACHABLE_PG = "postgresql+psycopg://arena:s3cret@127.0.0.1:1/arena"


def run(
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    url: str,
    *argv: str,
) -> tuple[int, str]:
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    code = main(list(argv))
    err = capsys.readouterr().err
    assert "Traceback" not in err
    return code, err


@pytest.mark.parametrize("argv", [("replay", "1"), ("sweep",)])
def test_a_missing_sqlite_file_is_named_and_not_created(
    argv: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "nowhere.db"
    code, err = run(monkeypatch, capsys, f"sqlite:///{path}", *argv)
    assert code == 2
    assert f"no database at {path}" in err
    assert not path.exists()


@pytest.mark.parametrize("argv", [("replay", "1"), ("sweep",)])
def test_a_database_without_the_schema_says_run_db_upgrade(
    argv: tuple[str, ...],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    path = tmp_path / "empty.db"
    path.touch()
    code, err = run(monkeypatch, capsys, f"sqlite:///{path}", *argv)
    assert code == 2
    assert "has no gin-arena schema yet: run `gin-arena db upgrade`" in err


def test_an_older_schema_names_both_revisions(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'old.db'}"
    db = Database(url)
    upgrade(db, "0001")
    db.dispose()
    code, err = run(monkeypatch, capsys, url, "replay", "1")
    assert code == 2
    assert f"has schema revision 0001, this version of gin-arena needs {head_revision()}" in err


def test_after_db_upgrade_the_command_runs(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    url = f"sqlite:///{tmp_path / 'new.db'}"
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    assert main(["db", "upgrade"]) == 0
    assert f"schema empty -> {head_revision()}" in capsys.readouterr().out
    code, err = run(monkeypatch, capsys, url, "replay", "1")
    assert (code, err.strip()) == (2, "gin-arena: error: no match 1")


@pytest.mark.parametrize(
    "argv", [("replay", "1"), ("sweep",), ("db", "upgrade"), ("serve", "--port", "0")]
)
def test_an_unreachable_database_is_one_line_without_the_password(
    argv: tuple[str, ...], monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    code, err = run(monkeypatch, capsys, UNREACHABLE_PG, *argv)
    assert code == 1
    assert err.startswith("gin-arena: error: database: ")
    assert "Connection refused" in err or "connection refused" in err
    assert len(err.strip().splitlines()) == 1
    assert "s3cret" not in err


def test_database_urls_are_printed_without_the_password() -> None:
    assert shown_url(UNREACHABLE_PG) == "postgresql+psycopg://arena:***@127.0.0.1:1/arena"
