"""``/api/v1/bots/{bot_id}/webhooks``: a bot's webhook endpoints, their delivery logs, and
redelivery.

Every route is for the bot's owner and the organiser (401 without a token, 403 with another
bot's owner token); a bot that does not exist is 404 first. The signing secret is in the
answers that make one (registering an endpoint, rotating its secret) and in no read.
"""

from __future__ import annotations

from typing import Any

from flask import Blueprint, Response, url_for

from arena.api.auth import require_owner
from arena.api.context import arena_context
from arena.api.http import json_response, query_choice, query_int
from arena.api.models import WebhookCreate, decode_body
from arena.api.problems import FieldError, ProblemError, conflict, unprocessable
from arena.protocol.urlguard import UrlRejectedError
from arena.reading.queries import webhooks as webhook_queries
from arena.services.bots import find_bot
from arena.services.webhook_endpoints import (
    EndpointDisabledError,
    TooManyEndpointsError,
    UnknownEventTypeError,
    create_endpoint,
    delete_endpoint,
    enable_endpoint,
    end_endpoint_rotation,
    redeliver,
    rotate_endpoint_secret,
)
from arena.states import DeliveryStatus

__all__ = ["bp"]

bp = Blueprint("webhooks", __name__, url_prefix="/api/v1/bots")

_ENDPOINT = "/<id('bot'):bot_id>/webhooks/<id('webhook'):webhook_id>"
_DELIVERY = _ENDPOINT + "/deliveries/<id('delivery'):delivery_id>"


def _allowed(bot_id: int) -> None:
    """404 for a bot that does not exist, then 401/403 unless the caller is its owner or the
    organiser."""
    find_bot(arena_context().db, bot_id)
    require_owner(bot_id, or_organiser=True)


def _refused_url(exc: UrlRejectedError) -> ProblemError:
    detail = f"url: the webhook URL is refused: {exc.detail}"
    return unprocessable(detail, [FieldError("url", exc.detail)])


@bp.post("/<id('bot'):bot_id>/webhooks")
def create(bot_id: int) -> Response:
    _allowed(bot_id)
    body = decode_body(WebhookCreate)
    context = arena_context()
    try:
        created = create_endpoint(
            context.db,
            context.settings,
            bot_id,
            url=body.url,
            event_types=body.event_types,
            resolver=context.resolver,
        )
    except UnknownEventTypeError as exc:
        raise unprocessable(f"event_types: {exc}", [FieldError("event_types", str(exc))]) from None
    except UrlRejectedError as exc:
        raise _refused_url(exc) from None
    except TooManyEndpointsError as exc:
        raise conflict(str(exc), "too-many-webhooks") from None
    webhook = webhook_queries.endpoint_detail(context.db, bot_id, created.endpoint_id)
    location = url_for("webhooks.read", bot_id=bot_id, webhook_id=created.endpoint_id)
    return json_response(
        {"id": created.endpoint_id, "secret": created.secret, "webhook": webhook},
        201,
        headers={"Location": location},
    )


@bp.get("/<id('bot'):bot_id>/webhooks")
def index(bot_id: int) -> Response:
    _allowed(bot_id)
    return json_response({"items": webhook_queries.list_endpoints(arena_context().db, bot_id)})


@bp.get(_ENDPOINT)
def read(bot_id: int, webhook_id: int) -> Response:
    _allowed(bot_id)
    return json_response(webhook_queries.endpoint_detail(arena_context().db, bot_id, webhook_id))


@bp.delete(_ENDPOINT)
def remove(bot_id: int, webhook_id: int) -> Response:
    _allowed(bot_id)
    delete_endpoint(arena_context().db, bot_id, webhook_id)
    return Response(status=204)


@bp.post(_ENDPOINT + "/secret")
def new_secret(bot_id: int, webhook_id: int) -> Response:
    _allowed(bot_id)
    context = arena_context()
    rotation = rotate_endpoint_secret(
        context.db, bot_id, webhook_id, window_hours=context.settings.secret_rotation_hours
    )
    until = rotation.previous_valid_until
    return json_response(
        {
            "id": webhook_id,
            "secret": rotation.secret,
            "previous_valid_until": None if until is None else until.isoformat(),
        }
    )


@bp.delete(_ENDPOINT + "/secret/previous")
def end_rotation(bot_id: int, webhook_id: int) -> Response:
    _allowed(bot_id)
    end_endpoint_rotation(arena_context().db, bot_id, webhook_id)
    return json_response({"id": webhook_id, "previous_valid_until": None})


@bp.post(_ENDPOINT + "/enable")
def enable(bot_id: int, webhook_id: int) -> Response:
    _allowed(bot_id)
    db = arena_context().db
    enable_endpoint(db, bot_id, webhook_id)
    return json_response(webhook_queries.endpoint_detail(db, bot_id, webhook_id))


@bp.get(_ENDPOINT + "/deliveries")
def deliveries(bot_id: int, webhook_id: int) -> Response:
    _allowed(bot_id)
    status = query_choice("status", [s.value for s in DeliveryStatus])
    before = query_int("before", None, low=1)
    limit = query_int("limit", 50, low=1, high=200) or 50
    items: list[dict[str, Any]] = webhook_queries.delivery_log(
        arena_context().db,
        bot_id,
        webhook_id,
        before=before,
        limit=limit + 1,
        status=status,
    )
    more = len(items) > limit
    items = items[:limit]
    return json_response({"items": items, "next_before": items[-1]["id"] if more else None})


@bp.get(_DELIVERY)
def delivery(bot_id: int, webhook_id: int, delivery_id: int) -> Response:
    _allowed(bot_id)
    db = arena_context().db
    return json_response(webhook_queries.delivery_detail(db, bot_id, webhook_id, delivery_id))


@bp.post(_DELIVERY + "/redeliver")
def redeliver_one(bot_id: int, webhook_id: int, delivery_id: int) -> Response:
    _allowed(bot_id)
    db = arena_context().db
    try:
        redeliver(db, bot_id, webhook_id, delivery_id)
    except EndpointDisabledError as exc:
        raise conflict(str(exc), "webhook-disabled") from None
    return json_response(webhook_queries.delivery_detail(db, bot_id, webhook_id, delivery_id), 202)
