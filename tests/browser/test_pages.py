"""The playground pages in a real browser: gallery, gates, dark mode, no JavaScript, and each result panel."""
import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Browser, Page, expect  # noqa: E402

from allocator import gallery  # noqa: E402

from .helpers import open_example, outcome, screenshot  # noqa: E402

pytestmark = pytest.mark.browser


def test_following_a_gallery_example_shows_its_result(page: Page):
    page.goto("/examples/")
    page.get_by_role("link", name=gallery.get("partitionable-devices").title).click()

    expect(page).to_have_url("/?example=partitionable-devices")
    expect(page.locator("#editor .cm-content")).to_contain_text("resourceSliceCount")
    expect(outcome(page)).to_contain_text("Cannot allocate")
    expect(page.locator("#panel-counters")).to_contain_text("2Gi")


def test_turning_a_gate_off_for_the_scheduler_makes_the_pool_incomplete(page: Page):
    open_example(page, "compatibility-groups")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    gates = page.locator("details.gates")
    if gates.get_attribute("open") is None:
        gates.locator("summary").click()

    page.get_by_label("DRADeviceCompatibilityGroups on kube-scheduler").uncheck()

    expect(outcome(page)).to_contain_text("Cannot allocate")
    expect(page.locator("#panel-devices")).to_contain_text("incomplete")


def test_the_theme_toggle_switches_page_and_editor_to_dark(page: Page):
    open_example(page, "simple-gpu")
    body, editor = page.locator("body"), page.locator("#editor .cm-editor")
    expect(body).to_have_css("background-color", "rgb(251, 251, 253)")
    expect(editor).to_have_css("background-color", "rgb(255, 255, 255)")
    key = page.locator("#editor .cm-line", has_text="apiVersion").first.locator("span").first
    light_key_colour = key.evaluate("el => getComputedStyle(el).color")

    page.locator("#theme-toggle").click()

    expect(page.locator("html")).to_have_attribute("data-theme", "dark")
    expect(body).to_have_css("background-color", "rgb(21, 23, 28)")
    expect(editor).to_have_css("background-color", "rgb(29, 32, 39)")
    expect(key).not_to_have_css("color", light_key_colour)


def test_the_why_filter_hides_devices_that_do_not_match(page: Page):
    open_example(page, "simple-gpu")
    rows = page.locator("#panel-why table.why tbody tr[data-device]")
    expect(rows.filter(visible=True)).to_have_count(2)

    page.locator("#why-filter").fill("gpu-1")

    expect(rows.filter(visible=True)).to_have_count(1)
    expect(rows.filter(visible=True)).to_contain_text("gpu-1")


def test_without_javascript_the_form_posts_and_returns_the_whole_page(browser: Browser, base_url: str):
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    page = context.new_page()
    page.goto("/?example=simple-gpu")
    textarea = page.locator("textarea#scenario")
    expect(textarea).to_be_visible()
    expect(page.locator(".cm-editor")).to_have_count(0)

    textarea.fill(textarea.input_value().replace('quantity("40Gi")', 'quantity("100Gi")'))
    page.get_by_role("button", name="Allocate").click()

    expect(outcome(page)).to_contain_text("Cannot allocate")
    expect(page.locator("header.topbar")).to_be_visible()
    expect(textarea).to_have_value(gallery.get("simple-gpu").scenario.replace("40Gi\")", "100Gi\")"))
    context.close()


# Each result panel from an example where it has something to say.
PANELS = {
    "simple-gpu": ["panel-claims", "panel-why"],
    "prioritized-list": ["panel-replay"],
    "mig-8-gpu": ["panel-why", "panel-devices"],
    "partitionable-devices": ["panel-counters"],
    "consumable-capacity": ["panel-capacity"],
    "optional-node-operations": ["panel-nodeops"],
    "compatibility-groups": ["panel-devices", "panel-groups"],
    "version-skew": ["panel-skew"],
    "pods": ["panel-pods"],
    "granular-status-authorization": ["panel-status-writers"],
}


@pytest.mark.parametrize("slug", PANELS)
def test_result_panels_render_for_their_example(page: Page, slug: str):
    open_example(page, slug)
    screenshot(page.locator("#results .outcome"), f"{slug}--outcome")
    for panel_id in PANELS[slug]:
        panel = page.locator(f"#{panel_id}")
        expect(panel).to_be_visible()
        screenshot(panel, f"{slug}--{panel_id}")
