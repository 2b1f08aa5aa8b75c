"""The leaderboard page ranks rated bots only; bots without a rated match are listed apart,
unranked, under "Unrated" (SQLite and PostgreSQL)."""

from __future__ import annotations

import re

from sqlalchemy import update
from web_data import SHORT, make_app

from arena.db.models import MatchRow
from arena.db.session import Database
from arena.services.bots import register_bot
from arena.services.matches import schedule_match
from arena.services.ratings import refit_ratings
from arena.states import MatchStatus


def test_a_bot_without_rated_matches_is_listed_apart_not_ranked(db: Database) -> None:
    ids = [
        register_bot(db, name=name, owner="o", url="http://127.0.0.1:9").bot_id
        for name in ("veteran", "rookie", "rival")
    ]
    with db.session() as session:
        for seed in range(10):
            match = schedule_match(session, ids[0], ids[2], rules=SHORT, seed=seed)
            session.execute(
                update(MatchRow)
                .where(MatchRow.id == match.id)
                .values(status=MatchStatus.FINISHED, winner="ab"[seed % 2])
            )
    refit_ratings(db, min_matches=10)
    response = make_app(db).test_client().get("/")
    assert response.status_code == 200
    page = response.get_data(as_text=True)
    board, _, rest = page.partition("<h2>Unrated</h2>")
    assert ">veteran</a>" in board and ">rival</a>" in board
    assert ">rookie</a>" not in board, "an unrated bot is never ranked among rated ones"
    assert ">rookie</a>" in rest.partition("</ul>")[0]
    ranks = re.findall(r'<td class="num rank">(\d+)</td>', board)
    assert ranks == ["1", "2"]
