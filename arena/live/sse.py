"""The ``text/event-stream`` wire form (the WHATWG HTML standard's server-sent events).

>>> sse_event("end", {"status": "finished"}, "1-7")
b'event: end\\nid: 1-7\\ndata: {"status":"finished"}\\n\\n'
>>> PING
b': ping\\n\\n'
"""

from __future__ import annotations

from typing import Any

import msgspec

__all__ = ["HEADERS", "PING", "RETRY", "sse_event"]

_encoder = msgspec.json.Encoder()

#: A comment line, sent when the stream has been idle for a while (proxies close idle streams).
PING = b": ping\n\n"
#: How long a browser waits before reconnecting (ms), sent first on every stream.
RETRY = b"retry: 2000\n\n"
#: The response headers of every stream.
HEADERS = {
    "Cache-Control": "no-cache",
    "X-Accel-Buffering": "no",
}


def sse_event(name: str, data: Any, event_id: str | None = None) -> bytes:
    """One event: its name, its id (if any) and its data as one line of JSON."""
    head = f"event: {name}\n" if event_id is None else f"event: {name}\nid: {event_id}\n"
    return head.encode() + b"data: " + _encoder.encode(data) + b"\n\n"
