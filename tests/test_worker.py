"""Bounded allocation runs: a worker process per run with a time and memory limit, and the
results cache (local memory, or Redis when one is reachable on 127.0.0.1:6379)."""
import os
import pickle
import socket
import threading
import time
import uuid

import pytest
from django.core.cache import cache, caches

from allocator import gallery, worker
from allocator.engine.run import UNSATISFIABLE
from allocator.runs import RunRequest, run_request
from allocator.worker import WorkerPool, gave_up, result_key, run_bounded


# Jobs for the pool: module-level, so a worker process can import them by name.

def sleep_forever(settings):
    time.sleep(3600)


def eat_memory(settings):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))


def crash(settings):
    os._exit(3)


def echo(settings):
    return pickle.dumps((None, gave_up(f"echo {settings.scenario}")))


def nap(settings):
    time.sleep(float(settings.scenario))
    return echo(settings)


def message(payload: bytes) -> str:
    return pickle.loads(payload)[1].message


@pytest.fixture(autouse=True)
def fresh_cache():
    cache.clear()
    yield
    cache.clear()


def example_settings(slug):
    example = gallery.get(slug)
    return RunRequest(scenario=example.scenario, node=example.node or "", gates=example.component_gates())


@pytest.mark.parametrize("slug", ["simple-gpu", "partitionable-devices", "compatibility-groups", "version-skew"])
def test_bounded_runs_answer_as_direct_runs_do(slug):
    settings = example_settings(slug)
    scenario, outcome = run_bounded(settings)
    direct_scenario, direct = run_request(settings)
    assert (outcome.outcome, outcome.node, outcome.message) == (direct.outcome, direct.node, direct.message)
    assert outcome.claims == direct.claims and outcome.explanation == direct.explanation
    assert scenario.loaded is None and [c.key for c in scenario.claims] == [c.key for c in direct_scenario.claims]
    assert set(scenario.nodes) == set(direct_scenario.nodes)


def test_a_second_identical_run_comes_from_the_cache(monkeypatch):
    settings = example_settings("simple-gpu")
    first = run_bounded(settings)[1]

    def no_pool():
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(worker, "get_pool", no_pool)
    again = run_bounded(RunRequest(scenario=settings.scenario, node=settings.node, gates=settings.gates))[1]
    assert again.outcome == first.outcome and again.claims == first.claims
    assert cache.get(result_key(settings)) is not None


def test_hostile_input_through_the_real_engine_is_an_answer_not_a_crash():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    started = time.monotonic()
    _, outcome = run_bounded(RunRequest(scenario=bomb))
    assert outcome.outcome == "invalid" and time.monotonic() - started < 10


def test_a_run_over_its_time_is_killed_and_the_next_run_gets_a_fresh_worker():
    pool = WorkerPool(size=1, timeout=0.5, job=sleep_forever)
    try:
        started = time.monotonic()
        payload, finished = pool.run(RunRequest(scenario="x"))
        assert not finished and time.monotonic() - started < 5
        assert "stopped after 0.5 s" in message(payload)
        assert pickle.loads(payload)[1].outcome == UNSATISFIABLE
        pool.job = echo
        payload, finished = pool.run(RunRequest(scenario="after"))
        assert finished and message(payload) == "search gave up: echo after"
        assert pool.started == 2
    finally:
        pool.close()


def test_a_run_over_its_memory_is_stopped():
    pool = WorkerPool(size=1, timeout=20, memory_mb=256, job=eat_memory)
    try:
        payload, finished = pool.run(RunRequest(scenario="x"))
        assert not finished and "more than 256 MiB of memory" in message(payload)
    finally:
        pool.close()


def test_a_worker_that_dies_is_replaced():
    pool = WorkerPool(size=1, timeout=5, job=crash)
    try:
        payload, finished = pool.run(RunRequest(scenario="x"))
        assert not finished
        pool.job = echo
        assert pool.run(RunRequest(scenario="y"))[1]
    finally:
        pool.close()


def test_workers_are_reused_between_runs():
    pool = WorkerPool(size=2, timeout=5, job=echo)
    try:
        for i in range(5):
            assert message(pool.run(RunRequest(scenario=str(i)))[0]) == f"search gave up: echo {i}"
        assert pool.started == 1
    finally:
        pool.close()


def test_warming_starts_a_worker_that_the_first_run_uses():
    pool = WorkerPool(size=1, timeout=5, job=echo)
    try:
        pool.warm()
        assert pool.started == 1 and pool._idle[0].process.is_alive()
        pool.run(RunRequest(scenario="first"))
        assert pool.started == 1
    finally:
        pool.close()


def test_when_every_worker_is_busy_a_request_waits_then_gives_up_without_caching(monkeypatch):
    pool = WorkerPool(size=1, timeout=5, queue_wait=0.2, job=nap)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    try:
        busy = threading.Thread(target=pool.run, args=(RunRequest(scenario="1.5"),))
        busy.start()
        time.sleep(0.3)
        settings = RunRequest(scenario="0")
        scenario, outcome = run_bounded(settings)
        assert scenario is None and "stayed busy" in outcome.message
        assert cache.get(result_key(settings)) is None
        busy.join()
    finally:
        pool.close()


def test_inline_isolation_runs_in_this_process(settings, monkeypatch):
    settings.ALLOCATOR_ISOLATION = "inline"
    monkeypatch.setattr(worker, "get_pool", lambda: pytest.fail("no worker process in inline mode"))
    assert run_bounded(example_settings("simple-gpu"))[1].outcome == "allocated"


def redis_reachable() -> bool:
    try:
        socket.create_connection(("127.0.0.1", 6379), timeout=0.5).close()
        return True
    except OSError:
        return False


@pytest.mark.skipif(not redis_reachable(), reason="no Redis server on 127.0.0.1:6379")
def test_results_and_rate_limits_are_shared_through_redis(settings, rf):
    from allocator import sharing

    prefix = f"dra-test-{uuid.uuid4().hex}"
    settings.CACHES = {
        "default": {"BACKEND": "django.core.cache.backends.redis.RedisCache",
                    "LOCATION": "redis://127.0.0.1:6379/0", "KEY_PREFIX": prefix},
    }
    redis_cache = caches["default"]
    try:
        assert redis_cache.__class__.__name__ == "RedisCache"
        run = example_settings("simple-gpu")
        assert run_bounded(run)[1].outcome == "allocated"
        stored = redis_cache.get(result_key(run))
        assert stored is not None and pickle.loads(stored)[1].node == "worker-1"
        settings.SHARE_RATE_LIMIT = "2/600"
        request = rf.post("/api/v1/scenarios", REMOTE_ADDR="192.0.2.44")
        answers = [sharing.rate_limited(request) for _ in range(3)]
        assert answers[:2] == [None, None] and answers[2] > 0
    finally:
        client = redis_cache._cache.get_client(write=True)
        for key in client.scan_iter(f"{prefix}:*"):
            client.delete(key)
