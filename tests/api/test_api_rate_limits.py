"""Rate limits: one budget per address and one per token, shared through Redis when
configured; a breach is a 429 problem with Retry-After; health checks are never limited."""

from __future__ import annotations

from api_support import Api, make_api
from api_world import ADMIN_TOKEN


def test_per_address_budget_then_429_with_retry_after(db_url: str):
    for api in make_api(db_url, rate_limit="3 per minute"):
        for _ in range(3):
            assert api.get("/api/v1/bots").status_code == 200
        response = api.get("/api/v1/ratings")
        assert response.status_code == 429
        assert response.mimetype == "application/problem+json"
        assert int(response.headers["Retry-After"]) > 0
        assert response.json["type"].endswith("/rate-limited")
        other = api.client.get("/api/v1/bots", environ_base={"REMOTE_ADDR": "10.1.2.3"})
        assert other.status_code == 200
        assert other.headers["X-RateLimit-Limit"] == "3"


def test_per_token_budget_across_addresses(db_url: str):
    for api in make_api(db_url, rate_limit="3 per minute"):
        headers = {"Authorization": f"Bearer {ADMIN_TOKEN}"}
        codes = [
            api.client.get(
                "/api/v1/bots", headers=headers, environ_base={"REMOTE_ADDR": f"10.0.0.{i}"}
            ).status_code
            for i in range(4)
        ]
        assert codes == [200, 200, 200, 429]


def test_guessing_tokens_spends_the_address_budget(db_url: str):
    for api in make_api(db_url, rate_limit="3 per minute"):
        codes = [api.get("/api/v1/bots", token=f"guess-{i}").status_code for i in range(4)]
        assert codes == [401, 401, 401, 429]


def test_health_and_metrics_are_never_limited(db_url: str):
    for api in make_api(db_url, rate_limit="1 per minute"):
        for _ in range(3):
            assert api.get("/healthz").status_code == 200
            assert api.get("/readyz").status_code == 200
            assert api.get("/metrics").status_code == 200


def test_counters_are_shared_through_redis(db_url: str, redis_url: str):
    settings = {"rate_limit": "3 per minute", "rate_limit_storage": redis_url}
    for one in make_api(db_url, **settings):
        for two in make_api(db_url, **settings):
            assert one.get("/api/v1/bots").status_code == 200
            assert two.get("/api/v1/bots").status_code == 200
            assert one.get("/api/v1/bots").status_code == 200
            assert two.get("/api/v1/bots").status_code == 429


def test_an_empty_rate_limit_turns_limits_off(db_url: str):
    for api in make_api(db_url, rate_limit=""):
        assert all(api.get("/api/v1/bots").status_code == 200 for _ in range(20))


def test_x_forwarded_for_is_ignored_without_trusted_proxies(db_url: str):
    """By default the TCP peer is the client: a forged X-Forwarded-For buys no new budget."""
    for api in make_api(db_url, rate_limit="3 per minute"):
        codes = [
            api.client.get(
                "/api/v1/bots", headers={"X-Forwarded-For": f"203.0.113.{i}"}
            ).status_code
            for i in range(4)
        ]
        assert codes == [200, 200, 200, 429]


def test_behind_a_trusted_proxy_each_forwarded_client_has_its_own_budget(db_url: str):
    """ARENA_TRUSTED_PROXIES=1: the proxy's X-Forwarded-For names the client, and only the
    address the proxy appended counts (what a client put before it is not trusted)."""
    for api in make_api(db_url, rate_limit="3 per minute", trusted_proxies=1):

        def get(forwarded: str, api: Api = api) -> int:
            return api.client.get(
                "/api/v1/bots",
                headers={"X-Forwarded-For": forwarded},
                environ_base={"REMOTE_ADDR": "127.0.0.1"},  # the proxy
            ).status_code

        assert [get("198.51.100.7") for _ in range(4)] == [200, 200, 200, 429]
        assert get("198.51.100.8") == 200
        # A client that forges its own header still lands on the address the proxy saw.
        assert get("203.0.113.99, 198.51.100.7") == 429
