"""``gin-arena rerun MATCH_ID``: a stored match played again with your bot in one seat, or one
stored request sent to it again (``--step``); see :mod:`arena.playing.rerun`.

The match is read from this arena's database (``--database``, default ``ARENA_DATABASE_URL``)
or a remote arena's API (``--api URL``). The report is text on stdout (``--json``: one JSON
object); every user error is one line.
"""

from __future__ import annotations

import argparse
import json
from collections.abc import Iterator
from contextlib import contextmanager
from typing import TYPE_CHECKING, Any

from arena.cli.options import UsageError, add_wait_option, secret_option, wait_option
from arena.cli.reach import bot_name

if TYPE_CHECKING:
    from arena.cli.options import Subcommands
    from arena.playing.players import Player
    from arena.playing.rerun import Answer, RerunResult
    from arena.playing.rerun_step import StepCheck
    from arena.playing.stored import StoredMatch
    from arena.reading.rerun_source import ReplaySource

__all__ = ["register"]

#: The opponent from the first divergence on, unless ``--opponent`` says otherwise.
DEFAULT_OPPONENT = "house:strong"


def _source(args: argparse.Namespace) -> tuple[ReplaySource, str]:
    """Where the match is read from, and how to name it."""
    from arena.reading.rerun_source import ApiReplays, DatabaseReplays, ReplayUnavailableError

    if args.api is not None:
        if args.database is not None:
            raise UsageError("--api and --database exclude each other: read one arena")
        try:
            source = ApiReplays(args.api)
        except ReplayUnavailableError as exc:
            raise UsageError(str(exc)) from None
        return source, source.base
    from arena.cli.database import existing_database, settings_from_environment
    from arena.db.urls import DatabaseUrlError, check_database_url, shown_url

    settings = settings_from_environment()
    if args.database is not None:
        try:
            check_database_url(args.database)
        except DatabaseUrlError as exc:
            raise UsageError(f"--database {exc}") from None
        settings = settings.replace(database_url=args.database)
    return DatabaseReplays(existing_database(settings)), shown_url(settings.database_url)


def _record(source: ReplaySource, match_id: int) -> StoredMatch:
    from arena.reading.rerun_source import ReplayUnavailableError

    try:
        return source.record(match_id)
    except ReplayUnavailableError as exc:
        raise UsageError(str(exc)) from None


def _your_bot(args: argparse.Namespace) -> Any:
    """The HTTP player of ``--bot`` (checked: a bot answers ``GET /`` there)."""
    from arena.protocol.http_player import HttpPlayer

    loopback = not args.production
    name = bot_name(args.bot, allow_loopback=loopback, wait_s=wait_option(args.wait))
    secret = secret_option(args.secret)
    return HttpPlayer(args.bot, name=name, secret=secret, allow_loopback=loopback)


@contextmanager
def _opponent(args: argparse.Namespace) -> Iterator[tuple[Player, str]]:
    """The opponent from the first divergence on: a house bot by kind, served here on
    loopback for the rerun, or the bot at a URL; and how to name it."""
    from arena.bots.house import HOUSE_KINDS, house_bot
    from arena.protocol.http_player import HttpPlayer

    spec = args.opponent or DEFAULT_OPPONENT
    label = spec if args.opponent else f"{spec} (the default; --opponent URL or house:KIND)"
    if spec.startswith("house:"):
        kind = spec.removeprefix("house:")
        if kind not in HOUSE_KINDS:
            raise UsageError(
                f"--opponent {spec}: no such house bot; choose one of "
                + ", ".join(f"house:{k}" for k in HOUSE_KINDS)
            )
        server = house_bot(kind, name=f"house-{kind}").start()
        try:
            yield HttpPlayer(server.url, name=f"house-{kind}", allow_loopback=True), label
        finally:
            server.stop()
        return
    loopback = not args.production
    name = bot_name(spec, allow_loopback=loopback, wait_s=wait_option(args.wait))
    secret = secret_option(args.opponent_secret, "--opponent-secret")
    yield HttpPlayer(spec, name=name, secret=secret, allow_loopback=loopback), f"{name} at {spec}"


def _start_error(message: str) -> UsageError:
    hint = (
        " (give the bot's signing secret with --secret)" if "signature_refused" in message else ""
    )
    return UsageError(message + hint)


def cmd_rerun(args: argparse.Namespace) -> int:
    """Rerun a stored match with your bot in one seat, or send it one stored request."""
    from arena.playing.rerun import StepAddress

    if args.step is None and args.seat is None:
        raise UsageError("say which seat your bot takes (--seat a|b), or one step (--step)")
    where = None
    if args.step is not None:
        try:
            where = StepAddress.parse(args.step)
        except ValueError as exc:
            raise UsageError(f"--step: {exc}") from None
    source, shown = _source(args)
    try:
        return _run(args, source, shown, where)
    finally:
        source.close()


def _run(args: argparse.Namespace, source: ReplaySource, shown: str, where: Any) -> int:
    from arena.playing.rerun import RerunError, rerun_match

    page = shown if args.api is not None else ""  # the pages of `gin-arena serve`: a path
    record = _record(source, args.match_id)
    bot = _your_bot(args)
    try:
        if where is not None:
            check = _step(source, record, args, where, bot)
            text = _step_text(check, args.match_id, page)
            print(json.dumps(check.to_dict(), indent=2) if args.json else text)
            return 0
        with _opponent(args) as (opponent, label):
            result = rerun_match(record, args.seat, bot, opponent)
    except RerunError as exc:
        raise _start_error(str(exc)) from None
    if args.json:
        print(json.dumps(_rerun_json(args.match_id, result, label), indent=2))
    else:
        print(_rerun_text(args.match_id, shown, args.bot, bot.name, result, label, page))
    return 0


def _step(
    source: ReplaySource, record: StoredMatch, args: argparse.Namespace, where: Any, bot: Any
) -> StepCheck:
    from arena.playing.rerun_step import find_step, rerun_step
    from arena.reading.rerun_source import ReplayUnavailableError

    seat, _ = find_step(record, where)
    if args.seat is not None and args.seat != seat:
        raise UsageError(f"step {where} is seat {seat}'s, not seat {args.seat}'s (drop --seat)")
    try:
        view = source.seat_view(args.match_id, seat)
    except ReplayUnavailableError as exc:
        raise UsageError(str(exc)) from None
    return rerun_step(record, view, where, bot)


# --- the report ---------------------------------------------------------------------------------


def _answer_line(answer: Answer) -> str:
    extra = []
    if answer.latency_ms is not None:
        extra.append(f"{answer.latency_ms:g} ms")
    if isinstance(answer.raw, str):
        extra.append(f"as sent: {answer.raw[:200]}")
    elif answer.raw is not None:
        extra.append("as sent: (binary, base64 in --json)")
    return answer.text() + (f"  ({'; '.join(extra)})" if extra else "")


def _cards(cards: Any) -> str:
    return " ".join(cards) if cards else "-"


def _position(request: dict[str, Any]) -> list[str]:
    """The position as the bot saw it (its request), in a few lines."""
    legal = [
        " ".join(str(v) for v in (a.get("action"), a.get("card")) if v)
        for a in request.get("legal_actions", [])
    ]
    scores, won = request.get("scores") or {}, request.get("games_won") or {}
    lines = [
        f"phase {request.get('phase')}, request {request.get('request_id')}",
        f"hand: {_cards(request.get('hand'))}",
        f"discard top {request.get('discard_top') or '-'}, stock {request.get('stock_count')},"
        f" opponent known: {_cards(request.get('opponent_known'))}",
        f"scores you {scores.get('you')} opponent {scores.get('opponent')},"
        f" games won you {won.get('you')} opponent {won.get('opponent')}",
        f"legal: {' | '.join(legal)}",
    ]
    return ["    " + line for line in lines]


def _result(record: StoredMatch) -> str:
    games = "; ".join(
        f"game {g.index} to {g.winner}, totals a {g.totals.a} b {g.totals.b}" for g in record.games
    )
    if record.winner is None:
        head = "no winner"
    else:
        head = f"{record.winner} ({record.players.of(record.winner)}) wins"
    won = f"games won a {record.games_won.a} b {record.games_won.b}"
    forfeit = f", forfeit: {record.forfeit.reason}" if record.forfeit is not None else ""
    return f"{head}, {won}{forfeit}; {games or 'no game finished'}"


def _viewer(page: str, match_id: int, anchor: str) -> str:
    """Where the replay viewer shows a step: on the remote arena, or under ``gin-arena serve``."""
    return f"{page}/matches/{match_id}#{anchor}"


def _rerun_text(
    match_id: int, shown: str, url: str, name: str, result: RerunResult, label: str, page: str
) -> str:
    stored = result.stored
    names = stored.players
    lines = [
        f"match {match_id} ({stored.match_id}): {names.a} (a) v {names.b} (b), from {shown}",
        f"your bot {name} at {url} plays seat {result.seat} ({names.of(result.seat)}'s)",
    ]
    d = result.divergence
    if d is None:
        lines.append(
            f"no divergence: your bot answered as the stored one at all {result.agreed} of its"
            " steps"
        )
    else:
        lines += [
            f"diverged at step {d.address} (game {d.address.game} deal {d.address.deal},"
            f" action {d.address.step} of the deal), after {result.agreed} answers as stored",
            f"  viewer: {_viewer(page, match_id, d.address.anchor)}",
            "  the position your bot saw:",
            *_position(d.request),
            f"  stored answer: {_answer_line(d.stored)}",
            f"  your answer:   {_answer_line(d.yours)}",
            f"then played on, the same deals, against {label}",
        ]
    same = _outcome(result.stored) == _outcome(result.rerun)
    lines += [
        f"result stored: {_result(result.stored)}",
        f"result rerun:  {_result(result.rerun)}" + ("  (the same)" if same else ""),
    ]
    return "\n".join(lines)


def _outcome(record: StoredMatch) -> tuple[object, ...]:
    """What a match's result is, for "the same": winner, games won and each game's totals."""
    return (
        record.winner,
        record.games_won,
        [(g.winner, g.totals) for g in record.games],
        record.forfeit is not None,
    )


def _summary(record: StoredMatch) -> dict[str, Any]:
    data = record.to_dict()
    return {
        "winner": data["winner"],
        "games_won": data["games_won"],
        "forfeit": data["forfeit"],
        "games": [{"index": g["index"], "winner": g["winner"], "totals": g["totals"]}
                  for g in data["games"]],
    }  # fmt: skip


def _rerun_json(match_id: int, result: RerunResult, label: str) -> dict[str, Any]:
    return {
        "match": match_id,
        "seat": result.seat,
        "opponent": label if result.divergence is not None else None,
        "agreed": result.agreed,
        "divergence": None if result.divergence is None else result.divergence.to_dict(),
        "stored": _summary(result.stored),
        "rerun": _summary(result.rerun),
        "same_result": _outcome(result.stored) == _outcome(result.rerun),
        "record": result.rerun.to_dict(),
    }


def _step_text(check: StepCheck, match_id: int, page: str) -> str:
    verdict = "the same answer" if check.same else "a different answer"
    return "\n".join(
        [
            f"step {check.address} (seat {check.seat}): {verdict}",
            f"  viewer: {_viewer(page, match_id, check.address.anchor)}",
            "  the position (the stored request, sent as it was):",
            *_position(check.request),
            f"  stored answer: {_answer_line(check.stored)}",
            f"  your answer:   {_answer_line(check.yours)}",
        ]
    )


def register(sub: Subcommands) -> None:
    """``gin-arena rerun MATCH_ID --seat a|b --bot URL`` and ``... --step G:D:S --bot URL``."""
    p = sub.add_parser(
        "rerun",
        help="play a stored match again with your bot in one seat; show where it diverges",
    )
    p.add_argument("match_id", type=int, metavar="MATCH_ID")
    p.add_argument("--bot", required=True, metavar="URL", help="your bot")
    p.add_argument("--seat", choices=("a", "b"), help="the seat your bot takes")
    p.add_argument(
        "--step",
        metavar="GAME:DEAL:STEP",
        help="send only this step's stored request (numbers from 0; STEP: the action's index"
        " in the deal's log) and show the answer beside the stored one",
    )
    p.add_argument(
        "--opponent",
        metavar="URL|house:KIND",
        help=f"who plays the other seat after the first divergence (default {DEFAULT_OPPONENT})",
    )
    p.add_argument("--secret", help="your bot's signing secret (whsec_...): requests are signed")
    p.add_argument("--opponent-secret", help="the --opponent URL's signing secret")
    p.add_argument(
        "--database", metavar="URL", help="read this database (default ARENA_DATABASE_URL)"
    )
    p.add_argument("--api", metavar="URL", help="read the match from a remote arena's API instead")
    p.add_argument(
        "--production", action="store_true", help="refuse loopback URLs, as the service does"
    )
    add_wait_option(p)
    p.add_argument("--json", action="store_true", help="print the report as one JSON object")
    p.set_defaults(func=cmd_rerun)
