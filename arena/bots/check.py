"""``gin-arena bot check``: the conformance checker a bot author runs against their bot.

It asks ``GET /`` for the protocol version, sends ``/start`` and ``/end``, then one synthetic
position of every phase (first upcard, draw, discard with and without a knock, gin, the
discard restriction, a misknock response, an exposed opponent hand, the last-chance variant),
reports each answer that is malformed or illegal by name, measures latency against the
deadline, and, given the secret, checks that the bot refuses a forged signature.
"""

from __future__ import annotations

import random
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field

import msgspec

from arena.players import Fault, HeuristicPlayer, MatchContext, Turn
from arena.protocol.http_player import HttpPlayer
from arena.protocol.signing import Signer
from arena.protocol.transport import TransportError
from arena.protocol.wire import PROTOCOL_VERSION, act_request
from arena.rules.actions import Action, ActionError, ActionKind, Phase, knock
from arena.rules.hand import HandState, apply, legal_actions, new_deal, play
from arena.rules.melds import deadwood_mask
from arena.rules.observation import observe
from arena.rules.ruleset import MisknockPolicy, RuleSet

__all__ = ["CheckItem", "CheckReport", "check_bot", "synthetic_positions"]


@dataclass(frozen=True, slots=True)
class CheckItem:
    """One check: its name, whether it passed, and what was seen."""

    name: str
    passed: bool
    detail: str
    warning: bool = False


@dataclass
class CheckReport:
    """Every check of a run, and the latencies of the ``/act`` requests."""

    url: str
    items: list[CheckItem] = field(default_factory=list)
    latencies_ms: list[float] = field(default_factory=list)
    deadline_ms: int = 1000

    @property
    def passed(self) -> bool:
        return all(i.passed or i.warning for i in self.items)

    def add(self, name: str, passed: bool, detail: str, *, warning: bool = False) -> None:
        self.items.append(CheckItem(name, passed, detail, warning))

    def percentile(self, p: float) -> float | None:
        if not self.latencies_ms:
            return None
        ordered = sorted(self.latencies_ms)
        return ordered[min(len(ordered) - 1, int(p * len(ordered)))]

    def render(self) -> str:
        lines = [f"gin-arena bot check {self.url}"]
        for item in self.items:
            mark = "PASS" if item.passed else ("WARN" if item.warning else "FAIL")
            lines.append(f"  [{mark}] {item.name}: {item.detail}")
        p50, p99 = self.percentile(0.5), self.percentile(0.99)
        if p50 is not None and p99 is not None:
            lines.append(
                f"  latency over {len(self.latencies_ms)} requests: p50 {p50:.2f} ms,"
                f" p99 {p99:.2f} ms (deadline {self.deadline_ms} ms)"
            )
        lines.append("RESULT: " + ("PASS" if self.passed else "FAIL"))
        return "\n".join(lines)


def _drive(state: HandState, until: Callable[[HandState], bool], limit: int = 400) -> HandState:
    """Play the heuristic for both seats until the predicate holds (or the deal ends)."""
    player = HeuristicPlayer()
    rules = state.rules
    for _ in range(limit):
        if until(state) or state.is_over:
            return state
        obs = observe(state, state.to_act)
        turn = Turn(obs, "check", 0, 0, "check", rules, (0, 0), (0, 0), rules.deadline_ms)
        action = player.act(turn)
        assert isinstance(action, Action)
        state = play(state, state.to_act, action)
    return state


def _find(
    rules: RuleSet,
    until: Callable[[HandState], bool],
    *,
    after: Callable[[HandState], HandState] | None = None,
) -> HandState:
    for seed in range(500):
        state = new_deal(rules, seed % 2, rng=random.Random(f"check:{seed}"))
        state = _drive(state, until)
        if not state.is_over and until(state):
            return after(state) if after else state
    raise RuntimeError("no synthetic position found")  # pragma: no cover - the search is generous


def _misknock(state: HandState) -> HandState:
    """Knock over the limit with the card that leaves the most deadwood."""
    hand = state.hands[state.to_act]
    worst = max(
        (c for c in range(52) if hand >> c & 1 and c != state.taken),
        key=lambda c: deadwood_mask(hand & ~(1 << c)),
    )
    return apply(state, knock(worst))


def synthetic_positions(deadline_ms: int = 1000) -> Iterator[tuple[str, HandState]]:
    """A position of every phase and special case a bot must handle."""
    std = RuleSet(deadline_ms=deadline_ms)
    yield "first upcard (non-dealer)", new_deal(std, 0, rng=random.Random("check:first"))
    yield (
        "first upcard (dealer, after a pass)",
        apply(new_deal(std, 0, rng=random.Random("check:first2")), Action(ActionKind.PASS)),
    )
    both = apply(
        apply(new_deal(std, 1, rng=random.Random("check:both")), Action(ActionKind.PASS)),
        Action(ActionKind.PASS),
    )
    yield "draw (stock only, both passed the upcard)", both
    yield (
        "draw",
        _find(std, lambda s: s.phase is Phase.DRAW and not s.stock_only and len(s.events) > 4),
    )
    yield "discard", _find(std, lambda s: s.phase is Phase.DISCARD and len(s.events) > 3)
    yield (
        "discard after taking the discard (restricted card)",
        _find(
            std, lambda s: s.phase is Phase.DISCARD and s.taken is not None and len(s.events) > 3
        ),
    )
    yield (
        "discard with a knock available",
        _find(
            std,
            lambda s: (
                s.phase is Phase.DISCARD and any(a.kind is ActionKind.KNOCK for a in _legal(s))
            ),
        ),
    )
    accept = RuleSet(deadline_ms=deadline_ms, misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT)
    yield (
        "misknock response (opponent_may_accept)",
        _find(accept, lambda s: s.phase is Phase.DISCARD and len(s.events) > 6, after=_misknock),
    )
    yield (
        "opponent's hand exposed by a misknock",
        _find(
            std,
            lambda s: s.phase is Phase.DISCARD and len(s.events) > 6,
            after=lambda s: _drive(_misknock(s), lambda t: t.phase is Phase.DISCARD),
        ),
    )
    chance = RuleSet(deadline_ms=deadline_ms, last_discard_chance=True, dead_hand_stock=29)
    yield (
        "last chance (last_discard_chance variant)",
        _find(chance, lambda s: s.phase is Phase.LAST_CHANCE),
    )


def _legal(state: HandState) -> tuple[Action, ...]:
    return legal_actions(state)


def check_bot(
    url: str,
    *,
    secret: str | None = None,
    allow_loopback: bool = True,
    repeats: int = 30,
    deadline_ms: int = 1000,
) -> CheckReport:
    """Run every check against the bot at ``url``."""
    report = CheckReport(url, deadline_ms=deadline_ms)
    rules = RuleSet(deadline_ms=deadline_ms)
    player = HttpPlayer(url, secret=secret, allow_loopback=allow_loopback)
    fault = player.start(MatchContext("check", 0, rules, "checker", 0))
    if fault is not None:
        report.add("reachable, protocol version, POST /start", False, fault.detail)
        return report
    info = player.info
    assert info is not None
    report.add(
        "GET / (bot info)",
        True,
        f"{info.name!r} by {info.author!r}, version {info.version!r}, {PROTOCOL_VERSION}",
    )
    report.add("POST /start", True, "200")
    positions = list(synthetic_positions(deadline_ms))
    for name, state in positions:
        seat = state.to_act
        turn = Turn(
            observe(state, seat),
            "check",
            0,
            0,
            f"check-{len(report.latencies_ms)}",
            state.rules,
            (0, 0),
            (0, 0),
            deadline_ms,
        )
        started = time.perf_counter()
        answer = player.act(turn)
        report.latencies_ms.append((time.perf_counter() - started) * 1000)
        report.add(f"act: {name}", *_judge(state, seat, answer))
    # Latency under repetition, on one position of each kind.
    for i in range(repeats):
        name, state = positions[i % len(positions)]
        turn = Turn(
            observe(state, state.to_act),
            "check",
            0,
            0,
            f"check-rep-{i}",
            state.rules,
            (0, 0),
            (0, 0),
            deadline_ms,
        )
        started = time.perf_counter()
        player.act(turn)
        report.latencies_ms.append((time.perf_counter() - started) * 1000)
    p99 = report.percentile(0.99) or 0.0
    report.add(
        "latency within the deadline",
        p99 < deadline_ms,
        f"p99 {p99:.2f} ms against a deadline of {deadline_ms} ms"
        + ("" if p99 < deadline_ms / 2 else " (too close for comfort)"),
    )
    if secret:
        report.add("refuses a forged signature", *_forged(player, positions[0][1], deadline_ms))
    else:
        report.add(
            "signature checking",
            False,
            "not checked: pass --secret to check that the bot refuses forged requests",
            warning=True,
        )
    player.end({"match_id": "check", "faults": []})
    report.add("POST /end", True, "sent")
    return report


def _judge(state: HandState, seat: int, answer: Action | Fault) -> tuple[bool, str]:
    if isinstance(answer, Fault):
        return False, f"{answer.kind}: {answer.detail}"
    try:
        after = play(state, seat, answer)
    except ActionError as exc:
        return False, f"illegal answer {answer}: {exc}"
    if after.misknocks and len(after.misknocks) > len(state.misknocks):
        return True, f"answered {answer} (a misknock: legal, but penalised)"
    return True, f"answered {answer}"


def _forged(player: HttpPlayer, state: HandState, deadline_ms: int) -> tuple[bool, str]:
    """Send one request signed with a wrong secret: the bot should refuse it (4xx)."""
    transport = player._transport
    if transport is None:
        return False, "no connection"
    turn = Turn(
        observe(state, state.to_act),
        "check",
        0,
        0,
        "check-forged",
        state.rules,
        (0, 0),
        (0, 0),
        deadline_ms,
    )
    body = msgspec.json.encode(act_request(turn, state.rules.to_dict()))
    headers = {
        "Content-Type": "application/json",
        **Signer("whsec_" + "A" * 43 + "=").sign(
            body, msg_id="forged-1", timestamp=int(time.time())
        ),
    }
    try:
        transport.request("POST", "/act", body, headers, deadline_ms / 1000)
    except TransportError as exc:
        if exc.kind == "status" and exc.detail.startswith("HTTP 4"):
            return True, f"refused ({exc.detail.split(':')[0]})"
        return False, f"unexpected failure: {exc.kind}: {exc.detail}"
    return False, "accepted a request signed with the wrong secret"
