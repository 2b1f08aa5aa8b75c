"""STYLE.md "Pure centre": the rules package imports no web, database, queue or network code.

Checked in a fresh interpreter, so nothing the test session imported can hide a dependency.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import arena.rules

FORBIDDEN = (
    "flask",
    "werkzeug",
    "sqlalchemy",
    "alembic",
    "celery",
    "kombu",
    "redis",
    "psycopg",
    "psycopg2",
    "http.client",
    "http.server",
    "urllib.request",
    "socket",
    "ssl",
    "asyncio",
    "httpx",
    "httptools",
    "aiohttp",
    "requests",
    "urllib3",
    "waitress",
    "gunicorn",
    "arena.protocol",
    "arena.db",
    "arena.api",
    "arena.web",
)

PROBE = """
import json, sys
import arena.rules, arena.cards
print(json.dumps(sorted(sys.modules)))
"""


def _modules_after_import() -> list[str]:
    out = subprocess.run(
        [sys.executable, "-c", PROBE], capture_output=True, text=True, check=True, timeout=60
    )
    modules: list[str] = json.loads(out.stdout)
    return modules


def test_importing_the_rules_pulls_in_no_io_libraries() -> None:
    modules = _modules_after_import()
    assert "arena.rules" in modules
    bad = sorted(m for m in modules if any(m == f or m.startswith(f + ".") for f in FORBIDDEN))
    assert bad == [], f"arena.rules imports {bad}"


def test_rules_modules_hold_no_clock_or_global_random_calls() -> None:
    # The only randomness is an injected random.Random; no module reads the clock.
    package = Path(arena.rules.__file__).parent
    for path in [*package.glob("*.py"), package.parent / "cards.py"]:
        text = path.read_text()
        for needle in (
            "import time",
            "datetime",
            "random.random(",
            "random.shuffle(",
            "random.choice(",
            "random.seed(",
        ):
            assert needle not in text, f"{path.name} uses {needle}"
