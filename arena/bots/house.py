"""House bots served over the real protocol: what the demo, the tests and authors play against.

Every house bot answers from the request alone (the ``random`` one draws each choice from a
generator seeded by its own seed and the request's match id, game, deal and position), so a
rerun of a match (same id and seed) against them reproduces it exactly, on the same server or
in a fresh process, however many matches the server plays at once.

>>> bots = start_house_bots(["greedy", "strong"])
>>> [b.info.name for b in bots]
['house-greedy', 'house-strong']
>>> for b in bots: b.stop()
"""

from __future__ import annotations

from collections.abc import Sequence

from arena.bots.sdk import BotServer
from arena.bots.strategies import STRATEGIES

__all__ = ["HOUSE_KINDS", "house_bot", "start_house_bots"]

HOUSE_KINDS = tuple(STRATEGIES)


def house_bot(
    kind: str,
    *,
    port: int = 0,
    host: str = "127.0.0.1",
    name: str | None = None,
    secret: str | None = None,
    seed: int | str = 0,
) -> BotServer:
    """A house bot server (not started)."""
    if kind not in STRATEGIES:
        raise ValueError(f"unknown house bot kind {kind!r}; choose one of {', '.join(HOUSE_KINDS)}")
    return BotServer(
        STRATEGIES[kind](seed),
        name=name or f"house-{kind}",
        author="gin-arena",
        version="1",
        host=host,
        port=port,
        secret=secret,
    )


def start_house_bots(kinds: Sequence[str], *, secret: str | None = None) -> list[BotServer]:
    """Start one house bot per kind on free loopback ports (names made unique)."""
    servers = []
    seen: dict[str, int] = {}
    for kind in kinds:
        seen[kind] = seen.get(kind, 0) + 1
        name = f"house-{kind}" if seen[kind] == 1 else f"house-{kind}-{seen[kind]}"
        servers.append(house_bot(kind, name=name, secret=secret, seed=name).start())
    return servers
