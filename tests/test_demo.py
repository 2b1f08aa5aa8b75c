"""`gin-arena demo --no-serve`, run as a user runs it: a fresh working directory (so a fresh
embedded ``arena.db``), eight house bots over HTTP, a double round robin through the local
executor, and the final standings table. One short game a match keeps it to seconds."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

from sqlalchemy import select

from arena.cli.demo import DEMO_BOTS
from arena.db.models import BotStatsRow, MatchRow
from arena.db.session import Database
from arena.services.tournaments import load_plan
from arena.states import MatchStatus, TournamentStatus

#: A standings row: rank, bot, score, W-D-L, games, Elo, rating (95% CI).
ROW = re.compile(
    r"^\W*(?P<rank>\d+)\W+(?P<bot>house-[\w-]+)\W+(?P<score>[\d.]+)\W+"
    r"(?P<w>\d+)-(?P<d>\d+)-(?P<l>\d+)\W+(?P<gw>\d+)-(?P<gl>\d+)\W+(?P<elo>\d+)\W+"
    r"(?P<rating>\d+) \((?P<low>\d+)-(?P<high>\d+)\)"
)


def gin_arena_argv() -> list[str]:
    script = Path(sys.executable).with_name("gin-arena")
    return [str(script)] if script.exists() else [sys.executable, "-m", "arena.cli"]


def test_the_demo_ends_with_a_correct_standings_table(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("ARENA_")}
    env["COLUMNS"] = "120"
    argv = [*gin_arena_argv(), "demo", "--no-serve", "--seed", "5"]
    argv += ["--rule", "target=100", "--rule", "best_of=1"]
    done = subprocess.run(
        argv, cwd=tmp_path, env=env, capture_output=True, text=True, timeout=240, check=False
    )
    output = done.stdout + done.stderr
    assert done.returncode == 0, output

    rows = [m.groupdict() for line in output.splitlines() if (m := ROW.match(line))]
    assert sorted(r["bot"] for r in rows) == sorted(name for name, _ in DEMO_BOTS), output
    for r in rows:
        assert int(r["w"]) + int(r["d"]) + int(r["l"]) == 14, r  # double round robin of 8
        assert int(r["low"]) <= int(r["rating"]) <= int(r["high"])
    ranks = [int(r["rank"]) for r in rows]
    assert ranks == sorted(ranks) and ranks[0] == 1
    assert [float(r["score"]) for r in rows] == sorted(
        (float(r["score"]) for r in rows), reverse=True
    )
    assert sum(int(r["w"]) for r in rows) == sum(int(r["l"]) for r in rows) == 56
    assert "failed 0" in output and "done 56" in output

    db = Database(f"sqlite:///{tmp_path / 'arena.db'}")
    try:
        tournament, plan = load_plan(db, 1)
        with db.session() as s:
            statuses = set(s.scalars(select(MatchRow.status)))
            played = {st.bot_id: st.matches for st in s.scalars(select(BotStatsRow))}
    finally:
        db.dispose()
    assert tournament.status is TournamentStatus.FINISHED and plan.finished
    assert statuses == {MatchStatus.FINISHED}
    assert sorted(played.values()) == [14] * 8
    assert [s.played for s in plan.standings] == [14] * 8
