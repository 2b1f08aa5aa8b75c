"""Bot URLs guarded against server-side request forgery: which URLs and addresses the arena calls.

Bots are other people's HTTP services, so a bot URL is a way to make the arena send requests
wherever its owner likes. This package owns the rules that stop that reaching anything but the
public internet, and the connect side that makes the check stick, in three steps:

* :mod:`.parsing` reads a bot URL's text strictly (scheme, host forms, port; no user info,
  query or fragment) and names every reason a URL is refused (:class:`Rejection`).
* :mod:`.policy` judges addresses (:func:`forbidden_reason`): private, loopback, metadata and
  embedded-IPv4 forms, in production or with loopback allowed for development.
* :mod:`.connect` resolves and checks a URL (:func:`check_url` at registration,
  :func:`resolve_and_check` for each match) and connects only to the checked addresses.

Callers import from the package; the names below are its public face.

>>> def mixed_answers(host: str, port: int) -> list[str]:
...     return ["8.8.8.8", "169.254.169.254"]
>>> try:
...     check_url("http://bot.example.com/", resolver=mixed_answers)
... except UrlRejectedError as exc:
...     print(exc.reason.name, exc.address)
FORBIDDEN_ADDRESS 169.254.169.254
"""

from __future__ import annotations

from arena.protocol.urlguard.connect import (
    Resolver,
    Target,
    check_url,
    open_connection,
    open_tls_connection,
    resolve_and_check,
    system_resolver,
)
from arena.protocol.urlguard.parsing import IPAddress, Rejection, UrlRejectedError, redact_url
from arena.protocol.urlguard.policy import LOOPBACK_HINT, forbidden_reason

__all__ = [
    "LOOPBACK_HINT",
    "IPAddress",
    "Rejection",
    "Resolver",
    "Target",
    "UrlRejectedError",
    "check_url",
    "forbidden_reason",
    "open_connection",
    "open_tls_connection",
    "redact_url",
    "resolve_and_check",
    "system_resolver",
]
