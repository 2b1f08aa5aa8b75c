"""The transport's tables on gevent's sockets: what the worker's gevent pool runs.

Under ``gin-arena worker --pool gevent`` the process has run ``gevent.monkey.patch_all()``, so
every socket is gevent's and the transport waits through the socket's own timeout (one cached
watcher per connection) instead of ``poll``. That path has its own code, so the same tables
that pin the threads path (the deadline's verdict, the hostile bots, the answers, retries and
strikes) run again here, in a child process that patches before it imports anything else:
monkey-patching cannot be undone in this one.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

HERE = Path(__file__).parent
TABLES = [
    "test_deadline.py",
    "test_hostile_bots.py",
    "test_answers.py",
    "test_request_rtt_and_strikes.py",
    "test_retry_ids.py",
]
#: The child: gevent first, then a check that the transport took the cooperative path (the
#: tables would pass on the threads path too, proving nothing), then pytest on the tables.
CHILD = """
from gevent import monkey
monkey.patch_all()
import sys
import pytest
from arena.protocol.transport import Transport
if not Transport("x", lambda _t: None)._cooperative:
    sys.exit("the transport did not take the gevent path")
sys.exit(pytest.main(sys.argv[1:]))
"""


def test_the_transport_tables_pass_on_gevent_sockets() -> None:
    args = [str(HERE / name) for name in TABLES]
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, "-q", "-p", "no:xdist", "-p", "no:cacheprovider", *args],
        capture_output=True,
        text=True,
        timeout=900,
        cwd=HERE.parent.parent,
        env={**os.environ, "PYTHONPATH": str(HERE)},
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, output[-4000:]
    summary = output.strip().splitlines()[-1]
    assert " passed" in summary and "skipped" not in summary, summary
