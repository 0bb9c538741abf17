import os
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _conformance_dir() -> Path | None:
    candidates = [
        os.environ.get("DRA_CONFORMANCE_CASES"),
        ROOT.parent / "shared" / "conformance" / "cases",
        "/work/shared/conformance/cases",
    ]
    for candidate in candidates:
        if candidate and Path(candidate).is_dir():
            return Path(candidate)
    return None


CONFORMANCE_DIR = _conformance_dir()
REALWORLD_DIR = next(
    (p for p in [ROOT.parent / "shared" / "realworld", Path("/work/shared/realworld")] if p.is_dir()), None
)


@pytest.fixture
def conformance_dir():
    if CONFORMANCE_DIR is None:
        pytest.skip("conformance cases not found (set DRA_CONFORMANCE_CASES)")
    return CONFORMANCE_DIR


def pytest_configure(config):
    config.addinivalue_line("markers", "fairness: keep the per-client run limits (allocator.fairness) on")


@pytest.fixture(autouse=True)
def _fair_share_limits_off(request):
    """Every test client is 127.0.0.1: per-address run limits would make unrelated tests wait on
    each other. Tests of those limits mark themselves `fairness`."""
    if request.node.get_closest_marker("fairness"):
        yield
        return
    settings = request.getfixturevalue("settings")
    settings.ALLOCATOR_RUNS_PER_CLIENT = 0
    settings.ALLOCATOR_SLOW_RUNS = "0/1"
    yield


@pytest.fixture(autouse=True)
def fresh_cache():
    """Rate-limit counts and cached results live in Django's cache; every test starts without them."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()
