"""What a running app holds: its settings, its database and the executor it hands matches to.

:func:`create_app <arena.api.create_app>` builds one :class:`ArenaContext` and keeps it in
``app.extensions``; views reach it with :func:`arena_context`. Nothing is global: two apps in
one process (tests) never share a database or a cache.
"""

from __future__ import annotations

import threading
import time
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field

from flask import current_app
from prometheus_client import CollectorRegistry

from arena.api.http import gzipped
from arena.db.session import Database
from arena.playing.executors import MatchExecutor
from arena.protocol.urlguard import Resolver
from arena.settings import Settings

__all__ = [
    "EXTENSION",
    "ArenaContext",
    "BytesCache",
    "CachedBody",
    "CachedRead",
    "ReadCache",
    "arena_context",
]

EXTENSION = "gin_arena"


@dataclass(frozen=True, slots=True)
class CachedBody:
    """An encoded body, its gzip form (for large bodies) and its ETag."""

    etag: str
    body: bytes
    gzipped: bytes | None


class BytesCache:
    """A small thread-safe LRU of encoded bodies of immutable resources (finished replays)."""

    def __init__(self, size: int) -> None:
        self._size = size
        self._items: OrderedDict[object, CachedBody] = OrderedDict()
        self._lock = threading.Lock()

    def get(self, key: object) -> CachedBody | None:
        with self._lock:
            item = self._items.get(key)
            if item is not None:
                self._items.move_to_end(key)
            return item

    def put(self, key: object, item: CachedBody) -> None:
        with self._lock:
            self._items[key] = item
            self._items.move_to_end(key)
            while len(self._items) > self._size:
                self._items.popitem(last=False)


#: What a :class:`ReadCache` keeps at most, in URLs and in bytes of bodies (plain and
#: gzipped): the least recently used go first, so a client cycling through many URLs (``?before=``
#: every id) cannot make it hold more.
MAX_READS = 2048
MAX_READ_BYTES = 32 * 1024 * 1024


@dataclass(frozen=True, slots=True)
class CachedRead:
    body: bytes
    gzipped: bytes | None
    #: The view's own headers (``Vary: Authorization`` ...), replayed on every hit.
    headers: tuple[tuple[str, str], ...]
    expires: float

    @property
    def size(self) -> int:
        return len(self.body) + len(self.gzipped or b"")


class ReadCache:
    """Answers by URL, each for ``ttl_ms`` (0: nothing is kept); thread-safe."""

    def __init__(self, ttl_ms: int, clock: Callable[[], float] = time.monotonic) -> None:
        self.ttl_s = ttl_ms / 1000.0
        self._clock = clock
        self._lock = threading.Lock()
        self._entries: OrderedDict[str, CachedRead] = OrderedDict()
        self._bytes = 0
        #: Bumped by every write through the process: an answer computed across a write is
        #: not kept (it may hold what the write changed, or not).
        self._generation = 0

    @property
    def enabled(self) -> bool:
        return self.ttl_s > 0

    def generation(self) -> int:
        return self._generation

    def get(self, key: str) -> CachedRead | None:
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return None
            if entry.expires <= self._clock():
                self._drop(key)
                return None
            self._entries.move_to_end(key)
            return entry

    def put(
        self, key: str, body: bytes, headers: tuple[tuple[str, str], ...], generation: int
    ) -> CachedRead:
        entry = CachedRead(body, gzipped(body), headers, self._clock() + self.ttl_s)
        with self._lock:
            if generation == self._generation and entry.size <= MAX_READ_BYTES:
                if key in self._entries:
                    self._drop(key)
                self._entries[key] = entry
                self._bytes += entry.size
                while len(self._entries) > MAX_READS or self._bytes > MAX_READ_BYTES:
                    self._drop(next(iter(self._entries)))
        return entry

    def _drop(self, key: str) -> None:
        self._bytes -= self._entries.pop(key).size

    @property
    def size(self) -> tuple[int, int]:
        """The URLs and the bytes kept now."""
        with self._lock:
            return len(self._entries), self._bytes

    def forget(self) -> None:
        """Empty the cache (a write went through this process)."""
        with self._lock:
            self._generation += 1
            self._entries.clear()
            self._bytes = 0


@dataclass
class ArenaContext:
    """The app's collaborators (see the module docstring)."""

    settings: Settings
    db: Database
    #: What services hand the matches they schedule to (``executor.submit``, after commit).
    executor: MatchExecutor
    #: Whether the app made ``db`` (and so disposes of it in :meth:`close`).
    owns_db: bool = False
    #: Host resolution for bot URL checks (None: the system resolver).
    resolver: Resolver | None = None
    replays: BytesCache = field(default_factory=lambda: BytesCache(32))
    #: Tournament details, brackets and standings by fingerprint (see arena.api.versions).
    tournaments: BytesCache = field(default_factory=lambda: BytesCache(128))
    #: Public reads for ``ARENA_READ_CACHE_MS`` (see arena.api.read_cache).
    reads: ReadCache = field(default_factory=lambda: ReadCache(0))
    closers: list[Callable[[], None]] = field(default_factory=list)
    metrics: CollectorRegistry = field(default_factory=CollectorRegistry)

    def __getitem__(self, name: str) -> object:
        """Mapping-style access (``extensions["gin_arena"]["db"]``) for the web pages."""
        if name not in ("db", "settings", "executor"):
            raise KeyError(name)
        value: object = getattr(self, name)
        return value

    def close(self) -> None:
        """Release what the app opened (database pool, an executor it made)."""
        for close in reversed(self.closers):
            close()
        self.closers.clear()
        if self.owns_db:
            self.db.dispose()


def arena_context() -> ArenaContext:
    """The context of the app handling the current request."""
    context: ArenaContext = current_app.extensions[EXTENSION]
    return context
