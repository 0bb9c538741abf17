"""Bounded allocation runs: a worker process per run with a time and memory limit, and the
results cache (local memory, or a Redis server the test starts when redis-server is installed)."""
import os
import pickle
import threading
import time
import uuid

import pytest
from django.core.cache import cache, caches

from allocator import gallery, worker
from allocator.engine.run import UNSATISFIABLE
from allocator.run_settings import UNCOUNTED, RunSettings, run_in_process
from allocator.worker import WorkerPool, gave_up, result_key, run_bounded
from tests.redis_server import redis_cache_settings, redis_server  # noqa: F401 (a fixture)


# Jobs for the pool: module-level, so a worker process can import them by name.

def sleep_forever(settings):
    time.sleep(3600)


def eat_memory(settings):
    hoard = []
    while True:
        hoard.append(bytearray(64 * 1024 * 1024))


def crash(settings):
    os._exit(3)


def echo(job):
    """A run that says its scenario; for an API question (answers.Question), its answer says it."""
    return worker.reply(job, None, gave_up(f"echo {getattr(job, 'run', job).scenario}"))


def nap(job):
    time.sleep(float(getattr(job, "run", job).scenario))
    return echo(job)


def nap_then_nice(job):
    """Sleeps as long as its scenario says, then says its worker's niceness."""
    time.sleep(float(getattr(job, "run", job).scenario))
    return worker.reply(job, None, gave_up(f"nice {os.nice(0)}"))


def spin_then_nice(job):
    """Uses as many seconds of CPU as its scenario says, then says its worker's niceness."""
    until = time.process_time() + float(getattr(job, "run", job).scenario)
    while time.process_time() < until:
        pass
    return worker.reply(job, None, gave_up(f"nice {os.nice(0)}"))


def report_warm(job):
    """Says whether this worker was forked from a fork server that ran the gallery (worker_preload)."""
    import sys

    return worker.reply(job, None, gave_up(f"warm {'allocator.worker_preload' in sys.modules}"))


def message(payload: bytes) -> str:
    return pickle.loads(payload)[1].message


def example_settings(slug):
    example = gallery.get(slug)
    return RunSettings(scenario=example.scenario, node=example.node or "", gates=example.component_gates())


@pytest.mark.parametrize("slug", ["simple-gpu", "partitionable-devices", "compatibility-groups", "version-skew"])
def test_bounded_runs_answer_as_direct_runs_do(slug):
    settings = example_settings(slug)
    scenario, outcome = run_bounded(settings.admitted(UNCOUNTED))
    direct_scenario, direct = run_in_process(settings)
    assert (outcome.outcome, outcome.node, outcome.message) == (direct.outcome, direct.node, direct.message)
    assert outcome.claims == direct.claims and outcome.explanation == direct.explanation
    assert scenario.loaded is None and [c.key for c in scenario.claims] == [c.key for c in direct_scenario.claims]
    assert set(scenario.nodes) == set(direct_scenario.nodes)


def test_a_second_identical_run_comes_from_the_cache(monkeypatch):
    settings = example_settings("simple-gpu")
    first = run_bounded(settings.admitted(UNCOUNTED))[1]

    def no_pool():
        raise AssertionError("the cache should have answered")

    monkeypatch.setattr(worker, "get_pool", no_pool)
    again = run_bounded(RunSettings(scenario=settings.scenario, node=settings.node, gates=settings.gates).admitted(UNCOUNTED))[1]
    assert again.outcome == first.outcome and again.claims == first.claims
    assert cache.get(result_key(settings)) is not None


def test_hostile_input_through_the_real_engine_is_an_answer_not_a_crash():
    bomb = "a: &a [x, x, x, x, x, x, x, x, x]\n" + "".join(
        f"{chr(98 + i)}: &{chr(98 + i)} [*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, "
        f"*{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}, *{chr(97 + i)}]\n"
        for i in range(9)
    )
    started = time.monotonic()
    _, outcome = run_bounded(RunSettings(scenario=bomb).admitted(UNCOUNTED))
    assert outcome.outcome == "invalid" and time.monotonic() - started < 10


def test_a_run_over_its_time_is_killed_and_the_next_run_gets_a_fresh_worker():
    pool = WorkerPool(size=1, timeout=0.5, job=sleep_forever)
    try:
        started = time.monotonic()
        payload, finished, *_ = pool.run(RunSettings(scenario="x"))
        assert not finished and time.monotonic() - started < 5
        assert "stopped after 0.5 s" in message(payload)
        assert pickle.loads(payload)[1].outcome == UNSATISFIABLE
        pool.job, pool.timeout = echo, 10  # a fresh worker may take over 0.5 s to start on a busy machine
        payload, finished, *_ = pool.run(RunSettings(scenario="after"))
        assert finished and message(payload) == "search gave up: echo after"
        assert pool.started == 2
    finally:
        pool.close()


def test_a_run_over_its_memory_is_stopped():
    pool = WorkerPool(size=1, timeout=20, memory_mb=256, job=eat_memory)
    try:
        payload, finished, *_ = pool.run(RunSettings(scenario="x"))
        assert not finished and "more than 256 MiB of memory" in message(payload)
    finally:
        pool.close()


def test_a_worker_that_dies_is_replaced():
    pool = WorkerPool(size=1, timeout=5, job=crash)
    try:
        payload, finished, *_ = pool.run(RunSettings(scenario="x"))
        assert not finished
        pool.job = echo
        assert pool.run(RunSettings(scenario="y"))[1]
    finally:
        pool.close()


def test_workers_are_reused_between_runs():
    pool = WorkerPool(size=2, timeout=5, job=echo)
    try:
        for i in range(5):
            assert message(pool.run(RunSettings(scenario=str(i)))[0]) == f"search gave up: echo {i}"
        assert pool.started == 1
    finally:
        pool.close()


def test_warming_starts_a_worker_that_the_first_run_uses():
    pool = WorkerPool(size=1, timeout=5, job=echo)
    try:
        pool.warm()
        assert pool.started == 1 and pool._idle[0].process.is_alive()
        pool.run(RunSettings(scenario="first"))
        assert pool.started == 1
    finally:
        pool.close()


def test_when_every_worker_is_busy_a_request_waits_then_gives_up_without_caching(monkeypatch):
    pool = WorkerPool(size=1, timeout=5, queue_wait=0.2, job=nap)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    try:
        busy = threading.Thread(target=pool.run, args=(RunSettings(scenario="1.5"),))
        busy.start()
        time.sleep(0.3)
        settings = RunSettings(scenario="0")
        scenario, outcome = run_bounded(settings.admitted(UNCOUNTED))
        assert scenario is None and "stayed busy" in outcome.message
        assert cache.get(result_key(settings)) is None
        busy.join()
    finally:
        pool.close()


def test_inline_isolation_runs_in_this_process(settings, monkeypatch):
    settings.ALLOCATOR_ISOLATION = "inline"
    monkeypatch.setattr(worker, "get_pool", lambda: pytest.fail("no worker process in inline mode"))
    assert run_bounded(example_settings("simple-gpu").admitted(UNCOUNTED))[1].outcome == "allocated"


def test_results_and_rate_limits_are_shared_through_redis(settings, rf, redis_server):
    from allocator import safe_cache, sharing

    prefix = f"dra-test-{uuid.uuid4().hex}"
    original = settings.CACHES
    settings.CACHES = redis_cache_settings(redis_server.url, prefix)
    safe_cache.reset()
    redis_cache = caches["default"]
    try:
        assert redis_cache.__class__.__name__ == "RedisCache"
        run = example_settings("simple-gpu")
        assert run_bounded(run.admitted(UNCOUNTED))[1].outcome == "allocated"
        stored = redis_cache.get(result_key(run))
        assert stored is not None and pickle.loads(stored)[1].node == "worker-1"
        settings.SHARE_RATE_LIMIT = "2/600"
        request = rf.post("/api/v1/scenarios", REMOTE_ADDR="192.0.2.44")
        answers = [sharing.rate_limited(request) for _ in range(3)]
        assert answers[:2] == [None, None] and answers[2] > 0
    finally:
        settings.CACHES = original  # the server stops with the test; nothing to clean up there


# ---- only answers that do not depend on how busy the server was are cached ----------------

def explosion(devices=24, claims=12) -> str:
    """More claims than attribute groups: every order is tried until a limit stops the search."""
    parts = [
        "apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\nspec: {}\n---\n"
        "apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {name: s}\nspec:\n"
        "  driver: gpu.example.com\n  nodeName: n1\n  pool: {name: p, generation: 1, resourceSliceCount: 1}\n"
        "  devices:\n"
    ]
    parts += [f"  - name: d{i}\n    attributes: {{numa: {{int: {i // 2}}}}}\n" for i in range(devices)]
    parts += [
        f"---\napiVersion: resource.k8s.io/v1\nkind: ResourceClaim\nmetadata: {{name: c{c}, namespace: default}}\n"
        "spec:\n  devices:\n    requests:\n    - name: r\n      exactly: {deviceClassName: gpu, count: 2}\n"
        "    constraints:\n    - matchAttribute: gpu.example.com/numa\n"
        for c in range(claims + devices // 2)
    ]
    return "".join(parts)


@pytest.fixture
def inline(settings):
    settings.ALLOCATOR_ISOLATION = "inline"


def test_a_search_stopped_by_the_wall_clock_is_not_cached(inline, monkeypatch):
    from allocator import run_settings as playground

    monkeypatch.setattr(playground, "WEB_TIME_LIMIT", 0.3)
    monkeypatch.setattr(playground, "WEB_MAX_STEPS", 10**9)
    settings = RunSettings(scenario=explosion(), node="n1")
    _, outcome = run_bounded(settings.admitted(UNCOUNTED))
    assert "time limit reached" in outcome.message
    assert cache.get(result_key(settings)) is None, "on a quieter machine the same search may finish"


def test_a_search_stopped_by_its_step_budget_is_cached(inline, monkeypatch):
    from allocator import run_settings as playground

    monkeypatch.setattr(playground, "WEB_MAX_STEPS", 2000)
    settings = RunSettings(scenario=explosion(), node="n1")
    _, outcome = run_bounded(settings.admitted(UNCOUNTED))
    assert "search gave up after 2000 steps" in outcome.message
    assert cache.get(result_key(settings)) is not None, "a step budget gives up the same way on any machine"


def test_a_run_killed_at_the_workers_time_limit_is_not_cached(monkeypatch):
    pool = WorkerPool(size=1, timeout=0.5, job=sleep_forever)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    try:
        settings = RunSettings(scenario="slow")
        _, outcome = run_bounded(settings.admitted(UNCOUNTED))
        assert "stopped after 0.5 s" in outcome.message
        assert cache.get(result_key(settings)) is None
    finally:
        pool.close()


def test_a_run_stopped_by_its_memory_limit_is_kept_briefly(monkeypatch):
    pool = WorkerPool(size=1, timeout=20, memory_mb=256, job=eat_memory)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    try:
        settings = RunSettings(scenario="hungry")
        _, outcome = run_bounded(settings.admitted(UNCOUNTED))
        assert "more than 256 MiB" in outcome.message
        assert cache.get(result_key(settings)) is not None
    finally:
        pool.close()


def test_a_slow_run_that_finished_is_cached_only_under_the_time_limit(monkeypatch):
    pool = WorkerPool(size=1, timeout=5, job=nap)
    monkeypatch.setattr(worker, "get_pool", lambda: pool)
    from allocator import run_settings as playground

    monkeypatch.setattr(playground, "WEB_TIME_LIMIT", 0.5)
    try:
        quick, slow = RunSettings(scenario="0"), RunSettings(scenario="0.7")
        run_bounded(quick.admitted(UNCOUNTED))
        run_bounded(slow.admitted(UNCOUNTED))
        assert cache.get(result_key(quick)) is not None
        assert cache.get(result_key(slow)) is None, "a run past the engine's deadline may have given up on load"
    finally:
        pool.close()


LOWEST_PRIORITY = 19  # the highest niceness Linux allows


def report_niceness(settings):
    return pickle.dumps((None, gave_up(f"nice {os.nice(0)}")))


def test_heavy_runs_go_to_worker_processes_of_lower_cpu_priority():
    pool = WorkerPool(size=2, timeout=10, job=report_niceness)
    try:
        normal = message(pool.run(RunSettings(scenario="a")).payload)
        heavy = message(pool.run(RunSettings(scenario="b"), heavy=True).payload)
        # HEAVY_NICENESS steps below the server's own priority, as far as the lowest (19) goes: a
        # suite or server already started under `nice -n 10` cannot go 10 further.
        server, heavy = int(normal.split()[-1]), int(heavy.split()[-1])
        assert heavy == min(LOWEST_PRIORITY, server + worker.HEAVY_NICENESS)
        assert heavy > server or server == LOWEST_PRIORITY, "a heavy run never keeps the server's priority"
        assert message(pool.run(RunSettings(scenario="c")).payload) == normal, "normal runs keep their priority"
        assert pool.started == 2
    finally:
        pool.close()


@pytest.mark.parametrize("table", ["gates.json", "statusauth/bootstrap.json"])
def test_a_change_of_a_table_the_engine_reads_is_a_new_version_so_the_cache_misses(tmp_path, table):
    """The results cache is keyed by the engine's version: a new gate table (or bootstrap roles)
    must not be answered from results of the old one."""
    import shutil

    from allocator import version

    engine = tmp_path / "engine"
    shutil.copytree(version.ENGINE_DIR, engine, ignore=shutil.ignore_patterns("__pycache__"))
    before = version.engine_fingerprint(engine)
    assert before == version.ENGINE
    path = engine / table
    path.write_text(path.read_text(encoding="utf-8") + "\n", encoding="utf-8")
    assert version.engine_fingerprint(engine) != before


def test_workers_fork_from_a_server_that_ran_the_gallery_once():
    """A new worker's first run of a lesson paid for compiling what the engine builds on first use
    (30-270 ms of CPU on the shipped workshop); forked from a warmed fork server it does not."""
    import multiprocessing

    if "forkserver" not in multiprocessing.get_all_start_methods():
        pytest.skip("no fork server on this platform")
    pool = WorkerPool(size=1, timeout=30, job=report_warm)
    try:
        assert message(pool.run(RunSettings(scenario="a")).payload) == "search gave up: warm True"
    finally:
        pool.close()
