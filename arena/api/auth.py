"""Who is calling: bearer tokens resolved to a :class:`Principal`, and the checks views make.

Two kinds of token exist. A bot's owner token (``gat_...``, issued at registration, stored as
its SHA-256) makes the caller that bot's owner; it is looked up by its hash
(:func:`arena.reading.queries.bots.token_owner`), never by the token itself. The organiser
token (``ARENA_ADMIN_TOKEN``) makes the caller the organiser; it is compared in constant time.
No ``Authorization`` header means anonymous; a header that is malformed or names no token is a
401, never a silent downgrade to anonymous. A valid token that does not allow the action is a 403.
"""

from __future__ import annotations

import hmac
from dataclasses import dataclass
from enum import StrEnum

from flask import g, request

from arena.api.context import arena_context
from arena.api.problems import forbidden, unauthorized
from arena.reading.queries.bots import token_owner
from arena.services.bots import hash_token

__all__ = [
    "Access",
    "Principal",
    "authenticate_request",
    "bearer_token",
    "current_principal",
    "require_authenticated",
    "require_organiser",
    "require_owner",
]


class Access(StrEnum):
    ANONYMOUS = "anonymous"
    OWNER = "owner"
    ORGANISER = "organiser"


@dataclass(frozen=True, slots=True)
class Principal:
    """The caller: anonymous, the owner of one bot, or the organiser."""

    role: Access
    bot_id: int | None = None

    @property
    def is_organiser(self) -> bool:
        return self.role is Access.ORGANISER

    def owns(self, bot_id: int) -> bool:
        """Whether the caller holds the owner token of bot ``bot_id``."""
        return self.role is Access.OWNER and self.bot_id == bot_id


ANONYMOUS = Principal(Access.ANONYMOUS)


def bearer_token() -> str | None:
    """The bearer token of the request; None without an ``Authorization`` header."""
    header = request.headers.get("Authorization")
    if header is None:
        return None
    scheme, _, token = header.strip().partition(" ")
    token = token.strip()
    if scheme.lower() != "bearer" or not token or " " in token:
        raise unauthorized("the Authorization header must be 'Bearer <token>'")
    return token


def _resolve(token: str) -> Principal:
    context = arena_context()
    admin = context.settings.admin_token
    if admin and hmac.compare_digest(admin.encode(), token.encode()):
        return Principal(Access.ORGANISER)
    bot_id = token_owner(context.db, hash_token(token))
    if bot_id is not None:
        return Principal(Access.OWNER, bot_id)
    raise unauthorized("the bearer token is not valid (revoked by a rotation, or mistyped)")


def current_principal() -> Principal:
    """The caller of the current request (resolved once per request)."""
    cached: Principal | None = g.get("principal")
    if cached is not None:
        return cached
    token = bearer_token()
    principal = ANONYMOUS if token is None else _resolve(token)
    g.principal = principal
    return principal


def authenticate_request() -> None:
    """Resolve a presented token before any API view runs: a bad token is a 401 on every
    endpoint, public reads included, never a silent fallback to anonymous."""
    if "Authorization" in request.headers and request.path.startswith("/api/"):
        current_principal()


def require_authenticated() -> Principal:
    """A caller with a valid token (401 otherwise)."""
    principal = current_principal()
    if principal.role is Access.ANONYMOUS:
        raise unauthorized("this needs a bearer token")
    return principal


def require_organiser() -> Principal:
    """The organiser (401 without a token, 403 with an owner token)."""
    principal = require_authenticated()
    if not principal.is_organiser:
        raise forbidden("only the organiser may do this")
    return principal


def require_owner(bot_id: int, *, or_organiser: bool = False) -> Principal:
    """The owner of bot ``bot_id`` (or, if allowed, the organiser); 401 or 403 otherwise."""
    principal = require_authenticated()
    if principal.owns(bot_id) or (or_organiser and principal.is_organiser):
        return principal
    who = "the owner or the organiser" if or_organiser else "the owner"
    raise forbidden(f"only {who} of bot {bot_id} may do this")
