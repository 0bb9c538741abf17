"""The results cache has a budget: per entry and in total, and results never push the rate-limit
counters out of a shared Redis; a full Redis says so in the log and in /readyz."""
import logging

import pytest
import redis

from allocator import safe_cache
from tests.redis_server import redis_cache_settings, redis_server  # noqa: F401 (a fixture)


@pytest.fixture(autouse=True)
def _fresh_outage_state():
    safe_cache.reset()
    yield
    safe_cache.reset()


def test_results_past_the_total_budget_are_not_cached(settings, caplog):
    caplog.set_level(logging.WARNING, logger="allocator")
    settings.RESULTS_CACHE_TOTAL_BYTES = 3_000
    for n in range(5):
        safe_cache.set(f"run:{n}", bytes([n]) * 1_000, timeout=60)

    assert [safe_cache.get(f"run:{n}") is not None for n in range(5)] == [True, True, True, False, False]
    assert [r.getMessage() for r in caplog.records if "budget" in r.getMessage()] == [
        "results cache budget reached (3000 of RESULTS_CACHE_TOTAL_BYTES=3000 bytes written in the last 3600 s): "
        "new results are not cached until older ones expire"]


def test_a_result_over_the_entry_limit_is_not_cached(settings):
    settings.RESULTS_CACHE_MAX_BYTES = 500
    safe_cache.set("run:big", b"x" * 501, timeout=60)
    safe_cache.set("run:small", b"x" * 500, timeout=60)

    assert safe_cache.get("run:big") is None and safe_cache.get("run:small") == b"x" * 500


@pytest.fixture
def shared_redis(settings, redis_server):
    """The app's caches on a real Redis (restored before the server stops)."""
    original = settings.CACHES
    settings.CACHES = redis_cache_settings(redis_server.url)
    safe_cache.reset()
    client = redis.Redis(host="127.0.0.1", port=redis_server.port)

    def limit(*, policy: str, room: int) -> redis.Redis:
        client.config_set("maxmemory", client.info("memory")["used_memory"] + room)
        client.config_set("maxmemory-policy", policy)
        return client

    yield limit
    settings.CACHES = original
    safe_cache.reset()


def test_results_never_evict_the_rate_limit_counters(settings, shared_redis):
    shared_redis(policy="allkeys-lru", room=4 * 1024 * 1024)
    settings.RESULTS_CACHE_TOTAL_BYTES = 1024 * 1024
    for client in range(200):
        safe_cache.count(f"share-rate:198.18.0.{client}", timeout=600, by=client + 1)
    for n in range(100):  # 10 MB of results offered, 2.5 times the room Redis has
        safe_cache.set(f"run:{n}", bytes([n]) * 100_000, timeout=600)

    assert [safe_cache.read_count(f"share-rate:198.18.0.{client}") for client in range(200)] == list(range(1, 201))
    assert safe_cache.get("run:0") is not None, "results within the budget are cached"


def test_a_full_redis_says_that_counters_went_per_process(shared_redis, caplog):
    caplog.set_level(logging.WARNING, logger="allocator")
    client = shared_redis(policy="noeviction", room=512 * 1024)
    with pytest.raises(redis.exceptions.ResponseError):
        for n in range(1_000):  # someone else's keys fill it
            client.set(f"other:{n}", b"x" * 10_000)

    assert safe_cache.count("share-rate:198.18.0.1", timeout=600) == 1  # counted here, not lost
    warnings = [r.getMessage() for r in caplog.records if r.levelno == logging.WARNING]
    assert len(warnings) == 1 and "Redis is full" in warnings[0] and "count in each process" in warnings[0]
    status = safe_cache.status()
    assert status.startswith("unavailable: Redis is full") and status.endswith("(rate limits count in each process)")
