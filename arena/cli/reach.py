"""Before ``match`` or ``bot check`` plays against a URL: wait for it to listen, and ask the bot
there who it is, so a mistyped or dead URL is the user's error (one line naming the URL), not
a forfeit or a failed check.
"""

from __future__ import annotations

import sys
import time
from typing import Any

from arena.cli.options import UsageError

__all__ = ["bot_name", "wait_until_listening"]


def wait_until_listening(url: str, *, allow_loopback: bool, wait_s: float) -> None:
    """Return once something accepts connections at ``url``, or after ``wait_s`` seconds of
    refused connections (saying so on a terminal). Anything but a refusal (a URL the guard
    refuses, an unknown host, a timeout) returns at once: the caller reports it."""
    from arena.protocol.urlguard import UrlRejectedError, open_connection, resolve_and_check

    try:
        target = resolve_and_check(url, allow_loopback=allow_loopback)
    except (UrlRejectedError, OSError, UnicodeError):
        return
    deadline = time.monotonic() + wait_s
    said = False
    while True:
        try:
            open_connection(target, 2.0).close()
            return
        except ConnectionRefusedError:
            if time.monotonic() >= deadline:
                return
            if not said and sys.stderr.isatty():
                print(f"waiting up to {wait_s:g} s for a bot at {url} ...", file=sys.stderr)
                said = True
            time.sleep(0.1)
        except OSError:
            return


def bot_name(url: str, *, allow_loopback: bool, wait_s: float = 0.0) -> str:
    """The name a bot gives in its ``GET /`` info; UsageError naming ``url`` if there is no
    gin-arena bot there (refused URL, unknown host, nothing listening, not bot info)."""
    from arena.protocol.transport import Transport, TransportError
    from arena.protocol.urlguard import (
        UrlRejectedError,
        open_connection,
        open_tls_connection,
        resolve_and_check,
    )
    from arena.protocol.wire import PROTOCOL_VERSION, WireError, decode_info

    try:
        target = resolve_and_check(url, allow_loopback=allow_loopback)
    except UrlRejectedError as exc:
        raise UsageError(f"{url}: URL refused: {exc}") from None
    except (OSError, UnicodeError) as exc:
        raise UsageError(f"{url}: cannot resolve the host: {exc}") from None

    if wait_s > 0:
        wait_until_listening(url, allow_loopback=allow_loopback, wait_s=wait_s)

    def connect(timeout: float) -> Any:
        if target.scheme == "https":
            return open_tls_connection(target, timeout)
        return open_connection(target, timeout)

    transport = Transport(target.host_header, connect, base_path=target.path)
    try:
        body = transport.request("GET", "/", None, {"Accept": "application/json"}, 5.0).body
    except TransportError as exc:
        waited = f", for {wait_s:g} s" if exc.detail == "connection refused" and wait_s else ""
        raise UsageError(
            f"{url}: no bot answers GET / ({exc.kind}: {exc.detail}{waited})"
        ) from None
    finally:
        transport.close()
    try:
        info = decode_info(body)
    except WireError as exc:
        raise UsageError(f"{url}: GET / did not answer with bot info: {exc}") from None
    if info.protocol != PROTOCOL_VERSION:
        raise UsageError(
            f"{url}: the bot speaks {info.protocol!r}; this arena speaks {PROTOCOL_VERSION!r}"
        )
    # The bot names itself: shown on the terminal, so never its control characters (an escape
    # sequence would rewrite the screen) and never more than a line.
    name = "".join(c if c.isprintable() else ascii(c)[1:-1] for c in info.name)
    return name if len(name) <= 80 else name[:79] + "…"
