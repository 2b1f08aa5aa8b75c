"""Settings: one validated object read from ``ARENA_*`` environment variables.

Nothing reads the environment at import time; :func:`load_settings` is called by the edges
(the CLI, the app factory, the Celery app). A bad value stops with a message naming the
variable, never a silent default.

>>> load_settings({"ARENA_ELO_K": "32"}).elo_k
32.0
>>> load_settings({"ARENA_WORKER_THREADS": "many"})
Traceback (most recent call last):
...
arena.settings.SettingsError: ARENA_WORKER_THREADS: must be a whole number, not 'many'
"""

from __future__ import annotations

import difflib
import math
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec

__all__ = ["Settings", "SettingsError", "load_settings"]

PREFIX = "ARENA_"


class SettingsError(ValueError):
    """A setting has an invalid value."""


class Settings(msgspec.Struct, frozen=True, kw_only=True):
    """Every knob of the service (environment variable ``ARENA_<FIELD IN CAPITALS>``)."""

    #: SQLAlchemy URL; the embedded default is a SQLite file in the working directory.
    database_url: str = "sqlite:///arena.db"
    #: Celery broker; empty means the local executor (worker processes on this machine).
    broker_url: str = ""
    #: ``local`` or ``celery``; empty picks celery when a broker URL is set.
    executor: str = ""
    #: Allow bot URLs on loopback (development, the demo, local author tools).
    allow_loopback: bool = False
    #: Bearer token of the organiser/admin (empty: no admin access).
    admin_token: str = ""
    #: Live Elo K factor.
    elo_k: float = 24.0
    #: Matches below which a bot's rating is provisional.
    provisional_matches: int = 10
    #: After a secret rotation, hours the old secret still signs beside the new one (0: none).
    secret_rotation_hours: float = 24.0
    #: Local executor: worker processes, and matches run at once in each (threads).
    worker_processes: int = 2
    worker_threads: int = 16
    #: The database pool of a process that plays matches (``gin-arena worker``, each local
    #: worker process): at most ``db_pool_size`` connections (0: on PostgreSQL, 1 per match it
    #: plays at once, plus 1 for its lease keeper and 24 for the periodic jobs;
    #: SQLite keeps its default pool). A thread finding every connection busy waits
    #: ``db_pool_timeout_seconds``, then fails with a transient error (retried).
    db_pool_size: int = 0
    db_pool_timeout_seconds: float = 30.0
    #: Where a process keeps files of its own between runs: Celery beat's schedule
    #: (``celerybeat-schedule-<node>``). Empty: ``$XDG_STATE_HOME/gin-arena``, by default
    #: ``~/.local/state/gin-arena``; created when first needed.
    state_dir: str = ""
    #: A claimed match's lease, renewed every ``lease_renew_fraction`` of it while the match
    #: runs (at most half, so one failed renewal, a database blip, does not lose it): a
    #: worker that dies leaves its match to the sweep once the lease runs out.
    lease_seconds: int = 20
    lease_renew_fraction: float = 0.25
    #: Task time limits and the broker visibility timeout (must exceed hard). The match job
    #: enforces the soft limit itself between deals (any executor, any Celery pool).
    task_time_limit: int = 1800
    task_soft_time_limit: int = 1700
    visibility_timeout: int = 3600
    #: Attempts before a match that keeps crashing its worker is marked failed.
    max_attempts: int = 5
    #: The sweeper's safety net (Celery beat, or the local executor's timer): every
    #: ``sweep_interval_seconds`` it puts matches whose lease expired back to pending and
    #: resubmits them (ahead of the queue), resubmits every pending match at once when the
    #: broker lost its queue (:mod:`arena.services.queue_loss`), resubmits a pending match
    #: each time its age passes another multiple of ``pending_grace_seconds`` (its submission
    #: may have been lost; 0: every sweep), and advances every running tournament.
    sweep_interval_seconds: float = 5.0
    pending_grace_seconds: int = 300
    #: Local executor: how often it also picks up pending matches created by another process
    #: (``gin-arena tournament start`` in another shell, an API without an executor of its
    #: own); 0 leaves them to the sweep's pending grace.
    pickup_interval_seconds: float = 1.0
    #: The ladder (:mod:`arena.ladder`): a round every ``ladder_interval_seconds`` for each
    #: preset in ``ladder_presets`` (comma-separated names of ``arena.rules`` presets; empty
    #: turns the ladder off), at most ``ladder_matches_per_day`` matches per bot per UTC day
    #: and ``ladder_max_concurrent_per_bot`` at once, opponents within
    #: ``ladder_rating_window`` Elo points except for an ``ladder_exploration`` share of picks
    #: (and for provisional bots, below ``provisional_matches``), in duplicate pairs (the same
    #: deals twice, seats swapped) unless ``ladder_duplicate_pairs`` is off.
    ladder_presets: str = "standard"
    ladder_interval_seconds: float = 300.0
    ladder_matches_per_day: int = 100
    ladder_max_concurrent_per_bot: int = 2
    ladder_rating_window: float = 200.0
    ladder_exploration: float = 0.2
    ladder_duplicate_pairs: bool = True
    #: Health sweeps (:mod:`arena.services.health`): every ``health_interval_seconds`` each
    #: active or suspended bot is probed (``GET /`` and one signed ``/act``, each within
    #: ``health_timeout_seconds``); ``health_failures_to_suspend`` failed probes in a row
    #: suspend it, ``health_successes_to_resume`` passed probes in a row resume it.
    health_interval_seconds: float = 300.0
    health_timeout_seconds: float = 5.0
    health_failures_to_suspend: int = 3
    health_successes_to_resume: int = 2
    #: Webhooks (:mod:`arena.services.webhooks`): due deliveries are sent every
    #: ``webhook_interval_seconds``, each attempt within ``webhook_timeout_seconds``; a failed
    #: attempt is retried after ``webhook_backoff_seconds``, doubling each time, until
    #: ``webhook_retry_hours`` after the event; ``webhook_failures_to_disable`` failed
    #: attempts in a row disable the endpoint.
    webhook_interval_seconds: float = 1.0
    webhook_timeout_seconds: float = 10.0
    webhook_backoff_seconds: float = 5.0
    webhook_retry_hours: float = 24.0
    webhook_failures_to_disable: int = 15
    #: Rate limits (flask-limiter syntax) and their storage (``memory://`` or a Redis URL).
    rate_limit: str = "600 per minute"
    rate_limit_storage: str = "memory://"
    #: Reverse proxies in front of the API that set X-Forwarded-For/-Proto/-Host (0: none, the
    #: TCP peer is the client and those headers are ignored, so nobody can spoof an address).
    trusted_proxies: int = 0
    #: Live streams (docs/STREAMS.md): at most ``max_streams`` open at once in one API process
    #: (each holds a server thread), and, when Celery runs, the Redis their events travel
    #: through (empty: the broker's URL).
    max_streams: int = 1000
    live_redis_url: str = ""
    #: How long an API process may serve a public read from its cache, in milliseconds (0:
    #: off; :mod:`arena.api.read_cache`).
    read_cache_ms: int = 0

    def __post_init__(self) -> None:
        if self.executor not in ("", "local", "celery"):
            raise SettingsError(f"ARENA_EXECUTOR: {self.executor!r} is not local or celery")
        if self.executor == "celery" and not self.broker_url:
            raise SettingsError("ARENA_EXECUTOR=celery needs ARENA_BROKER_URL")
        if not self.task_soft_time_limit < self.task_time_limit < self.visibility_timeout:
            raise SettingsError(
                "need ARENA_TASK_SOFT_TIME_LIMIT < ARENA_TASK_TIME_LIMIT < ARENA_VISIBILITY_TIMEOUT"
                f" (got {self.task_soft_time_limit}, {self.task_time_limit},"
                f" {self.visibility_timeout}): a task must end before the broker redelivers it"
            )
        if self.task_time_limit + self.lease_seconds >= self.visibility_timeout:
            raise SettingsError(
                "need ARENA_TASK_TIME_LIMIT + ARENA_LEASE_SECONDS < ARENA_VISIBILITY_TIMEOUT"
                f" (got {self.task_time_limit} + {self.lease_seconds} >="
                f" {self.visibility_timeout}):"
                " a redelivered task must find the lease of a dead worker expired"
            )
        if not 0 <= self.secret_rotation_hours <= 24 * 365:
            raise SettingsError("ARENA_SECRET_ROTATION_HOURS must be 0 to 8760 (a year)")
        if self.trusted_proxies < 0:
            raise SettingsError("ARENA_TRUSTED_PROXIES must be 0 or more")
        if not 1 <= self.max_streams <= 20_000:
            raise SettingsError("ARENA_MAX_STREAMS must be 1 to 20000")
        if not 0 <= self.read_cache_ms <= 60_000:
            raise SettingsError(
                f"ARENA_READ_CACHE_MS must be 0 (off) to 60000 (a minute), not {self.read_cache_ms}"
            )
        live_redis = self.live_redis_url or (
            self.broker_url if self.executor_kind == "celery" else ""
        )
        if live_redis and not live_redis.startswith(("redis://", "rediss://", "unix://")):
            raise SettingsError(
                "the live streams travel through Redis when Celery runs: set"
                " ARENA_LIVE_REDIS_URL to a redis:// URL (the broker's is not one)"
            )
        if not (math.isfinite(self.elo_k) and self.elo_k > 0):
            raise SettingsError(f"ARENA_ELO_K must be a number above 0, not {self.elo_k}")
        if self.provisional_matches < 0:
            raise SettingsError("ARENA_PROVISIONAL_MATCHES must be 0 or more")
        for name in ("worker_processes", "worker_threads", "lease_seconds", "max_attempts"):
            if getattr(self, name) < 1:
                raise SettingsError(f"ARENA_{name.upper()} must be at least 1")
        if not 0.05 <= self.lease_renew_fraction <= 0.5:
            raise SettingsError("ARENA_LEASE_RENEW_FRACTION must be between 0.05 and 0.5")
        if not (math.isfinite(self.sweep_interval_seconds) and self.sweep_interval_seconds > 0):
            raise SettingsError("ARENA_SWEEP_INTERVAL_SECONDS must be a number above 0")
        if self.pending_grace_seconds < 0:
            raise SettingsError("ARENA_PENDING_GRACE_SECONDS must be 0 or more")
        if not (math.isfinite(self.pickup_interval_seconds) and self.pickup_interval_seconds >= 0):
            raise SettingsError("ARENA_PICKUP_INTERVAL_SECONDS must be 0 (off) or more")
        if self.db_pool_size < 0:
            raise SettingsError("ARENA_DB_POOL_SIZE must be 0 (sized from the concurrency) or more")
        if not (math.isfinite(self.db_pool_timeout_seconds) and self.db_pool_timeout_seconds > 0):
            raise SettingsError("ARENA_DB_POOL_TIMEOUT_SECONDS must be a number above 0")
        self._check_living_arena()

    def _check_living_arena(self) -> None:
        """The ladder's, the health sweep's and the webhooks' numbers."""
        for name in (
            "ladder_interval_seconds",
            "health_interval_seconds",
            "health_timeout_seconds",
            "webhook_interval_seconds",
            "webhook_timeout_seconds",
            "webhook_backoff_seconds",
            "webhook_retry_hours",
        ):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise SettingsError(f"ARENA_{name.upper()} must be a number above 0")
        for name in (
            "ladder_matches_per_day",
            "ladder_max_concurrent_per_bot",
            "health_failures_to_suspend",
            "health_successes_to_resume",
            "webhook_failures_to_disable",
        ):
            if getattr(self, name) < 1:
                raise SettingsError(f"ARENA_{name.upper()} must be at least 1")
        if not (math.isfinite(self.ladder_rating_window) and self.ladder_rating_window > 0):
            raise SettingsError("ARENA_LADDER_RATING_WINDOW must be a number above 0")
        if not 0.0 <= self.ladder_exploration <= 1.0:
            raise SettingsError("ARENA_LADDER_EXPLORATION must be between 0 and 1")
        if self.ladder_duplicate_pairs and self.ladder_max_concurrent_per_bot < 2:
            raise SettingsError(
                "ARENA_LADDER_MAX_CONCURRENT_PER_BOT must be at least 2 with duplicate pairs"
                " (the two matches of a pair play at once; ARENA_LADDER_DUPLICATE_PAIRS=0 plays"
                " single matches)"
            )
        from arena.rules.ruleset import RuleSet  # noqa: PLC0415 - keeps settings import-light

        unknown = [p for p in self.ladder_preset_names if p not in RuleSet.PRESETS]
        if unknown:
            raise SettingsError(
                f"ARENA_LADDER_PRESETS: no preset {unknown[0]!r}"
                f" (the presets are {', '.join(RuleSet.PRESETS)})"
            )

    @property
    def ladder_preset_names(self) -> tuple[str, ...]:
        """The presets with a ladder, in the order given (none: the ladder is off)."""
        names = (p.strip() for p in self.ladder_presets.split(","))
        return tuple(dict.fromkeys(n for n in names if n))

    @property
    def state_path(self) -> Path:
        """``state_dir``, or ``$XDG_STATE_HOME/gin-arena`` (``~/.local/state/gin-arena``)."""
        if self.state_dir:
            return Path(self.state_dir).expanduser()
        base = Path(os.environ.get("XDG_STATE_HOME") or "~/.local/state").expanduser()
        if not base.is_absolute():  # the XDG base directory spec: a relative one is ignored
            base = Path.home() / ".local" / "state"
        return base / "gin-arena"

    @property
    def executor_kind(self) -> str:
        """``local`` or ``celery``."""
        return self.executor or ("celery" if self.broker_url else "local")

    def replace(self, **changes: Any) -> Settings:
        """A copy with some fields changed (validated)."""
        return msgspec.structs.replace(self, **changes)


_FIELDS = {f.upper(): f for f in Settings.__struct_fields__}

#: What a value of each field type must look like, for the message refusing one.
_EXPECTED = {"bool": "1 or 0 (or true or false)", "int": "a whole number", "float": "a number"}


def _refusal(name: str, value: Any, message: str) -> str:
    """One line saying what ARENA_<NAME> must be and what it was."""
    expected = _EXPECTED.get(str(Settings.__annotations__.get(name)))
    if expected is not None and message.startswith("Expected"):
        return f"{PREFIX}{name.upper()}: must be {expected}, not {value!r}"
    return f"{PREFIX}{name.upper()}: {message} (got {value!r})"


def _misspelt(env: Mapping[str, str]) -> str | None:
    """A one-line refusal if an ``ARENA_*`` variable looks like a mistyped setting name (it
    would otherwise be ignored silently and its setting keep the default)."""
    for key in env:
        if not key.startswith(PREFIX) or key[len(PREFIX) :] in _FIELDS:
            continue
        close = difflib.get_close_matches(key[len(PREFIX) :], _FIELDS, n=1, cutoff=0.85)
        if close:
            return f"{key} is not a setting: did you mean {PREFIX}{close[0]}?"
    return None


def load_settings(environ: Mapping[str, str] | None = None, **overrides: Any) -> Settings:
    """Settings from ``ARENA_*`` variables (default: the process environment) and overrides."""
    env = os.environ if environ is None else environ
    raw: dict[str, Any] = {}
    for key, value in env.items():
        if not key.startswith(PREFIX):
            continue
        name = key[len(PREFIX) :]
        if name in _FIELDS:
            raw[_FIELDS[name]] = value
    raw.update(overrides)
    misspelt = _misspelt(env)
    if misspelt is not None:
        raise SettingsError(misspelt)
    try:
        return msgspec.convert(raw, Settings, strict=False)
    except msgspec.ValidationError as exc:
        text = str(exc)
        # msgspec says "... - at `$.field`": name the variable instead.
        if " - at `$." in text:
            message, _, where = text.rpartition(" - at `$.")
            name = where.rstrip("`")
            raise SettingsError(_refusal(name, raw.get(name), message)) from None
        raise SettingsError(text) from None
    except SettingsError:
        raise
