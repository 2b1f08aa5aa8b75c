"""Asking the CLI for something that does not exist: a tournament, a match or a bot named on the
command line is one line saying so and exit status 2, the same for every command that takes
one, never a traceback or a database error."""

from __future__ import annotations

from pathlib import Path

import pytest

from arena.cli import main
from arena.db.migrate import upgrade
from arena.db.session import Database
from arena.services.bots import register_bot


@pytest.fixture
def empty_arena(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """An arena database with the schema, one bot (``ann``) and nothing else."""
    url = f"sqlite:///{tmp_path / 'arena.db'}"
    monkeypatch.setenv("ARENA_DATABASE_URL", url)
    monkeypatch.setenv("ARENA_WORKER_PROCESSES", "1")
    db = Database(url)
    upgrade(db)
    try:
        register_bot(db, name="ann", owner="o", url="http://127.0.0.1:9")
    finally:
        db.dispose()


def run(capsys: pytest.CaptureFixture[str], *argv: str) -> tuple[int, str]:
    code = main(list(argv))
    out, err = capsys.readouterr()
    assert out == ""
    return code, err


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (("tournament", "status", "7"), "no tournament 7"),
        (("tournament", "start", "7"), "no tournament 7"),
        (("tournament", "cancel", "7"), "no tournament 7"),
        (("replay", "7"), "no match 7"),
    ],
    ids=["tournament-status", "tournament-start", "tournament-cancel", "replay"],
)
@pytest.mark.usefixtures("empty_arena")
def test_a_missing_tournament_or_match_is_one_line_for_every_command_naming_one(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...], line: str
) -> None:
    code, err = run(capsys, *argv)
    assert (code, err) == (2, f"gin-arena: error: {line}\n")


@pytest.mark.parametrize(
    "argv",
    [
        ("tournament", "create", "--bots", "ann", "zed"),
        ("tournament", "create", "--format", "gauntlet", "--option", "challenger=zed"),
    ],
    ids=["bots", "gauntlet-challenger"],
)
@pytest.mark.usefixtures("empty_arena")
def test_a_missing_bot_on_the_command_line_is_one_line_naming_it(
    capsys: pytest.CaptureFixture[str], argv: tuple[str, ...]
) -> None:
    code, err = run(capsys, *argv)
    assert (code, err) == (2, "gin-arena: error: no bot named 'zed' (and no bot with that id)\n")
