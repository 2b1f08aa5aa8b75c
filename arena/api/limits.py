"""Rate limits (flask-limiter): one budget per client address and one per bearer token.

Both budgets are ``ARENA_RATE_LIMIT`` (flask-limiter syntax, e.g. ``600 per minute``; empty
turns limits off) across the whole API, so neither cycling tokens from one address nor
spreading one token over many addresses gets past them. Expensive writes (registering, the
conformance check, challenges, webhook endpoints and redeliveries) also have a small budget
of their own. Counters live in
``ARENA_RATE_LIMIT_STORAGE``: ``memory://`` (one process) or a Redis URL (shared by every
API process). A breach is a 429 problem with ``Retry-After``. Health, readiness and metrics
are never limited.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from typing import Any

from flask import Flask, request
from flask_limiter import ApplicationLimit, Limiter

from arena.settings import Settings

__all__ = ["EXPENSIVE", "EXPENSIVE_ENDPOINTS", "by_address", "by_token", "make_limiter"]

#: The budget of each expensive write: each makes the arena call a bot, resolve or call an
#: owner's webhook URL, or schedule a match.
EXPENSIVE = "60 per hour"
EXPENSIVE_ENDPOINTS = (
    "bots.register",
    "bots.update",
    "bots.activate",
    "bots.check",
    "challenges.create",
    "webhooks.create",
    "webhooks.redeliver_one",
)


def by_address() -> str:
    """The client's address: the WSGI peer, or with ``ARENA_TRUSTED_PROXIES`` the address
    those proxies put in X-Forwarded-For (ProxyFix, set up by the app factory)."""
    return "ip:" + (request.remote_addr or "unknown")


def _token() -> str | None:
    header = request.headers.get("Authorization", "")
    scheme, _, token = header.strip().partition(" ")
    return token.strip() or None if scheme.lower() == "bearer" else None


def by_token() -> str:
    """A digest of the bearer token (tokens themselves never reach the limiter's storage)."""
    token = _token() or ""
    return "tok:" + hashlib.sha256(token.encode()).hexdigest()[:32]


def by_token_or_address() -> str:
    """The token when there is one, else the address (for per-route budgets)."""
    return by_token() if _token() else by_address()


def _storage_options(uri: str) -> dict[str, str | int]:
    return {"socket_connect_timeout": 2, "socket_timeout": 2} if uri.startswith("redis") else {}


def make_limiter(app: Flask, settings: Settings) -> Limiter:
    """The app's limiter (see the module docstring); call it after registering the views."""
    enabled = bool(settings.rate_limit.strip())
    limits: list[str | Callable[[], str] | ApplicationLimit] = (
        [
            ApplicationLimit(settings.rate_limit, key_function=by_address, scope="address"),
            ApplicationLimit(
                settings.rate_limit,
                key_function=by_token,
                scope="token",
                exempt_when=lambda: _token() is None,
            ),
        ]
        if enabled
        else []
    )
    limiter = Limiter(
        by_token_or_address,
        app=app,
        application_limits=limits,
        storage_uri=settings.rate_limit_storage,
        storage_options=_storage_options(settings.rate_limit_storage),
        headers_enabled=True,
        strategy="fixed-window",
        swallow_errors=True,
        enabled=enabled,
        key_prefix="gin-arena",
    )
    for endpoint in EXPENSIVE_ENDPOINTS:
        view = app.view_functions.get(endpoint)
        if view is not None:
            limited: Any = limiter.limit(EXPENSIVE, scope=endpoint)(view)
            app.view_functions[endpoint] = limited
    return limiter
