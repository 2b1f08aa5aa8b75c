"""The Flask app factory: settings in, a configured app out; nothing happens at import time.

``create_app(settings)`` opens the database, registers one blueprint per resource under
``/api/v1`` (operations at the root), the problem+json error handlers, rate limits, gzip, the
OpenAPI description and its docs, and the web pages' blueprint when :mod:`arena.web` has one.
The services the views call hand the matches they schedule to ``executor`` after their commit:
the one its caller passes (``gin-arena serve``: its local executor), else, with Celery, a
:class:`~arena.playing.executors.CeleryExecutor` the app makes and closes, and under local
settings :class:`~arena.playing.executors.LeftPending` (a local executor in another process
picks the matches up).
"""

from __future__ import annotations

import logging

from flask import Blueprint, Flask, Response, request
from flask_compress import Compress
from werkzeug.middleware.proxy_fix import ProxyFix

from arena.api.auth import authenticate_request
from arena.api.context import EXTENSION, ArenaContext, ReadCache, arena_context
from arena.api.http import IdConverter
from arena.api.limits import make_limiter
from arena.api.metrics import make_registry
from arena.api.problems import PROBLEM_JSON, register_error_handlers
from arena.api.read_cache import forget_on_write
from arena.api.spec import register_docs
from arena.api.views import (
    bots,
    challenges,
    health,
    ladder,
    matches,
    ops,
    ratings,
    sprt_tests,
    streams,
    tournaments,
    webhooks,
)
from arena.db.session import Database
from arena.live.outbox import OutboxTail
from arena.live.setup import make_hub
from arena.playing.executors import CeleryExecutor, LeftPending, MatchExecutor
from arena.protocol.urlguard import Resolver
from arena.settings import Settings, load_settings

__all__ = ["close_app", "create_app"]

log = logging.getLogger(__name__)

#: Largest request body accepted (413 beyond).
MAX_BODY = 256 * 1024
BLUEPRINTS: tuple[Blueprint, ...] = (
    bots.bp,
    health.bp,
    tournaments.bp,
    challenges.bp,
    sprt_tests.bp,
    matches.bp,
    ratings.bp,
    ladder.bp,
    webhooks.bp,
    streams.bp,
    ops.bp,
)


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
    executor: MatchExecutor | None = None,
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
    made = executor is None
    if executor is None:
        executor = CeleryExecutor(settings) if settings.executor_kind == "celery" else LeftPending()
    context = ArenaContext(
        settings=settings,
        db=db or Database(settings.database_url),
        executor=executor,
        owns_db=db is None,
        resolver=resolver,
        reads=ReadCache(settings.read_cache_ms),
    )
    if made:
        context.closers.append(executor.close)
    live = streams.LiveServices(
        make_hub(settings, context.db, executor), OutboxTail(context.db), settings.max_streams
    )
    app.extensions[streams.LIVE] = live
    context.closers.append(live.close)
    context.metrics = make_registry(context.db)
    app.extensions[EXTENSION] = context
    register_error_handlers(app)
    for blueprint in BLUEPRINTS:
        app.register_blueprint(blueprint)
    register_docs(app)
    _register_web(app)
    # Registered before the limiter's hook so that it runs after it (Flask runs them reversed).
    app.after_request(_retry_after_only_when_waiting)
    app.after_request(forget_on_write)
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
    """Dispose of the app's database pool and close its executor (each if it made it)."""
    context: ArenaContext = app.extensions[EXTENSION]
    context.close()


__all__ += ["arena_context"]
