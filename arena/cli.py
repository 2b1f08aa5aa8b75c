"""The ``gin-arena`` command line: one sub-command per job, each a thin call into the package.

Errors a user can cause (a bad option value, a port that cannot be listened on, a malformed
secret, an unsupported database URL, an unreachable bot URL) end with a one-line message and
exit status 2, never a traceback. Ctrl-C ends a long-running command quietly.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import sys
import time
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, NoReturn

from rich.console import Console

from arena.bots.strategies import STRATEGIES
from arena.match import MatchProgress, NeitherStartedError, play_match
from arena.players import HeuristicPlayer, Player, RandomPlayer
from arena.rules.ruleset import RuleSet, RuleSetError
from arena.settings import Settings, SettingsError, load_settings
from arena.transcript import outcome_counts, transcript

if TYPE_CHECKING:
    from arena.db.session import Database

__all__ = ["main"]

HOUSE_KINDS = tuple(STRATEGIES)

IN_PROCESS_PLAYERS: dict[str, Callable[[str, int], Player]] = {
    "random": lambda name, seed: RandomPlayer(seed=seed, name=name),
    "heuristic": lambda name, seed: HeuristicPlayer(name=name),
}


class UsageError(Exception):
    """A user error: printed as one line, exit status 2."""


class _Parser(argparse.ArgumentParser):
    """argparse, but a mistyped command line is one line (what is wrong, where to read more),
    not a usage block followed by the error."""

    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{self.prog}: error: {message} (see `{self.prog} --help`)\n")


def _console() -> Console:
    """The console for progress on stderr: lines are never hard-wrapped (when stderr is a file
    or a pipe, rich would otherwise wrap at 80 columns)."""
    return Console(stderr=True, soft_wrap=True)


def _wait_option(value: float) -> float:
    if not 0 <= value <= 600:  # also refuses nan
        raise UsageError(f"--wait must be 0 to 600 seconds, not {value:g}")
    return value


def _port(value: int, option: str = "--port") -> int:
    if not 0 <= value <= 65535:
        raise UsageError(f"{option} must be 0 to 65535 (0: any free port), not {value}")
    return value


def _secret(value: str | None, option: str = "--secret") -> str | None:
    """A ``whsec_`` signing secret given on the command line, checked now (None passes)."""
    if value is None:
        return None
    from arena.protocol.signing import SecretError, parse_secret

    try:
        if not value.startswith("whsec_"):
            raise SecretError("a secret must start with 'whsec_' (then base64 of 24 to 64 bytes)")
        parse_secret(value)
    except SecretError as exc:
        raise UsageError(f"{option}: {exc}") from None
    return value


def _check_listen(host: str, port: int) -> None:
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


def _rules(args: argparse.Namespace) -> RuleSet:
    overrides = {}
    for item in getattr(args, "rule", None) or []:
        key, sep, raw = item.partition("=")
        if not sep:
            raise UsageError(f"--rule expects FIELD=VALUE, got {item!r}")
        try:
            overrides[key] = json.loads(raw)
        except json.JSONDecodeError:
            overrides[key] = raw
    try:
        return RuleSet.preset(args.rules, **overrides)
    except RuleSetError as exc:
        raise UsageError(str(exc)) from None


def _add_rules_options(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--rules",
        default="standard",
        choices=RuleSet.PRESETS,
        help="rule set preset (default: standard)",
    )
    p.add_argument(
        "--rule",
        action="append",
        metavar="FIELD=VALUE",
        help="override one rule set field, e.g. --rule gin_bonus=20 (repeatable)",
    )


def cmd_selfplay(args: argparse.Namespace) -> int:
    """Play in-process players against each other and print outcome counts."""
    if args.matches < 1:
        raise UsageError("--matches must be at least 1")
    kinds = args.players.split(",")
    if len(kinds) != 2 or any(k not in IN_PROCESS_PLAYERS for k in kinds):
        raise UsageError(f"--players takes two of {', '.join(IN_PROCESS_PLAYERS)}, comma-separated")
    rules = _rules(args)
    console = _console()
    records = []
    wins = [0, 0]
    started = time.perf_counter()
    with console.status("playing") as status:
        for i in range(args.matches):
            seed = args.seed + i
            players = [IN_PROCESS_PLAYERS[k](f"{k}-a", seed) for k in kinds[:1]]
            players.append(IN_PROCESS_PLAYERS[kinds[1]](f"{kinds[1]}-b", seed + 10_000))
            record = play_match(players, rules, seed=seed, match_id=f"selfplay-{seed}")
            data = record.to_dict()
            records.append(data)
            if record.winner is not None:
                wins[record.winner] += 1
            status.update(f"match {i + 1}/{args.matches}")
    elapsed = time.perf_counter() - started
    counts = outcome_counts(records)
    hands = sum(counts[k] for k in ("knock", "undercut", "gin", "big_gin", "dead", "tie"))
    out = {
        "matches": args.matches,
        "seed": args.seed,
        "players": {"a": kinds[0], "b": kinds[1]},
        "wins": {"a": wins[0], "b": wins[1]},
        "hands": hands,
        "outcomes": {
            "knocks": counts["knock"],
            "undercuts": counts["undercut"],
            "gins": counts["gin"],
            "big_gins": counts["big_gin"],
            "dead_hands": counts["dead"],
            "ties": counts["tie"],
            "misknocks": counts["misknock"],
        },
        "seconds": round(elapsed, 3),
    }
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    last = args.seed + args.matches - 1
    print(f"{args.matches} matches, {kinds[0]} (a) v {kinds[1]} (b), seeds {args.seed}..{last}")
    print(f"match wins: a {wins[0]}, b {wins[1]}")
    print(f"hands: {hands}")
    for key, value in out["outcomes"].items():
        print(f"  {key:<11} {value:>6}")
    print(f"{elapsed:.2f} s ({elapsed / args.matches * 1000:.0f} ms per match)")
    return 0


def _options(items: Sequence[str] | None) -> dict[str, Any]:
    """``--option KEY=VALUE`` pairs; values are JSON when they parse (3, true), else text."""
    out: dict[str, Any] = {}
    for item in items or []:
        key, sep, raw = item.partition("=")
        if not sep or not key:
            raise UsageError(f"--option expects KEY=VALUE, got {item!r}")
        try:
            out[key] = json.loads(raw)
        except json.JSONDecodeError:
            out[key] = raw
    return out


def _add_format_options(p: argparse.ArgumentParser, default: str) -> None:
    from arena.tournaments import FORMAT_NAMES

    p.add_argument("--format", default=default, choices=FORMAT_NAMES, help=f"default {default}")
    p.add_argument(
        "--option",
        action="append",
        metavar="KEY=VALUE",
        help="format option, e.g. --option rounds=5, --option duplicate=true (repeatable)",
    )
    p.add_argument("--seed", type=int, help="tournament seed (default: random)")


def cmd_demo(args: argparse.Namespace) -> int:
    """Eight house bots play a tournament on this machine; then the pages are served."""
    from arena.demo import run_demo
    from arena.tournaments import FormatError

    settings = _settings()
    _port(args.port)
    if not args.no_serve:
        _check_listen(args.host, args.port)
    console = _console()

    def serve(tournament_id: int) -> int:
        # While the house bots still run: challenges made through the API can be played.
        loopback = settings.replace(allow_loopback=True)
        return _serve(loopback, args.host, args.port, console, tournament_id)

    try:
        run_demo(
            settings,
            console,
            format_name=args.format,
            options=_options(args.option),
            rules=_rules(args),
            seed=args.seed,
            then=None if args.no_serve else serve,
        )
    except FormatError as exc:
        raise UsageError(str(exc)) from None
    return 0


def _serve(
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

    _check_listen(host, port)
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
    settings = _settings()
    _port(args.port)
    if args.threads < 1:
        raise UsageError("--threads must be at least 1")
    _check_listen(args.host, args.port)
    if settings.database_url.startswith("sqlite"):
        # The embedded default creates its schema; other databases: `gin-arena db upgrade`.
        _tournament_db(settings).dispose()
    else:
        _existing_database(settings).dispose()
    return _serve(settings, args.host, args.port, _console(), None, args.threads)


def _tournament_db(settings: Settings) -> Database:
    from arena.db.migrate import upgrade

    db = _database(settings)
    upgrade(db)
    return db


def _bot_ids(db: Database, names: Sequence[str] | None) -> list[int] | None:
    """Bot ids for names or ids (a name is looked up first: a bot may be named ``7``)."""
    if not names:
        return None
    from sqlalchemy import select

    from arena.db.models import Bot

    out = []
    with db.session() as session:
        for name in names:
            bot = session.scalar(select(Bot).where(Bot.name == name))
            if bot is None and name.isdigit():
                bot = session.get(Bot, int(name))
            if bot is None:
                raise UsageError(f"no bot named {name!r} (and no bot with that id)")
            out.append(bot.id)
    return out


#: Format options naming a bot: given by name or id, stored as the bot's id.
BOT_OPTIONS = {"gauntlet": ("challenger",)}


def cmd_tournament_create(args: argparse.Namespace) -> int:
    """Create a tournament (not started); print its id."""
    from arena.services.tournaments import create_tournament

    settings = _settings()
    db = _tournament_db(settings)
    options = _options(args.option)
    for key in BOT_OPTIONS.get(args.format, ()):
        if key in options and not isinstance(options[key], bool):
            ids = _bot_ids(db, [str(options[key])])
            assert ids is not None
            options[key] = str(ids[0])
    try:
        tournament_id = create_tournament(
            db,
            name=args.name,
            format_name=args.format,
            options=options,
            bot_ids=_bot_ids(db, args.bots),
            rules=_rules(args),
            seed=args.seed,
            rated=not args.unrated,
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    print(tournament_id)
    return 0


def cmd_tournament_start(args: argparse.Namespace) -> int:
    """Start a tournament; with the local executor, play it to the end here."""
    from arena.executors import LocalExecutor, make_executor
    from arena.progress import standings_table, watch_tournament
    from arena.services.ratings import refit_ratings
    from arena.services.tournaments import TournamentStateError, start_tournament

    settings = _settings()
    db = _existing_database(settings)
    console = _console()
    executor = make_executor(settings)
    try:
        report = start_tournament(db, args.tournament_id, executor.submit)
        console.print(
            f"tournament {args.tournament_id}: {len(report.scheduled)} match(es) scheduled"
        )
        if settings.executor_kind == "local" or args.wait:
            try:
                watch_tournament(db, args.tournament_id, console)
            except KeyboardInterrupt:  # Ctrl-C: local workers stop now (queued matches wait)
                if isinstance(executor, LocalExecutor):
                    executor.terminate()
                raise
            refit_ratings(db, min_matches=settings.provisional_matches)
            console.print(standings_table(db, args.tournament_id))
    except (LookupError, TournamentStateError) as exc:
        raise UsageError(str(exc).strip("'")) from None
    finally:
        executor.close()
    return 0


def cmd_tournament_status(args: argparse.Namespace) -> int:
    """Standings and match counts of a tournament, now."""
    from arena.progress import snapshot, standings_table

    settings = _settings()
    db = _existing_database(settings)
    console = Console(soft_wrap=True)
    try:
        snap = snapshot(db, args.tournament_id)
    except Exception as exc:
        if "No row" in str(exc) or isinstance(exc, LookupError):
            raise UsageError(f"no tournament {args.tournament_id}") from None
        raise
    counts = ", ".join(f"{k} {v}" for k, v in sorted(snap.counts.items()))
    console.print(
        f"tournament {args.tournament_id}: {snap.status.value}; matches: {counts or 'none'}"
    )
    console.print(standings_table(db, args.tournament_id))
    return 0


def cmd_tournament_cancel(args: argparse.Namespace) -> int:
    """Cancel a tournament: no new matches; finished ones stay."""
    from arena.services.tournaments import TournamentStateError, cancel_tournament

    settings = _settings()
    db = _existing_database(settings)
    try:
        cancelled = cancel_tournament(db, args.tournament_id)
    except (LookupError, TournamentStateError) as exc:
        raise UsageError(str(exc).strip("'")) from None
    print(f"tournament {args.tournament_id} cancelled; {len(cancelled)} queued match(es) cancelled")
    return 0


def cmd_bot_serve(args: argparse.Namespace) -> int:
    """Serve a house bot on 127.0.0.1 until interrupted."""
    from arena.bots.house import house_bot

    _port(args.port)
    secret = _secret(args.secret)
    try:
        server = house_bot(args.kind, port=args.port, host=args.host, secret=secret)
    except (OSError, OverflowError, UnicodeError) as exc:
        reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
        raise UsageError(f"cannot listen on {args.host}:{args.port}: {reason}") from None
    with contextlib.suppress(KeyboardInterrupt):
        print(f"house bot {args.kind!r} listening on {server.url}", file=sys.stderr)
        server.serve_forever()
    return 0


def cmd_bot_register(args: argparse.Namespace) -> int:
    """Check the bot at URL and register it (what ``POST /api/v1/bots`` does)."""
    from arena.services.bots import enroll_bot

    settings = _settings()
    secret = _secret(args.secret)
    db = _tournament_db(settings)
    try:
        enrolled = enroll_bot(
            db, settings, name=args.name, url=args.url, owner=args.owner, secret=secret
        )
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    finally:
        db.dispose()
    print(f"bot {enrolled.bot_id} {args.name!r} registered at {args.url}")
    print(f"owner token:    {enrolled.token}  (shown once: the owner's API key)")
    if secret is None:
        print(f"signing secret: {enrolled.secret}  (shown once: the bot verifies requests with it)")
    else:
        print("signing secret: the one given with --secret")
    return 0


def cmd_bot_list(args: argparse.Namespace) -> int:
    """Every registered bot: id, name, status, Elo, owner, URL."""
    from arena.services.bots import list_registered_bots

    db = _existing_database(_settings())
    try:
        bots = list_registered_bots(db)
    finally:
        db.dispose()
    if args.json:
        rows = [
            {
                "id": b.id,
                "name": b.name,
                "status": b.status.value,
                "elo": round(b.elo, 1),
                "owner": b.owner,
                "url": b.url,
            }
            for b in bots
        ]
        print(json.dumps(rows, indent=2))
        return 0
    if not bots:
        print("no bots registered (gin-arena bot register NAME URL)")
        return 0
    table = [("id", "name", "status", "elo", "owner", "url")]
    table += [(str(b.id), b.name, b.status.value, f"{b.elo:.0f}", b.owner, b.url) for b in bots]
    widths = [max(len(row[i]) for row in table) for i in range(len(table[0]) - 1)]
    for row in table:
        print("  ".join(c.ljust(w) for c, w in zip(row, widths, strict=False)) + "  " + row[-1])
    return 0


def cmd_bot_check(args: argparse.Namespace) -> int:
    """Check a bot's conformance; exit 0 on pass, 1 on fail."""
    from arena.bots.check import check_bot

    secret = _secret(args.secret)
    wait_s = _wait_option(args.wait)
    _wait_until_listening(args.url, allow_loopback=not args.production, wait_s=wait_s)
    report = check_bot(
        args.url,
        secret=secret,
        allow_loopback=not args.production,
        repeats=args.repeats,
        deadline_ms=args.deadline_ms,
    )
    print(report.render())
    return 0 if report.passed else 1


def cmd_match(args: argparse.Namespace) -> int:
    """Play one match between two bot URLs; the record as JSON on stdout."""
    from arena.protocol.http_player import HttpPlayer

    rules = _rules(args)
    console = _console()
    secrets = [
        _secret(args.secret_a, "--secret-a") or _secret(args.secret),
        _secret(args.secret_b, "--secret-b") or _secret(args.secret),
    ]
    urls = (args.url_a, args.url_b)
    # A mistyped or dead URL is the user's error, not a forfeit: ask each bot who it is first.
    wait_s = _wait_option(args.wait)
    names = [_bot_name(url, allow_loopback=not args.production, wait_s=wait_s) for url in urls]
    if names[0] == names[1]:
        names = [f"{names[0]} (a)", f"{names[1]} (b)"]
    players: list[Player] = [
        HttpPlayer(url, name=names[i], secret=secrets[i], allow_loopback=not args.production)
        for i, url in enumerate(urls)
    ]
    if not args.quiet:
        for seat, url in zip("ab", urls, strict=True):
            console.print(f"{seat}: {names['ab'.index(seat)]} at {url}", highlight=False)

    def progress(p: MatchProgress) -> None:
        # Numbered as in the record: games[i].index and games[i].hands[j].index, from 0.
        console.print(
            f"game {p.game} deal {p.deal}: {p.last.outcome.value:<8} "
            f"points a {p.game_points[0]:>3} b {p.game_points[1]:>3}  "
            f"games won a {p.games_won[0]} b {p.games_won[1]}",
            highlight=False,
        )

    try:
        record = play_match(
            players,
            rules,
            seed=args.seed,
            match_id=args.match_id or f"match-{args.seed}",
            on_progress=None if args.quiet else progress,
        )
    except NeitherStartedError as exc:  # both answered GET / a moment ago, then failed /start
        raise UsageError(f"{urls[0]} and {urls[1]}: {exc}") from None
    data = record.to_dict()
    console.print(transcript(data, deals=False), highlight=False)
    print(json.dumps(data, indent=None if args.compact else 2))
    return 0


#: How long ``match`` and ``bot check`` wait for a URL that refuses connections to start
#: listening (a bot started with ``&`` on the line before may still be starting).
START_WAIT_S = 5.0


def _add_wait_option(p: argparse.ArgumentParser) -> None:
    """``--wait S`` of ``match`` and ``bot check`` (checked by :func:`_wait_option`)."""
    p.add_argument(
        "--wait",
        type=float,
        default=START_WAIT_S,
        metavar="S",
        help="wait up to S seconds for a URL that refuses connections to start listening"
        f" (default {START_WAIT_S:g}; 0: do not wait)",
    )


def _wait_until_listening(url: str, *, allow_loopback: bool, wait_s: float) -> None:
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


def _bot_name(url: str, *, allow_loopback: bool, wait_s: float = 0.0) -> str:
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
        _wait_until_listening(url, allow_loopback=allow_loopback, wait_s=wait_s)

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


def _settings(**overrides: Any) -> Settings:
    try:
        settings = load_settings(None, **overrides)
    except SettingsError as exc:
        raise UsageError(str(exc)) from None
    _check_database_url(settings.database_url)
    return settings


#: The databases gin-arena runs on: SQLAlchemy backend name -> the drivers installed for it.
DATABASE_DRIVERS = {"sqlite": ("pysqlite",), "postgresql": ("psycopg",)}


def _check_database_url(url: str) -> None:
    """ARENA_DATABASE_URL must name SQLite or PostgreSQL through psycopg (one line if not)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    try:
        parsed = make_url(url)
    except ArgumentError:
        raise UsageError(
            "ARENA_DATABASE_URL is not a database URL: use sqlite:///PATH or"
            " postgresql+psycopg://USER:PASSWORD@HOST/DB"
        ) from None
    backend, driver = parsed.get_backend_name(), parsed.get_driver_name()
    if driver not in DATABASE_DRIVERS.get(backend, ()):
        shown = parsed.render_as_string(hide_password=True)
        raise UsageError(
            f"ARENA_DATABASE_URL {shown}: gin-arena runs on SQLite (sqlite:///PATH) and"
            " PostgreSQL (postgresql+psycopg://USER:PASSWORD@HOST/DB) only"
        )


def _database(settings: Settings) -> Database:
    from arena.db.session import Database

    return Database(settings.database_url)


def _shown_url(url: str) -> str:
    """A database URL fit to print (no password)."""
    from sqlalchemy.engine import make_url

    return make_url(url).render_as_string(hide_password=True)


def _existing_database(settings: Settings) -> Database:
    """The configured database, which must exist and have the current schema (commands that
    only read or repair stored data: they never create a database by accident)."""
    from sqlalchemy.engine import make_url

    from arena.db.migrate import schema_problem

    url = make_url(settings.database_url)
    if url.get_backend_name() == "sqlite" and url.database not in (None, "", ":memory:"):
        path = Path(url.database)
        if not path.exists():
            raise UsageError(
                f"no database at {path.resolve()}: run `gin-arena db upgrade` to create one,"
                " or set ARENA_DATABASE_URL, or run from the directory holding arena.db"
            )
    db = _database(settings)
    problem = schema_problem(db)
    if problem is not None:
        db.dispose()
        raise UsageError(f"database {_shown_url(settings.database_url)} {problem}")
    return db


def cmd_db_upgrade(args: argparse.Namespace) -> int:
    """Create or migrate the schema to the newest revision."""
    from arena.db.migrate import current_revision, upgrade

    settings = _settings()
    db = _database(settings)
    before = current_revision(db)
    upgrade(db)
    after = current_revision(db)
    where = _shown_url(settings.database_url)
    print(f"database {where}: schema {before or 'empty'} -> {after}")
    return 0


def cmd_worker(args: argparse.Namespace) -> int:
    """Run a Celery worker (threads pool) for ARENA_BROKER_URL."""
    settings = _settings()
    if not settings.broker_url:
        raise UsageError("gin-arena worker needs ARENA_BROKER_URL (e.g. redis://127.0.0.1:6379/0)")
    from workers.celery_app import create_app

    app = create_app(settings)
    argv = [
        "worker",
        "--pool",
        "threads",
        "--concurrency",
        str(args.concurrency or settings.worker_threads),
    ]
    argv += ["--loglevel", args.loglevel, "--without-gossip", "--without-mingle"]
    if args.beat:
        argv.append("--beat")
    if args.hostname:
        argv += ["--hostname", args.hostname]
    app.worker_main(argv)
    return 0


def cmd_sweep(args: argparse.Namespace) -> int:
    """Put stuck matches back to pending and resubmit them."""
    from arena.executors import make_executor
    from arena.services.matches import sweep_stuck

    settings = _settings()
    ids = sweep_stuck(_existing_database(settings), pending_grace_s=args.pending_grace)
    if ids:
        executor = make_executor(settings)
        executor.submit(ids)
        executor.close()
    print(f"resubmitted {len(ids)} match(es)" + (f": {', '.join(map(str, ids))}" if ids else ""))
    return 0


def cmd_replay(args: argparse.Namespace) -> int:
    """Print a stored match and verify it replays to its recorded result."""
    from arena.replay import MatchNotFoundError, load_record, verify_record

    settings = _settings()
    try:
        record = load_record(_existing_database(settings), args.match_id)
    except MatchNotFoundError as exc:
        raise UsageError(str(exc)) from None
    problems = verify_record(record)
    if args.json:
        print(json.dumps(record, indent=2))
    else:
        print(transcript(record))
    if problems:
        print(f"REPLAY MISMATCH ({len(problems)} problem(s)):", file=sys.stderr)
        for problem in problems[:20]:
            print(f"  {problem}", file=sys.stderr)
        if len(problems) > 20:
            print(f"  ... and {len(problems) - 20} more", file=sys.stderr)
        return 1
    hands = sum(len(g["hands"]) for g in record["games"])
    print(f"replay verified: {hands} deals reproduce the recorded result", file=sys.stderr)
    return 0


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="gin-arena", description="Gin Rummy bot arena")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    p = sub.add_parser(
        "selfplay", help="play in-process players against each other, print a summary"
    )
    p.add_argument("--matches", type=int, default=10, help="number of matches (default 10)")
    p.add_argument("--seed", type=int, default=0, help="seed of the first match (default 0)")
    p.add_argument(
        "--players",
        default="heuristic,random",
        help="two of random, heuristic (default heuristic,random)",
    )
    p.add_argument("--json", action="store_true", help="print the summary as JSON")
    _add_rules_options(p)
    p.set_defaults(func=cmd_selfplay)

    p = sub.add_parser(
        "demo", help="the main job: eight house bots play a tournament, then the pages are served"
    )
    _add_format_options(p, "double_round_robin")
    p.add_argument("--no-serve", action="store_true", help="exit after the standings")
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    _add_rules_options(p)
    p.set_defaults(func=cmd_demo)

    p = sub.add_parser(
        "serve", help="serve the REST API and pages; with the local executor, play matches too"
    )
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument("--threads", type=int, default=8, help="request threads (default 8)")
    p.set_defaults(func=cmd_serve)

    tour = sub.add_parser("tournament", help="create, start, inspect or cancel tournaments")
    tsub = tour.add_subparsers(
        dest="tournament_command", required=True, metavar="TOURNAMENT_COMMAND"
    )
    p = tsub.add_parser("create", help="create a tournament; prints its id")
    p.add_argument("--name", default="tournament")
    p.add_argument(
        "--bots", nargs="+", metavar="BOT", help="bot names or ids (default: all active)"
    )
    p.add_argument("--unrated", action="store_true", help="do not change ratings")
    _add_format_options(p, "round_robin")
    _add_rules_options(p)
    p.set_defaults(func=cmd_tournament_create)
    p = tsub.add_parser("start", help="start a tournament (local executor: play it here)")
    p.add_argument("tournament_id", type=int, metavar="ID")
    p.add_argument("--wait", action="store_true", help="with Celery too, wait and show progress")
    p.set_defaults(func=cmd_tournament_start)
    p = tsub.add_parser("status", help="standings and match counts")
    p.add_argument("tournament_id", type=int, metavar="ID")
    p.set_defaults(func=cmd_tournament_status)
    p = tsub.add_parser("cancel", help="cancel: no new matches, finished ones stay")
    p.add_argument("tournament_id", type=int, metavar="ID")
    p.set_defaults(func=cmd_tournament_cancel)

    p = sub.add_parser(
        "match", help="play one match between two bot URLs; record as JSON on stdout"
    )
    p.add_argument("url_a", metavar="URL_A")
    p.add_argument("url_b", metavar="URL_B")
    p.add_argument("--seed", type=int, required=True, help="match seed (decides every deal)")
    p.add_argument("--secret", help="signing secret for both bots (whsec_...)")
    p.add_argument("--secret-a", help="signing secret for URL_A")
    p.add_argument("--secret-b", help="signing secret for URL_B")
    p.add_argument("--match-id", help="match id sent to the bots (default match-SEED)")
    p.add_argument(
        "--production", action="store_true", help="refuse loopback URLs, as the service does"
    )
    _add_wait_option(p)
    p.add_argument("--quiet", action="store_true", help="no per-deal progress on stderr")
    p.add_argument("--compact", action="store_true", help="print the JSON on one line")
    _add_rules_options(p)
    p.set_defaults(func=cmd_match)

    bot = sub.add_parser("bot", help="register, list, serve or check bots").add_subparsers(
        dest="bot_command", required=True, metavar="BOT_COMMAND"
    )
    p = bot.add_parser("serve", help="serve a house bot on 127.0.0.1")
    p.add_argument("--kind", required=True, choices=HOUSE_KINDS)
    p.add_argument("--port", type=int, default=8101)
    p.add_argument("--host", default="127.0.0.1")
    p.add_argument("--secret", help="verify the arena's signatures with this secret")
    p.set_defaults(func=cmd_bot_serve)
    p = bot.add_parser(
        "register", help="check the bot at URL and register it (prints its token and secret)"
    )
    p.add_argument("name", metavar="NAME", help="the bot's unique name")
    p.add_argument("url", metavar="URL", help="where the bot serves the protocol")
    p.add_argument(
        "--owner",
        default="organiser",
        help="the owner's contact, e.g. an e-mail address (default 'organiser')",
    )
    p.add_argument(
        "--secret",
        help="the bot's signing secret (whsec_...), if the owner brings one (default: a new one)",
    )
    p.set_defaults(func=cmd_bot_register)
    p = bot.add_parser("list", help="every registered bot: id, name, status, Elo, owner, URL")
    p.add_argument("--json", action="store_true", help="print the list as JSON")
    p.set_defaults(func=cmd_bot_list)
    p = bot.add_parser("check", help="check that a bot speaks the protocol correctly")
    p.add_argument("url", metavar="URL")
    p.add_argument(
        "--secret",
        help="the bot's signing secret (also checks that unsigned, forged, stale, future and"
        " replayed requests are refused, and a rotation's two signatures accepted)",
    )
    p.add_argument(
        "--repeats", type=int, default=30, help="extra requests for latency (default 30)"
    )
    p.add_argument(
        "--deadline-ms", type=int, default=1000, help="deadline to check against (default 1000)"
    )
    _add_wait_option(p)
    p.add_argument(
        "--production", action="store_true", help="refuse loopback URLs, as the service does"
    )
    p.set_defaults(func=cmd_bot_check)

    dbp = sub.add_parser("db", help="database schema").add_subparsers(
        dest="db_command", required=True, metavar="DB_COMMAND"
    )
    p = dbp.add_parser("upgrade", help="create or migrate the schema (ARENA_DATABASE_URL)")
    p.set_defaults(func=cmd_db_upgrade)

    p = sub.add_parser("worker", help="run a Celery worker (ARENA_BROKER_URL)")
    p.add_argument("--concurrency", type=int, help="matches at once (default ARENA_WORKER_THREADS)")
    p.add_argument("--loglevel", default="INFO")
    p.add_argument(
        "--beat", action="store_true", help="also run the periodic sweeper (one worker only)"
    )
    p.add_argument("--hostname", help="worker node name")
    p.set_defaults(func=cmd_worker)

    p = sub.add_parser("sweep", help="resubmit matches stuck in running past their lease")
    p.add_argument(
        "--pending-grace",
        type=int,
        default=3600,
        help="also resubmit pending matches older than this (s)",
    )
    p.set_defaults(func=cmd_sweep)

    p = sub.add_parser("replay", help="print a stored match and verify its replay")
    p.add_argument("match_id", type=int, metavar="MATCH_ID")
    p.add_argument("--json", action="store_true", help="print the raw record as JSON")
    p.set_defaults(func=cmd_replay)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``gin-arena`` console script."""
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        result: int = args.func(args)
        return result
    except UsageError as exc:
        print(f"gin-arena: error: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("gin-arena: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # The reader of our output went away (e.g. `| head`): not an error of ours.
        sys.stderr.close()
        return 0
    except Exception as exc:
        # A database that cannot be reached or used: one line, not a stack trace. (If
        # SQLAlchemy was never imported, the error cannot be one of its.)
        sa_exc = sys.modules.get("sqlalchemy.exc")
        if sa_exc is None or not isinstance(exc, sa_exc.DBAPIError):
            raise
        reason = " ".join(str(exc.orig).split()) or type(exc.orig).__name__
        print(f"gin-arena: error: database: {reason}", file=sys.stderr)
        return 1


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
