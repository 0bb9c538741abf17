"""Browser tests: pytest-playwright drives Debian's Chromium against pytest-django's live server.

No browser is downloaded (`playwright install` is never run): the launch points at the system
Chromium, and without it these tests are skipped with the command that installs it.
"""
import os

import pytest

# Playwright's sync API runs an event loop in the test thread, so Django takes the
# live server's database setup and teardown for async code without this.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")

CHROMIUM = os.environ.get("CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
    "--disable-background-networking", "--disable-component-update", "--disable-sync",
]


def pytest_configure(config):
    config.addinivalue_line("markers", "browser: drives Chromium through Playwright (deselect with -m 'not browser')")


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not os.access(CHROMIUM, os.X_OK):
        pytest.skip(f"no Chromium at {CHROMIUM}: install it with `apt-get install chromium` "
                    "(`make test` does this when run as root) or set CHROMIUM=/path/to/chromium")
    return {**browser_type_launch_args, "executable_path": CHROMIUM, "args": CHROMIUM_FLAGS}


@pytest.fixture(scope="session")
def base_url(live_server):
    """Relative `page.goto("/")` reaches pytest-django's live server (serving static files too)."""
    return live_server.url


@pytest.fixture(scope="session")
def browser_context_args(browser_context_args):
    # Wide enough for the two-column layout, so the editor and the results sit side by side.
    return {**browser_context_args, "viewport": {"width": 1400, "height": 1000}}
