"""The "why" in a browser: the headline of a pending claim, rows true to the moment, filters that
survive re-runs, and stepping through the replay of the search."""
import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from .helpers import open_example, replace_in_editor, screenshot  # noqa: E402

pytestmark = pytest.mark.browser


def row(page: Page, request: str, device: str):
    block = page.locator("#panel-why details.why-request", has_text=f"request {request} ")
    return block.locator(f"tr[data-device$='/{device}']")


def test_rows_under_an_abandoned_subrequest_give_the_reason_of_that_moment(page: Page):
    open_example(page, "prioritized-list")
    small = row(page, "gpu/large", "small-0")
    expect(small).to_contain_text("rejected")
    expect(small).to_contain_text('size == "large"')
    expect(row(page, "gpu/two-small", "small-0")).to_contain_text("chosen")


def test_a_pending_claim_gets_a_plain_headline(page: Page):
    open_example(page, "partitionable-devices")
    headline = page.locator("#headline")
    expect(headline).to_contain_text("request gpu of claim default/training needs 1 device")
    expect(headline).to_contain_text("gpu-0-part-b would fit alone but counter memory in set gpu-0 needs")
    expect(headline).to_contain_text("after claim default/inference")
    screenshot(page.locator("#results .outcome"), "partitionable-devices--headline")


def test_chosen_and_blocking_only_filter_survives_a_rerun(page: Page):
    open_example(page, "partitionable-devices")
    rows = page.locator("#panel-why table.why tbody tr[data-device]")
    expect(rows.filter(visible=True)).to_have_count(4)
    page.locator("#why-blocking-only").check()
    visible = rows.filter(visible=True)
    expect(visible).to_have_count(3)  # part-a tried; in use and counter short for training
    expect(page.locator("#panel-why")).not_to_contain_text("not needed", use_inner_text=True)

    replace_in_editor(page, "name: training", "name: training2")

    expect(page.locator("#panel-why")).to_contain_text("default/training2")
    expect(page.locator("#why-blocking-only")).to_be_checked()
    expect(rows.filter(visible=True)).to_have_count(3)


def test_replay_steps_forward_and_back_and_the_counters_follow(page: Page):
    open_example(page, "prioritized-list")
    replay = page.locator("#panel-replay")
    text = replay.locator("[data-replay-text]")
    tile = replay.locator(".tile[data-key$='/small-0']")
    expect(text).to_contain_text("nothing is picked yet")

    replay.get_by_role("button", name="Step forward").click()
    replay.get_by_role("button", name="Step forward").click()
    expect(text).to_contain_text("small-0 rejected")
    expect(tile).to_have_class("tile tile-rejected tile-current")

    replay.get_by_role("button", name="Last step").click()
    expect(text).to_contain_text("every claim has its devices")
    expect(tile).to_have_class("tile tile-picked")
    screenshot(replay, "prioritized-list--replay")

    replay.get_by_role("button", name="First step").click()
    expect(tile).to_have_class("tile tile-free")

    open_example(page, "partitionable-devices")
    replay = page.locator("#panel-replay")
    bar = replay.locator(".bar-text").first
    expect(bar).to_have_attribute("data-now", "0")
    steps = int(replay.locator("[data-replay-scrub]").get_attribute("max"))
    for _ in range(steps):
        replay.get_by_role("button", name="Step forward").click()
        if replay.locator("[data-replay-text]").inner_text().endswith("picked."):
            break
    expect(bar).not_to_have_attribute("data-now", "0")
    replay.get_by_role("button", name="Step back").click()
    expect(bar).to_have_attribute("data-now", "0")


def test_an_off_screen_replay_is_drawn_when_it_comes_into_view_and_a_rerun_keeps_it_drawn(page: Page):
    """The replay's tiles, bars and timeline are made when someone may look at them, not with every run's
    answer. Here the page never idles (requestIdleCallback held back), so only coming into view draws it."""
    page.add_init_script("window.requestIdleCallback = function () { return 0; };")
    open_example(page, "mig-8-gpu")
    replay = page.locator("#panel-replay")
    expect(replay.locator("[data-replay-position]")).to_contain_text("step 0 of")
    expect(replay.locator("[data-replay-text]")).to_contain_text("nothing is picked yet")
    expect(replay).not_to_be_in_viewport()
    expect(replay.locator(".tile")).to_have_count(0)

    replay.locator("[data-replay-timeline]").scroll_into_view_if_needed()
    expect(replay.locator(".tile")).to_have_count(64)
    expect(replay.locator(".bar-row")).to_have_count(16)
    expect(replay.locator("[data-replay-timeline] .cursor")).to_have_count(1)

    # On screen, the next run's replay is drawn with its answer, not a frame later.
    tiles = page.evaluate("""() => new Promise((done) => {
        document.addEventListener("htmx:afterSettle", () => done(document.querySelectorAll("#panel-replay .tile").length),
                                  { once: true });
        htmx.trigger(document.getElementById("playground"), "run"); })""")
    assert tiles == 64
