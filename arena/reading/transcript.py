"""Readable text of a match record: what the demo, ``selfplay`` and ``replay`` print.

Works on the typed record (:class:`~arena.playing.stored.StoredMatch`), so a stored replay prints
the same way as a match just played. Games and deals are numbered as the record numbers them
(their ``index``, from 0), so a line can be found in the JSON by its numbers.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable

from arena.playing.stored import Seat, StoredHand, StoredMatch
from arena.rules.scoring import Outcome

__all__ = ["hand_line", "match_summary", "outcome_counts", "transcript"]

_WHAT = {
    Outcome.KNOCK: "knocks",
    Outcome.UNDERCUT: "knocks and is undercut",
    Outcome.GIN: "goes gin",
    Outcome.BIG_GIN: "goes big gin",
    Outcome.TIE: "knocks; equal deadwood, no score",
}


def _name(record: StoredMatch, seat: Seat | None) -> str:
    if seat is None:
        return "nobody"
    return f"{record.players.of(seat)} ({seat})"


def hand_line(record: StoredMatch, hand: StoredHand) -> str:
    """One line for one deal."""
    dealer = record.players.of(hand.dealer)
    head = f"deal {hand.index:>2} (dealer {dealer}): "
    mk = "".join(
        f" [misknock by {_name(record, m.seat)} with {m.deadwood} deadwood]" for m in hand.misknocks
    )
    if hand.outcome is Outcome.DEAD:
        return head + "dead hand, no score" + mk
    knocker = _name(record, hand.knocker)
    what = _WHAT[hand.outcome]
    text = f"{knocker} {what} ({hand.knocker_deadwood} v {hand.defender_deadwood})"
    if hand.winner is not None:
        text += f": {_name(record, hand.winner)} +{hand.points}"
    if hand.multiplier != 1:
        text += f" (x{hand.multiplier})"
    return head + text + mk


def transcript(record: StoredMatch, *, deals: bool = True) -> str:
    """The whole match as text: each game, optionally each deal, and the result."""
    players = record.players
    head = f"Match {record.match_id}: {players.a} (a) v {players.b} (b)"
    lines = [f"{head}, seed {record.seed}"]
    for game in record.games:
        pts, tot = game.points, game.totals
        lines.append(
            f"Game {game.index}: {len(game.hands)} deals; "
            f"hand points {pts.a}-{pts.b}, with bonuses {tot.a}-{tot.b}"
            + (" (shutout)" if game.shutout else "")
            + f" -> {_name(record, game.winner)}"
        )
        if deals:
            lines.extend("   " + hand_line(record, h) for h in game.hands)
    unfinished = record.unfinished_game
    if unfinished and unfinished.hands and deals:
        lines.append("Unfinished game:")
        lines.extend("   " + hand_line(record, h) for h in unfinished.hands)
    for fault in record.faults:
        lines.append(
            f"fault: {_name(record, fault.seat)} game {fault.game} "
            f"deal {fault.deal}: {fault.kind} ({fault.detail})"
        )
    lines.append(match_summary(record))
    return "\n".join(lines)


def match_summary(record: StoredMatch) -> str:
    """One line: who won and how."""
    won = record.games_won
    forfeit = record.forfeit
    if forfeit is not None:
        who = "both players" if forfeit.seat is None else _name(record, forfeit.seat)
        return f"Forfeit by {who}: {forfeit.reason} -> winner {_name(record, record.winner)}"
    return f"Winner: {_name(record, record.winner)}, games {won.a}-{won.b}"


def outcome_counts(records: Iterable[StoredMatch]) -> Counter[str]:
    """Counts of hand outcomes (knock, gin, big_gin, undercut, dead, tie) and misknocks."""
    counts: Counter[str] = Counter()
    for record in records:
        for _, hand in record.all_hands():
            counts[hand.outcome.value] += 1
            counts["misknock"] += len(hand.misknocks)
    return counts
