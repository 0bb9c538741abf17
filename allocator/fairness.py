"""Fair shares of the allocation workers between clients (client addresses, as the share rate
limit counts them), so one client looping on a worst-case search cannot slow everyone else:

- at most ALLOCATOR_RUNS_PER_CLIENT runs of one client at a time, across every server process
  that shares the cache (a browser tab has one in flight; more is a script);
- at most ALLOCATOR_SLOW_RUNS ("COUNT/SECONDS") runs of one client that end at a time limit
  (the engine's or the worker's) per window. Past that, the client's new runs are refused until
  the window ends; answers already in the results cache are still served;
- from its first such run in a window, or its first run that used ALLOCATOR_LONG_RUN seconds
  of CPU (allocator.worker.WorkerPool steps such a run aside), the client's runs are "heavy":
  they run in each server process's heavy lane, on workers of lower CPU priority, so other
  clients always find an ordinary worker free.

Refusals raise `Throttled` with the seconds to wait (the views answer 429 with Retry-After).
Counts live in the cache (allocator.safe_cache): shared through Redis, per process without it.
"""
from __future__ import annotations

import time
from contextlib import contextmanager

from django.conf import settings as django_settings

from allocator import safe_cache

DEFAULT_RUNS_PER_CLIENT = 2
DEFAULT_SLOW_RUNS = "4/60"


class Throttled(Exception):
    def __init__(self, message: str, retry_after: int):
        super().__init__(message)
        self.message = message
        self.retry_after = retry_after


def _slow_rate() -> tuple[int, int]:
    count, _, seconds = str(getattr(django_settings, "ALLOCATOR_SLOW_RUNS", DEFAULT_SLOW_RUNS)).partition("/")
    return int(count), int(seconds or 60)


def _slow_key(client: str, window: int, now: float) -> tuple[str, int]:
    slot = int(now // window)
    return f"slow-runs:{client}:{slot}", max(1, int((slot + 1) * window - now))


def _running_key(client: str) -> str:
    return f"running:{client}"


def _running_ttl() -> float:
    # A process killed mid-run cannot take its count back: the count expires after the
    # longest a run can take, waiting for a worker included.
    return (getattr(django_settings, "ALLOCATOR_TIMEOUT", 10.0)
            + getattr(django_settings, "ALLOCATOR_QUEUE_WAIT", 15.0) + 5)


@contextmanager
def admitted(client: str | None):
    """Hold one of the client's run slots for the body of the `with`; raise Throttled if the
    client is over either limit."""
    if not client:
        yield
        return
    limit, window = _slow_rate()
    if limit > 0:
        key, wait = _slow_key(client, window, time.time())
        used = safe_cache.read_count(key)
        if used >= limit:
            raise Throttled(
                f"Your address ran {used} allocations into the time limit in the last "
                f"{_duration(window)}; new runs start again in {_duration(wait)}. Make the search "
                f"smaller (fewer devices or claims, or pick a node), or wait.", wait)
    cap = int(getattr(django_settings, "ALLOCATOR_RUNS_PER_CLIENT", DEFAULT_RUNS_PER_CLIENT))
    if cap <= 0:
        yield
        return
    running = safe_cache.count(_running_key(client), timeout=_running_ttl())
    try:
        if running > cap:
            raise Throttled(f"{cap} allocation{'s' if cap != 1 else ''} from your address "
                            f"{'are' if cap != 1 else 'is'} still running; this one was not started. "
                            f"Try again when {'they finish' if cap != 1 else 'it finishes'}.", 1)
        yield
    finally:
        safe_cache.count(_running_key(client), timeout=_running_ttl(), by=-1)


def heavy(client: str | None) -> bool:
    """Whether the client ran into a time limit, or had a run step aside as long, in the current
    window: its runs then go to a server's heavy lane (WorkerPool), leaving the ordinary workers
    to everyone else."""
    limit, window = _slow_rate()
    if not client or limit <= 0:
        return False
    key, _ = _slow_key(client, window, time.time())
    return safe_cache.read_count(_heavy_key(key)) > 0


def charge_long_run(client: str | None) -> None:
    """Mark a client whose run went on long enough to step aside: heavy for the rest of the window
    (not a slow run: it does not count towards the refusals)."""
    limit, window = _slow_rate()
    if client and limit > 0:
        key, _ = _slow_key(client, window, time.time())
        safe_cache.count(_heavy_key(key), timeout=window + 5)


def _heavy_key(slow_key: str) -> str:
    """Long runs and slow runs of the window together: one read tells whether the client is heavy."""
    return "heavy-" + slow_key


def charge_slow_run(client: str | None) -> None:
    """Count a run of this client that ended at a time limit."""
    limit, window = _slow_rate()
    if client and limit > 0:
        key, wait = _slow_key(client, window, time.time())
        safe_cache.count(key, timeout=window + 5)
        safe_cache.count(_heavy_key(key), timeout=window + 5)


def _duration(seconds: int) -> str:
    if seconds < 90:
        return f"{seconds} s"
    return f"{round(seconds / 60)} minutes"
