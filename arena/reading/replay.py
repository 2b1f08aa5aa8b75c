"""Replays: the stored record of a match, and its verification through the engine.

A stored match is its summary plus every deal's log (deck, dealer, actions).
:func:`load_record` reads it (:mod:`arena.reading.queries.records`) and decodes it once into the
typed record (:func:`arena.playing.stored.parse_record`). Verification replays each deal
through the rules engine and checks that it ends exactly as recorded (outcome, winner, points,
deadwood), that the games add up to their recorded points, totals and winners, and that the
digest taken when the result was recorded still matches the logs (so an edited event is caught
even if it happens to replay).
"""

from __future__ import annotations

from enum import Enum
from typing import Any

from arena.db.session import Database
from arena.playing.records import SEATS, seat_letter
from arena.playing.stored import (
    BySeat,
    RecordFormatError,
    StoredDeal,
    StoredHand,
    StoredMatch,
    deal_logs,
    deal_record,
    parse_record,
    record_digest,
)
from arena.reading.queries.records import StoredRows, stored_record
from arena.rules.game import HollywoodScore, add_deal
from arena.rules.hand import DealResult
from arena.rules.record import ReplayError, replay_deal
from arena.rules.ruleset import MatchScoring, RuleSet
from arena.rules.scoring import GameScore, final_totals
from arena.states import MatchStatus

__all__ = ["LoadedMatch", "load_record", "load_stored_json", "verify_record"]


class LoadedMatch(StoredMatch, frozen=True):
    """A stored match as read back: its record, the digest taken when it was recorded (over
    :func:`~arena.playing.stored.deal_logs`), and the match's status."""

    digest: str
    status: MatchStatus


def load_record(db: Database, match_id: int) -> LoadedMatch:
    """The full record of a finished match (summary with every deal's log) and its digest.

    Raises :class:`~arena.errors.NotFoundError` for no such match,
    :class:`~arena.reading.queries.records.RecordNotReadyError` while it has no result, and
    :class:`~arena.playing.stored.RecordFormatError` if what is stored is not a record.
    """
    rows = stored_record(db, match_id)
    return parse_record(_assembled(rows), LoadedMatch, schema_version=rows.schema_version)


def load_stored_json(db: Database, match_id: int) -> dict[str, Any]:
    """The full record of a finished match in its stored JSON form (with its digest and
    status), assembled from its rows but not decoded: what the API serves as the omniscient
    replay. Decoding every action entry of a long match costs more than reading it, so it is
    left to whoever replays the record (:func:`load_record`). Raises as :func:`load_record`
    does, and :class:`~arena.playing.stored.RecordFormatError` if the rows do not fit together.
    """
    data = _assembled(stored_record(db, match_id))
    if not isinstance(data, dict) or not isinstance(data.get("games"), list):
        raise RecordFormatError("not a match record: its summary is not an object with games")
    return data


def _assembled(rows: StoredRows) -> object:
    """The record's JSON from its rows: each game's summary with its deals, and the unfinished
    game's deals (any field out of place is left for :func:`parse_record` to name)."""
    summary = rows.summary
    if not isinstance(summary, dict) or not isinstance(summary.get("games"), list):
        return summary
    complete = [g.hands for g in rows.games if g.complete]
    partial = [g.hands for g in rows.games if not g.complete]
    if len(complete) != len(summary["games"]):
        raise RecordFormatError(
            f"not a match record: its summary has {len(summary['games'])} games,"
            f" the database {len(complete)}"
        )
    record = dict(summary)
    record["games"] = [
        {**game, "hands": hands} if isinstance(game, dict) else game
        for game, hands in zip(summary["games"], complete, strict=True)
    ]
    unfinished = summary.get("unfinished_game")
    if isinstance(unfinished, dict):
        record["unfinished_game"] = {**unfinished, "hands": partial[0] if partial else []}
    record["digest"] = rows.digest
    record["status"] = rows.status.value
    return record


#: What a deal's record says about how it ended, each checked against the replay.
_DEAL_END = ("outcome", "winner", "points", "knocker", "knocker_deadwood", "defender_deadwood")
#: What a game's record says about how it ended.
_GAME_END = ("points", "totals", "winner")


def _recorded_end(hand: StoredHand) -> tuple[object, ...]:
    return (
        hand.outcome,
        hand.winner,
        hand.points,
        hand.knocker,
        hand.knocker_deadwood,
        hand.defender_deadwood,
    )


def _replayed_end(deal: DealResult) -> tuple[object, ...]:
    h = deal.result
    knocked = deal.knocker is not None
    return (
        h.outcome,
        seat_letter(deal.winner),
        h.points,
        seat_letter(deal.knocker),
        h.knocker_deadwood if knocked else None,
        h.defender_deadwood if knocked else None,
    )


def _differences(
    where: str, names: tuple[str, ...], recorded: tuple[object, ...], replayed: tuple[object, ...]
) -> list[str]:
    return [
        f"{where}: {name} recorded {_shown(mine)!r}, replay gives {_shown(theirs)!r}"
        for name, mine, theirs in zip(names, recorded, replayed, strict=True)
        if mine != theirs
    ]


def _shown(value: object) -> object:
    """A value as its JSON reads (``'knock'``, ``{'a': 1, 'b': 2}``), for a problem's text."""
    if isinstance(value, BySeat):
        return {"a": value.a, "b": value.b}
    return value.value if isinstance(value, Enum) else value


def _check_deal(
    rules: RuleSet, hand: StoredHand, where: str
) -> tuple[DealResult | None, list[str]]:
    try:
        *_, final = replay_deal(deal_record(rules, hand))
    except ValueError as exc:  # ReplayError, ActionError, a deck that does not parse
        return None, [f"{where}: does not replay: {exc}"]
    assert final.result is not None
    recorded, replayed = _recorded_end(hand), _replayed_end(final.result)
    return final.result, _differences(where, _DEAL_END, recorded, replayed)


def _check_interrupted(rules: RuleSet, deal: StoredDeal) -> list[str]:
    """The deal a forfeit cut short replays, legally, up to the forfeit."""
    where = f"interrupted deal (game {deal.game + 1} deal {deal.index + 1})"
    try:
        states = replay_deal(deal_record(rules, deal))
        for _ in range(len(deal.actions) + 1):
            next(states)
    except ReplayError as exc:
        if "ends before the deal does" in str(exc):
            return []
        return [f"{where}: does not replay: {exc}"]
    except (ValueError, StopIteration) as exc:
        return [f"{where}: does not replay: {exc}"]
    return []


def _pair(values: tuple[int, int]) -> BySeat[int]:
    return BySeat(values[0], values[1])


def verify_record(record: StoredMatch) -> list[str]:
    """Everything wrong with a record (an empty list: it replays exactly). A
    :class:`LoadedMatch`'s digest is checked too."""
    rules = record.ruleset()
    problems: list[str] = []
    # Hollywood: every game is scored from all deals so far, whichever game records them.
    hollywood = rules.match_scoring is MatchScoring.HOLLYWOOD
    sheet = HollywoodScore.new(rules)
    for game in record.games:
        score = GameScore()
        for hand in game.hands:
            where = f"game {game.index + 1} deal {hand.index + 1}"
            deal, found = _check_deal(rules, hand, where)
            problems += found
            if deal is not None:
                score = add_deal(rules, score, deal)
                if hollywood and sheet.current(rules.target) is not None:
                    sheet = sheet.add(rules, deal)
        if hollywood and game.index < len(sheet.games):
            score = sheet.games[game.index]
        if not score.over(rules.target):
            problems.append(f"game {game.index + 1}: the deals do not reach the target")
            continue
        result = final_totals(rules, score)
        recorded = (game.points, game.totals, game.winner)
        replayed = (_pair(result.points), _pair(result.totals), SEATS[result.winner])
        problems += _differences(f"game {game.index + 1}", _GAME_END, recorded, replayed)
    if record.unfinished_game is not None:
        for hand in record.unfinished_game.hands:
            problems += _check_deal(rules, hand, f"unfinished game deal {hand.index + 1}")[1]
    if record.interrupted_deal is not None:
        problems += _check_interrupted(rules, record.interrupted_deal)
    wins = [sum(1 for g in record.games if g.winner == s) for s in SEATS]
    if record.forfeit is None:
        need = rules.best_of // 2 + 1
        if hollywood and sum(wins) != rules.best_of:
            problems.append(f"games won {wins[0]}-{wins[1]}: Hollywood plays {rules.best_of}")
        elif max(wins) != need and not (hollywood and max(wins) > need):
            problems.append(f"games won {wins[0]}-{wins[1]}: nobody reached {need}")
        elif record.winner != SEATS[0 if wins[0] > wins[1] else 1]:
            problems.append(f"winner recorded {record.winner!r} but games were {wins[0]}-{wins[1]}")
    if isinstance(record, LoadedMatch) and record.digest != record_digest(
        deal_logs(record.to_dict())
    ):
        problems.append("the deal logs do not match the digest taken when the result was recorded")
    return problems
