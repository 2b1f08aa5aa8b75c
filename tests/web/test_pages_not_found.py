"""One not-found on the pages too: an arena.errors.NotFoundError raised while a page is built,
by whichever query, is the 404 page naming the resource and its key (mapped once, in the pages'
error handler), never a 500."""

from __future__ import annotations

import pytest
from web_data import make_app

from arena.db.session import Database
from arena.errors import NotFoundError
from arena.reading.queries import bots as bot_queries


def test_a_not_found_error_from_any_query_is_the_404_page_naming_it(
    db: Database, monkeypatch: pytest.MonkeyPatch
) -> None:
    def missing(*args: object, **kwargs: object) -> None:
        raise NotFoundError("tournament", 9)

    monkeypatch.setattr(bot_queries, "ratings_board", missing)
    response = make_app(db).test_client().get("/")
    assert response.status_code == 404 and response.mimetype == "text/html"
    page = response.get_data(as_text=True)
    assert "There is no tournament 9." in page and "Traceback" not in page
