"""Errors as ``application/problem+json`` (RFC 9457): the one shape every failure takes.

Views raise :class:`ProblemError` (or one of its helpers); the handlers registered by
:func:`register_error_handlers` turn it, :class:`arena.errors.NotFoundError` from a query or a
service (the one 404 of a resource that does not exist: ``bot 7 does not exist``), any werkzeug
HTTP error (404, 405, 413 ...), a rate limit (429 with ``Retry-After``) and any unexpected
exception into a problem document. An
unexpected exception is logged with its traceback and answered with a generic 500 that names
nothing internal.

>>> p = ProblemError(422, "invalid body", errors=[FieldError("name", "too long")])
>>> p.to_dict()["errors"]
[{'field': 'name', 'message': 'too long'}]
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http import HTTPStatus
from typing import Any

import msgspec
from flask import Flask, Response, current_app, request
from flask.typing import ResponseReturnValue
from flask_limiter import RateLimitExceeded
from werkzeug.exceptions import HTTPException, InternalServerError, NotFound, ServiceUnavailable

from arena.db.errors import DatabaseUnavailableError, database_error_reason
from arena.errors import NotFoundError

__all__ = [
    "PROBLEM_JSON",
    "FieldError",
    "NoSuchResource",
    "ProblemError",
    "conflict",
    "database_unavailable",
    "forbidden",
    "problem_response",
    "register_error_handlers",
    "unauthorized",
    "unprocessable",
]

log = logging.getLogger(__name__)

PROBLEM_JSON = "application/problem+json"
#: Problem types are relative URIs documented in the OpenAPI description.
TYPE_BASE = "/api/v1/problems/"
_encoder = msgspec.json.Encoder()
PAGE_ERRORS = "gin_arena.page_errors"


@dataclass(frozen=True, slots=True)
class FieldError:
    """One offending field of a request: a dotted path (``rules.fields.target``) and why."""

    field: str
    message: str


class ProblemError(Exception):
    """An error answer: HTTP status, a short detail for humans, optional field errors."""

    def __init__(
        self,
        status: int,
        detail: str,
        *,
        kind: str | None = None,
        errors: Sequence[FieldError] = (),
        headers: dict[str, str] | None = None,
        extra: dict[str, Any] | None = None,
    ) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail
        self.kind = kind or _slug(status)
        self.errors = list(errors)
        self.headers = headers or {}
        #: Extension members of the problem document (RFC 9457 section 3.2).
        self.extra = extra or {}

    def to_dict(self) -> dict[str, Any]:
        body: dict[str, Any] = {
            "type": TYPE_BASE + self.kind,
            "title": _title(self.status),
            "status": self.status,
            "detail": self.detail,
        }
        if self.errors:
            body["errors"] = [{"field": e.field, "message": e.message} for e in self.errors]
        body.update(self.extra)
        return body


#: Titles as RFC 9110 names them (Python's phrases differ between versions).
_TITLES = {413: "Content Too Large", 422: "Unprocessable Content"}


def _title(status: int) -> str:
    return _TITLES.get(status) or HTTPStatus(status).phrase


def _slug(status: int) -> str:
    return _title(status).lower().replace(" ", "-").replace("'", "")


def problem_response(problem: ProblemError) -> Response:
    """The problem as a response (``instance`` is the request path)."""
    body = problem.to_dict()
    body["instance"] = request.path
    response = Response(_encoder.encode(body), status=problem.status, mimetype=PROBLEM_JSON)
    response.headers["Cache-Control"] = "no-store"
    for name, value in problem.headers.items():
        response.headers[name] = value
    return response


class NoSuchResource(NotFound):
    """A 404 raised while routing (by the id converter), whose description is the detail the
    answer gives (``bot 99999999999999999999 does not exist``), for the API and the pages."""

    def __init__(self, detail: str) -> None:
        super().__init__(detail)


def unauthorized(detail: str) -> ProblemError:
    """401: no credentials, or credentials that are not valid."""
    return ProblemError(401, detail, headers={"WWW-Authenticate": 'Bearer realm="gin-arena"'})


def forbidden(detail: str) -> ProblemError:
    """403: valid credentials that do not allow this."""
    return ProblemError(403, detail)


def conflict(detail: str, kind: str = "conflict") -> ProblemError:
    return ProblemError(409, detail, kind=kind)


def unprocessable(
    detail: str, errors: Sequence[FieldError] = (), extra: dict[str, Any] | None = None
) -> ProblemError:
    """422: well-formed input that breaks a rule (a bad option, an unreachable bot)."""
    return ProblemError(422, detail, kind="validation", errors=errors, extra=extra)


#: Paths answered with problem+json even when the app also serves HTML pages.
_MACHINE_PATHS = ("/api/", "/healthz", "/readyz", "/metrics")


def _wants_page() -> bool:
    return not request.path.startswith(_MACHINE_PATHS)


def _from_http(exc: HTTPException) -> ResponseReturnValue:
    page = current_app.extensions.get(PAGE_ERRORS)
    if page is not None and _wants_page():
        result: ResponseReturnValue = page(exc)
        return result
    status = exc.code or 500
    detail = exc.description or HTTPStatus(status).phrase
    headers: dict[str, str] = {}
    allowed = getattr(exc, "valid_methods", None)
    if status == 405 and allowed:
        headers["Allow"] = ", ".join(sorted(allowed))
    if status == 404 and not isinstance(exc, NoSuchResource):
        detail = f"no resource at {request.path}"
    return problem_response(ProblemError(status, str(detail), headers=headers))


def _not_found(exc: NotFoundError) -> Response:
    """The one 404 of a resource that does not exist, named by its kind and key."""
    return problem_response(ProblemError(404, f"{exc.resource} {exc.key} does not exist"))


def _rate_limited(exc: RateLimitExceeded) -> Response:
    # Retry-After and the X-RateLimit-* headers are added by flask-limiter after the handler.
    return problem_response(
        ProblemError(
            429,
            f"rate limit exceeded ({exc.description}); retry after the time in Retry-After",
            kind="rate-limited",
        )
    )


#: Seconds a client is told to wait (``Retry-After``) when the database cannot answer now.
DATABASE_RETRY_SECONDS = 5


def database_unavailable(exc: Exception) -> ServiceUnavailable:
    """Log in one line that the database could not answer the request (``exc``, one of
    :data:`~arena.db.errors.DatabaseUnavailableError`), and return the 503 to answer with
    (``Retry-After``: :data:`DATABASE_RETRY_SECONDS`); the pages render it too."""
    log.warning(
        "database unavailable on %s %s: %s",
        request.method,
        request.path,
        database_error_reason(exc) or type(exc).__name__,
    )
    return ServiceUnavailable(
        "The database is not answering right now. Try again in a few seconds.",
        retry_after=DATABASE_RETRY_SECONDS,
    )


def _database_unavailable(exc: Exception) -> ResponseReturnValue:
    """503 with ``Retry-After`` while the database cannot be reached or this process's
    connection pool has run dry: the request may succeed shortly, so it is no 500."""
    error = database_unavailable(exc)
    page = current_app.extensions.get(PAGE_ERRORS)
    if page is not None and _wants_page():
        result: ResponseReturnValue = page(error)
        return result
    return problem_response(
        ProblemError(
            503,
            "the database cannot answer right now; try again after the time in Retry-After",
            kind="database-unavailable",
            headers={"Retry-After": str(DATABASE_RETRY_SECONDS)},
        )
    )


def _unexpected(exc: Exception) -> ResponseReturnValue:
    log.exception("unhandled error on %s %s", request.method, request.path)
    page = current_app.extensions.get(PAGE_ERRORS)
    if page is not None and _wants_page():
        result: ResponseReturnValue = page(InternalServerError())
        return result
    return problem_response(
        ProblemError(500, "the server failed to answer this request; it has been logged")
    )


def register_error_handlers(
    app: Flask, page: Callable[[HTTPException], ResponseReturnValue] | None = None
) -> None:
    """Every error of ``app`` becomes problem+json; nothing internal leaks.

    With ``page`` (the web pages' error page), errors on paths outside the API and the
    operations endpoints are rendered by it instead, for browsers.
    """
    if page is not None:
        app.extensions[PAGE_ERRORS] = page
    app.register_error_handler(ProblemError, problem_response)
    app.register_error_handler(NotFoundError, _not_found)
    app.register_error_handler(RateLimitExceeded, _rate_limited)
    app.register_error_handler(HTTPException, _from_http)
    for unavailable in DatabaseUnavailableError:
        app.register_error_handler(unavailable, _database_unavailable)
    app.register_error_handler(Exception, _unexpected)
