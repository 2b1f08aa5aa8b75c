"""Where commands show progress: a console on stderr, so stdout keeps only the result (the
record of ``match``, the id of ``tournament create``) for a pipe or a file."""

from __future__ import annotations

from rich.console import Console

__all__ = ["progress_console"]


def progress_console() -> Console:
    """The console for progress on stderr: lines are never hard-wrapped (when stderr is a file
    or a pipe, rich would otherwise wrap at 80 columns)."""
    return Console(stderr=True, soft_wrap=True)
