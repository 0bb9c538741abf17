"""Refusals the page must show in place of the result, in a real browser (htmx swaps only 2xx)."""
import re

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from .helpers import open_example, outcome  # noqa: E402

pytestmark = pytest.mark.browser


def test_a_form_post_over_the_upload_limit_shows_the_413_message_on_the_page(page: Page, settings):
    """CSRF reads the form before the view; over DATA_UPLOAD_MAX_MEMORY_SIZE that was a bare 400,
    which htmx does not swap: the page went on showing the old result."""
    settings.DATA_UPLOAD_MAX_MEMORY_SIZE = 100_000
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated")
    page.evaluate("""() => {
        const area = document.getElementById("scenario");
        area.value = "# padding\\n".repeat(30000);
        area.dispatchEvent(new CustomEvent("playground:scenario-replaced", { bubbles: true }));
        htmx.trigger(area.form, "run");
    }""")
    expect(outcome(page)).to_have_text("Refused")
    expect(page.locator("#results")).to_contain_text(re.compile(r"The scenario is [\d,]+ bytes"))
    expect(page.locator("#results")).to_contain_text("the limit is 33,554,432 bytes")
