"""The registration probe: is there a bot speaking ``gin-arena/1`` at this URL?

Before a bot is accepted (and again when its URL changes or it is reactivated), the arena
checks the URL against the SSRF guard, asks ``GET /`` for the protocol version and sends one
synthetic ``/act`` (between ``/start`` and ``/end``), each ``POST`` signed with the bot's
secret exactly as in a match (at registration: the secret the owner brought, or the one the
arena has just made for the bot). So a bot that verifies signatures is checked for real; one
that refuses the signed requests (``401``/``403``) fails the check like any other failure,
with a reason saying so (``signatures_required`` is then set), and is not registered. Failures
are reported item by item. The full conformance check is :func:`arena.bots.check.check_bot`.
"""

from __future__ import annotations

import socket
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import msgspec

from arena.bots.check import CheckItem, synthetic_positions
from arena.playing.players import Turn
from arena.protocol.signing import Signer
from arena.protocol.transport import Transport, TransportError
from arena.protocol.urlguard import (
    Resolver,
    Target,
    UrlRejectedError,
    check_url,
    open_connection,
    open_tls_connection,
)
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    BotInfo,
    EndRequest,
    StartRequest,
    WireError,
    act_request,
    decode_action,
    decode_info,
)
from arena.rules.actions import ActionError
from arena.rules.hand import play
from arena.rules.observation import observe

__all__ = ["ProbeReport", "probe_bot"]

_encoder = msgspec.json.Encoder()
_JSON = {"Content-Type": "application/json"}
_REFUSED_UNSIGNED = ("HTTP 401", "HTTP 403")


@dataclass
class ProbeReport:
    """What the probe saw: each step, the bot's info, and whether it wants signatures."""

    url: str
    items: list[CheckItem] = field(default_factory=list)
    info: BotInfo | None = None
    signatures_required: bool = False

    @property
    def passed(self) -> bool:
        return bool(self.items) and all(i.passed for i in self.items)

    def add(self, name: str, passed: bool, detail: str, *, warning: bool = False) -> None:
        self.items.append(CheckItem(name, passed, detail, warning))

    def failures(self) -> list[CheckItem]:
        return [i for i in self.items if not i.passed]


def _connect(target: Target) -> Callable[[float], socket.socket]:
    def connect(timeout: float) -> socket.socket:
        if target.scheme == "https":
            return open_tls_connection(target, timeout)
        return open_connection(target, timeout)

    return connect


def _post(
    report: ProbeReport,
    transport: Transport,
    path: str,
    body: bytes,
    deadline_s: float,
    signer: Signer | None,
) -> bytes:
    """POST (signed with ``signer`` if any); :class:`_RefusedError` when the bot refused it
    with 401/403, as a bot that verifies signatures refuses a request it cannot verify."""
    headers = _JSON if signer is None else {**_JSON, **signer.sign_now(body)}
    try:
        return transport.request("POST", path, body, headers, deadline_s).body
    except TransportError as exc:
        if exc.kind == "status" and exc.detail.startswith(_REFUSED_UNSIGNED):
            report.signatures_required = True
            raise _RefusedError(f"POST {path}: {exc.detail}") from None
        raise


class _RefusedError(Exception):
    """The bot answered 401/403: it did not accept the request's signature (or its absence)."""


def probe_bot(
    url: str,
    *,
    secrets: Sequence[str] = (),
    allow_loopback: bool = False,
    resolver: Resolver | None = None,
    deadline_ms: int = 2000,
) -> ProbeReport:
    """Probe the bot at ``url`` (see the module docstring); never raises over the bot.

    ``secrets``: the bot's signing secret(s), current first, as a match signs with them (none:
    unsigned, for a bot that verifies nothing).
    """
    signer = Signer(*secrets) if secrets else None
    report = ProbeReport(url)
    try:
        target = check_url(url, allow_loopback=allow_loopback, resolver=resolver)
    except UrlRejectedError as exc:
        report.add("URL allowed", False, str(exc))
        return report
    except OSError as exc:
        report.add("URL allowed", False, f"cannot resolve the host: {exc}")
        return report
    report.add("URL allowed", True, f"{target.host} resolves to allowed addresses")
    transport = Transport(target.host_header, _connect(target), base_path=target.path)
    deadline_s = deadline_ms / 1000
    try:
        _probe(report, transport, deadline_s, signer)
    finally:
        transport.close()
    return report


def _probe(
    report: ProbeReport, transport: Transport, deadline_s: float, signer: Signer | None
) -> None:
    step = "GET / (bot info)"
    try:
        raw = transport.request("GET", "/", None, {"Accept": "application/json"}, deadline_s)
        info = report.info = decode_info(raw.body)
    except TransportError as exc:
        report.add(step, False, f"{exc.kind}: {exc.detail}")
        return
    except WireError as exc:  # any body at all: bad JSON, too deeply nested, not bot info
        report.add(step, False, f"the answer is not bot info: {exc}")
        return
    if info.protocol != PROTOCOL_VERSION:
        report.add(
            step, False, f"the bot speaks {info.protocol!r}; this arena speaks {PROTOCOL_VERSION!r}"
        )
        return
    report.add(step, True, f"{info.name!r} speaks {PROTOCOL_VERSION}")
    name, state = next(iter(synthetic_positions(int(deadline_s * 1000))))
    rules = state.rules.to_dict()
    match_id = f"registration-{int(time.time())}"
    start = StartRequest(PROTOCOL_VERSION, match_id, "registration check", rules)
    step = f"POST /act ({name})"
    refused = (
        "the bot refused the arena's signed request ({}): a bot that verifies signatures must"
        " run with the secret it is registered with (bring that secret: `--secret whsec_...`"
        " to `gin-arena bot register`, `secret` in `POST /api/v1/bots`)"
        if signer is not None
        else "the bot refused an unsigned request ({}): sign the check with the bot's secret"
    )
    try:
        _post(report, transport, "/start", _encoder.encode(start), deadline_s, signer)
        turn = Turn(
            observe(state, state.to_act), match_id, 0, 0, f"{match_id}-r1", state.rules,
            (0, 0), (0, 0), int(deadline_s * 1000),
        )  # fmt: skip
        body = _encoder.encode(act_request(turn, rules))
        answer = _post(report, transport, "/act", body, deadline_s, signer)
        action = decode_action(answer)
        play(state, state.to_act, action)
        report.add(step, True, f"answered {action}")
        end = EndRequest(
            PROTOCOL_VERSION, match_id, "a" if state.to_act == 0 else "b", {"registration": True}
        )
        _post(report, transport, "/end", _encoder.encode(end), deadline_s, signer)
    except _RefusedError as exc:
        report.add(step, False, refused.format(exc))
    except TransportError as exc:
        report.add(step, False, f"{exc.kind}: {exc.detail}")
    except WireError as exc:
        report.add(step, False, f"{exc.kind}: {exc}")
    except ActionError as exc:
        report.add(step, False, f"illegal answer: {exc}")
