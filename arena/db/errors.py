"""Database errors as the rest of the arena needs to know them, without importing SQLAlchemy.

:data:`TRANSIENT_ERRORS` are worth retrying (a lost connection, a busy SQLite file, a server
restarting, this process's connection pool run dry); :data:`DatabaseUnavailableError` is the
narrowest of them (the database could not be reached or could not do the work now: a lease
renewal tries again at its next beat); :func:`database_error_reason` turns any error of the
database driver or of the connection pool into the one line a command prints, and says None for
anything else.

>>> from sqlalchemy.exc import TimeoutError as PoolTimeout
>>> isinstance(PoolTimeout("QueuePool limit of size 1 overflow 0 reached"), TRANSIENT_ERRORS)
True
"""

from __future__ import annotations

from sqlalchemy.exc import DBAPIError, OperationalError
from sqlalchemy.exc import TimeoutError as PoolTimeoutError

__all__ = [
    "TRANSIENT_ERRORS",
    "DatabaseError",
    "DatabaseUnavailableError",
    "PoolTimeoutError",
    "database_error_reason",
]

#: Any error of the database driver (connection, SQL, integrity).
DatabaseError = DBAPIError

# PoolTimeoutError: no connection of this process's pool came free within its timeout
# (``QueuePool limit of size N overflow M reached``): every connection busy, not a fault of the
# statement. SQLAlchemy raises it outside the driver, so it is no DBAPIError.

#: The database could not be reached or could not do the work now (connection lost, server
#: restarting or refusing more clients, SQLite file busy, this process's pool run dry): not a
#: fault of the statement, so the same work may succeed later. A tuple of exception classes,
#: for ``except`` and ``isinstance`` (nothing raises it as such).
DatabaseUnavailableError: tuple[type[Exception], ...] = (OperationalError, PoolTimeoutError)

#: Errors after which the same work may succeed if tried again.
TRANSIENT_ERRORS: tuple[type[Exception], ...] = (
    *DatabaseUnavailableError,
    DatabaseError,
    ConnectionError,
)


def database_error_reason(exc: BaseException) -> str | None:
    """The driver's (or the pool's) message in one line if ``exc`` is a database error, else
    None."""
    if isinstance(exc, PoolTimeoutError):
        return " ".join(str(exc.args[0] if exc.args else exc).split())
    if not isinstance(exc, DBAPIError):
        return None
    return " ".join(str(exc.orig).split()) or type(exc.orig).__name__
