"""The cache as an optional speed-up: when it fails (Redis stopped, unreachable or slow), the
playground goes on without it instead of answering 500.

- Results are computed again (`get` misses, `set` does nothing).
- Counters (the share rate limit, run fairness) count in this process's memory until the
  shared cache is back, as they do without REDIS_URL.
- The outage is logged once as a warning, and its recovery once; in between the shared cache
  is not tried again for RETRY_SECONDS, so every request does not wait for a dead server.

`status()` probes the shared cache directly, for `/readyz`.
"""
from __future__ import annotations

import logging
import threading
import time

from django.core.cache import cache
from django.core.cache.backends.locmem import LocMemCache

logger = logging.getLogger("allocator.cache")

RETRY_SECONDS = 5.0

_local = LocMemCache("dra-playground-fallback", {"OPTIONS": {"MAX_ENTRIES": 10_000}})
_lock = threading.Lock()
_down_until = 0.0  # monotonic time before which the shared cache is not tried
_down = False  # an outage was logged and its recovery not yet


def reset() -> None:
    """Forget any outage and the local counts (tests switch caches under a running process)."""
    global _down_until, _down
    with _lock:
        _down_until, _down = 0.0, False
    _local.clear()


def _available() -> bool:
    return time.monotonic() >= _down_until


def _failed(exc: Exception) -> None:
    global _down_until, _down
    with _lock:
        _down_until = time.monotonic() + RETRY_SECONDS
        first = not _down
        _down = True
    if first:
        logger.warning("cache unavailable (%s: %s): results are computed without it and rate limits count "
                       "in each process until it is back", type(exc).__name__, exc)


def _worked() -> None:
    global _down
    if _down:
        with _lock:
            was, _down = _down, False
        if was:
            logger.warning("cache available again")


def get(key: str):
    if not _available():
        return None
    try:
        value = cache.get(key)
    except Exception as exc:  # any backend failure: connection refused, timeout, protocol error
        _failed(exc)
        return None
    _worked()
    return value


def set(key: str, value, timeout: float) -> None:  # noqa: A001 (the cache's own verb)
    if not _available():
        return
    try:
        cache.set(key, value, timeout=timeout)
    except Exception as exc:
        _failed(exc)
        return
    _worked()


def count(key: str, timeout: float, by: int = 1) -> int:
    """Add `by` to a counter that expires `timeout` seconds after it was made; the new value.
    Shared through the cache when it works, in this process's memory when it does not."""
    if _available():
        try:
            value = _incr(cache, key, timeout, by)
        except Exception as exc:
            _failed(exc)
        else:
            _worked()
            return value
    return _incr(_local, key, timeout, by)


def read_count(key: str) -> int:
    """A counter's value (0 when absent), from wherever `count` is counting now."""
    if _available():
        try:
            value = cache.get(key)
        except Exception as exc:
            _failed(exc)
        else:
            _worked()
            return int(value or 0)
    return int(_local.get(key) or 0)


def _incr(backend, key: str, timeout: float, by: int) -> int:
    backend.add(key, 0, timeout=timeout)
    try:
        return backend.incr(key, by)
    except ValueError:  # expired between add and incr
        backend.set(key, by, timeout=timeout)
        return by


def status() -> str:
    """"ok", or "unavailable: <why>" — a direct probe, whatever the outage state."""
    global _down_until
    try:
        cache.set("readyz", "1", timeout=10)
        if cache.get("readyz") != "1":
            return "unavailable: a value written could not be read back"
    except Exception as exc:
        _failed(exc)
        return f"unavailable: {type(exc).__name__}: {exc}"
    _worked()
    with _lock:
        _down_until = 0.0
    return "ok"
