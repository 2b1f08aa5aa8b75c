"""The health probe of a registered bot, and the stand-in that plays a suspended bot's seat.

:func:`probe_health` is what the health sweep (:mod:`arena.services.health`) sends a bot
between matches: the URL checked by the SSRF guard exactly as for a match, ``GET /`` (bot info
speaking ``gin-arena/1``, with its ``version`` string), then ONE signed synthetic
``POST /act`` from a real position of the conformance checker (:func:`arena.bots.check.positions`,
the "discard" position: a hand of eleven cards to discard from), each within the probe's
timeout. The probe passes when the answer is a legal action. No ``/start`` or ``/end`` is sent:
every ``/act`` is self-contained, so a bot needs no announcement to answer it. The request's
``match_id`` is the caller's (``health-<bot id>-<unix time>`` from the sweep) and its
``request_id`` is ``<match_id>-r<n>``, so a bot can tell a probe from a match.

The result is a value, never an exception over the bot: passed or not, the ``/act`` round trip
in milliseconds (as the transport measures a match's, never more than the timeout), one line
saying why it failed, and the version ``GET /`` reported. The reason never repeats the bot's
URL or host (written ``<url>`` and ``<host>`` instead: a bot's URL is its owner's to see, and
probe reasons are public).

:class:`SuspendedPlayer` is the player of a seat whose bot is suspended: it faults at the start
as unreachable without a request reaching the bot, so the match is forfeited at once.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from functools import cache

import msgspec

from arena.bots.check import Position, positions
from arena.bots.probe import _connect
from arena.playing.players import Fault, FaultKind, MatchContext, Turn
from arena.protocol.signing import Signer
from arena.protocol.transport import Transport, TransportError
from arena.protocol.urlguard import Resolver, UrlRejectedError, check_url, redact_url
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    BotInfo,
    WireError,
    act_request,
    decode_action,
    decode_info,
)
from arena.rules.actions import Action, ActionError
from arena.rules.hand import play
from arena.rules.observation import observe

__all__ = ["PROBE_POSITION", "HealthProbe", "SuspendedPlayer", "probe_health"]

#: The checker's position every probe's ``/act`` is (its ``slug``).
PROBE_POSITION = "discard"

_encoder = msgspec.json.Encoder()
_JSON = {"Content-Type": "application/json"}


@dataclass(frozen=True, slots=True)
class HealthProbe:
    """What one probe saw."""

    passed: bool
    #: The ``/act`` round trip, ms (None when the probe failed before sending it).
    latency_ms: float | None
    #: Why it failed, one line (None when it passed).
    reason: str | None
    #: The bot info ``GET /`` answered (None when it did not answer bot info).
    info: BotInfo | None

    @property
    def version(self) -> str | None:
        """The ``version`` string the bot reported (None: it reported none, or no bot info)."""
        return None if self.info is None or not self.info.version else self.info.version


@cache
def _position(deadline_ms: int) -> Position:
    return next(p for p in positions(deadline_ms) if p.slug == PROBE_POSITION)


def probe_health(
    url: str,
    *,
    match_id: str,
    secrets: Sequence[str] = (),
    allow_loopback: bool = False,
    timeout_s: float = 5.0,
    resolver: Resolver | None = None,
) -> HealthProbe:
    """Probe the bot at ``url`` (module docstring); never raises over the bot.

    ``secrets``: the bot's signing secrets, current first, as a match signs with them (none:
    unsigned). ``timeout_s`` bounds ``GET /`` and ``POST /act`` each (and is the
    ``deadline_ms`` of the ``/act`` body's rules).
    """
    hosts: list[str | None] = []
    try:
        target = check_url(url, allow_loopback=allow_loopback, resolver=resolver)
    except UrlRejectedError as exc:
        probe = HealthProbe(False, None, f"URL refused: {exc.detail}", None)
    except OSError as exc:
        probe = HealthProbe(False, None, f"cannot resolve the bot's host: {exc}", None)
    else:
        hosts.append(target.host)
        transport = Transport(target.host_header, _connect(target), base_path=target.path)
        try:
            probe = _exchange(transport, match_id, secrets, timeout_s)
        finally:
            transport.close()
    return _scrubbed(probe, url, hosts)


def _exchange(
    transport: Transport, match_id: str, secrets: Sequence[str], timeout_s: float
) -> HealthProbe:
    try:
        raw = transport.request("GET", "/", None, {"Accept": "application/json"}, timeout_s)
        info = decode_info(raw.body)
    except TransportError as exc:
        return HealthProbe(False, None, f"GET /: {exc.kind}: {exc.detail}", None)
    except WireError as exc:
        return HealthProbe(False, None, f"GET / did not answer bot info: {exc}", None)
    if info.protocol != PROTOCOL_VERSION:
        reason = f"GET /: the bot speaks {info.protocol!r}; this arena speaks {PROTOCOL_VERSION!r}"
        return HealthProbe(False, None, reason, info)
    deadline_ms = max(1, round(timeout_s * 1000))
    state = _position(deadline_ms).state
    turn = Turn(
        observe(state, state.to_act), match_id, 0, 0, f"{match_id}-r{len(state.events) + 1}",
        state.rules, (0, 0), (0, 0), deadline_ms,
    )  # fmt: skip
    body = _encoder.encode(act_request(turn, state.rules.to_dict()))
    sign = _signing(secrets, body)
    try:
        answer = transport.request("POST", "/act", body, _JSON, timeout_s, sign=sign)
    except TransportError as exc:
        return HealthProbe(False, exc.latency_ms, _act_failure(exc, secrets), info)
    latency = answer.latency_ms
    try:
        action = decode_action(answer.body)
    except WireError as exc:
        return HealthProbe(False, latency, f"POST /act: {exc.kind}: {exc}", info)
    except Exception as exc:  # no answer may escape as an exception, whatever its bytes
        reason = f"POST /act: the answer could not be read: {type(exc).__name__}: {exc}"
        return HealthProbe(False, latency, reason, info)
    try:
        play(state, state.to_act, action)
    except ActionError as exc:
        return HealthProbe(False, latency, f"POST /act: illegal answer {action}: {exc}", info)
    return HealthProbe(True, latency, None, info)


def _signing(secrets: Sequence[str], body: bytes) -> Callable[[], dict[str, str]] | None:
    """Fresh signature headers for each HTTP attempt (a new ``webhook-id`` each), as a match."""
    if not secrets:
        return None
    signer = Signer(*secrets)
    return lambda: signer.sign_now(body)


def _act_failure(exc: TransportError, secrets: Sequence[str]) -> str:
    reason = f"POST /act: {exc.kind}: {exc.detail}"
    if exc.kind == "status" and exc.detail.startswith(("HTTP 401", "HTTP 403")):
        signed = "signed" if secrets else "unsigned"
        reason += (
            f" (the bot refused the arena's {signed} request: it must verify with the secret"
            " the arena holds for it)"
        )
    return reason


def _scrubbed(probe: HealthProbe, url: str, hosts: Sequence[str | None]) -> HealthProbe:
    """The probe with the bot's URL and host taken out of its reason (one line, at most 500
    characters)."""
    if probe.reason is None:
        return probe
    reason = " ".join(redact_url(probe.reason, url, *hosts).split())[:500]
    return HealthProbe(probe.passed, probe.latency_ms, reason, probe.info)


class SuspendedPlayer:
    """The seat of a suspended bot: it faults at the start as unreachable, calling nothing."""

    def __init__(self, name: str, failed_probes: int) -> None:
        self.name = name
        self._failed_probes = failed_probes

    def start(self, context: MatchContext) -> Fault | None:
        """Always the fault that forfeits the match at the start."""
        return Fault(
            FaultKind.UNREACHABLE,
            f"suspended: its last {self._failed_probes} health probes failed",
        )

    def act(self, turn: Turn) -> Action | Fault:
        """Never asked (the match is forfeited at the start)."""
        return Fault(FaultKind.UNREACHABLE, "suspended")

    def end(self, summary: dict[str, object]) -> None:
        """Nothing is sent to a suspended bot."""
