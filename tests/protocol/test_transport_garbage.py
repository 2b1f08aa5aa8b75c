"""An exchange leaves nothing for the cycle collector: a loaded worker makes thousands a second,
and the garbage of each (an answer and its parser, which hold each other) had its collections
run every second, each stopping every match of the process for 20 ms or more."""

from __future__ import annotations

import gc
import socket
from contextlib import suppress

import pytest
from loopback import HttpMessage, LoopbackServer

from arena.protocol.transport import Transport, TransportError

OK = b'HTTP/1.1 200 OK\r\nContent-Length: 17\r\n\r\n{"action":"pass"}'
ERROR = b"HTTP/1.1 500 Internal Server Error\r\nContent-Length: 4\r\n\r\noops"


class Answering(LoopbackServer):
    """Answers every request, keeping the connection: ``OK``, or ``ERROR`` when ``failing``."""

    failing = False

    def answer(self, conn: socket.socket, request: HttpMessage) -> bool:
        conn.sendall(ERROR if self.failing else OK)
        return True


@pytest.mark.parametrize("answer", ["ok", "error"])
def test_an_exchange_leaves_no_cycle_for_the_collector(answer: str) -> None:
    server = Answering("garbage").start()
    server.failing = answer == "error"
    port = int(server.url.rsplit(":", 1)[1])

    def connect(timeout: float) -> socket.socket:
        return socket.create_connection(("127.0.0.1", port), timeout=timeout)

    transport = Transport("127.0.0.1", connect)
    gc.collect()
    debug = gc.get_debug()
    gc.disable()
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector would free goes to gc.garbage
    try:
        for _ in range(20):
            with suppress(TransportError):
                transport.request("POST", "/act", b"{}", {}, 5.0)
        gc.collect()
        left = [type(o).__name__ for o in gc.garbage]
    finally:
        gc.garbage.clear()
        gc.set_debug(debug)
        gc.enable()
        transport.close()
        server.stop()
    assert "_Answer" not in left and "HttpResponseParser" not in left, sorted(set(left))
