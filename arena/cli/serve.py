"""``gin-arena serve``: the REST API and pages (and, with the local executor, the matches
submitted to it and the periodic jobs: the sweep, the ladder's rounds, health sweeps, webhook
deliveries), until interrupted. :func:`serve_pages` is also how ``demo`` serves."""

from __future__ import annotations

import argparse
import contextlib
from typing import TYPE_CHECKING

from arena.cli.console import progress_console
from arena.cli.database import created_database, existing_database, settings_from_environment
from arena.cli.ladder import ladder_line
from arena.cli.options import UsageError, port_option

if TYPE_CHECKING:
    from rich.console import Console

    from arena.cli.options import Subcommands
    from arena.settings import Settings

__all__ = ["check_listen", "register", "serve_pages"]


def check_listen(host: str, port: int) -> None:
    """Fail with one line now if ``host:port`` cannot be listened on (busy, or no such
    address here), before anything is started."""
    import socket

    try:
        infos = socket.getaddrinfo(host, port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE)
    except (OSError, UnicodeError) as exc:
        raise UsageError(f"cannot listen on {host}:{port}: unknown host ({exc})") from None
    family, kind, proto, _, address = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(address)
    except OSError as exc:
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    finally:
        sock.close()


def serve_pages(
    settings: Settings,
    host: str,
    port: int,
    console: Console,
    tournament_id: int | None,
    threads: int = 8,
) -> int:
    """Serve the API and pages with a production WSGI server until interrupted.

    The address is announced once it is bound (so ``--port 0`` shows the port chosen).
    """
    from arena.api.server import serve

    check_listen(host, port)
    bound = False

    def ready(url: str) -> None:
        nonlocal bound
        bound = True
        if tournament_id is not None:
            console.print(f"pages: {url}/tournaments/{tournament_id}  (Ctrl-C to stop)")
        else:
            console.print(f"serving {url}/  (Ctrl-C to stop)")

    try:
        with contextlib.suppress(KeyboardInterrupt):
            serve(settings, host=host, port=port, threads=threads, on_ready=ready)
    except OSError as exc:
        if bound:
            raise
        raise UsageError(f"cannot listen on {host}:{port}: {exc.strerror or exc}") from None
    return 0


def cmd_serve(args: argparse.Namespace) -> int:
    """Serve the API and pages (and, with the local executor, play submitted matches)."""
    settings = settings_from_environment()
    port_option(args.port)
    if args.threads < 1:
        raise UsageError("--threads must be at least 1")
    check_listen(args.host, args.port)
    if settings.database_url.startswith("sqlite"):
        # The embedded default creates its schema; other databases: `gin-arena db upgrade`.
        created_database(settings).dispose()
    else:
        existing_database(settings).dispose()
    console = progress_console()
    console.print(ladder_line(settings))
    return serve_pages(settings, args.host, args.port, console, None, args.threads)


def register(sub: Subcommands) -> None:
    """``gin-arena serve``."""
    p = sub.add_parser(
        "serve", help="serve the REST API and pages; with the local executor, play matches too"
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--threads", type=int, default=8, help="request threads (default 8)")
    p.set_defaults(func=cmd_serve)
