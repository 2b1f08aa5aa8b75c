"""Live progress of a tournament in the terminal, and its final standings table.

Reads the database only (the executor may be local processes or Celery workers elsewhere),
through :mod:`arena.reading.queries.tournaments`.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass

from rich.console import Console
from rich.live import Live
from rich.table import Table

from arena.db.session import Database
from arena.reading.queries import tournaments as tournament_queries
from arena.states import TournamentStatus

__all__ = ["Snapshot", "snapshot", "standings_table", "watch_tournament"]


@dataclass(frozen=True, slots=True)
class Snapshot:
    """Where a tournament stands: match counts by status, its status, the current leader."""

    status: TournamentStatus
    counts: Counter[str]
    leader: str | None

    @property
    def done(self) -> int:
        return self.counts["finished"]


def snapshot(db: Database, tournament_id: int) -> Snapshot:
    """Counts of the tournament's matches by status, and who leads the standings."""
    progress = tournament_queries.tournament_progress(db, tournament_id)
    return Snapshot(
        TournamentStatus(progress["status"]), Counter(progress["matches"]), progress["leader"]
    )


def _line(snap: Snapshot, elapsed: float) -> Table:
    table = Table.grid(padding=(0, 2))
    c = snap.counts
    table.add_row(
        f"[bold]{snap.status.value}[/]",
        f"done {c['finished']}",
        f"running {c['running']}",
        f"queued {c['pending']}",
        f"failed {c['failed']}",
        f"leader {snap.leader or '-'}",
        f"{elapsed:.0f} s",
    )
    return table


def watch_tournament(
    db: Database,
    tournament_id: int,
    console: Console,
    *,
    poll_s: float = 0.5,
    timeout_s: float | None = None,
) -> Snapshot:
    """Show progress until the tournament is no longer running; return the last snapshot."""
    started = time.monotonic()
    snap = snapshot(db, tournament_id)
    try:
        with Live(_line(snap, 0), console=console, refresh_per_second=4, transient=False) as live:
            while snap.status is TournamentStatus.RUNNING:
                if timeout_s is not None and time.monotonic() - started > timeout_s:
                    break
                time.sleep(poll_s)
                snap = snapshot(db, tournament_id)
                live.update(_line(snap, time.monotonic() - started))
    except KeyboardInterrupt:
        console.line()  # the next message starts on a line of its own
        raise
    if not console.is_terminal:  # rich ends the line itself only on a terminal
        console.line()
    return snap


def standings_table(db: Database, tournament_id: int) -> Table:
    """Final (or current) standings with live Elo, the fitted rating and its 95% interval."""
    view = tournament_queries.standings_with_ratings(db, tournament_id)
    table = Table(title=f"{view['name']}: {view['format']} ({view['status']})")
    for column in ("#", "bot", "score", "W-D-L", "games", "Elo", "rating (95% CI)"):
        table.add_column(column, justify="right" if column not in ("bot",) else "left")
    for s in view["standings"]:
        fit = s["rating"]
        rating = "-"
        if fit is not None:
            rating = f"{fit['rating']:.0f} ({fit['ci_low']:.0f}-{fit['ci_high']:.0f})"
            if fit["provisional"]:
                rating += " prov."
        name = s["participant"] if s["name"] is None else s["name"]
        table.add_row(
            str(s["rank"]),
            name + (" (withdrawn)" if s["withdrawn"] else ""),
            f"{s['score']:g}",
            f"{s['wins']}-{s['draws']}-{s['losses']}",
            f"{s['games_won']}-{s['games_lost']}",
            "-" if s["elo"] is None else f"{s['elo']:.0f}",
            rating,
        )
    return table
