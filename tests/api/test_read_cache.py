"""ARENA_READ_CACHE_MS: public reads served from an API process's cache for that long.

Off by default (every read is the database's); when on, an anonymous read of a public resource
shows the arena as it was at most that long ago, a write through the same process shows at
once, and nothing else is ever served from it: errors, authorised reads. The cache's clock is
a fake one here, so no test waits for it.
"""

from __future__ import annotations

import gzip

import pytest
from api_support import Api, make_api
from api_world import ADMIN_TOKEN

from arena.api import context as context_module
from arena.api.context import EXTENSION, ReadCache
from arena.services.bots import register_bot
from arena.settings import SettingsError, load_settings


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def with_cache(api: Api, ttl_ms: int = 1000) -> Clock:
    clock = Clock()
    api.app.extensions[EXTENSION].reads = ReadCache(ttl_ms, clock=clock)
    return clock


def names(api: Api, token: str | None = None) -> list[str]:
    response = api.get("/api/v1/bots", token=token)
    assert response.status_code == 200
    return sorted(b["name"] for b in response.json["items"])


def add_bot(api: Api, name: str) -> int:
    """A bot registered behind the API's back (as a CLI or another API process would)."""
    return register_bot(api.db, name=name, owner="o", url="http://127.0.0.1:9").bot_id


def test_off_by_default_a_change_made_elsewhere_shows_at_once(db_url: str) -> None:
    for api in make_api(db_url):
        assert not api.app.extensions[EXTENSION].reads.enabled
        assert names(api) == []
        add_bot(api, "first")
        assert names(api) == ["first"]


def test_a_public_read_shows_the_arena_as_it_was_until_the_time_is_up(db_url: str) -> None:
    for api in make_api(db_url, read_cache_ms=1000):
        clock = with_cache(api)
        add_bot(api, "first")
        assert names(api) == ["first"]
        add_bot(api, "second")
        clock.now += 0.999
        assert names(api) == ["first"]
        clock.now += 0.001
        assert names(api) == ["first", "second"]


def test_a_write_through_the_same_process_shows_at_once(db_url: str) -> None:
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        bot = add_bot(api, "first")
        assert api.get(f"/api/v1/bots/{bot}").json["status"] == "active"
        response = api.post(f"/api/v1/bots/{bot}/deactivate", token=ADMIN_TOKEN)
        assert response.status_code == 200, response.json
        assert api.get(f"/api/v1/bots/{bot}").json["status"] == "inactive"


def test_a_failed_write_empties_it_too(db_url: str) -> None:
    """Whatever the answer, a request that may have written is taken as one."""
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        assert names(api) == []
        add_bot(api, "first")
        assert api.post("/api/v1/bots/999/deactivate", token=ADMIN_TOKEN).status_code == 404
        assert names(api) == ["first"]


def test_an_authorised_read_neither_reads_nor_fills_it(db_url: str) -> None:
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        assert names(api) == []
        add_bot(api, "first")
        assert names(api, token=ADMIN_TOKEN) == ["first"]
        assert names(api) == []  # the anonymous answer kept from before
        add_bot(api, "second")
        assert names(api, token=ADMIN_TOKEN) == ["first", "second"]


def test_an_error_is_never_kept(db_url: str) -> None:
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        assert api.get("/api/v1/bots/1").status_code == 404
        bot = add_bot(api, "first")
        assert bot == 1
        assert api.get("/api/v1/bots/1").status_code == 200


def test_each_query_string_is_its_own_entry(db_url: str) -> None:
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        add_bot(api, "first")
        assert len(api.get("/api/v1/bots").json["items"]) == 1
        add_bot(api, "second")
        assert len(api.get("/api/v1/bots?limit=50").json["items"]) == 2
        assert len(api.get("/api/v1/bots").json["items"]) == 1


def test_a_kept_answer_is_the_same_json_gzipped_or_not(db_url: str) -> None:
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        for i in range(20):
            add_bot(api, f"bot-{i:02d}")
        fresh = api.get("/api/v1/bots")
        kept = api.client.get("/api/v1/bots", headers={"Accept-Encoding": "gzip"})
        plain = api.get("/api/v1/bots")
        assert len(fresh.data) >= 1024, len(fresh.data)  # worth compressing
        assert kept.headers.get("Content-Encoding") == "gzip", kept.headers
        assert gzip.decompress(kept.data) == fresh.data == plain.data
        assert "Content-Encoding" not in plain.headers
        for response in (fresh, kept, plain):
            assert response.mimetype == "application/json"
            assert "Accept-Encoding" in response.headers["Vary"]
            assert response.headers["Cache-Control"] == "no-cache"


def test_a_kept_answer_keeps_the_views_own_headers(db_url: str) -> None:
    """A bot's detail shows its owner more: ``Vary: Authorization``, on every answer."""
    for api in make_api(db_url, read_cache_ms=1000):
        with_cache(api)
        bot = add_bot(api, "first")
        answers = [api.get(f"/api/v1/bots/{bot}") for _ in range(2)]
        assert answers[0].data == answers[1].data
        for response in answers:
            assert "Authorization" in response.headers["Vary"]


def test_an_answer_computed_across_a_write_is_not_kept() -> None:
    """A read that began before a write and ends after it may hold either state: dropped."""
    cache = ReadCache(1000, clock=Clock())
    before = cache.generation()
    cache.forget()
    cache.put("/api/v1/bots?", b"[]", (), before)
    assert cache.get("/api/v1/bots?") is None
    cache.put("/api/v1/bots?", b"[]", (), cache.generation())
    assert cache.get("/api/v1/bots?") is not None


@pytest.mark.parametrize("value", ["-1", "60001", "soon"])
def test_a_read_cache_time_out_of_range_is_refused_in_one_line(value: str) -> None:
    with pytest.raises((SettingsError, ValueError)) as caught:
        load_settings({"ARENA_READ_CACHE_MS": value})
    message = str(caught.value)
    assert "ARENA_READ_CACHE_MS" in message and "\n" not in message


def test_a_read_cache_time_in_range_is_taken() -> None:
    assert load_settings({"ARENA_READ_CACHE_MS": "1000"}).read_cache_ms == 1000
    assert load_settings({}).read_cache_ms == 0


def test_the_cache_holds_at_most_its_byte_budget_dropping_the_least_recently_used(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """A client cycling through many URLs cannot make one process hold more than the budget."""
    monkeypatch.setattr(context_module, "MAX_READ_BYTES", 3000)
    cache = ReadCache(1000, clock=Clock())
    body = bytes(range(256)) * 4  # 1,024 bytes that gzip does not shrink much
    for i in range(10):
        cache.put(f"/api/v1/matches?before={i}", body, (), cache.generation())
        _, size = cache.size
        assert size <= 3000
    assert cache.get("/api/v1/matches?before=9") is not None
    assert cache.get("/api/v1/matches?before=0") is None
    cache.put("/api/v1/matches?big", b"x" * 4000, (), cache.generation())  # over it alone
    assert cache.get("/api/v1/matches?big") is None
    cache.forget()
    assert cache.size == (0, 0)
