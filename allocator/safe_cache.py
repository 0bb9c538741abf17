"""The cache as an optional speed-up: when it fails (Redis stopped, unreachable, slow or full),
the playground goes on without it instead of answering 500.

Two stores, so that results can never push out the counters:

- **counters** (the share rate limit, run fairness) in the `default` cache. When it fails they
  count in this process's memory until it is back, as they do without REDIS_URL; that switch
  is logged, and `/readyz` says so for as long as it lasts.
- **results** in the `results` cache (the same Redis under its own key prefix, or its own
  Redis with REDIS_RESULTS_URL, which may then evict at will). Each result is cached only
  under RESULTS_CACHE_MAX_BYTES, and all results written within one RESULTS_CACHE_SECONDS (their
  lifetime) stay under RESULTS_CACHE_TOTAL_BYTES, so results alone never fill Redis's
  `maxmemory` (README, "The results cache"). A failing or full results store only means results
  are computed again; it never moves the counters.

An outage is logged once as a warning, and its recovery once; in between the failed store is not
tried again for RETRY_SECONDS, so every request does not wait for a dead server.

`status()` probes both stores directly, for `/readyz`.
"""
from __future__ import annotations

import logging
import threading
import time

from django.conf import settings
from django.core.cache import caches
from django.core.cache.backends.base import InvalidCacheBackendError
from django.core.cache.backends.locmem import LocMemCache

logger = logging.getLogger("allocator.cache")

RETRY_SECONDS = 5.0
RESULTS_ALIAS = "results"
DEFAULT_ENTRY_BYTES = 512 * 1024
DEFAULT_TOTAL_BYTES = 256 * 1024 * 1024
DEFAULT_RESULT_SECONDS = 3600

_local = LocMemCache("dra-playground-fallback", {"OPTIONS": {"MAX_ENTRIES": 10_000}})


class _Store:
    """One cache alias and its outage state."""

    def __init__(self, name: str, what_then: str):
        self.name = name
        self.what_then = what_then  # what an outage means, for the log
        self.lock = threading.Lock()
        self.down_until = 0.0  # monotonic time before which the store is not tried
        self.down = False  # an outage was logged and its recovery not yet
        self.why = ""

    def reset(self) -> None:
        with self.lock:
            self.down_until, self.down, self.why = 0.0, False, ""

    def available(self) -> bool:
        return time.monotonic() >= self.down_until

    def failed(self, exc: Exception) -> None:
        full = _is_full(exc)
        why = (f"Redis is full ({exc}); see the README's maxmemory advice" if full
               else f"{type(exc).__name__}: {exc}")
        with self.lock:
            self.down_until = time.monotonic() + RETRY_SECONDS
            first, self.down, self.why = not self.down, True, why
        if first:
            logger.warning("%s unavailable (%s): %s", self.name, why, self.what_then)

    def worked(self) -> None:
        if self.down:
            with self.lock:
                was, self.down, self.why = self.down, False, ""
            if was:
                logger.warning("%s available again", self.name)


_counters = _Store("cache", "rate limits and fair shares count in each process (and, where results are cached "
                            "there too, results are computed again) until it is back")
_results = _Store("results cache", "results are computed again until it has room or is back; the counters are "
                                   "not affected")
_budget_lock = threading.Lock()
_budget_logged_window = None


def _is_full(exc: Exception) -> bool:
    return "OOM" in str(exc) or "maxmemory" in str(exc)


def _counter_cache():
    return caches["default"]


def _results_cache():
    try:
        return caches[RESULTS_ALIAS]
    except InvalidCacheBackendError:  # settings that name only `default` (tests, old deployments)
        return caches["default"]


def _same_store() -> bool:
    """Whether results live in the counters' cache (one Redis, or one process's memory)."""
    configured = settings.CACHES
    results = configured.get(RESULTS_ALIAS)
    return results is None or results.get("LOCATION") == configured["default"].get("LOCATION")


def _results_available() -> bool:
    return _results.available() and (_counters.available() or not _same_store())


def _results_failed(exc: Exception) -> None:
    # A shared server that stopped answering is the counters' outage too; one that is full only
    # keeps results out (the budget below is what keeps it from filling).
    if _same_store() and not _is_full(exc):
        _counters.failed(exc)
    else:
        _results.failed(exc)


def _results_worked() -> None:
    _results.worked()
    if _same_store():
        _counters.worked()


def reset() -> None:
    """Forget any outage and the local counts (tests switch caches under a running process)."""
    global _budget_logged_window
    _counters.reset()
    _results.reset()
    _budget_logged_window = None
    _local.clear()


# ---- results -------------------------------------------------------------------------------

def get(key: str):
    if not _results_available():
        return None
    try:
        value = _results_cache().get(key)
    except Exception as exc:  # any backend failure: connection refused, timeout, protocol error
        _results_failed(exc)
        return None
    _results_worked()
    return value


def set(key: str, value, timeout: float) -> None:  # noqa: A001 (the cache's own verb)
    """Cache a result (bytes) if it fits: under the entry limit, and within the budget of what
    results written in their lifetime may add up to."""
    size = len(value) if isinstance(value, (bytes, bytearray, str)) else 0
    if size > entry_limit() or not _results_available() or not _within_budget(size):
        return
    try:
        _results_cache().set(key, value, timeout=timeout)
    except Exception as exc:
        _results_failed(exc)
        return
    _results_worked()


def entry_limit() -> int:
    return getattr(settings, "RESULTS_CACHE_MAX_BYTES", DEFAULT_ENTRY_BYTES)


def total_limit() -> int:
    return getattr(settings, "RESULTS_CACHE_TOTAL_BYTES", DEFAULT_TOTAL_BYTES)


def _within_budget(size: int) -> bool:
    """Bytes of results written in this window and the one before (a result lives at most one
    window, RESULTS_CACHE_SECONDS) stay under RESULTS_CACHE_TOTAL_BYTES: an upper bound on what
    results hold at any moment. Counted with the counters, so every server shares the budget."""
    global _budget_logged_window
    window = max(1, int(getattr(settings, "RESULTS_CACHE_SECONDS", DEFAULT_RESULT_SECONDS) or 1))
    now = int(time.time()) // window
    used = read_count(f"results-bytes:{now}") + read_count(f"results-bytes:{now - 1}")
    limit = total_limit()
    if used + size > limit:
        with _budget_lock:
            first, _budget_logged_window = _budget_logged_window != now, now
        if first:
            logger.warning("results cache budget reached (%d of RESULTS_CACHE_TOTAL_BYTES=%d bytes written in "
                           "the last %d s): new results are not cached until older ones expire", used, limit, window)
        return False
    count(f"results-bytes:{now}", timeout=2 * window + 60, by=size)
    return True


# ---- counters ------------------------------------------------------------------------------

def count(key: str, timeout: float, by: int = 1) -> int:
    """Add `by` to a counter that expires `timeout` seconds after it was made; the new value.
    Shared through the cache when it works, in this process's memory when it does not."""
    if _counters.available():
        try:
            value = _incr(_counter_cache(), key, timeout, by)
        except Exception as exc:
            _counters.failed(exc)
        else:
            _counters.worked()
            return value
    return _incr(_local, key, timeout, by)


def read_count(key: str) -> int:
    """A counter's value (0 when absent), from wherever `count` is counting now."""
    if _counters.available():
        try:
            value = _counter_cache().get(key)
        except Exception as exc:
            _counters.failed(exc)
        else:
            _counters.worked()
            return int(value or 0)
    return int(_local.get(key) or 0)


def _incr(backend, key: str, timeout: float, by: int) -> int:
    backend.add(key, 0, timeout=timeout)
    try:
        return backend.incr(key, by)
    except ValueError:  # expired between add and incr
        backend.set(key, by, timeout=timeout)
        return by


# ---- readiness -----------------------------------------------------------------------------

def status() -> str:
    """"ok", or what is wrong and what it means — a direct probe of each store, whatever the
    outage state."""
    stores = [(_counters, _counter_cache(), "rate limits count in each process")]
    if not _same_store():
        stores.append((_results, _results_cache(), "results are not cached"))
    problems = []
    for store, backend, meaning in stores:
        try:
            backend.set("readyz", "1", timeout=10)
            if backend.get("readyz") != "1":
                raise RuntimeError("a value written could not be read back")
        except Exception as exc:
            store.failed(exc)
            problems.append(f"{store.why or exc} ({meaning})" if store is _counters
                            else f"results cache: {store.why or exc} ({meaning})")
            continue
        store.worked()
        with store.lock:
            store.down_until = 0.0
    return "unavailable: " + "; ".join(problems) if problems else "ok"
