"""The Flask app factory: settings in, a configured app out; nothing happens at import time.

``create_app(settings)`` opens the database, registers one blueprint per resource under
``/api/v1`` (operations at the root), the problem+json error handlers, rate limits, gzip, the
OpenAPI description and its docs, and the web pages' blueprint when :mod:`arena.web` has one.
Matches a view creates are submitted through ``enqueue``: by default nothing for the local
executor (it picks up pending matches from the database) and a Celery submission for Celery.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterable
from typing import Any

from flask import Blueprint, Flask, Response, request
from flask_compress import Compress
from werkzeug.middleware.proxy_fix import ProxyFix

from arena.api.auth import authenticate_request
from arena.api.context import EXTENSION, ArenaContext, Enqueue, arena_context
from arena.api.http import IdConverter
from arena.api.limits import make_limiter
from arena.api.metrics import make_registry
from arena.api.problems import PROBLEM_JSON, register_error_handlers
from arena.api.spec import register_docs
from arena.api.views import bots, challenges, matches, ops, ratings, tournaments
from arena.db.session import Database
from arena.protocol.urlguard import Resolver
from arena.settings import Settings, load_settings

__all__ = ["close_app", "create_app"]

log = logging.getLogger(__name__)

#: Largest request body accepted (413 beyond).
MAX_BODY = 256 * 1024
BLUEPRINTS: tuple[Blueprint, ...] = (
    bots.bp,
    tournaments.bp,
    challenges.bp,
    matches.bp,
    ratings.bp,
    ops.bp,
)


def _no_enqueue(ids: Iterable[int]) -> None:
    """The local executor polls the database for pending matches: nothing to send."""


def _celery_enqueue(context: ArenaContext) -> Enqueue:
    """Submit to Celery, through one executor made on first use (closed with the app)."""
    lock = threading.Lock()
    made: list[Any] = []

    def enqueue(ids: Iterable[int]) -> None:
        from arena.executors import CeleryExecutor  # noqa: PLC0415 - Celery only when used

        with lock:
            if not made:
                made.append(CeleryExecutor(context.settings))
                context.closers.append(made[0].close)
        made[0].submit(ids)

    return enqueue


def _register_web(app: Flask) -> None:
    """The web pages' blueprint, mounted at ``/``, when :mod:`arena.web` provides one (and
    its error page for errors outside the API)."""
    try:
        from arena import web  # noqa: PLC0415 - optional part
    except ImportError:  # pragma: no cover - the package ships arena.web
        return
    blueprint = getattr(web, "bp", None)
    if isinstance(blueprint, Blueprint):
        app.register_blueprint(blueprint, url_prefix="/")
        register_error_handlers(app, getattr(web, "error_page", None))


def _headers(response: Response) -> Response:
    response.headers.setdefault("X-Content-Type-Options", "nosniff")
    if "Cache-Control" not in response.headers:
        public = request.method in ("GET", "HEAD") and "Authorization" not in request.headers
        response.headers["Cache-Control"] = "no-cache" if public else "no-store"
    return response


#: The statuses that tell a client to come back later: the only ones with ``Retry-After``.
RETRY_STATUSES = frozenset({429, 503})


def _retry_after_only_when_waiting(response: Response) -> Response:
    """flask-limiter puts ``Retry-After`` (the window's reset) on every answer it counts; the
    header means "retry later", so it stays only on 429 and 503 (RFC 9110 section 10.2.3)."""
    if response.status_code not in RETRY_STATUSES:
        response.headers.pop("Retry-After", None)
    return response


def create_app(
    settings: Settings | None = None,
    *,
    db: Database | None = None,
    enqueue: Enqueue | None = None,
    resolver: Resolver | None = None,
) -> Flask:
    """The API app (see the module docstring); :func:`close_app` releases what it opened."""
    settings = settings or load_settings()
    app = Flask("arena.api")
    app.config.update(
        MAX_CONTENT_LENGTH=MAX_BODY,
        COMPRESS_ALGORITHM=["gzip"],
        COMPRESS_MIMETYPES=["application/json", PROBLEM_JSON, "text/html", "text/plain"],
        COMPRESS_MIN_SIZE=1024,
        COMPRESS_STREAMS=False,
    )
    app.url_map.converters["id"] = IdConverter
    context = ArenaContext(
        settings=settings,
        db=db or Database(settings.database_url),
        enqueue=enqueue or _no_enqueue,
        owns_db=db is None,
        resolver=resolver,
    )
    if enqueue is None and settings.executor_kind == "celery":
        context.enqueue = _celery_enqueue(context)
    context.metrics = make_registry(context.db)
    app.extensions[EXTENSION] = context
    register_error_handlers(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    register_docs(app)
    _register_web(app)
    # Registered before the limiter's hook so that it runs after it (Flask runs them reversed).
    app.after_request(_retry_after_only_when_waiting)
    limiter = make_limiter(app, settings)
    limiter.exempt(ops.bp)
    # Route limits hold the limiter weakly: the app keeps it alive.
    app.extensions[EXTENSION + ".limiter"] = limiter
    # After the limiter's own hook: guessing tokens spends the rate-limit budget.
    app.before_request(authenticate_request)
    Compress(app)
    app.after_request(_headers)
    if settings.trusted_proxies:
        # Behind N proxies, the client is the Nth address from the right of X-Forwarded-For
        # (what the rate limit per address and the logs see); the scheme and host likewise.
        n = settings.trusted_proxies
        app.wsgi_app = ProxyFix(app.wsgi_app, x_for=n, x_proto=n, x_host=n)  # type: ignore[method-assign]
    return app


def close_app(app: Flask) -> None:
    """Dispose of the app's database pool (if it made it) and broker connections."""
    context: ArenaContext = app.extensions[EXTENSION]
    context.close()


__all__ += ["arena_context"]
