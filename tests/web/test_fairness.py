"""Fair shares of the allocation workers: one client (address) cannot hold them all, and a client
whose runs keep ending at the time limit waits, while everyone else keeps being served."""
import os
import threading
import time

import pytest
from django.test import Client

from allocator import gallery, run_settings, safe_cache, worker
from allocator.fairness import Throttled
from allocator.run_settings import UNCOUNTED, RunSettings
from allocator.worker import WorkerPool, run_bounded
from tests.test_worker import nap

pytestmark = [pytest.mark.django_db, pytest.mark.fairness]

SIMPLE = gallery.get("simple-gpu")


@pytest.fixture(autouse=True)
def cache_state_reset():
    safe_cache.reset()  # besides the cache itself (tests/conftest.py), the outage memory


@pytest.fixture
def napping_pool(monkeypatch):
    """Runs that sleep for as many seconds as their scenario says, four at a time."""
    pool = WorkerPool(size=4, timeout=10, job=nap)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    yield pool
    pool.close()


def api(client, scenario, address):
    return client.post("/api/v1/allocate", scenario, content_type="application/yaml", REMOTE_ADDR=address)


def test_a_client_may_run_two_allocations_at_a_time_and_others_are_not_held(settings, napping_pool):
    settings.ALLOCATOR_RUNS_PER_CLIENT = 2
    settings.ALLOCATOR_SLOW_RUNS = "0/1"
    busy = [threading.Thread(target=run_bounded, args=(RunSettings(scenario=f"1.{i}").admitted("192.0.2.1"),))
            for i in range(2)]
    for thread in busy:
        thread.start()
    time.sleep(0.5)
    client = Client()
    third = api(client, "0.01", "192.0.2.1")
    assert third.status_code == 429 and third["Retry-After"] == "1"
    assert "still running" in third.json()["message"]
    other = api(client, "0.02", "192.0.2.2")
    assert other.status_code == 200
    for thread in busy:
        thread.join()
    assert api(client, "0.03", "192.0.2.1").status_code == 200, "the slots are given back"


def test_runs_that_end_at_the_time_limit_are_rate_limited_per_client(settings, napping_pool, monkeypatch):
    settings.ALLOCATOR_SLOW_RUNS = "2/600"
    monkeypatch.setattr(run_settings, "WEB_TIME_LIMIT", 0.2)
    client = Client()
    assert api(client, "0.3", "192.0.2.1").status_code == 200
    assert api(client, "0.31", "192.0.2.1").status_code == 200
    refused = api(client, "0.01", "192.0.2.1")
    assert refused.status_code == 429 and 0 < int(refused["Retry-After"]) <= 600
    assert "into the time limit" in refused.json()["message"]
    page = client.post("/", {"scenario": "0.01", "gates-submitted": "1"}, HTTP_HX_REQUEST="true",
                       REMOTE_ADDR="192.0.2.1")
    assert page.status_code == 200 and "Refused" in page.content.decode()
    assert "into the time limit" in page.content.decode()
    plain = client.post("/", {"scenario": "0.01", "gates-submitted": "1"}, REMOTE_ADDR="192.0.2.1")
    assert plain.status_code == 429 and plain["Retry-After"]
    assert api(client, "0.01", "192.0.2.2").status_code == 200, "other clients are served"


def test_a_throttled_client_still_gets_answers_from_the_cache(settings, napping_pool, monkeypatch):
    settings.ALLOCATOR_SLOW_RUNS = "1/600"
    monkeypatch.setattr(run_settings, "WEB_TIME_LIMIT", 0.2)
    client = Client()
    assert api(client, "0.01", "192.0.2.2").status_code == 200  # quick: cached
    assert api(client, "0.3", "192.0.2.1").status_code == 200  # slow: counts
    assert api(client, "0.01", "192.0.2.1").status_code == 200, "served from the cache, no run"
    assert api(client, "0.02", "192.0.2.1").status_code == 429


def test_quick_runs_do_not_count_against_the_slow_run_limit(settings, napping_pool):
    settings.ALLOCATOR_SLOW_RUNS = "1/600"
    client = Client()
    assert all(api(client, f"0.0{i}", "192.0.2.1").status_code == 200 for i in range(5))


def test_run_bounded_raises_throttled_for_the_views(settings, napping_pool, monkeypatch):
    settings.ALLOCATOR_SLOW_RUNS = "1/600"
    monkeypatch.setattr(run_settings, "WEB_TIME_LIMIT", 0.2)
    run_bounded(RunSettings(scenario="0.3").admitted("198.51.100.7"))
    with pytest.raises(Throttled):
        run_bounded(RunSettings(scenario="0.01").admitted("198.51.100.7"))
    assert run_bounded(RunSettings(scenario="0.01").admitted(UNCOUNTED))[1].message.startswith("search gave up: echo")


def test_the_real_engine_page_still_answers_under_the_limits(settings):
    client = Client()
    page = client.post("/", {"scenario": SIMPLE.scenario, "node": "worker-1", "gates-submitted": "1"},
                       HTTP_HX_REQUEST="true")
    assert page.status_code == 200 and "outcome-allocated" in page.content.decode()


def test_runs_of_a_client_that_met_the_time_limit_leave_workers_for_everyone_else(settings, monkeypatch):
    """8 clients looping on worst-case searches held every worker; a small run waited behind them."""
    settings.ALLOCATOR_SLOW_RUNS = "100/600"
    monkeypatch.setattr(run_settings, "WEB_TIME_LIMIT", 0.2)
    pool = WorkerPool(size=2, timeout=10, job=nap)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    try:
        run_bounded(RunSettings(scenario="0.25").admitted("198.51.100.1"))  # met the time limit: heavy from now
        run_bounded(RunSettings(scenario="0.26").admitted("198.51.100.2"))
        heavy = [threading.Thread(target=run_bounded,
                                  args=(RunSettings(scenario=f"3.0{i}").admitted(f"198.51.100.{i + 1}"),))
                  for i in range(2)]
        for thread in heavy:
            thread.start()
        time.sleep(0.3)
        started = time.monotonic()
        _, outcome = run_bounded(RunSettings(scenario="0.01").admitted("198.51.100.9"))
        assert outcome.message == "search gave up: echo 0.01"
        assert time.monotonic() - started < 2.0, "a worker was left free for a client in good standing"
        for thread in heavy:
            thread.join()
    finally:
        pool.close()


def test_a_new_clients_long_run_steps_aside_and_a_small_run_does_not_wait_for_it(settings, monkeypatch):
    """Issue 27's victim: each attacker's first worst search ran at full priority on an ordinary
    worker for its whole 10 s, so eight new addresses held every worker. Now a run that has used
    ALLOCATOR_LONG_RUN seconds of CPU is reniced, moves to the heavy lane and gives its worker back,
    and its client's next runs start in the heavy lane."""
    from allocator import fairness
    from tests.test_worker import LOWEST_PRIORITY, message, spin_then_nice

    settings.ALLOCATOR_SLOW_RUNS = "100/600"
    pool = WorkerPool(size=1, timeout=60, job=spin_then_nice, long_after=0.2)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    server = os.nice(0)
    long = {}
    try:
        pool.warm()
        thread = threading.Thread(target=lambda: long.update(
            answer=run_bounded(RunSettings(scenario="1.5").admitted("198.51.100.20"))[1]))
        thread.start()
        deadline = time.monotonic() + 30
        while not fairness.heavy("198.51.100.20") and time.monotonic() < deadline:
            time.sleep(0.05)  # it steps aside once it has used 0.2 s of CPU, however busy the machine is
        assert fairness.heavy("198.51.100.20"), "the long run stepped aside"
        started = time.monotonic()
        _, small = run_bounded(RunSettings(scenario="0.01").admitted("198.51.100.21"))
        assert thread.is_alive(), "the small run did not wait for the long one"
        assert small.message == f"search gave up: nice {server}", "the small run kept the server's priority"
        thread.join()
        assert long["answer"].message == f"search gave up: nice {min(LOWEST_PRIORITY, server + worker.HEAVY_NICENESS)}"
        assert not fairness.heavy("198.51.100.21")
        heavy = pool.run(RunSettings(scenario="0.01"), heavy=True).payload
        assert message(heavy) == long["answer"].message, "the stepped-aside worker now serves the heavy lane"
        assert pool.started == 2
    finally:
        pool.close()


def test_a_run_that_waits_for_the_cpu_is_not_long(settings):
    """On a machine too busy to give a run the CPU, the clock alone would make every run long (and
    every client heavy): a run steps aside by the CPU it used, not by the time it waited."""
    from tests.test_worker import nap_then_nice

    pool = WorkerPool(size=1, timeout=10, job=nap_then_nice, long_after=0.1)
    calls = []
    try:
        ran = pool.run(RunSettings(scenario="0.6"), on_long=lambda: calls.append(1))
        assert message_of(ran) == f"search gave up: nice {os.nice(0)}" and calls == []
    finally:
        pool.close()


def message_of(ran) -> str:
    import pickle

    return pickle.loads(ran.payload)[1].message


def test_two_new_clients_long_runs_both_step_aside_when_the_heavy_lane_is_full(settings, monkeypatch):
    """Eight new addresses' first worst searches: the heavy lane (one place here) fills with the
    first; the next goes to the overflow instead of keeping the only ordinary worker."""
    from allocator import fairness
    from tests.test_worker import spin_then_nice

    settings.ALLOCATOR_SLOW_RUNS = "100/600"
    pool = WorkerPool(size=1, timeout=60, job=spin_then_nice, long_after=0.2)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    clients = ["198.51.100.30", "198.51.100.31"]
    try:
        threads = []
        for client in clients:  # one after the other: each takes the only ordinary place, then leaves it
            threads.append(threading.Thread(target=run_bounded, args=(RunSettings(scenario="1.5").admitted(client),)))
            threads[-1].start()
            deadline = time.monotonic() + 30
            while not fairness.heavy(client) and time.monotonic() < deadline:
                time.sleep(0.05)
            assert fairness.heavy(client), f"{client}'s long run stepped aside"
        _, small = run_bounded(RunSettings(scenario="0.01").admitted("198.51.100.32"))
        assert small.message == f"search gave up: nice {os.nice(0)}"
        assert all(thread.is_alive() for thread in threads), "the small run waited for neither long run"
        for thread in threads:
            thread.join()
    finally:
        pool.close()
