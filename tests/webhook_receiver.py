"""A webhook endpoint on loopback for the webhook tests: it answers each ``POST`` as its script
says (a status; ``slow``: 200 after 50 ms; ``hang``: no answer until the test ends), keeps every
request it got and how many it was answering at once.

>>> receiver = Receiver(["500", "hang"], then="204")
>>> receiver.next_action(), receiver.next_action(), receiver.next_action()
('500', 'hang', '204')
>>> receiver.stop()
"""

from __future__ import annotations

import socket
import threading
import time
from collections.abc import Callable, Iterable
from http import HTTPStatus

from loopback import HttpMessage, LoopbackServer, http_head

from arena.bots.webhooks import WebhookEvent, WebhookReceiver


class Receiver(LoopbackServer):
    """Answers the n-th request with ``script[n]`` (``then`` once the script has run out)."""

    def __init__(self, script: Iterable[str] = (), *, then: str = "200") -> None:
        super().__init__("webhook-receiver")
        self.requests: list[HttpMessage] = []
        self._script = list(script)
        self.then = then
        self._lock = threading.Condition()
        self._release = threading.Event()
        self._answering = 0
        #: The most requests it was answering at once.
        self.most_at_once = 0

    def next_action(self) -> str:
        with self._lock:
            return self._script.pop(0) if self._script else self.then

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        action = self.next_action()
        with self._lock:
            self.requests.append(request)
            self._answering += 1
            self.most_at_once = max(self.most_at_once, self._answering)
            self._lock.notify_all()
        try:
            return self._answer(conn, action)
        finally:
            with self._lock:
                self._answering -= 1

    def _answer(self, conn: socket.socket, action: str) -> bool:
        if action == "hang":
            self._release.wait(30)
            return False
        if action == "slow":  # a 200 after a while
            time.sleep(0.05)
            action = "200"
        code = int(action)
        phrase = HTTPStatus(code).phrase if code in HTTPStatus._value2member_map_ else "Other"
        conn.sendall(http_head(f"{code} {phrase}", {"Content-Length": "0"}))
        return True

    def wait_for(self, count: int, timeout: float = 30.0) -> list[HttpMessage]:
        """The requests once there are ``count`` of them (AssertionError after ``timeout``)."""
        deadline = time.monotonic() + timeout
        with self._lock:
            while len(self.requests) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{len(self.requests)} of {count} requests arrived"
                self._lock.wait(left)
            return list(self.requests)

    def stop(self) -> None:
        self._release.set()
        super().stop()


def headers_of(request: HttpMessage) -> dict[str, str]:
    """A request's headers, names in lower case."""
    out = {}
    for line in request.head.split(b"\r\n")[1:]:
        name, _, value = line.decode("latin-1").partition(":")
        out[name.strip().lower()] = value.strip()
    return out


def verified(request: HttpMessage, *secrets: str) -> WebhookEvent:
    """The event of a request as the SDK's receiver verifies it, at the attempt's own time
    (a fresh receiver each time: retries carry the same ``webhook-id``)."""
    headers = headers_of(request)
    receiver = WebhookReceiver(*secrets)
    return receiver.receive(headers, request.body, now=float(headers["webhook-timestamp"]))


def poll(condition: Callable[[], bool], timeout: float = 30.0, what: str = "it") -> None:
    """Wait until ``condition()`` holds (AssertionError after ``timeout`` seconds)."""
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.02)
