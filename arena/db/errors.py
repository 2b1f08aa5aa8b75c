"""Database errors as the rest of the arena needs to know them, without importing SQLAlchemy.

:data:`TRANSIENT_ERRORS` are worth retrying (a lost connection, a busy SQLite file, a server
restarting); :data:`DatabaseUnavailableError` is the narrowest of them (the database could not
be reached or could not do the work now: a lease renewal tries again at its next beat);
:func:`database_error_reason` turns any error of the database driver into the one line a
command prints, and says None for anything else.
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, OperationalError

__all__ = ["TRANSIENT_ERRORS", "DatabaseError", "DatabaseUnavailableError", "database_error_reason"]

#: Any error of the database driver (connection, SQL, integrity).
DatabaseError = DBAPIError

#: The database could not be reached or could not do the work now (connection lost, server
#: restarting, SQLite file busy): not a fault of the statement, so the same work may succeed later.
DatabaseUnavailableError = OperationalError

#: Errors after which the same work may succeed if tried again.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    DatabaseUnavailableError,
    DatabaseError,
    ConnectionError,
)


def database_error_reason(exc: BaseException) -> str | None:
    """The driver's message in one line if ``exc`` is a database error, else None."""
    if not isinstance(exc, DBAPIError):
        return None
    return " ".join(str(exc.orig).split()) or type(exc.orig).__name__
