"""``/api/v1/tests``: SPRT tests, "is my new version better?" (see ``docs/TESTS.md``).

Who may start or cancel a test: the organiser, or the owner of its bots. A test of one bot
against itself needs that bot's owner token; a test of two different bots needs the owner
token of either, and both bots must have the same owner contact (the ``owner`` they were
registered with, shown only to their owner and the organiser), so an owner tests their own
bots and nobody else's. Everyone may read tests, as everyone may read matches; a test's
``seed`` (given, or drawn by the arena) reads as null until the test is over and none of its
matches is pending or running (:func:`arena.reading.embargo.redact_sprt_test`). The rules are
bounded as a challenge's are (a test must not tie up the workers). The test is made, and its
first pairs submitted, by :func:`arena.services.sprt_tests.create_test`.
"""

from __future__ import annotations

from flask import Blueprint, Response, url_for

from arena.api.auth import require_authenticated
from arena.api.context import arena_context
from arena.api.http import json_response, query_choice, query_int
from arena.api.models import TestCreate, decode_body
from arena.api.problems import FieldError, conflict, forbidden, unprocessable
from arena.api.read_cache import public_read
from arena.api.views.rules import CHALLENGE_BOUNDS, rules_from
from arena.errors import NotFoundError
from arena.measures.sprt import SprtParams
from arena.reading.embargo import redact_sprt_test
from arena.reading.queries import sprt_tests as test_queries
from arena.services.challenges import BotInactiveError
from arena.services.sprt_tests import (
    TestStateError,
    VersionNotPlayableError,
    cancel_test,
    create_test,
)

__all__ = ["bp"]

bp = Blueprint("sprt_tests", __name__, url_prefix="/api/v1/tests")


def _require_owner_of(candidate_id: int, baseline_id: int) -> str:
    """The organiser, or an owner of these bots (see the module docstring): who it is, as the
    test stores it (``organiser`` or ``owner:<bot id>``); 401 or 403 otherwise."""
    principal = require_authenticated()
    if principal.is_organiser:
        return "organiser"
    ids = {candidate_id, baseline_id}
    if principal.bot_id not in ids:
        raise forbidden(
            f"only the owner of bot {candidate_id} and bot {baseline_id}, or the organiser,"
            " may do this"
        )
    if len(ids) == 2:
        owners = test_queries.owner_contacts(arena_context().db, ids)
        if len(ids) != len(owners) or len(set(owners.values())) != 1:
            raise forbidden(
                f"bots {candidate_id} and {baseline_id} have different owners: only the owner"
                " of both (the same owner contact) or the organiser may test one against the"
                " other"
            )
    return f"owner:{principal.bot_id}"


def _field(body: TestCreate, bot_id: object) -> str:
    return "candidate_id" if bot_id == body.candidate_id else "baseline_id"


@bp.post("")
def create() -> Response:
    body = decode_body(TestCreate)
    created_by = _require_owner_of(body.candidate_id, body.baseline_id)
    try:
        params = SprtParams(body.elo0, body.elo1, body.alpha, body.beta)
    except ValueError as exc:
        raise unprocessable(str(exc), [FieldError("elo1", str(exc))]) from None
    rules = rules_from(body.rules, bounds=CHALLENGE_BOUNDS)
    context = arena_context()
    try:
        test_id = create_test(
            context.db,
            candidate_id=body.candidate_id,
            baseline_id=body.baseline_id,
            candidate_version=body.candidate_version,
            baseline_version=body.baseline_version,
            params=params,
            max_pairs=body.max_pairs,
            concurrency=body.concurrency,
            rules=rules,
            seed=body.seed,
            created_by=created_by,
            submit=context.executor.submit,
        )
    except NotFoundError as exc:
        raise unprocessable(str(exc), [FieldError(_field(body, exc.key), "no such bot")]) from None
    except BotInactiveError as exc:
        field = FieldError(_field(body, exc.bot_id), f"the bot is {exc.status}")
        raise unprocessable(str(exc), [field]) from None
    except VersionNotPlayableError as exc:
        where = "candidate_version" if exc.bot_id == body.candidate_id else "baseline_version"
        raise unprocessable(
            str(exc), [FieldError(where, "not the bot's current version")]
        ) from None
    return json_response(
        redact_sprt_test(test_queries.sprt_test_detail(context.db, test_id)),
        201,
        headers={"Location": url_for("sprt_tests.read", test_id=test_id)},
    )


@bp.get("")
@public_read
def index() -> Response:
    status = query_choice("status", ["running", "finished"])
    limit = query_int("limit", 50, low=1, high=200) or 50
    before = query_int("before", None, low=1)
    rows = test_queries.sprt_test_list(
        arena_context().db, status=status, limit=limit + 1, before=before
    )
    more = len(rows) > limit
    rows = rows[:limit]
    return json_response({"items": rows, "next_before": rows[-1]["id"] if more else None})


@bp.get("/<id('test'):test_id>")
@public_read
def read(test_id: int) -> Response:
    return json_response(
        redact_sprt_test(test_queries.sprt_test_detail(arena_context().db, test_id))
    )


@bp.post("/<id('test'):test_id>/cancel")
def cancel(test_id: int) -> Response:
    db = arena_context().db
    _require_owner_of(*test_queries.sprt_test_sides(db, test_id))
    try:
        cancelled = cancel_test(db, test_id)
    except TestStateError as exc:
        raise conflict(str(exc), "test-state") from None
    return json_response(
        {
            "cancelled": cancelled,
            "test": redact_sprt_test(test_queries.sprt_test_detail(db, test_id)),
        }
    )
