"""docs/WEBHOOKS.md's receiver, run as written (in its own process, with its endpoint's secret
in ``WEBHOOK_SECRET``) against real deliveries: it prints the event, answers the redelivery of
an event it has (same ``webhook-id``) with 2xx without printing it again, and refuses a forged
request with 400. The doc's retry schedule is the schedule's."""

from __future__ import annotations

import http.client
import os
import re
import socket
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from loopback import free_port
from webhook_receiver import poll

from arena.db.models import WebhookDeliveryRow, utcnow
from arena.db.session import Database
from arena.events import EventType
from arena.protocol.signing import Signer, generate_secret
from arena.services.bots import register_bot
from arena.services.events import emit
from arena.services.webhook_endpoints import create_endpoint, redeliver
from arena.services.webhooks import deliver_due
from arena.settings import load_settings
from arena.states import DeliveryStatus
from arena.webhooks.schedule import attempt_offsets

DOC = Path(__file__).resolve().parent.parent / "docs" / "WEBHOOKS.md"


def receiver_code() -> str:
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## A receiver in a few lines", 1)[1]
    match = re.search(r"```python\n(.*?)```", section, re.DOTALL)
    assert match is not None, "no python block under 'A receiver in a few lines'"
    return match.group(1)


Start = Callable[[int, str], "subprocess.Popen[str]"]


@pytest.fixture
def start_receiver(tmp_path: Path) -> Iterator[Start]:
    """Starts the doc's receiver as a user runs it (``PORT`` and ``WEBHOOK_SECRET`` set), and
    stops it at the end."""
    script = tmp_path / "receiver.py"
    script.write_text(receiver_code(), encoding="utf-8")
    started: list[subprocess.Popen[str]] = []

    def start(port: int, secret: str) -> subprocess.Popen[str]:
        env = {**os.environ, "WEBHOOK_SECRET": secret, "PORT": str(port)}
        process = subprocess.Popen(
            [sys.executable, str(script)], env=env, stdout=subprocess.PIPE, text=True
        )
        started.append(process)

        def listening() -> bool:
            try:
                with socket.create_connection(("127.0.0.1", port), timeout=1):
                    return True
            except OSError:
                return False

        poll(listening, what="the doc's receiver to listen")
        return process

    yield start
    for process in started:
        process.terminate()
        process.communicate(timeout=30)


def test_the_docs_receiver_takes_a_delivery_a_redelivery_and_refuses_a_forgery(
    db: Database, start_receiver: Start
) -> None:
    port = free_port()
    settings = load_settings({}, database_url=db.url, allow_loopback=True)
    bot = register_bot(db, name="doc", owner="o", url="http://127.0.0.1:9").bot_id
    created = create_endpoint(
        db, settings, bot, url=f"http://127.0.0.1:{port}/", event_types=["match.finished"]
    )
    process = start_receiver(port, created.secret)  # the secret shown at registration
    with db.session() as session:
        emit(session, EventType.MATCH_FINISHED, {"match": 7, "winner": "a"}, audience=[bot])

    def delivery() -> WebhookDeliveryRow:
        with db.session() as session:
            return session.get_one(WebhookDeliveryRow, 1)

    deliver_due(db, settings, lambda _ids: None, now=utcnow())
    assert delivery().status is DeliveryStatus.DELIVERED and delivery().last_status_code == 200
    assert process.stdout is not None
    assert process.stdout.readline() == "match.finished {'match': 7, 'winner': 'a'}\n"

    redeliver(db, bot, created.endpoint_id, 1)
    deliver_due(db, settings, lambda _ids: None, now=utcnow())
    assert delivery().status is DeliveryStatus.DELIVERED and delivery().attempts == 2

    forged = Signer(generate_secret()).sign_now(b'{"type":"match.finished"}')
    connection = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    connection.request("POST", "/", body=b'{"type":"match.finished"}', headers=forged)
    assert connection.getresponse().status == 400
    connection.close()
    process.terminate()
    out, _ = process.communicate(timeout=30)
    assert out == ""  # the redelivery and the forgery printed nothing


def test_the_docs_schedule_table_is_the_schedule() -> None:
    text = DOC.read_text(encoding="utf-8")
    row = re.search(r"\| seconds after the event \|(.*)\|\n", text)
    assert row is not None
    shown = [int(cell) for cell in row.group(1).split("|")]
    assert shown == [round(s) for s in attempt_offsets(5.0, 24.0)]
