"""The bot SDK: write one function from observation to action, get a protocol server.

>>> def act(obs):
...     return obs.legal_actions[0]          # a WireAction, an Action, or a dict
>>> server = BotServer(act, name="first-legal", port=0)   # port 0: any free port
>>> server.start().url.startswith("http://127.0.0.1:")
True
>>> server.stop()

The server speaks HTTP/1.1 with keep-alive and TCP_NODELAY (without it a small answer waits
for the client's delayed ACK: about 40 ms instead of well under one), checks the arena's
signature when given the bot's secret, validates every request against the protocol schema,
and answers mistakes with a JSON explanation (a browser gets a readable page on ``GET /``).

For the owner's side, the SDK also exports the webhook receiver (:mod:`arena.bots.webhooks`):
:class:`WebhookReceiver` verifies, refuses stale or replayed messages and parses each delivery
into a :class:`WebhookEvent`.
"""

from __future__ import annotations

import contextlib
import html
import json
import socket
import sys
import threading
import time
import traceback
from collections.abc import Callable
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import msgspec

from arena.bots.webhooks import BodyError, ReplayedMessageError, WebhookEvent, WebhookReceiver
from arena.protocol.signing import SignatureError, Signer
from arena.protocol.wire import (
    PROTOCOL_VERSION,
    ActRequest,
    BotInfo,
    EndRequest,
    StartRequest,
    WireAction,
)
from arena.rules.actions import Action

__all__ = [
    "ActFunction",
    "BodyError",
    "BotServer",
    "ReplayedMessageError",
    "WebhookEvent",
    "WebhookReceiver",
    "serve",
]

#: What a bot author writes: the observation in, an action out.
ActFunction = Callable[[ActRequest], "WireAction | Action | dict[str, Any]"]

_act_decoder = msgspec.json.Decoder(ActRequest)
_start_decoder = msgspec.json.Decoder(StartRequest)
_end_decoder = msgspec.json.Decoder(EndRequest)
_Request = ActRequest | StartRequest | EndRequest
_DECODERS: dict[str, msgspec.json.Decoder[Any]] = {
    "/act": _act_decoder,
    "/start": _start_decoder,
    "/end": _end_decoder,
}
_encoder = msgspec.json.Encoder()
_MAX_REQUEST = 1024 * 1024


def _to_wire(answer: WireAction | Action | dict[str, Any]) -> bytes:
    if isinstance(answer, Action):
        return _encoder.encode(answer.to_dict())
    return _encoder.encode(answer)


class _Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        if self.server.bot.verbose:
            super().log_message(format, *args)

    def _send(self, status: int, body: bytes, content_type: str = "application/json") -> None:
        head = (
            f"HTTP/1.1 {status} {self.responses.get(status, ('',))[0]}\r\n"
            f"Content-Type: {content_type}\r\nContent-Length: {len(body)}\r\n"
            "Connection: keep-alive\r\n\r\n"
        ).encode("latin-1")
        self.wfile.write(head + body)
        self.log_request(status, len(body))

    def _problem(self, status: int, title: str, detail: str) -> None:
        body = _encoder.encode({"error": title, "detail": detail, "protocol": PROTOCOL_VERSION})
        self._send(status, body)

    def do_GET(self) -> None:
        bot = self.server.bot
        if self.path != "/":
            self._problem(
                404, "not found", f"{self.path} is not part of {PROTOCOL_VERSION}; see GET /"
            )
            return
        if "text/html" in (self.headers.get("Accept") or ""):
            self._send(200, bot.info_page().encode(), "text/html; charset=utf-8")
            return
        self._send(200, _encoder.encode(bot.info))

    def do_POST(self) -> None:
        bot = self.server.bot
        length_text = self.headers.get("Content-Length")
        if length_text is None or not length_text.isdigit():
            self._problem(411, "length required", "send a Content-Length header")
            self.close_connection = True
            return
        length = int(length_text)
        if length > _MAX_REQUEST:
            self._problem(413, "request too large", f"{length} bytes is over {_MAX_REQUEST}")
            self.close_connection = True
            return
        body = self.rfile.read(length)
        if bot.verifier is not None:
            try:
                bot.verifier.verify(dict(self.headers.items()), body, now=time.time())
            except SignatureError as exc:
                self._problem(401, "bad signature", str(exc))
                return
            if not bot.first_sighting(self.headers.get("webhook-id", "")):
                self._problem(409, "replayed request", "this webhook-id was already seen")
                return
        route = self.path
        decoder = _DECODERS.get(route)
        if decoder is None:
            self._problem(404, "not found", f"POST {route} is not part of {PROTOCOL_VERSION}")
            return
        try:
            message: _Request = decoder.decode(body)
        except (msgspec.ValidationError, msgspec.DecodeError) as exc:
            self._problem(400, "invalid request", f"{route}: {exc}")
            return
        except RecursionError:
            self._problem(400, "invalid request", f"{route}: JSON nested too deeply to read")
            return
        try:
            if isinstance(message, ActRequest):
                self._send(200, _to_wire(bot.act(message)))
                return
            if isinstance(message, StartRequest) and bot.on_start is not None:
                bot.on_start(message)
            elif isinstance(message, EndRequest) and bot.on_end is not None:
                bot.on_end(message)
            self._send(200, b"{}")
        except Exception as exc:
            # The bot author's code failed: say so clearly, to the arena and on stderr.
            traceback.print_exc(file=sys.stderr)
            self._problem(500, "bot error", f"{type(exc).__name__}: {exc}")


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True
    # socketserver's default backlog is 5: a burst of matches starting at once overflows it,
    # the kernel drops the SYNs, and the arena's connect waits out a 1 s retransmission.
    request_queue_size = socket.SOMAXCONN
    bot: BotServer

    def handle_error(self, request: Any, client_address: Any) -> None:
        """A client that went away mid-request (an arena worker killed, a closed connection)
        is not the bot's error: no traceback for it; anything else is reported as before."""
        if isinstance(sys.exc_info()[1], (ConnectionResetError, BrokenPipeError)):
            return
        super().handle_error(request, client_address)


class BotServer:
    """A bot served over the protocol. ``start()`` runs it in a background thread."""

    def __init__(
        self,
        act: ActFunction,
        *,
        name: str,
        author: str = "",
        version: str = "1",
        host: str = "127.0.0.1",
        port: int = 0,
        secret: str | None = None,
        on_start: Callable[[StartRequest], None] | None = None,
        on_end: Callable[[EndRequest], None] | None = None,
        verbose: bool = False,
    ) -> None:
        self.act = act
        self.info = BotInfo(PROTOCOL_VERSION, name, author, version)
        self.verifier = Signer(secret) if secret else None
        self._seen_ids: dict[str, float] = {}
        self._seen_lock = threading.Lock()
        self.on_start = on_start
        self.on_end = on_end
        self.verbose = verbose
        self._server = _Server((host, port), _Handler)
        self._server.bot = self
        self._thread: threading.Thread | None = None

    def first_sighting(self, msg_id: str, window_s: float = 600.0) -> bool:
        """Remember a message id; False if it was seen within the window (a replay)."""
        now = time.monotonic()
        with self._seen_lock:
            if len(self._seen_ids) > 10_000:
                cutoff = now - window_s
                self._seen_ids = {k: t for k, t in self._seen_ids.items() if t > cutoff}
            if msg_id in self._seen_ids:
                return False
            self._seen_ids[msg_id] = now
            return True

    @property
    def port(self) -> int:
        return int(self._server.server_address[1])

    @property
    def url(self) -> str:
        host = str(self._server.server_address[0])
        return f"http://{host}:{self.port}"

    def start(self) -> BotServer:
        """Serve in a daemon thread; returns self."""
        self._thread = threading.Thread(
            target=self._server.serve_forever, name=f"bot-{self.info.name}", daemon=True
        )
        self._thread.start()
        return self

    def serve_forever(self) -> None:
        """Serve in the calling thread until interrupted."""
        try:
            self._server.serve_forever()
        finally:
            self._server.server_close()

    def stop(self) -> None:
        """Stop serving and close the listening socket."""
        self._server.shutdown()
        self._server.server_close()
        if self._thread is not None:
            self._thread.join(timeout=5)

    def info_page(self) -> str:
        """A readable page for a person who opens the bot's URL in a browser."""
        info = json.dumps(msgspec.to_builtins(self.info), indent=2)
        name = html.escape(self.info.name)
        return (
            f"<!doctype html><meta charset=utf-8><title>{name}</title><h1>{name}</h1>"
            f"<p>A Gin Rummy bot speaking <code>{PROTOCOL_VERSION}</code>.</p>"
            f"<pre>{html.escape(info)}</pre><p>Endpoints: <code>GET /</code>, "
            "<code>POST /start</code>, <code>POST /act</code>, <code>POST /end</code>. "
            "Check it with <code>gin-arena bot check URL</code>.</p>"
        )


def serve(
    act: ActFunction, *, name: str, port: int = 8000, host: str = "127.0.0.1", **kwargs: Any
) -> None:
    """Serve a bot until interrupted (what a starter bot's ``__main__`` calls)."""
    server = BotServer(act, name=name, host=host, port=port, **kwargs)
    print(f"{name} listening on {server.url} ({PROTOCOL_VERSION})", file=sys.stderr)
    with contextlib.suppress(KeyboardInterrupt):
        server.serve_forever()
