"""Replays: the stored record of a match, and its verification through the engine.

A stored match is its summary plus every deal's log (deck, dealer, actions). Verification
replays each deal through the rules engine and checks that it ends exactly as recorded
(outcome, winner, points, deadwood), that the games add up to their recorded points, totals
and winners, and that the digest taken when the result was recorded still matches the logs (so
an edited event is caught even if it happens to replay).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from sqlalchemy import select

from arena.db.models import GameRow, HandRow, Match, MatchResult
from arena.db.session import Database
from arena.rules.actions import ActionError
from arena.rules.game import HollywoodScore, add_deal
from arena.rules.hand import DealResult
from arena.rules.record import DealRecord, ReplayError, replay_deal
from arena.rules.ruleset import MatchScoring, RuleSet, RuleSetError
from arena.rules.scoring import GameScore, final_totals
from arena.services.matches import digested_logs, record_digest

__all__ = ["MatchNotFoundError", "load_record", "verify_record"]

SEATS = ("a", "b")


class MatchNotFoundError(LookupError):
    """No such match, or it has no recorded result yet."""


def load_record(db: Database, match_id: int) -> dict[str, Any]:
    """The full record of a finished match (summary with every deal's log) and its digest."""
    with db.session() as session:
        match = session.get(Match, match_id)
        if match is None:
            raise MatchNotFoundError(f"no match {match_id}")
        result = session.get(MatchResult, match_id)
        if result is None:
            raise MatchNotFoundError(f"match {match_id} has no result yet (status {match.status})")
        games = session.scalars(
            select(GameRow).where(GameRow.match_id == match_id).order_by(GameRow.index)
        ).all()
        hands: dict[int, list[dict[str, Any]]] = {}
        for row in session.scalars(
            select(HandRow)
            .where(HandRow.match_id == match_id)
            .order_by(HandRow.game_id, HandRow.index)
        ):
            hands.setdefault(row.game_id, []).append(row.log)
        record = dict(result.summary)
        complete = [g for g in games if g.complete]
        record["games"] = [
            {**summary, "hands": hands.get(row.id, [])}
            for summary, row in zip(record["games"], complete, strict=True)
        ]
        partial = [g for g in games if not g.complete]
        if record.get("unfinished_game") is not None:
            record["unfinished_game"] = {
                **record["unfinished_game"],
                "hands": hands.get(partial[0].id, []) if partial else [],
            }
        record["digest"] = result.digest
        record["status"] = match.status.value
    return record


def _check_deal(
    rules: RuleSet, hand: Mapping[str, Any], where: str
) -> tuple[DealResult | None, list[str]]:
    problems: list[str] = []
    try:
        record = DealRecord.from_dict(rules, hand)
        *_, final = replay_deal(record)
    except (ReplayError, ActionError, ValueError, KeyError, TypeError) as exc:
        return None, [f"{where}: does not replay: {exc}"]
    assert final.result is not None
    deal = final.result
    h = deal.result
    replayed = {
        "outcome": h.outcome.value,
        "winner": None if deal.winner is None else SEATS[deal.winner],
        "points": h.points,
        "knocker": None if deal.knocker is None else SEATS[deal.knocker],
        "knocker_deadwood": h.knocker_deadwood if deal.knocker is not None else None,
        "defender_deadwood": h.defender_deadwood if deal.knocker is not None else None,
    }
    for key, value in replayed.items():
        if hand.get(key) != value:
            problems.append(f"{where}: {key} recorded {hand.get(key)!r}, replay gives {value!r}")
    return deal, problems


def _check_interrupted(rules: RuleSet, deal: Mapping[str, Any]) -> list[str]:
    """The deal a forfeit cut short replays, legally, up to the forfeit."""
    where = f"interrupted deal (game {deal['game'] + 1} deal {deal['index'] + 1})"
    try:
        record = DealRecord.from_dict(rules, deal)
        states = replay_deal(record)
        for _ in range(len(record.actions) + 1):
            next(states)
    except ReplayError as exc:
        if "ends before the deal does" in str(exc):
            return []
        return [f"{where}: does not replay: {exc}"]
    except (ActionError, ValueError, KeyError, TypeError, StopIteration) as exc:
        return [f"{where}: does not replay: {exc}"]
    return []


def verify_record(record: Mapping[str, Any]) -> list[str]:
    """Everything wrong with a record (an empty list: it replays exactly)."""
    try:
        rules = RuleSet.from_dict(record["rules"])
    except (RuleSetError, KeyError) as exc:
        return [f"the rule set does not load: {exc}"]
    problems: list[str] = []
    logs: list[Mapping[str, Any]] = []
    # Hollywood: every game is scored from all deals so far, whichever game records them.
    hollywood = rules.match_scoring is MatchScoring.HOLLYWOOD
    sheet = HollywoodScore.new(rules)
    for game in record["games"]:
        score = GameScore()
        for hand in game["hands"]:
            logs.append(hand)
            where = f"game {game['index'] + 1} deal {hand['index'] + 1}"
            deal, found = _check_deal(rules, hand, where)
            problems += found
            if deal is not None:
                score = add_deal(rules, score, deal)
                if hollywood and sheet.current(rules.target) is not None:
                    sheet = sheet.add(rules, deal)
        if hollywood and game["index"] < len(sheet.games):
            score = sheet.games[game["index"]]
        if not score.over(rules.target):
            problems.append(f"game {game['index'] + 1}: the deals do not reach the target")
            continue
        result = final_totals(rules, score)
        expect = {
            "points": {"a": result.points[0], "b": result.points[1]},
            "totals": {"a": result.totals[0], "b": result.totals[1]},
            "winner": SEATS[result.winner],
        }
        for key, value in expect.items():
            if game.get(key) != value:
                recorded = game.get(key)
                problems.append(
                    f"game {game['index'] + 1}: {key} recorded {recorded!r}, replay gives {value!r}"
                )
    unfinished = record.get("unfinished_game")
    if unfinished:
        for hand in unfinished["hands"]:
            logs.append(hand)
            problems += _check_deal(rules, hand, f"unfinished game deal {hand['index'] + 1}")[1]
    interrupted = record.get("interrupted_deal")
    if interrupted:
        problems += _check_interrupted(rules, interrupted)
    wins = [sum(1 for g in record["games"] if g.get("winner") == s) for s in SEATS]
    if record.get("forfeit") is None:
        need = rules.best_of // 2 + 1
        if hollywood and sum(wins) != rules.best_of:
            problems.append(f"games won {wins[0]}-{wins[1]}: Hollywood plays {rules.best_of}")
        elif max(wins) != need and not (hollywood and max(wins) > need):
            problems.append(f"games won {wins[0]}-{wins[1]}: nobody reached {need}")
        elif record.get("winner") != SEATS[0 if wins[0] > wins[1] else 1]:
            problems.append(
                f"winner recorded {record.get('winner')!r} but games were {wins[0]}-{wins[1]}"
            )
    if "digest" in record and record["digest"] != record_digest(
        digested_logs([dict(h) for h in logs], record)
    ):
        problems.append("the deal logs do not match the digest taken when the result was recorded")
    return problems
