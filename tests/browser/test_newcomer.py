"""Issue 9: the page tried as a newcomer and as an instructor would: every step that broke, in Chromium."""
import json
import random
import re

import pytest

pytest.importorskip("playwright")

from django.core.cache import cache  # noqa: E402
from playwright.sync_api import Browser, Page, expect  # noqa: E402

from allocator import gallery  # noqa: E402

from .helpers import (  # noqa: E402
    link_holding, open_example, outcome, page_screenshot, replace_in_editor, set_editor_text,
)

pytestmark = pytest.mark.browser

VIEWPORTS = {"1440x900": (1440, 900), "1920x1080": (1920, 1080), "390x844": (390, 844)}

# A scenario of its own: one GPU on node gpu-node, nothing like the gallery's worker-1.
PASTED = """\
# A pasted scenario: one GPU on gpu-node.
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: gpu.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "gpu.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: gpu-node-slice
spec:
  driver: gpu.example.com
  nodeName: gpu-node
  pool:
    name: gpu-node
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: gpu-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: one-gpu
  namespace: default
spec:
  devices:
    requests:
    - name: gpu
      exactly:
        deviceClassName: gpu.example.com
"""


def open_gates(page: Page) -> None:
    gates = page.locator("details.gates")
    if gates.get_attribute("open") is None:
        gates.locator("summary").click()


# ---- 1. the node dropdown ------------------------------------------------------------------

def test_the_node_dropdown_reruns_after_every_change(page: Page):
    open_example(page, "optional-node-operations")
    expect(outcome(page)).to_contain_text("worker-1")

    page.locator("#node").select_option("worker-2")
    expect(outcome(page)).to_contain_text("Cannot allocate")
    page.locator("#node").select_option("")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.locator("#node").select_option("worker-2")
    expect(outcome(page)).to_contain_text("Cannot allocate")

    with page.expect_response(lambda r: r.request.method == "POST"):  # an edit, then the node again
        replace_in_editor(page, "kind: Node", "kind: Node  # edited")
    page.locator("#node").select_option("")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")


# ---- 2. a pasted scenario ------------------------------------------------------------------

def test_a_pasted_scenario_drops_the_examples_notes_and_the_node_it_does_not_name(page: Page):
    open_example(page, "partitionable-devices")
    expect(page.locator(".example-info")).to_contain_text("Look at")

    set_editor_text(page, PASTED)

    expect(page.locator(".example-info")).to_have_count(0)
    expect(page.locator(".example-edited")).to_contain_text("Partitionable devices")  # its DeviceClass is kept
    expect(page.locator("#results .node-dropped")).to_have_text(
        "Node worker-1 is not in the scenario any more; ran on any node.")
    expect(outcome(page)).to_contain_text("Allocated on node gpu-node")
    expect(page.locator("#node option:checked")).to_have_text("any node (first that fits)")
    expect(page.locator("#node option")).to_have_text(["any node (first that fits)", "gpu-node"])
    expect(page.locator('#results .warnings li[data-code="unknown-node"]')).to_have_count(0)


def test_a_link_that_carries_a_scenario_shows_no_examples_notes(page: Page):
    page.goto("/")
    expect(page.locator(".example-info")).to_be_visible()
    set_editor_text(page, PASTED)
    page.locator("#node").select_option("")
    expect(outcome(page)).to_contain_text("gpu-node")
    link = link_holding(page, scenario=PASTED, node="")

    other = page.context.new_page()
    other.goto(link)
    expect(other.locator("#results .outcome h2")).to_contain_text("gpu-node")
    expect(other.locator(".example-info")).to_have_count(0)
    other.close()


def test_the_api_warns_about_a_node_the_scenario_does_not_know(page: Page):
    response = page.request.post("/api/v1/allocate?node=nope", data=gallery.get("simple-gpu").scenario,
                                 headers={"Content-Type": "application/yaml"})
    data = response.json()
    assert [w["code"] for w in data["warnings"]] == ["unknown-node"]
    assert "node nope is not in the scenario" in data["warnings"][0]["message"]


# ---- 3. phones -----------------------------------------------------------------------------

@pytest.mark.parametrize("slug", ["simple-gpu", "mig-8-gpu", "partitionable-devices"])
def test_on_a_phone_the_page_never_scrolls_sideways(browser: Browser, base_url: str, slug: str):
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=base_url)
    page = context.new_page()
    open_example(page, slug)
    expect(outcome(page)).to_be_visible()
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= 390, f"the page is {width}px wide on a 390px screen"
    page_screenshot(page, f"newcomer--phone-{slug}--390x844")
    context.close()


def lines_cut_by(page: Page, selector: str) -> list[str]:
    """The text lines of the element that its scroll box shows only in part (cut through at an edge)."""
    return page.evaluate("""(selector) => { const box = document.querySelector(selector);
        const style = getComputedStyle(box), outer = box.getBoundingClientRect();
        const top = outer.top + parseFloat(style.borderTopWidth), bottom = top + box.clientHeight;
        const cut = [], walker = document.createTreeWalker(box, NodeFilter.SHOW_TEXT);
        for (let node = walker.nextNode(); node; node = walker.nextNode()) {
          const range = document.createRange(); range.selectNodeContents(node);
          for (const r of range.getClientRects()) {
            if (r.height === 0) continue;
            const inside = Math.min(r.bottom, bottom) - Math.max(r.top, top);
            if (inside > 1 && inside < r.height - 1) cut.push(node.textContent.trim().slice(0, 40));
          } }
        return cut; }""", selector)


@pytest.mark.parametrize("slug", ["simple-gpu", "pods"])
def test_on_a_phone_the_examples_note_shows_whole_lines_and_scrolls_to_the_rest(browser: Browser, base_url: str,
                                                                               slug: str):
    context = browser.new_context(viewport={"width": 390, "height": 844}, base_url=base_url)
    page = context.new_page()
    open_example(page, slug)
    note = page.locator(".example-info")
    expect(note).to_contain_text("Try this")
    assert lines_cut_by(page, ".example-info") == [], "a line of the note is cut through at its edge"
    assert note.evaluate("n => n.scrollHeight > n.clientHeight"), "the note should scroll on a phone"
    note.evaluate("n => n.scrollTop = n.scrollHeight")
    expect(note.get_by_text("Try this:")).to_be_in_viewport()
    assert lines_cut_by(page, ".example-info") == [], "scrolled to its end, a line of the note is cut"
    expect(page.locator("#editor .cm-editor")).to_be_in_viewport()
    context.close()


# ---- 4. mistakes marked where they are -----------------------------------------------------

def test_a_misspelt_kind_is_not_a_success_and_is_marked_on_its_line(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "kind: ResourceClaim", "kind: ResourceClaims", after="kind: ResourceSlice")

    expect(outcome(page)).to_contain_text("Nothing to allocate")
    expect(page.locator("#results .outcome")).not_to_have_class(re.compile("outcome-allocated"))
    warning = page.locator('#results .warnings li[data-code="ignored-kind"]')
    expect(warning).to_contain_text("line 52")
    expect(warning).to_contain_text("did you mean ResourceClaim?")
    expect(page.locator("#editor .cm-gutterElement .cm-lint-marker-warning")).to_have_count(1)


def test_an_unknown_field_gets_a_marker_in_the_editor(page: Page):
    open_example(page, "simple-gpu")
    expect(page.locator("#editor .cm-lint-marker-warning")).to_have_count(0)
    set_editor_text(page, gallery.get("simple-gpu").scenario.replace(
        "        deviceClassName: gpu.example.com", "        cuont: 1\n        deviceClassName: gpu.example.com"))

    expect(page.locator('#results .warnings li')).to_contain_text('unknown field "spec.devices.requests[0].exactly.cuont"')
    expect(page.locator("#editor .cm-lint-marker-warning")).to_have_count(1)
    marker_top = page.locator("#editor .cm-lint-marker-warning").bounding_box()["y"]
    line = page.locator("#editor .cm-line", has_text="cuont").bounding_box()
    assert line["y"] - 4 <= marker_top <= line["y"] + line["height"]


def test_a_cel_runtime_error_is_marked_on_the_expression(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "capacity[\"gpu.example.com\"].memory", "attributes[\"gpu.example.com\"].nosuch",
                      after="kind: ResourceClaim")

    expect(outcome(page)).to_contain_text("Invalid input")
    expression_line = 1 + page.locator("#scenario").input_value().split("\n").index(
        next(line for line in page.locator("#scenario").input_value().split("\n") if "nosuch" in line))
    expect(page.locator("#results .problems li")).to_contain_text(f"line {expression_line}")
    expect(page.locator("#results .problems li code")).to_have_text(
        "spec.devices.requests[0].exactly.selectors[0].cel.expression")


def test_the_cel_caret_line_keeps_its_spacing_in_a_fixed_width_font(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, ">= 0", ">= ", after="kind: ResourceClaim")

    # The expression and its caret are one preformatted block beside the message (said once).
    snippet = page.locator("#results .problems pre.problem-snippet").first
    expect(snippet).to_contain_text("^")
    font = snippet.evaluate("el => getComputedStyle(el).fontFamily")
    assert "monospace" in font
    lines = snippet.inner_text().split("\n")
    caret = next(n for n, line in enumerate(lines) if line.rstrip().endswith("^"))
    assert lines[caret - 1].startswith("device.capacity")
    assert lines[caret].index("^") == 72  # under column 73, the end of the expression
    expect(page.locator("#results .problems .problem-text").first).not_to_contain_text("^")


def test_an_empty_editor_shows_an_empty_state(page: Page):
    open_example(page, "simple-gpu")
    set_editor_text(page, "")

    expect(outcome(page)).to_have_text("Nothing to allocate yet")
    expect(page.locator("#results .outcome-unsatisfiable")).to_have_count(0)
    expect(page.locator("#results .outcome")).to_contain_text("open an example")


# ---- 5. edits survive reload and Back ------------------------------------------------------

def test_edits_survive_a_reload_and_going_back(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "40Gi", "16Gi", after="quantity(")
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")
    expect(page).to_have_url(re.compile(r"\?example=simple-gpu#s="))
    link_holding(page, scenario=lambda text: 'quantity("16Gi")' in (text or ""))

    page.reload()
    expect(page.locator("#editor .cm-content")).to_contain_text('quantity("16Gi")')
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")

    page.get_by_role("navigation").get_by_role("link", name="Examples").click()
    expect(page).to_have_url(re.compile("/examples/"))
    page.go_back()
    expect(page.locator("#editor .cm-content")).to_contain_text('quantity("16Gi")')
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")


def test_a_big_scenario_survives_a_reload_without_a_fragment(page: Page):
    noise = random.Random(9)
    big = gallery.get("simple-gpu").scenario + "".join(
        f"# {noise.getrandbits(256):064x}\n" for _ in range(200)) + "# my note\n"  # too long for a #s= link
    open_example(page, "simple-gpu")
    set_editor_text(page, big)
    expect(page.locator("#scenario")).to_have_value(big)
    for _ in range(50):
        if page.evaluate("() => !!(history.state && history.state.draft && history.state.draft.scenario.includes('my note'))"):
            break
        page.wait_for_timeout(100)
    assert "#s=" not in page.url

    page.reload()
    expect(page.locator("#scenario")).to_have_value(big)
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")


# ---- 6. sections stay as the reader left them ----------------------------------------------

def test_the_claims_yaml_stays_open_while_typing(page: Page):
    open_example(page, "simple-gpu")
    yaml_section = page.locator('details[data-keep="claims-yaml"]')
    yaml_section.locator("summary").click()
    expect(yaml_section).to_have_attribute("open", "")

    replace_in_editor(page, "40Gi", "16Gi", after="quantity(")
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")
    expect(page.locator('details[data-keep="claims-yaml"]')).to_have_attribute("open", "")
    expect(page.locator("#claims-yaml")).to_be_visible()


# ---- 7. a slow answer ----------------------------------------------------------------------

def test_a_slow_answer_shows_that_it_is_running(page: Page):
    open_example(page, "simple-gpu")
    busy = page.locator("#busy")
    expect(busy).to_be_hidden()
    held = []
    page.route("**/", lambda route: held.append(route) if route.request.method == "POST" else route.continue_())

    page.get_by_role("button", name="Allocate").click()
    expect(busy).to_be_visible()
    expect(busy).to_have_text("Running…")
    page.wait_for_timeout(100)
    assert held, "the run was sent"
    held[0].continue_()
    expect(busy).to_be_hidden()
    page.unroute("**/")


# ---- 8. examples menu, resets, the ≠ mark --------------------------------------------------

def test_the_editor_header_has_an_examples_menu(page: Page):
    open_example(page, "simple-gpu")
    page.locator("#examples-menu summary").click()
    page.locator("#examples-menu").get_by_role("link", name=gallery.get("distinct-numa").title).click()

    expect(page).to_have_url("/?example=distinct-numa")
    expect(page.locator(".example-info")).to_contain_text(gallery.get("distinct-numa").title)


def test_reset_to_the_example_brings_its_text_back(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "40Gi", "16Gi", after="quantity(")
    reset = page.get_by_role("link", name="Reset to the example")
    expect(reset).to_be_visible()
    expect(page.locator(".example-info")).to_have_count(0)

    reset.click()
    expect(page.locator(".example-info")).to_contain_text("Look at")
    expect(page.locator("#scenario")).to_have_value(gallery.get("simple-gpu").scenario)
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-1")


def test_the_gates_mark_follows_a_toggle_and_resets_to_defaults(page: Page):
    open_example(page, "simple-gpu")
    open_gates(page)
    row = page.locator(".gates tr.gate-row", has=page.get_by_label("DRADeviceTaints on kube-scheduler"))
    expect(row).not_to_have_class(re.compile("skewed"))

    page.get_by_label("DRADeviceTaints on kube-scheduler").uncheck()
    expect(row).to_have_class(re.compile("skewed"))
    expect(page.locator("#skew-flag")).to_contain_text("version skew")

    page.get_by_role("button", name="Reset gates to defaults").click()
    expect(page.get_by_label("DRADeviceTaints on kube-scheduler")).to_be_checked()
    expect(row).not_to_have_class(re.compile("skewed"))
    expect(page.locator("#skew-flag")).to_have_text("")


def test_reset_gates_works_without_javascript(browser: Browser, base_url: str):
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    page = context.new_page()
    page.goto("/?example=version-skew")
    assert page.locator(".gates tr.skewed").count() > 0
    page.get_by_role("button", name="Reset gates to defaults").click()
    expect(page.locator("#results .outcome")).to_be_visible()
    expect(page.locator(".gates tr.skewed")).to_have_count(0)
    context.close()


# ---- 9. a projector ------------------------------------------------------------------------

def test_on_a_wide_screen_editor_and_results_scroll_side_by_side(browser: Browser, base_url: str):
    context = browser.new_context(viewport={"width": 1920, "height": 1080}, base_url=base_url)
    page = context.new_page()
    open_example(page, "mig-8-gpu")
    expect(outcome(page)).to_be_visible()
    editor, results = page.locator(".editor-pane"), page.locator("#results")
    left, right = editor.bounding_box(), results.bounding_box()
    assert left["x"] + left["width"] <= right["x"] and abs(left["y"] - right["y"]) < 5
    assert page.evaluate("document.documentElement.scrollHeight") <= 1080  # the page itself does not scroll
    assert results.evaluate("el => el.scrollHeight > el.clientHeight && getComputedStyle(el).overflowY") == "auto"
    results.evaluate("el => el.scrollTop = 400")
    assert editor.bounding_box()["y"] == left["y"]  # the editor stays where it was
    context.close()


def test_the_editor_text_size_follows_the_setting_and_is_kept(page: Page):
    open_example(page, "simple-gpu")
    content = page.locator("#editor .cm-content")
    expect(content).to_have_css("font-size", "13px")

    page.get_by_label("Editor text size").select_option("24")
    expect(content).to_have_css("font-size", "24px")
    page.goto("/?example=simple-gpu")
    expect(page.locator("#editor .cm-content")).to_have_css("font-size", "24px")
    page.get_by_label("Editor text size").select_option("")
    expect(page.locator("#editor .cm-content")).to_have_css("font-size", "13px")


def test_presenter_mode_has_big_type_and_survives_a_rerun(page: Page):
    page.goto("/?example=simple-gpu&present=1")
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    html = page.locator("html")
    expect(html).to_have_class(re.compile(r"\bpresent\b"))
    expect(page.locator("body")).to_have_css("font-size", "20px")
    expect(page.locator("#editor .cm-content")).to_have_css("font-size", "22px")

    replace_in_editor(page, "40Gi", "16Gi", after="quantity(")
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")
    expect(html).to_have_class(re.compile(r"\bpresent\b"))
    page.get_by_role("link", name="Leave presenter mode").click()
    expect(html).not_to_have_class(re.compile(r"\bpresent\b"))


# ---- 10. the first visit -------------------------------------------------------------------

def test_the_first_visit_says_what_the_tool_does_and_allocates(page: Page):
    page.goto("/")
    expect(page.locator(".tagline")).to_contain_text("DRA allocator would pick")
    expect(outcome(page)).to_contain_text("✔ Allocated on node worker-1")


# ---- 11. not found, and the API's methods and bodies ---------------------------------------

@pytest.mark.parametrize("path", ["/?example=no-such-example", "/s/aaaaaaaaaa", "/s/aaaaaaaaaa/embed"])
def test_unknown_examples_and_shares_get_the_sites_404_page(page: Page, path: str):
    response = page.goto(path)
    assert response.status == 404
    expect(page.locator("header.topbar")).to_be_visible()
    expect(page.locator("h1")).to_have_text("Not found")
    page.get_by_role("link", name="Open the playground").click()
    expect(outcome(page)).to_be_visible()


def test_the_allocate_api_answers_get_with_405_json_and_takes_a_json_body(page: Page):
    get = page.request.get("/api/v1/allocate")
    assert get.status == 405 and get.headers["allow"] == "POST"
    assert get.json()["message"]

    body = {"scenario": gallery.get("simple-gpu").scenario, "node": "worker-1",
            "gates": {"scheduler": {"DRAConsumableCapacity": False}}}
    post = page.request.post("/api/v1/allocate", data=json.dumps(body), headers={"Content-Type": "application/json"})
    assert post.status == 200 and post.json()["outcome"] == "allocated"
    assert post.json()["node"] == "worker-1"


# ---- 12. link previews, shared examples ----------------------------------------------------

def test_a_shared_link_has_a_preview_title_and_description(page: Page):
    created = page.request.post("/api/v1/scenarios", data=PASTED, headers={"Content-Type": "application/yaml"}).json()
    page.goto(created["url"])
    expect(page.locator('meta[property="og:title"]')).to_have_attribute("content", "A pasted scenario: one GPU on gpu-node.")
    expect(page.locator('meta[property="og:description"]')).to_have_attribute(
        "content", re.compile(r"1 DeviceClass, 1 ResourceSlice, 1 ResourceClaim"))
    expect(page.locator('meta[property="og:url"]')).to_have_attribute("content", created["url"])


def test_a_shared_example_keeps_its_notes(page: Page):
    example = gallery.get("distinct-numa")
    created = page.request.post("/api/v1/scenarios", data=example.scenario,
                                headers={"Content-Type": "application/yaml"}).json()
    page.goto(created["url"])
    expect(page.locator(".example-info")).to_contain_text(example.summary[:40])
    expect(page.locator('meta[property="og:title"]')).to_have_attribute("content", example.title)


# ---- 13. embeds in slides opened from disk -------------------------------------------------

def test_an_embed_shows_in_slides_opened_from_a_file(page: Page, tmp_path):
    created = page.request.post("/api/v1/scenarios", data=gallery.get("simple-gpu").scenario,
                                headers={"Content-Type": "application/yaml"}).json()
    slides = tmp_path / "slides.html"
    slides.write_text(f'<!doctype html><h1>Slide</h1><iframe src="{created["embed"]}" width="900" height="600"></iframe>')
    page.goto(slides.as_uri())
    frame = page.frame_locator("iframe")
    expect(frame.locator(".outcome h2")).to_contain_text("Allocated on node worker-1")


# ---- 14. refusals and the page without JavaScript ------------------------------------------

def test_a_refused_share_suggests_a_link_without_storing(page: Page, settings):
    settings.SHARE_RATE_LIMIT = "1/600"
    cache.clear()
    open_example(page, "simple-gpu")
    share = page.get_by_role("button", name="Share", exact=True)
    share.click()
    expect(page.locator("#share-url")).to_be_visible()
    share.click()
    refusal = page.locator("#share-result .share-error")
    expect(refusal).to_contain_text("Too many shares")
    expect(refusal).to_contain_text("Link without storing")
    cache.clear()


def test_without_javascript_nothing_promises_what_needs_it(browser: Browser, base_url: str):
    context = browser.new_context(java_script_enabled=False, base_url=base_url)
    page = context.new_page()
    page.goto("/?example=simple-gpu")
    expect(page.locator("#theme-toggle")).to_be_hidden()
    legend = page.locator("p.legend")
    assert "update as you type" not in legend.inner_text()
    assert "Press Allocate" in legend.inner_text()
    expect(page.locator("#font-size")).to_be_hidden()
    context.close()


# ---- screenshots at the three sizes --------------------------------------------------------

@pytest.mark.parametrize("size", VIEWPORTS)
def test_screenshots_at_each_size(browser: Browser, base_url: str, size: str):
    width, height = VIEWPORTS[size]
    context = browser.new_context(viewport={"width": width, "height": height}, base_url=base_url)
    page = context.new_page()
    page.goto("/")
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect(outcome(page)).to_contain_text("Allocated")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page_screenshot(page, f"newcomer--first-visit--{size}", full_page=False)

    page.locator("#examples-menu summary").click()
    expect(page.locator("#examples-menu ul")).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page_screenshot(page, f"newcomer--examples-menu--{size}", full_page=False)
    page.locator("#examples-menu summary").click()

    set_editor_text(page, gallery.get("simple-gpu").scenario.replace(
        "        deviceClassName: gpu.example.com", "        cuont: 1\n        deviceClassName: gpu.example.com"))
    expect(page.locator("#editor .cm-lint-marker-warning")).to_have_count(1)
    page_screenshot(page, f"newcomer--warning-marked--{size}", full_page=False)

    set_editor_text(page, "")
    expect(outcome(page)).to_have_text("Nothing to allocate yet")
    page_screenshot(page, f"newcomer--empty--{size}", full_page=False)

    set_editor_text(page, PASTED)
    expect(page.locator("#results .node-dropped")).to_be_visible()  # the example's node is not kept
    page_screenshot(page, f"newcomer--pasted-unknown-node--{size}")

    page.goto("/?example=mig-8-gpu&present=1")
    expect(outcome(page)).to_be_visible()
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    page_screenshot(page, f"newcomer--presenter-mig-8-gpu--{size}", full_page=False)

    page.goto("/?example=nope")
    page_screenshot(page, f"newcomer--not-found--{size}", full_page=False)
    context.close()


def test_reset_to_the_example_never_reads_back_the_draft_left_for_a_reload(page: Page):
    # Leaving a page keeps its draft in session storage for a reload of the same address. Reset to the
    # example links to that same address when the address bar holds no draft yet (a click right after an
    # edit, before the draft is saved there): it must bring the example's own text, not the edit.
    open_example(page, "simple-gpu")
    replace_in_editor(page, "40Gi", "16Gi", after="quantity(")
    href = page.get_by_role("link", name="Reset to the example").evaluate("(a) => a.href")
    page.evaluate("""([url, text]) => sessionStorage.setItem("dra-draft-leaving",
        JSON.stringify({ url, draft: { scenario: text, example: "simple-gpu" } }))""",
                  [href, gallery.get("simple-gpu").scenario.replace("40Gi", "16Gi")])
    page.get_by_role("link", name="Reset to the example").click()
    expect(page.locator(".example-info")).to_contain_text("Look at")
    page.wait_for_timeout(300)  # a draft is restored, when it is, in a task after the page's set-up
    expect(page.locator("#scenario")).to_have_value(gallery.get("simple-gpu").scenario)
