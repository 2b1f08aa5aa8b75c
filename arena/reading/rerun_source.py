"""Where a rerun reads a stored match from: this arena's database, or a remote arena's API.

Both give the same two things, under the same rules as the API's replay route: the typed record
(:class:`~arena.playing.stored.StoredMatch`, the omniscient replay) and one seat's replay (what
that bot was sent and answered, :mod:`arena.reading.seat_replay`), only for a finished match
whose deals are public (:mod:`arena.reading.embargo`). :class:`DatabaseReplays` reads the
database directly; :class:`ApiReplays` calls ``GET /api/v1/matches/{id}/replay`` and
``?seat=a|b`` on a remote arena. Every failure is a :class:`ReplayUnavailableError` (or
:class:`~arena.errors.NotFoundError` for an unknown match) of one line.
"""

from __future__ import annotations

import json
import urllib.error
import urllib.parse
import urllib.request
from typing import Any, Protocol

from arena.db.session import Database
from arena.errors import NotFoundError
from arena.playing.stored import RecordFormatError, StoredMatch, parse_record
from arena.reading.embargo import match_deals_public
from arena.reading.queries import matches as match_queries
from arena.reading.replay import load_record
from arena.reading.seat_replay import SeatReplayError, seat_replay
from arena.states import MatchStatus

__all__ = ["ApiReplays", "DatabaseReplays", "ReplaySource", "ReplayUnavailableError"]

#: How long a remote arena gets to answer one replay request.
API_TIMEOUT_S = 30.0


class ReplayUnavailableError(Exception):
    """The match's replay cannot be had (not finished, embargoed, unreadable, unreachable)."""


class ReplaySource(Protocol):
    """A place stored matches are read from."""

    def record(self, match_id: int) -> StoredMatch:
        """The finished match's full record."""

    def seat_view(self, match_id: int, seat: str) -> dict[str, Any]:
        """What seat ``seat``'s bot was sent and answered at each step."""

    def close(self) -> None:
        """Release what the source holds (a database's connections)."""


class DatabaseReplays:
    """Stored matches in this arena's database."""

    def __init__(self, db: Database) -> None:
        self.db = db
        self._records: dict[int, StoredMatch] = {}

    def record(self, match_id: int) -> StoredMatch:
        found = self._records.get(match_id)
        if found is not None:
            return found
        state = match_queries.match_state(self.db, match_id)  # NotFoundError: no such match
        if state["status"] != MatchStatus.FINISHED.value:
            raise ReplayUnavailableError(
                f"match {match_id} is {state['status']}: only a finished match can be rerun"
            )
        if not match_deals_public(self.db, state):
            raise ReplayUnavailableError(
                f"the replay of match {match_id} is withheld until the match on the same deals"
                " (its duplicate twin) has been played"
            )
        try:
            record: StoredMatch = load_record(self.db, match_id)
        except RecordFormatError as exc:
            raise ReplayUnavailableError(f"the stored record cannot be read: {exc}") from None
        self._records[match_id] = record
        return record

    def seat_view(self, match_id: int, seat: str) -> dict[str, Any]:
        try:
            return {"id": match_id, **seat_replay(self.record(match_id), seat)}
        except SeatReplayError as exc:
            raise ReplayUnavailableError(f"the stored record does not replay: {exc}") from None

    def close(self) -> None:
        self.db.dispose()


def api_base(url: str) -> str:
    """A remote arena's base URL from what a user typed (``http://host:8000``, with or
    without a trailing ``/`` or ``/api/v1``); ReplayUnavailableError if it is no http(s) URL."""
    parts = urllib.parse.urlsplit(url.strip())
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ReplayUnavailableError(f"--api wants an http(s) URL of an arena, not {url!r}")
    path = parts.path.rstrip("/").removesuffix("/api/v1").rstrip("/")
    return urllib.parse.urlunsplit((parts.scheme, parts.netloc, path, "", ""))


class ApiReplays:
    """Stored matches of a remote arena, through its public replay route."""

    def __init__(self, url: str, *, timeout_s: float = API_TIMEOUT_S) -> None:
        self.base = api_base(url)
        self.timeout_s = timeout_s
        self._records: dict[int, StoredMatch] = {}

    def _get(self, match_id: int, query: str = "") -> Any:
        url = f"{self.base}/api/v1/matches/{match_id}/replay{query}"
        request = urllib.request.Request(url, headers={"Accept": "application/json"})
        try:
            with urllib.request.urlopen(request, timeout=self.timeout_s) as answer:
                body = answer.read()
        except urllib.error.HTTPError as exc:
            detail = _problem_detail(exc)
            if exc.code == 404:
                raise NotFoundError("match", f"{match_id} at {self.base}") from None
            raise ReplayUnavailableError(f"{self.base}: HTTP {exc.code}: {detail}") from None
        except (urllib.error.URLError, OSError) as exc:
            reason = getattr(exc, "reason", exc)
            raise ReplayUnavailableError(
                f"cannot reach the arena at {self.base}: {reason}"
            ) from None
        try:
            return json.loads(body)
        except ValueError:
            raise ReplayUnavailableError(f"{url} did not answer with JSON") from None

    def record(self, match_id: int) -> StoredMatch:
        found = self._records.get(match_id)
        if found is None:
            try:
                found = parse_record(self._get(match_id), StoredMatch)
            except RecordFormatError as exc:
                raise ReplayUnavailableError(
                    f"{self.base}: the replay is no record: {exc}"
                ) from None
            self._records[match_id] = found
        return found

    def seat_view(self, match_id: int, seat: str) -> dict[str, Any]:
        view = self._get(match_id, f"?seat={seat}")
        if not isinstance(view, dict) or not isinstance(view.get("steps"), list):
            raise ReplayUnavailableError(f"{self.base}: the seat replay of {seat} has no steps")
        return view

    def close(self) -> None:
        """Nothing to release: each request has its own connection."""


def _problem_detail(exc: urllib.error.HTTPError) -> str:
    """The ``detail`` of a problem+json error answer, or its reason phrase."""
    try:
        problem = json.loads(exc.read())
    except (ValueError, OSError):
        return str(exc.reason)
    if isinstance(problem, dict) and isinstance(problem.get("detail"), str):
        detail: str = problem["detail"]
        return detail.splitlines()[0][:300] if detail else str(exc.reason)
    return str(exc.reason)
