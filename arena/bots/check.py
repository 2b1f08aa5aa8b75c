"""``gin-arena bot check``: the conformance checker a bot author runs against their bot.

It asks ``GET /`` for the protocol version, then sends one position of every phase and special
case a bot must handle: the first upcard (to the non-dealer, and to the dealer after a pass),
the stock-only draw after both passed the upcard, a draw, a discard after a stock draw, a
discard after taking the discard (the restricted card), a knock with melds, gin, big gin, a
misknock response (``opponent_may_accept``), a discard facing an opponent's hand exposed by a
misknock (``open_hand``), the last-discard chance and the knock-only discard after it.

Every position is reached by the real engine from a seeded deal (both seats played by the
heuristic player; for gin, big gin and the last chance it never knocks, so the deal runs long),
and each is sent as the first deal of its own short match: ``POST /start`` announcing that
position's rules, ``POST /act``, and at the end ``POST /end``. So its ``history`` is the whole
deal: a stateless bot that rebuilds the deal from it finds exactly the hand, discard pile,
stock count, known cards and legal actions it was sent.

Each answer that is malformed or illegal is reported by name; latency is measured against the
deadline; and given the secret, the checker also sends an unsigned request, one signed with
another secret, one with a stale timestamp, one replaying a ``webhook-id`` already accepted and
one signed an hour ahead: the bot must refuse each (the SDK's server answers 401, 401, 401, 409
and 401); and two requests signed as during a secret rotation (two ``v1,`` signatures, the
bot's own second, then first), which it must accept.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from functools import cache

import msgspec

from arena.playing.players import Fault, HeuristicPlayer, MatchContext, Turn
from arena.protocol.http_player import HttpPlayer
from arena.protocol.signing import Signer, new_message_id
from arena.protocol.transport import TransportError
from arena.protocol.wire import PROTOCOL_VERSION, act_request
from arena.rules.actions import Action, ActionError, ActionKind, Phase, discard, knock
from arena.rules.game import deal_deck
from arena.rules.hand import HandState, apply, legal_actions, new_deal, play
from arena.rules.melds import deadwood_mask
from arena.rules.observation import observe
from arena.rules.ruleset import MisknockPolicy, RuleSet

__all__ = ["CheckItem", "CheckReport", "Position", "check_bot", "positions", "synthetic_positions"]

#: The seed of the checker's deals: position ``n`` of a search is deal ``n`` of game 0.
DEAL_SEED = "bot-check"
#: Deals tried per position (each is found within the first few dozen).
_SEARCH = 600
#: How far a stale timestamp is in the past (the tolerance is 5 minutes).
_STALE_S = 3600


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


# --- positions --------------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Position:
    """A position a bot must handle: the state of a real deal, and where it came from."""

    name: str
    #: Short name, used in the position's match id (``check-<slug>``).
    slug: str
    state: HandState
    #: The deal it was reached in: deal ``deal`` of game 0 of the seed ``DEAL_SEED``.
    deal: int

    @property
    def match_id(self) -> str:
        return f"check-{self.slug}"


_HEURISTIC = HeuristicPlayer()


def _turn(state: HandState, match_id: str, request_id: str, deadline_ms: int) -> Turn:
    return Turn(
        observe(state, state.to_act),
        match_id,
        0,
        0,
        request_id,
        state.rules,
        (0, 0),
        (0, 0),
        deadline_ms,
    )


def _choose(state: HandState, never_knock: bool) -> Action:
    """The heuristic's move; with ``never_knock`` its knocks and big gin become discards."""
    action = _HEURISTIC.act(_turn(state, "search", "search", state.rules.deadline_ms))
    assert isinstance(action, Action)
    if never_knock and action.kind in (ActionKind.KNOCK, ActionKind.BIG_GIN):
        hand = state.hands[state.to_act]
        cards = [
            a.card
            for a in legal_actions(state)
            if a.kind is ActionKind.DISCARD and a.card is not None
        ]
        if cards:  # none after a last-chance take: then the knock stands
            if action.card is not None and action.card in cards:
                return discard(action.card)
            return discard(min(cards, key=lambda c: deadwood_mask(hand & ~(1 << c))))
    return action


def _find(
    rules: RuleSet,
    want: Callable[[HandState], bool],
    *,
    never_knock: bool = False,
) -> tuple[HandState, int]:
    """The first state of the checker's deals where ``want`` holds, and its deal number."""
    for n in range(_SEARCH):
        state = new_deal(rules, n % 2, deck=deal_deck(DEAL_SEED, 0, n))
        while not state.is_over:
            if want(state):
                return state, n
            state = play(state, state.to_act, _choose(state, never_knock))
    raise RuntimeError("no such position in the checker's deals")  # pragma: no cover


def _knocks(state: HandState) -> list[Action]:
    return [a for a in legal_actions(state) if a.kind is ActionKind.KNOCK]


def _gin_available(state: HandState) -> bool:
    hand = state.hands[state.to_act]
    return any(
        a.card is not None and deadwood_mask(hand & ~(1 << a.card)) == 0 for a in _knocks(state)
    )


def _discarding(state: HandState) -> bool:
    return state.phase is Phase.DISCARD and not state.knock_only


def _misknock(state: HandState) -> HandState:
    """Knock over the limit with the card that leaves the most deadwood."""
    hand = state.hands[state.to_act]
    worst = max(
        (c for c in range(52) if hand >> c & 1 and c != state.taken),
        key=lambda c: deadwood_mask(hand & ~(1 << c)),
    )
    after = apply(state, knock(worst))
    assert after.misknocks, "the knock was within the limit"
    return after


def _exposed(state: HandState) -> HandState:
    """After an open-hand misknock, the opponent's draw: the position facing the open hand."""
    after = _misknock(state)
    return apply(after, _choose(after, never_knock=True))


@cache
def positions(deadline_ms: int = 1000) -> tuple[Position, ...]:
    """A position of every phase and special case a bot must handle (module docstring)."""
    std = RuleSet(deadline_ms=deadline_ms)
    accept = std.replace(misknock=MisknockPolicy.OPPONENT_MAY_ACCEPT)
    chance = std.replace(last_discard_chance=True)
    no_knock = lambda s: _discarding(s) and not _knocks(s) and len(s.events) > 6  # noqa: E731
    specs: list[tuple[str, str, RuleSet, Callable[[HandState], bool], bool]] = [
        (
            "first upcard (non-dealer)",
            "first-upcard",
            std,
            lambda s: s.phase is Phase.FIRST_UPCARD and s.upcard_offers == 0,
            False,
        ),
        (
            "first upcard (dealer, after the non-dealer passed)",
            "first-upcard-dealer",
            std,
            lambda s: s.phase is Phase.FIRST_UPCARD and s.upcard_offers == 1,
            False,
        ),
        (
            "draw (stock only: both passed the upcard)",
            "stock-only",
            std,
            lambda s: s.phase is Phase.DRAW and s.stock_only,
            False,
        ),
        (
            "draw",
            "draw",
            std,
            lambda s: s.phase is Phase.DRAW and len(s.events) > 6 and bool(s.known[1 - s.to_act]),
            False,
        ),
        (
            "discard",
            "discard",
            std,
            lambda s: _discarding(s) and s.taken is None and len(s.events) > 4 and not _knocks(s),
            False,
        ),
        (
            "discard after taking the discard (restricted card)",
            "discard-taken",
            std,
            lambda s: _discarding(s) and s.taken is not None and len(s.events) > 4,
            False,
        ),
        (
            "discard with a knock available (melds to declare)",
            "knock",
            std,
            lambda s: _discarding(s) and bool(_knocks(s)) and not _gin_available(s),
            False,
        ),
        (
            "discard with gin available",
            "gin",
            std,
            lambda s: _discarding(s) and _gin_available(s) and deadwood_mask(s.hands[s.to_act]) > 0,
            True,
        ),
        (
            "discard with big gin available (eleven cards melded)",
            "big-gin",
            std,
            lambda s: _discarding(s) and deadwood_mask(s.hands[s.to_act]) == 0,
            True,
        ),
        (
            "last chance (last_discard_chance variant)",
            "last-chance",
            chance,
            lambda s: (
                s.phase is Phase.LAST_CHANCE
                and any(a.kind is ActionKind.TAKE_DISCARD for a in legal_actions(s))
            ),
            True,
        ),
        (
            "discard after a last-chance take (knock or gin only)",
            "last-chance-knock",
            chance,
            lambda s: s.phase is Phase.DISCARD and s.knock_only,
            True,
        ),
    ]
    out = []
    for name, slug, rules, want, never_knock in specs:
        state, deal = _find(rules, want, never_knock=never_knock)
        out.append(Position(name, slug, state, deal))
    state, deal = _find(accept, no_knock)
    out.append(
        Position("misknock response (opponent_may_accept)", "misknock", _misknock(state), deal)
    )
    state, deal = _find(std, no_knock)
    out.append(Position("opponent's hand exposed by a misknock", "exposed", _exposed(state), deal))
    return tuple(out)


def synthetic_positions(deadline_ms: int = 1000) -> Iterator[tuple[str, HandState]]:
    """The positions of :func:`positions` as ``(name, state)`` pairs."""
    for p in positions(deadline_ms):
        yield p.name, p.state


# --- the check --------------------------------------------------------------------------------


def _request_id(position: Position, suffix: str = "") -> str:
    # As the arena numbers them: the deal's n-th decision is the match's request n (deal 0).
    return f"{position.match_id}-r{len(position.state.events) + 1}{suffix}"


def check_bot(
    url: str,
    *,
    secret: str | Sequence[str] | None = None,
    allow_loopback: bool = True,
    repeats: int = 30,
    deadline_ms: int = 1000,
) -> CheckReport:
    """Run every check against the bot at ``url``.

    ``secret``: the bot's signing secret, or its secrets (the current one first) while a
    rotation window is open: every request is then signed with each, as in a match.
    """
    keys = (secret,) if isinstance(secret, str) else tuple(secret or ())
    report = CheckReport(url, deadline_ms=deadline_ms)
    todo = positions(deadline_ms)
    players: list[tuple[Position, HttpPlayer]] = []
    try:
        for position in todo:
            state = position.state
            player = HttpPlayer(url, secret=keys, allow_loopback=allow_loopback)
            context = MatchContext(
                position.match_id, state.to_act, state.rules, "gin-arena bot check", 0
            )
            fault = player.start(context)
            if fault is not None:
                if not players:
                    report.add("reachable, protocol version, POST /start", False, fault.detail)
                    return report
                report.add(f"POST /start ({position.name})", False, fault.detail)
                continue
            if not players:
                info = player.info
                assert info is not None
                report.add(
                    "GET / (bot info)",
                    True,
                    f"{info.name!r} by {info.author!r}, version {info.version!r},"
                    f" {PROTOCOL_VERSION}",
                )
            players.append((position, player))
        report.add("POST /start", True, f"200 for {len(players)} of {len(todo)} matches")
        for position, player in players:
            _act(report, position, player, _request_id(position), deadline_ms)
        # Latency under repetition, on one position of each kind.
        for i in range(repeats if players else 0):
            position, player = players[i % len(players)]
            rid = _request_id(position, f"-{i}")
            turn = _turn(position.state, position.match_id, rid, deadline_ms)
            started = time.perf_counter()
            player.act(turn)
            report.latencies_ms.append(_latency_ms(player, started))
        p99 = report.percentile(0.99) or 0.0
        report.add(
            "latency within the deadline",
            p99 < deadline_ms,
            f"p99 {p99:.2f} ms against a deadline of {deadline_ms} ms"
            + ("" if p99 < deadline_ms / 2 else " (too close for comfort)"),
        )
        if keys and players:
            position, player = players[0]
            for name, check in _SIGNATURE_CHECKS:
                report.add(name, *check(player, position, keys, deadline_ms))
        elif not keys:
            report.add(
                "signature checking",
                False,
                "not checked: pass --secret to check that the bot refuses unsigned, forged,"
                " stale, future and replayed requests and accepts a rotation's two signatures",
                warning=True,
            )
    finally:
        for position, player in players:
            player.end({"match_id": position.match_id, "faults": []})
    if players:
        report.add("POST /end", True, f"sent to {len(players)} matches")
    return report


def _act(
    report: CheckReport, position: Position, player: HttpPlayer, request_id: str, deadline_ms: int
) -> None:
    state = position.state
    turn = _turn(state, position.match_id, request_id, deadline_ms)
    started = time.perf_counter()
    answer = player.act(turn)
    report.latencies_ms.append(_latency_ms(player, started))
    report.add(f"act: {position.name}", *_judge(state, state.to_act, answer))


def _latency_ms(player: HttpPlayer, started: float) -> float:
    """The latency the match record would keep (the exchange alone, at most the deadline)."""
    exchange = player.take_exchange()
    return exchange.latency_ms if exchange is not None else (time.perf_counter() - started) * 1000


def _judge(state: HandState, seat: int, answer: Action | Fault) -> tuple[bool, str]:
    if isinstance(answer, Fault):
        return False, f"{answer.kind}: {answer.detail}"
    try:
        after = play(state, seat, answer)
    except ActionError as exc:
        return False, f"illegal answer {answer}: {exc}"
    if after.misknocks and len(after.misknocks) > len(state.misknocks):
        return True, f"answered {answer} (a misknock: legal, but penalised)"
    if after.result is not None and after.result.knocker == seat:
        return True, f"answered {answer} ({after.result.outcome.value})"
    return True, f"answered {answer}"


# --- signatures -------------------------------------------------------------------------------

_JSON = {"Content-Type": "application/json"}
#: The bot's signing secrets, the current one first.
Keys = tuple[str, ...]


def _send(
    player: HttpPlayer, body: bytes, headers: dict[str, str], deadline_ms: int
) -> TransportError | None:
    """One raw ``POST /act`` on the player's connection; the error, or None for a 200."""
    transport = player._transport
    if transport is None:
        return TransportError("connection", "no connection")
    try:
        transport.request("POST", "/act", body, {**_JSON, **headers}, deadline_ms / 1000)
    except TransportError as exc:
        return exc
    return None


def _body(position: Position, suffix: str, deadline_ms: int) -> bytes:
    turn = _turn(position.state, position.match_id, _request_id(position, suffix), deadline_ms)
    return msgspec.json.encode(act_request(turn, position.state.rules.to_dict()))


def _refused(error: TransportError | None, what: str) -> tuple[bool, str]:
    if error is None:
        return False, f"accepted {what}"
    if error.kind == "status" and error.detail.startswith("HTTP 4"):
        return True, f"refused ({error.detail.split(':')[0]})"
    return False, f"unexpected failure: {error.kind}: {error.detail}"


def _unsigned(player: HttpPlayer, position: Position, keys: Keys, ms: int) -> tuple[bool, str]:
    return _refused(_send(player, _body(position, "-unsigned", ms), {}, ms), "an unsigned request")


def _forged(player: HttpPlayer, position: Position, keys: Keys, ms: int) -> tuple[bool, str]:
    body = _body(position, "-forged", ms)
    wrong = Signer("whsec_" + "A" * 43 + "=")
    headers = wrong.sign(body, msg_id=new_message_id(), timestamp=int(time.time()))
    return _refused(_send(player, body, headers, ms), "a request signed with another secret")


def _stale(player: HttpPlayer, position: Position, keys: Keys, ms: int) -> tuple[bool, str]:
    body = _body(position, "-stale", ms)
    old = int(time.time()) - _STALE_S
    headers = Signer(*keys).sign(body, msg_id=new_message_id(), timestamp=old)
    return _refused(
        _send(player, body, headers, ms), f"a request signed {_STALE_S // 60} minutes ago"
    )


def _replayed(player: HttpPlayer, position: Position, keys: Keys, ms: int) -> tuple[bool, str]:
    body = _body(position, "-replayed", ms)
    headers = Signer(*keys).sign(body, msg_id=new_message_id(), timestamp=int(time.time()))
    first = _send(player, body, headers, ms)
    if first is not None:
        return False, f"refused the original request: {first.kind}: {first.detail}"
    return _refused(_send(player, body, headers, ms), "the same signed request twice")


def _future(player: HttpPlayer, position: Position, keys: Keys, ms: int) -> tuple[bool, str]:
    body = _body(position, "-future", ms)
    ahead = int(time.time()) + _STALE_S
    headers = Signer(*keys).sign(body, msg_id=new_message_id(), timestamp=ahead)
    return _refused(
        _send(player, body, headers, ms), f"a request signed {_STALE_S // 60} minutes from now"
    )


def _rotation(player: HttpPlayer, position: Position, keys: Keys, ms: int) -> tuple[bool, str]:
    """Two ``v1,`` signatures, the bot's own second and then first: what a rotation sends."""
    other = "whsec_" + "A" * 43 + "="
    for place, signer in (("second", Signer(other, *keys)), ("first", Signer(*keys, other))):
        body = _body(position, f"-rotation-{place}", ms)
        headers = signer.sign(body, msg_id=new_message_id(), timestamp=int(time.time()))
        error = _send(player, body, headers, ms)
        if error is not None:
            return False, (
                f"refused a request with two v1 signatures, its own {place}"
                f" ({error.kind}: {error.detail}): while a secret is rotated every request"
                " carries two, space-separated; accept it when any one matches"
            )
    return True, "accepted its own signature beside another, in either place"


_SIGNATURE_CHECKS: tuple[
    tuple[str, Callable[[HttpPlayer, Position, Keys, int], tuple[bool, str]]], ...
] = (
    ("refuses an unsigned request", _unsigned),
    ("refuses a forged signature", _forged),
    ("refuses a stale timestamp", _stale),
    ("refuses a replayed webhook-id", _replayed),
    ("refuses a timestamp from the future", _future),
    ("accepts two signatures (a secret rotation)", _rotation),
)
