"""Server-rendered pages: leaderboard, bots, tournaments with their brackets, matches with a
replay viewer, the ladder (:mod:`arena.web.ladder_page`), SPRT tests
(:mod:`arena.web.tests_page`), and the rules (``docs/RULES.md``).
Plain HTML and CSS with a little vanilla JavaScript, all served from here. The live pages
follow the event streams (:mod:`arena.web.live`): a running match in the viewer, step by step,
and tournaments, the ladder and the leaderboard as results arrive.

The app factory mounts :data:`bp` at ``/`` and puts the
:class:`~arena.db.session.Database` in ``app.extensions["gin_arena"]["db"]``;
:func:`error_page` renders an HTTP error as a page (for paths outside the JSON API).
"""

from arena.web import (
    ladder_page,  # noqa: F401 - registers /ladder on bp
    tests_page,  # noqa: F401 - registers /tests and /tests/{id} on bp
)
from arena.web.pages import bp, error_page

__all__ = ["bp", "error_page"]
