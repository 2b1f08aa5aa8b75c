"""SPRT tests as the API, the pages and ``gin-arena test status`` show them.

A test's report is its stored state (rewritten whole by each advance,
:mod:`arena.services.sprt_tests`) with the numbers derived from it: the LLR's bounds, the Elo
estimate with its 95% interval and the LOS (:mod:`arena.measures.sprt`), and its matches by
pair and leg. Tests are public, as matches are; the report's ``seed`` is the stored one, and
whoever shows it passes the report through
:func:`arena.reading.embargo.redact_sprt_test` first.
"""

from __future__ import annotations

from typing import Any

from sqlalchemy import select

from arena.db.models import BotRow, BotVersionRow, MatchRow, SprtTestRow
from arena.db.session import Database
from arena.errors import NotFoundError
from arena.measures.sprt import Pentanomial, SprtParams, elo_estimate
from arena.reading.queries._rows import iso, names_by_id

__all__ = ["owner_contacts", "sprt_test_detail", "sprt_test_list", "sprt_test_sides"]


def _side(bot_id: int, name: str | None, version: BotVersionRow | None) -> dict[str, Any]:
    return {
        "id": bot_id,
        "name": name,
        "version": None if version is None else {"id": version.id, "number": version.number},
    }


def _summary(test: SprtTestRow, names: dict[int, str]) -> dict[str, Any]:
    return {
        "id": test.id,
        "status": test.status,
        "verdict": test.verdict,
        "candidate": {"id": test.candidate_id, "name": names.get(test.candidate_id)},
        "baseline": {"id": test.baseline_id, "name": names.get(test.baseline_id)},
        "elo0": test.elo0,
        "elo1": test.elo1,
        "pairs": test.pairs,
        "llr": test.llr,
        "created_at": iso(test.created_at),
        "finished_at": iso(test.finished_at),
    }


def sprt_test_list(
    db: Database, *, status: str | None = None, limit: int = 50, before: int | None = None
) -> list[dict[str, Any]]:
    """Tests, newest first (``before``: only ids below it, the keyset cursor)."""
    query = select(SprtTestRow)
    if status is not None:
        query = query.where(SprtTestRow.status == status)
    if before is not None:
        query = query.where(SprtTestRow.id < before)
    with db.session() as session:
        rows = session.scalars(query.order_by(SprtTestRow.id.desc()).limit(limit)).all()
        names = names_by_id(session, [i for t in rows for i in (t.candidate_id, t.baseline_id)])
        return [_summary(t, names) for t in rows]


def owner_contacts(db: Database, bot_ids: set[int]) -> dict[int, str]:
    """The owner contact of each of these bots (a bot that does not exist is left out), for
    the check that one owner holds both sides of a test."""
    with db.session() as session:
        rows = session.execute(select(BotRow.id, BotRow.owner).where(BotRow.id.in_(bot_ids)))
        return {bot_id: owner.strip().casefold() for bot_id, owner in rows}


def sprt_test_sides(db: Database, test_id: int) -> tuple[int, int]:
    """The candidate's and the baseline's bot ids (who may cancel the test)."""
    with db.session() as session:
        row = session.execute(
            select(SprtTestRow.candidate_id, SprtTestRow.baseline_id).where(
                SprtTestRow.id == test_id
            )
        ).first()
    if row is None:
        raise NotFoundError("test", test_id)
    return int(row[0]), int(row[1])


def sprt_test_detail(db: Database, test_id: int) -> dict[str, Any]:
    """The full report of a test (see the module docstring)."""
    with db.session() as session:
        test = session.get(SprtTestRow, test_id)
        if test is None:
            raise NotFoundError("test", test_id)
        names = names_by_id(session, [test.candidate_id, test.baseline_id])
        versions = {
            v.id: v
            for v in session.scalars(
                select(BotVersionRow).where(
                    BotVersionRow.id.in_(
                        [i for i in (test.candidate_version_id, test.baseline_version_id) if i]
                    )
                )
            )
        }
        matches = session.execute(
            select(MatchRow.id, MatchRow.match_key, MatchRow.status, MatchRow.winner)
            .where(MatchRow.test_id == test_id)
            .order_by(MatchRow.id)
        ).all()
        params = SprtParams(test.elo0, test.elo1, test.alpha, test.beta)
        estimate = elo_estimate(Pentanomial(tuple(test.pentanomial)))
        detail = _summary(test, names)
        detail.update(
            {
                "reason": test.reason,
                "candidate": _side(
                    test.candidate_id,
                    names.get(test.candidate_id),
                    versions.get(test.candidate_version_id or 0),
                ),
                "baseline": _side(
                    test.baseline_id,
                    names.get(test.baseline_id),
                    versions.get(test.baseline_version_id or 0),
                ),
                "alpha": test.alpha,
                "beta": test.beta,
                "max_pairs": test.max_pairs,
                "concurrency": test.concurrency,
                "rules": test.rules,
                # Secret while the test can still play: see arena.reading.embargo.
                "seed": test.seed,
                "bounds": {"lower": params.lower, "upper": params.upper},
                "pentanomial": list(test.pentanomial),
                "elo": None
                if estimate is None
                else {
                    "estimate": estimate.elo,
                    "ci_low": estimate.ci_low,
                    "ci_high": estimate.ci_high,
                },
                "los": None if estimate is None else estimate.los,
                "llr_history": list(test.llr_history),
                "scheduled_pairs": test.scheduled_pairs,
                "matches": [
                    {
                        "id": match_id,
                        "pair": int(str(key).partition(":")[0]),
                        "leg": int(str(key).partition(":")[2]),
                        "status": status.value,
                        "winner": winner,
                    }
                    for match_id, key, status, winner in matches
                ],
                "links": {"api": f"/api/v1/tests/{test_id}", "page": f"/tests/{test_id}"},
            }
        )
        return detail
