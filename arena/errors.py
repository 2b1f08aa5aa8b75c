"""The one "not found" of the data doors.

Queries (``arena.reading.queries``) and services (``arena.services``) raise :class:`NotFoundError`
when the thing asked for does not exist; the API maps it once to a 404 problem and the CLI once
to a one-line error.
"""

from __future__ import annotations

__all__ = ["NotFoundError"]


class NotFoundError(LookupError):
    """No such resource: ``resource`` names its kind ("bot", "match", "tournament"), ``key`` the
    id or name asked for.

    >>> str(NotFoundError("match", 7))
    'no match 7'
    """

    def __init__(self, resource: str, key: object) -> None:
        super().__init__(f"no {resource} {key}")
        self.resource = resource
        self.key = key
