"""A room in real browsers: the instructor opens it from the workshop's overview, two attendees (two
browser contexts, so two cookies) join from its link and Check, and the instructor's page, polling,
shows their progress."""
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Browser, Page, expect  # noqa: E402

from allocator.workshops.playground import run_inline  # noqa: E402
from allocator.workshops.store import share_workshop  # noqa: E402

from .helpers import outcome, replace_in_editor, screenshot  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
WORKSHOP = (Path(__file__).resolve().parents[1] / "rooms" / "files" / "two-steps.yaml").read_text()


def join_and_open_step_1(browser: Browser, base_url: str, link: str) -> Page:
    context = browser.new_context(base_url=base_url, viewport={"width": 1400, "height": 1000})
    page = context.new_page()
    page.goto(link)
    page.get_by_role("button", name="Join the room").click()
    expect(page.locator(".room-seated")).to_contain_text("You are in room")
    page.get_by_role("link", name="Ask for what is there").click()
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    return page


def test_a_room_with_two_attendees_and_an_instructor(page: Page, browser: Browser, base_url: str):
    share_id = share_workshop(WORKSHOP, run=run_inline)[0].id

    # The instructor opens a room from the workshop's overview.
    page.goto(f"/w/{share_id}")
    page.get_by_role("button", name="Run this in a room").click()
    expect(page).to_have_url(re.compile(r"/rooms/[a-z2-9]{10}/teach/[A-Za-z0-9_-]+\?new=1$"))
    expect(page.locator("svg.room-qr")).to_be_visible()
    link = page.locator(".room-link a").get_attribute("href")
    step_1 = page.locator('#room-status tr[data-step="1"]')
    expect(page.locator(".room-summary")).to_contain_text("0 attendees joined")

    ana = join_and_open_step_1(browser, base_url, link)
    ben = join_and_open_step_1(browser, base_url, link)
    expect(page.locator(".room-summary")).to_contain_text("2 attendees joined")  # polled, not reloaded

    # Ana checks the start as it is: both checks fail.
    ana.get_by_role("button", name="Check").click()
    expect(ana.locator("#check-result li.check-failed")).to_have_count(2)
    expect(step_1.locator(".room-here")).to_have_text("1")
    expect(step_1.locator(".room-passed")).to_contain_text("0 of 1")
    expect(step_1.locator(".room-failing")).to_contain_text("pair is allocated")

    # Ben fixes the claim and passes.
    replace_in_editor(ben, "count: 3", "count: 2")
    expect(outcome(ben)).to_contain_text("Allocated on node worker-1")
    ben.get_by_role("button", name="Check").click()
    expect(ben.locator("#check-result .check-passed")).to_contain_text("All checks pass.")
    expect(step_1.locator(".room-here")).to_have_text("2")
    expect(step_1.locator(".room-passed")).to_contain_text("1 of 2")
    expect(step_1.locator(".room-failing li")).to_have_count(2)  # Ana's latest Check still fails both
    screenshot(page.locator(".room-teach"), "room-instructor")

    # The instructor closes the room; an attendee's link then says so.
    page.get_by_role("button", name="Close the room").click()
    expect(page.locator(".room-summary")).to_contain_text("Closed.")
    ana.goto(link)
    expect(ana.locator(".room-message")).to_contain_text("is closed")
    ana.context.close()
    ben.context.close()
