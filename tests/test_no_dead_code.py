"""Code kept only for its own tests, or for nothing, was removed (issue 10, 4.10); it stays out.

Each name was defined and never called by the arena: the executor ``drain`` helper and the
``Executor`` protocol, the HTTP player's ``_id_prefix``/``_sent`` counters (signing makes a fresh
``webhook-id`` per attempt), the ``http.client`` adapters ``GuardedHTTP*Connection`` (the
transport connects through ``open_connection``/``open_tls_connection``), ``authenticate_owner``
(the API looks a token up by its hash) and ``fold_elo`` (Elo is updated one match at a time).
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SOURCES = sorted([*ROOT.glob("arena/**/*.py"), *ROOT.glob("workers/**/*.py")])
REMOVED = [
    "drain",
    "Executor",
    "_id_prefix",
    "_sent",
    "GuardedHTTPConnection",
    "GuardedHTTPSConnection",
    "authenticate_owner",
    "fold_elo",
    "EloRun",
    "EloStep",
]


@pytest.mark.parametrize("name", REMOVED)
def test_removed_dead_code_stays_removed(name: str) -> None:
    pattern = re.compile(rf"(?:\bdef |\bclass |\.){re.escape(name)}\b(?!\w)")
    found = [
        f"{path.relative_to(ROOT)}:{n}"
        for path in SOURCES
        for n, line in enumerate(path.read_text().splitlines(), 1)
        if pattern.search(line) and not line.lstrip().startswith("#")
    ]
    assert not found, f"{name} is back: {found}"
