"""Operations at the root: ``/healthz`` (the process answers), ``/readyz`` (the database and,
when configured, the broker answer) and ``/metrics`` (Prometheus text format)."""

from __future__ import annotations

import time
from typing import Any

from flask import Blueprint, Response
from prometheus_client import CONTENT_TYPE_LATEST, generate_latest

from arena.api.context import arena_context
from arena.api.http import json_response
from arena.api.problems import ProblemError
from arena.reading.queries.operations import ping

__all__ = ["bp", "check_broker"]

bp = Blueprint("ops", __name__)

#: Seconds a client is told to wait before asking ``/readyz`` again after a 503.
RETRY_READY_S = 5


def check_broker(url: str, timeout_s: float = 2.0) -> None:
    """Raise if the broker at ``url`` does not answer within ``timeout_s``."""
    if url.startswith(("redis://", "rediss://", "unix://")):
        import redis  # noqa: PLC0415 - only with a Redis broker

        client = redis.Redis.from_url(
            url, socket_timeout=timeout_s, socket_connect_timeout=timeout_s
        )
        try:
            client.ping()
        finally:
            client.close()
        return
    import kombu  # noqa: PLC0415 - only with another broker

    connect: Any = getattr(kombu, "Connection")  # noqa: B009 - kombu does not re-export it
    with connect(url, connect_timeout=timeout_s) as connection:
        connection.ensure_connection(max_retries=1)


def _timed(check: Any) -> dict[str, Any]:
    started = time.perf_counter()
    try:
        check()
    except Exception as exc:
        return {"ok": False, "detail": f"{type(exc).__name__}: {exc}"[:300]}
    return {"ok": True, "ms": round((time.perf_counter() - started) * 1000, 2)}


@bp.get("/healthz")
def healthz() -> Response:
    response = json_response({"status": "ok"})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/readyz")
def readyz() -> Response:
    context = arena_context()
    checks = {"database": _timed(lambda: ping(context.db))}
    broker = context.settings.broker_url
    if broker:
        checks["broker"] = _timed(lambda: check_broker(broker))
    if not all(c["ok"] for c in checks.values()):
        failed = ", ".join(name for name, c in checks.items() if not c["ok"])
        raise ProblemError(
            503,
            f"not ready: {failed} unreachable",
            extra={"checks": checks},
            headers={"Retry-After": str(RETRY_READY_S)},
        )
    response = json_response({"status": "ready", "checks": checks})
    response.headers["Cache-Control"] = "no-store"
    return response


@bp.get("/metrics")
def metrics() -> Response:
    registry = arena_context().metrics
    response = Response(generate_latest(registry), mimetype=None)
    response.headers["Content-Type"] = CONTENT_TYPE_LATEST
    response.headers["Cache-Control"] = "no-store"
    return response
