"""Allocation runs with hard bounds: each run happens in a worker process with a memory cap and
is killed when it overruns its time, so no scenario can hold a server process or its memory.

`run_bounded(run)` is the one entry point for views. It answers from the results cache
when the same input (and the same engine version) ran before, anywhere the cache is shared,
and admits every other run by the client its RunSettings carries (allocator.fairness).

The worker side imports no Django; the parent side reads Django settings only when used.
"""
from __future__ import annotations

import dataclasses
import gc
import hashlib
import json
import logging
import multiprocessing
import os
import pickle
import signal
import threading
import time
import traceback
from typing import NamedTuple

from allocator import answers, run_settings
from allocator.engine.run import INVALID, UNSATISFIABLE, Outcome
from allocator.engine.scenario import Scenario
from allocator.run_settings import RunSettings, run_in_process
from allocator.version import VERSION

logger = logging.getLogger("allocator.worker")

DEFAULT_TIMEOUT = 10.0  # seconds for one run, parsing and explanation included
DEFAULT_MEMORY_MB = 1024  # address space of one worker process
DEFAULT_WORKERS = 2  # worker processes per server process
DEFAULT_QUEUE_WAIT = 15.0  # how long a request waits for a free worker
WORKER_START_TIMEOUT = 30.0  # a new worker process that has not said it is ready by then is dropped
DEFAULT_LONG_RUN = 0.5  # a run that has used this many seconds of CPU steps aside (WorkerPool)
CACHE_MAX_BYTES = 512 * 1024  # larger results are not cached
CACHE_SECONDS = 3600
# A run stopped by its memory limit or a crash stops the same way again; kept briefly only.
STOPPED_CACHE_SECONDS = 60


def without_source(scenario: Scenario) -> Scenario:
    """The scenario as views need it, minus the loader's source index (line lookups are done by
    then): small enough to send between processes and to cache, and still a real Scenario."""
    return dataclasses.replace(scenario, loaded=None)


def gave_up(reason: str) -> Outcome:
    """A run stopped by a hard bound: reported as the engine reports its own limits."""
    return Outcome(UNSATISFIABLE, message=f"search gave up: {reason}")


# ---- worker process side -------------------------------------------------------------

def _run_one(job: RunSettings | answers.Question) -> bytes:
    """One job: a RunSettings gives back (scenario, outcome); an API Question gives back only its
    bounded answer and slim outcome (`reply`), made here, inside this process's limits."""
    run = job.run if isinstance(job, answers.Question) else job
    try:
        scenario, outcome = run_in_process(run)
        return reply(job, without_source(scenario), outcome)
    except MemoryError:
        raise
    except Exception as exc:  # a bug, or input the engine does not survive: show it, do not crash the page
        traceback.print_exc()
        outcome = Outcome(INVALID, message=f"the allocator failed on this input ({type(exc).__name__}: {exc})")
        return reply(job, None, outcome)


def reply(job, scenario: Scenario | None, outcome: Outcome) -> bytes:
    """What goes back through the pipe (and into the results cache) for a job: pickled (scenario,
    outcome) for a RunSettings; pickled (answer JSON, slim outcome) for an answers.Question."""
    return pickle.dumps(_result(job, scenario, outcome), protocol=pickle.HIGHEST_PROTOCOL)


def _result(job, scenario: Scenario | None, outcome: Outcome) -> tuple:
    return answers.answer(outcome, job) if isinstance(job, answers.Question) else (scenario, outcome)


def _serve(conn, memory_bytes: int, job=_run_one, niceness: int = 0) -> None:
    """Worker loop: receive RunSettings, send back ("ok", job(run)) until the pipe closes."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # Ctrl-C in a dev server stops the parent only
    gc.freeze()  # the engine's modules and tables stay for the process: no collection walks them
    if niceness:
        os.nice(niceness)
    if memory_bytes:
        import resource

        resource.setrlimit(resource.RLIMIT_AS, (memory_bytes, memory_bytes))
    conn.send(("ready", None, None))  # a run's clocks start from here, not from the process start
    while True:
        try:
            run = conn.recv()
        except (EOFError, OSError):
            return
        started = time.monotonic()
        try:
            payload = job(run)
        except MemoryError:
            payload = None
        if payload is None:
            # The heap may be in a poor state: report, then let the parent start a fresh worker.
            try:
                conn.send(("memory", None, None))
            finally:
                os._exit(0)
        conn.send(("ok", payload, time.monotonic() - started))


def warm_engine() -> None:
    """Run each gallery example once in this process (allocator.worker_preload); never raises."""
    from pathlib import Path

    for path in sorted((Path(__file__).resolve().parent / "examples").glob("*.yaml")):
        if path.name.startswith("index"):
            continue
        try:
            run_in_process(RunSettings(scenario=path.read_text(encoding="utf-8")))
        except Exception:  # a fork server that failed here would start no worker at all
            continue


# ---- server process side -------------------------------------------------------------

class PoolBusy(Exception):
    """No worker became free in time: the server is overloaded, the input is not at fault."""


class Ran(NamedTuple):
    """One run through the pool: pickled (scenario, outcome); whether it finished in its worker;
    the worker's own time for it (None when stopped); whether a bound that depends on how busy
    the machine was (the wall clock) stopped it."""

    payload: bytes
    finished: bool
    seconds: float | None = None
    timed_out: bool = False


# Heavy runs (see WorkerPool.run) run in worker processes of lower CPU priority: on a busy
# machine the cores go to everyone else's runs first.
HEAVY_NICENESS = 19  # steps below the server's own priority, at most to 19 (os.nice clamps): the lowest


_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def process_cpu_seconds(pid: int) -> float | None:
    """The user + system CPU time of a process (Linux's /proc), or None."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as stat:
            fields = stat.read().rsplit(b")", 1)[1].split()
        return (int(fields[11]) + int(fields[12])) / _TICKS
    except (OSError, IndexError, ValueError):
        return None


class _Worker:
    def __init__(self, context, memory_bytes: int, job, heavy: bool = False):
        self.heavy = heavy
        self.conn, child = context.Pipe()
        self.process = context.Process(target=_serve, args=(child, memory_bytes, job, HEAVY_NICENESS if heavy else 0),
                                       daemon=True, name="allocator-worker")
        self.process.start()
        child.close()
        self.ready = False  # until its first message: the process has started and set its limits

    def wait_ready(self, seconds: float) -> bool:
        if not self.ready and self.conn.poll(seconds):
            self.ready = self.conn.recv()[0] == "ready"
        return self.ready

    def stop(self) -> None:
        try:
            self.process.kill()
            self.process.join(2)
        except Exception:  # already gone
            pass
        self.conn.close()


class WorkerPool:
    """Worker processes, started on demand and reused; one run per worker at a time, in two lanes:

    - `size` workers for ordinary runs, at the server's CPU priority;
    - `heavy_size` (half as many, at least one) more for heavy runs, HEAVY_NICENESS lower: runs of
      clients whose recent runs were long (allocator.fairness), and runs that have used
      `long_after` seconds of CPU. Such a run steps aside: its worker is reniced, and the run moves
      to a heavy place, or while every one is taken to an overflow of `size` places, and leaves its
      ordinary place to the next run (with the overflow full too, it keeps it).

    So a client looping on worst-case searches holds an ordinary worker for `long_after` seconds
    of CPU at most, once, and small runs find one; the niced workers get the cores the ordinary
    ones leave. At most 2 * size + heavy_size processes run at once.

    `job` is the module-level function a worker applies to each RunSettings; it returns bytes.
    """

    def __init__(self, *, size: int = DEFAULT_WORKERS, timeout: float = DEFAULT_TIMEOUT,
                 memory_mb: int = DEFAULT_MEMORY_MB, queue_wait: float = DEFAULT_QUEUE_WAIT, job=_run_one,
                 long_after: float = DEFAULT_LONG_RUN):
        self.size = max(1, size)
        self.timeout = timeout
        self.memory_bytes = max(0, memory_mb) * 1024 * 1024
        self.queue_wait = queue_wait
        self.long_after = long_after  # 0: runs never step aside
        self.job = job
        self._slots = threading.BoundedSemaphore(self.size)
        self.heavy_size = max(1, self.size // 2)
        self._heavy_slots = threading.BoundedSemaphore(self.heavy_size)
        # Runs that stepped aside while every heavy place was taken (new clients' first long runs):
        # at most `size` of them, so one process never runs more than 2 * size + heavy_size at once.
        self._overflow = threading.BoundedSemaphore(self.size)
        self._idle: list[_Worker] = []
        self._lock = threading.Lock()
        self._pid = os.getpid()
        methods = multiprocessing.get_all_start_methods()
        # forkserver: workers fork from a small clean process with the engine imported, never
        # from a threaded server process.
        self._context = multiprocessing.get_context("forkserver" if "forkserver" in methods else "spawn")
        if "forkserver" in methods:
            self._context.set_forkserver_preload(["allocator.worker", "allocator.worker_preload"])
        self.started = 0  # worker processes started, for tests and logs

    def _checkout(self, heavy: bool = False) -> _Worker:
        with self._lock:
            for worker in reversed([w for w in self._idle if w.heavy == heavy]):
                self._idle.remove(worker)
                if worker.process.is_alive():
                    return worker
                worker.stop()
            self.started += 1
        return _Worker(self._context, self.memory_bytes, self.job, heavy)

    def _checkin(self, worker: _Worker) -> None:
        """Back to the idle workers, unless its lane has as many idle as places already (a run that
        stepped aside took its worker to the heavy lane)."""
        with self._lock:
            places = self.heavy_size if worker.heavy else self.size
            if sum(1 for w in self._idle if w.heavy == worker.heavy) < places:
                self._idle.append(worker)
                return
        worker.stop()

    def run(self, run: RunSettings | answers.Question, *, heavy: bool = False, on_long=None) -> Ran:
        """The job's reply (`reply`: for a RunSettings, its pickled (scenario, outcome)), and how it
        ended. A `heavy` run waits for a place in the heavy lane; an ordinary one for an ordinary
        place, and steps aside when it runs long (then `on_long()` is called, for the client's
        account)."""
        lane = self._heavy_slots if heavy else self._slots
        if not lane.acquire(timeout=self.queue_wait):
            which = "that take long runs " if heavy else ""
            raise PoolBusy(f"the allocation workers {which}stayed busy for {self.queue_wait:g} s; try again in a moment")
        held = [lane]
        try:
            return self._run(run, heavy, on_long, held)
        finally:
            held[0].release()

    def _finished_before_long(self, worker: _Worker, deadline: float) -> bool:
        """Wait until the run has answered (True) or is long (False): it has used `long_after`
        seconds of CPU, so a machine too busy to give it the CPU does not make every run long; where
        a process's CPU time cannot be read, `long_after` seconds of the clock."""
        base = process_cpu_seconds(worker.process.pid)
        wait = self.long_after
        while True:
            if worker.conn.poll(max(0.0, min(wait, deadline - time.monotonic()))):
                return True
            now = process_cpu_seconds(worker.process.pid)
            if base is None or now is None or time.monotonic() >= deadline:
                return False
            wait = self.long_after - (now - base)
            if wait <= 0:
                return False
            wait = max(wait, 0.02)  # CPU time moves in ticks

    def _step_aside(self, worker: _Worker, held: list) -> None:
        """A long ordinary run: its worker gets the heavy lane's priority (and stays in that lane),
        and the run takes a free heavy place, or else an overflow place, giving its ordinary one back."""
        try:
            now = os.getpriority(os.PRIO_PROCESS, worker.process.pid)
            os.setpriority(os.PRIO_PROCESS, worker.process.pid, min(19, now + HEAVY_NICENESS))
        except OSError:  # the process is gone: the poll after this sees it
            return
        worker.heavy = True
        for lane in (self._heavy_slots, self._overflow):
            if lane.acquire(blocking=False):
                held[0].release()
                held[0] = lane
                return

    def _run(self, run, heavy: bool, on_long, held: list) -> Ran:
        worker = self._checkout(heavy)
        try:
            if not worker.wait_ready(WORKER_START_TIMEOUT):
                raise EOFError("the worker process did not start")
            started = time.monotonic()
            worker.conn.send(run)
            ready = False
            if not heavy and 0 < self.long_after < self.timeout:
                ready = self._finished_before_long(worker, started + self.timeout)
                if not ready:
                    self._step_aside(worker, held)
                    if on_long is not None:
                        on_long()
            if not ready and not worker.conn.poll(max(0.0, self.timeout - (time.monotonic() - started))):
                worker.stop()
                logger.warning("allocation run killed after %.1f s", time.monotonic() - started)
                return Ran(reply(run, None, gave_up(
                    f"the run was stopped after {self.timeout:g} s, the time limit for one run here")),
                    False, None, timed_out=True)
            kind, payload, seconds = worker.conn.recv()
        except (EOFError, OSError):
            kind, payload, seconds = "died", None, None
        if kind == "ok":
            self._checkin(worker)
            return Ran(payload, True, seconds)
        worker.stop()
        limit = self.memory_bytes >> 20
        logger.warning("allocation worker %s (memory limit %d MiB)", kind, limit)
        if kind == "memory":
            reason = f"the run needed more than {limit} MiB of memory, the limit for one run here"
        else:
            reason = f"the run ended its worker process (out of its {limit} MiB of memory, or a crash)"
        return Ran(reply(run, None, gave_up(reason)), False)

    def warm(self) -> None:
        """Start one worker now, so the first visitor does not wait for a process to start."""
        with self._slots:
            self._checkin(self._checkout())

    def close(self) -> None:
        with self._lock:
            idle, self._idle = self._idle, []
        for worker in idle:
            worker.stop()


_pool: WorkerPool | None = None
_pool_lock = threading.Lock()


def get_pool() -> WorkerPool:
    """This process's pool, made from Django settings on first use (and again after a fork)."""
    global _pool
    with _pool_lock:
        if _pool is None or _pool._pid != os.getpid():
            from django.conf import settings

            _pool = WorkerPool(
                size=getattr(settings, "ALLOCATOR_WORKERS", DEFAULT_WORKERS),
                timeout=getattr(settings, "ALLOCATOR_TIMEOUT", DEFAULT_TIMEOUT),
                memory_mb=getattr(settings, "ALLOCATOR_MEMORY_MB", DEFAULT_MEMORY_MB),
                queue_wait=getattr(settings, "ALLOCATOR_QUEUE_WAIT", DEFAULT_QUEUE_WAIT),
                long_after=getattr(settings, "ALLOCATOR_LONG_RUN", DEFAULT_LONG_RUN),
            )
        return _pool


def warm_up() -> None:
    """For a server's worker start (gunicorn.conf.py's post_worker_init)."""
    from django.conf import settings

    if getattr(settings, "ALLOCATOR_ISOLATION", "process") != "inline":
        get_pool().warm()


def result_key(run: RunSettings) -> str:
    """Cache key: the engine version plus the digest of everything a run depends on.
    The scenario may be text or the raw bytes of a request body."""
    scenario = run.scenario
    raw = scenario if isinstance(scenario, bytes) else scenario.encode("utf-8", "surrogatepass")
    head = {"node": run.node, "gates": run.gates}
    if run.versions:  # keys of runs without versions (or a what-if) stay as they were
        head["versions"] = run.versions
    if run.what_if is not None:
        head["whatIf"] = run.what_if.as_key()
    if run.keep_unnamed_node and run.node:  # the API's rule for a node the scenario does not name
        head["keepUnnamedNode"] = True
    if run.each_claim_alone:
        head["eachClaimAlone"] = True
    head = json.dumps(head, sort_keys=True, separators=(",", ":"))
    digest = hashlib.sha256(head.encode("utf-8") + b"\0" + raw).hexdigest()
    return f"run:{VERSION}:{digest}"


class NotAdmitted(TypeError):
    """A run whose settings name no client: a caller forgot to admit it (a bug, not input)."""


def run_bounded(run: RunSettings) -> tuple[Scenario | None, Outcome]:
    """One allocation run for a view: cached by content, else in a worker process with a time
    and memory limit. Returns (scenario without its source index, outcome), as
    `run_settings.run_in_process` does; the scenario is None when a bound stopped the run.

    Only answers that do not depend on how busy the server was are cached: a run that reached
    the engine's wall-clock limit (or was killed at the worker's) might finish on a quieter
    machine, so it runs again next time; a step-limit give-up is the same on any machine.

    The run's client (`RunSettings.client`, an address; `run_settings.UNCOUNTED` for runs no request
    asked for) gets a fair share of the workers (allocator.fairness): over its limits the run is
    refused with `Throttled`; a cached answer is served all the same. Settings without a client are
    refused with `NotAdmitted`: every path in must say whose run it is.

    ALLOCATOR_ISOLATION="inline" (settings) runs in this process instead, without bounds.
    """
    return _bounded(run, run, result_key(run))


def answer_bounded(question: answers.Question) -> tuple[bytes, Outcome]:
    """The API's answer to a question: (its bounded JSON, the slim outcome, `answers.answer`), made in
    the worker process under the same limits as the run, admitted and cached as `run_bounded` is. The
    web process receives only these, never the whole explanation."""
    return _bounded(question, question.run, answer_key(question))


def answer_key(question: answers.Question) -> str:
    """The cache key of an API answer: its run's, plus the slice and the size its bounds follow from."""
    explain = question.explain
    return (f"{result_key(question.run)}:answer:{explain.start}:{explain.requests}:{explain.rows}:"
            f"{question.question_bytes}:{int(question.with_rows)}")


def _bounded(job, run: RunSettings, key: str) -> tuple:
    from django.conf import settings

    from allocator import fairness, safe_cache

    if run.client is None:
        raise NotAdmitted("run settings without a client: admit the run (RunSettings.admitted) before running it")
    client = run.client
    cached = safe_cache.get(key)
    if cached is not None:
        return pickle.loads(cached)
    with fairness.admitted(client):
        if getattr(settings, "ALLOCATOR_ISOLATION", "process") == "inline":
            started = time.monotonic()
            payload = _run_one(job)
            ran = Ran(payload, True, time.monotonic() - started)
        else:
            try:
                ran = get_pool().run(job, heavy=fairness.heavy(client),
                                     on_long=lambda: fairness.charge_long_run(client))
            except PoolBusy as exc:
                return _result(job, None, gave_up(str(exc)))
    result = pickle.loads(ran.payload)
    if _met_time_limit(ran, result[1]):
        fairness.charge_slow_run(client)
    elif len(ran.payload) <= getattr(settings, "RESULTS_CACHE_MAX_BYTES", CACHE_MAX_BYTES):
        seconds = getattr(settings, "RESULTS_CACHE_SECONDS", CACHE_SECONDS)
        safe_cache.set(key, ran.payload, timeout=seconds if ran.finished else STOPPED_CACHE_SECONDS)
    return result


def _met_time_limit(ran: Ran, outcome: Outcome) -> bool:
    """Whether a time limit may have decided the answer, which then depends on how busy the
    machine was: such answers are not cached, and count against the client's slow runs.
    The engine's deadline starts after parsing, so a run that took less than the time limit in
    all cannot have met it; invalid input is refused before the search, whatever the clock."""
    if ran.timed_out:
        return True
    if not ran.finished or outcome.outcome == INVALID:
        return False
    return ran.seconds is None or ran.seconds >= run_settings.WEB_TIME_LIMIT
