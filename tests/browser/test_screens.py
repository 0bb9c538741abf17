"""Issue 24 items 3 and 4 in Chromium: the replay of a real search, lessons at 1280×720, presenter mode at
1920×1080, phones at 390×844, the keyboard and screen readers, the device map's marks; and screenshots of
the playground, a lesson and the compare page at four screen sizes."""
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from .helpers import SCREENSHOTS, open_example, outcome, replace_in_editor  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LESSON = "/workshops/dra-in-90-minutes/3"
SKEW_LESSON = "/workshops/dra-in-90-minutes/9"

PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 720}
DESKTOP = {"width": 1440, "height": 900}
PROJECTOR = {"width": 1920, "height": 1080}


# ---- what a user sees, measured in the page ----

def horizontal_overflow(page: Page) -> int:
    """How many pixels the page is wider than the window (0: nothing to scroll sideways)."""
    return page.evaluate("document.documentElement.scrollWidth - window.innerWidth")


def in_viewport(page: Page, selector: str) -> float:
    """The height in pixels of the element's part that is inside the window (0: off-screen)."""
    return page.evaluate("""(selector) => { const n = document.querySelector(selector); if (!n) return 0;
        const r = n.getBoundingClientRect(); if (r.width === 0 || r.height === 0) return 0;
        const top = Math.max(r.top, 0), bottom = Math.min(r.bottom, window.innerHeight);
        const left = Math.max(r.left, 0), right = Math.min(r.right, window.innerWidth);
        return right > left && bottom > top ? bottom - top : 0; }""", selector)


def editor_lines_in_view(page: Page) -> int:
    """How many of the editor's lines a user sees without scrolling."""
    return page.evaluate("""() => { const lines = document.querySelectorAll('#editor .cm-line');
        return [...lines].filter(l => { const r = l.getBoundingClientRect();
          return r.height > 0 && r.top >= 0 && r.bottom <= window.innerHeight && r.left < window.innerWidth; }).length; }""")


def step(page: Page) -> int:
    return int(page.locator("#panel-replay [data-replay-scrub]").input_value())


def rerun(page: Page) -> None:
    """A re-run as the page's own triggers start one, then wait for its results to be swapped in."""
    page.evaluate("""() => new Promise(done => {
        document.body.addEventListener('htmx:afterSettle', () => done(), { once: true });
        htmx.trigger(document.getElementById('playground'), 'run'); })""")


MIG = (Path(__file__).resolve().parents[2] / "allocator" / "examples" / "mig-8-gpu.yaml").read_text()
# The real search: the notebook's "medium" request asks for two 3g.20gb slices (558 steps).
MEDIUM = "    - name: medium\n      exactly:\n        deviceClassName: mig.nvidia.example.com\n"
assert MEDIUM in MIG
MIG_COUNT_2 = MIG.replace(MEDIUM, MEDIUM + "        count: 2\n")


def open_real_search(page: Page) -> None:
    """mig-8-gpu with `count: 2` on the medium request, put in the editor as a `#s=` link's text is."""
    open_example(page, "mig-8-gpu")
    page.evaluate("""(text) => new Promise(done => {
        document.body.addEventListener('htmx:afterSettle', () => done(), { once: true });
        const area = document.getElementById('scenario'); area.value = text;
        area.dispatchEvent(new Event('playground:scenario-replaced'));
        htmx.trigger(document.getElementById('playground'), 'run'); })""", MIG_COUNT_2)
    expect(page.locator("#panel-replay")).to_be_visible()


def open_lesson(page: Page, url: str = LESSON) -> None:
    page.goto(url)
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect(page.locator("#lesson")).to_be_visible()


def compare_url(page: Page) -> str:
    open_lesson(page, SKEW_LESSON)
    return page.get_by_role("link", name="Open in compare").get_attribute("href")


# ---- 1. the replay ----

def test_the_replay_plays_jumps_to_backtracks_and_keeps_the_tile_in_view(page: Page):
    open_real_search(page)
    replay = page.locator("#panel-replay")
    expect(replay).to_be_visible()
    total = int(replay.locator("[data-replay-scrub]").get_attribute("max"))
    assert total > 400, f"mig-8-gpu with count: 2 should replay a long search, got {total} steps"

    # The timeline marks every backtrack.
    timeline = replay.locator("[data-replay-timeline]")
    expect(timeline).to_have_attribute("data-backtracks", re.compile(r"^\d+$"))  # drawn once in view (replay.js)
    backtracks = int(timeline.get_attribute("data-backtracks"))
    assert backtracks > 0
    expect(timeline.locator(".mark:not(.mark-done)")).to_have_count(backtracks)

    # Next backtrack: a pick given up again, and the tile it was about is on screen under the sticky controls.
    replay.get_by_role("button", name="Next backtrack").click()
    expect(replay.locator("[data-replay-text]")).to_contain_text("given up again")
    first = step(page)
    assert first > 1
    current = replay.locator(".tile-current")
    expect(current).to_have_count(1)
    expect(current).to_be_in_viewport()
    head = replay.locator("[data-replay-head]").bounding_box()
    tile = current.bounding_box()
    assert tile["y"] >= head["y"] + head["height"] - 1, "the considered tile is hidden under the replay's controls"
    replay.get_by_role("button", name="Next backtrack").click()
    second = step(page)
    assert second > first
    replay.get_by_role("button", name="Previous backtrack").click()
    assert step(page) == first

    # Next rejection and next pick land on steps of those kinds.
    replay.get_by_role("button", name="Next rejection").click()
    expect(replay.locator("[data-replay-text]")).to_contain_text("rejected")
    replay.get_by_role("button", name="Next pick").click()
    expect(replay.locator("[data-replay-text]")).to_contain_text("picked.")
    expect(replay.locator(".tile-current")).to_be_in_viewport()

    # Play at the fastest speed runs on by itself; Pause stops it.
    replay.get_by_label("Speed").select_option(label="fastest")
    replay.get_by_role("button", name="Play").click()
    expect(replay.get_by_role("button", name="Pause")).to_have_attribute("aria-pressed", "true")
    at = step(page)
    page.wait_for_function("(at) => +document.querySelector('#panel-replay [data-replay-scrub]').value > at + 20", arg=at)
    replay.get_by_role("button", name="Pause").click()
    paused = step(page)
    page.wait_for_timeout(300)
    assert step(page) == paused
    expect(replay.locator(".tile-current")).to_be_in_viewport()


def test_the_replay_keeps_its_step_when_the_search_did_not_change_and_starts_over_when_it_did(page: Page):
    open_real_search(page)
    replay = page.locator("#panel-replay")
    replay.get_by_role("button", name="Next backtrack").click()
    replay.get_by_role("button", name="Next backtrack").click()
    kept = step(page)
    assert kept > 0

    # A comment changes the text, not the search: the same step after the re-run.
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+End")
    page.keyboard.type("\n# a note\n")
    page.wait_for_function("() => document.getElementById('scenario').value.includes('# a note')")
    rerun(page)
    expect(page.locator("#panel-replay [data-replay-position]")).to_contain_text(f"step {kept} of")
    assert step(page) == kept

    # Asking for one device instead of two is another search: back to the start.
    replace_in_editor(page, "count: 2", "count: 1", after="name: medium")
    expect(page.locator("#panel-replay [data-replay-position]")).to_contain_text("step 0 of")


# ---- 2. lessons ----

def test_a_lesson_at_1280x720_shows_the_editor_and_check_and_checks_from_the_keyboard(page: Page):
    page.set_viewport_size(LAPTOP)
    open_lesson(page)
    expect(page.locator("h1")).to_have_count(1)
    assert editor_lines_in_view(page) >= 8, "the editor shows too few lines under the lesson"
    check = page.get_by_role("button", name="Check")
    expect(check).to_be_in_viewport()
    expect(page.locator(".lesson-keys")).to_contain_text("Shift")

    # Scrolling the scenario pane down to the gates keeps Check on screen.
    page.locator(".editor-pane").evaluate("pane => pane.scrollTop = pane.scrollHeight")
    expect(check).to_be_in_viewport()

    # Folding the lesson text gives the editor the room.
    page.locator(".editor-pane").evaluate("pane => pane.scrollTop = 0")
    before = editor_lines_in_view(page)
    page.locator(".lesson-body > summary").click()
    expect(page.locator(".lesson-text")).to_be_hidden()
    page.wait_for_timeout(200)  # CodeMirror draws the lines the taller editor shows
    assert editor_lines_in_view(page) > before

    # Ctrl+Shift+Enter checks from inside the editor.
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+Shift+Enter")
    expect(page.locator("#check-result li").first).to_be_visible()
    expect(page.locator("#editor .cm-content")).to_be_focused()


# ---- 3. presenter mode ----

def test_presenter_mode_at_1920x1080_sets_results_at_24px_with_the_editor_on_screen(page: Page):
    page.set_viewport_size(PROJECTOR)
    page.goto("/?example=mig-8-gpu&present=1")
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect(outcome(page)).to_be_visible()
    smallest = page.evaluate("""() => { let min = Infinity, where = '';
        const walker = document.createTreeWalker(document.getElementById('results'), NodeFilter.SHOW_TEXT);
        while (walker.nextNode()) { const t = walker.currentNode; if (!t.textContent.trim()) continue;
          const n = t.parentElement; if (!n.getClientRects().length) continue;
          const size = parseFloat(getComputedStyle(n).fontSize); if (size < min) { min = size; where = n.outerHTML.slice(0, 120); } }
        return [min, where]; }""")
    assert smallest[0] >= 24, f"results text at {smallest[0]} px: {smallest[1]}"
    assert in_viewport(page, "#editor") > 300
    assert editor_lines_in_view(page) >= 10


# ---- 4. phones ----

def test_on_a_phone_tabs_switch_between_scenario_results_and_gates(page: Page):
    page.set_viewport_size(PHONE)
    open_example(page, "mig-8-gpu")
    tabs = page.get_by_role("tablist")
    expect(tabs.get_by_role("tab")).to_have_count(3)
    expect(tabs.get_by_role("tab", name="Scenario")).to_have_attribute("aria-selected", "true")
    assert in_viewport(page, "#editor") > 200
    expect(page.locator("details.gates")).to_be_hidden()
    expect(outcome(page)).not_to_be_in_viewport()  # under the editor, as the stacked page has it

    tabs.get_by_role("tab", name=re.compile("Results")).click()
    expect(outcome(page)).to_be_in_viewport()
    expect(page.locator("#editor")).to_be_hidden()
    expect(tabs.get_by_role("tab", name=re.compile("Results"))).to_contain_text("✔")

    tabs.get_by_role("tab", name="Feature gates").click()
    row = page.locator(".gates tr.gate-row").first
    expect(row).to_be_visible()
    name, box = row.locator("th").bounding_box(), row.locator("input").first.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"], "a gate checkbox sits off the screen"
    assert 0 <= box["y"] - (name["y"] + name["height"]) < 30, "a gate checkbox is not next to its name"
    expect(row.locator("td").first).to_have_attribute("data-label", re.compile(r"\S"))
    assert horizontal_overflow(page) <= 0

    # Arrow keys move between tabs, as a tab list does.
    tabs.get_by_role("tab", name="Feature gates").press("ArrowLeft")
    expect(tabs.get_by_role("tab", name=re.compile("Results"))).to_be_focused()
    expect(outcome(page)).to_be_visible()


def test_on_a_phone_the_compare_page_is_one_column_and_fits(page: Page):
    url = compare_url(page)
    page.set_viewport_size(PHONE)
    page.goto(url)
    a, b = page.locator("#side-a").bounding_box(), page.locator("#side-b").bounding_box()
    assert a["x"] == b["x"] and b["y"] >= a["y"] + a["height"], "the sides are not one above the other"
    assert horizontal_overflow(page) <= 0
    row = page.locator(".compare-form .gates tr.gate-row").first
    box = row.locator("input").first.bounding_box()
    assert box["x"] + box["width"] <= PHONE["width"]


def test_without_javascript_a_phone_gets_the_stacked_page(browser, base_url):
    context = browser.new_context(java_script_enabled=False, viewport=PHONE, base_url=base_url)
    page = context.new_page()
    page.goto("/?example=mig-8-gpu")
    expect(page.locator(".phone-tabs")).to_have_count(0)
    expect(page.locator("#scenario")).to_be_visible()
    expect(page.locator("#results .outcome h2")).to_be_visible()
    context.close()


# ---- 5. keyboard and screen readers ----

def test_focus_stays_on_a_results_control_across_a_rerun(page: Page):
    open_real_search(page)
    button = page.locator("#panel-replay").get_by_role("button", name="Next backtrack")
    button.focus()
    page.keyboard.press("Enter")
    rerun(page)
    expect(page.locator("#panel-replay").get_by_role("button", name="Next backtrack")).to_be_focused()
    assert page.evaluate("document.activeElement !== document.body")
    # And in the editor, typing's re-run leaves the caret where it was.
    page.locator("#editor .cm-content").click()
    page.keyboard.type("# x\n")
    rerun(page)
    expect(page.locator("#editor .cm-content")).to_be_focused()


def test_only_the_headline_is_announced_and_a_skip_link_leads_to_the_content(page: Page):
    open_example(page, "mig-8-gpu")
    expect(page.locator("h1")).to_have_count(1)  # the playground's, as a lesson's (tested with the lesson)
    expect(page.locator("#results")).not_to_have_attribute("aria-live", re.compile("."))
    expect(page.locator("[aria-live] #results, #results[aria-live]")).to_have_count(0)
    rerun(page)
    announce = page.locator("#announce")
    expect(announce).to_have_attribute("aria-live", "polite")
    expect(announce).to_have_text(re.compile(r"^\s*✔ Allocated on node \S+\s*$"))

    page.reload()
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    page.keyboard.press("Tab")
    skip = page.get_by_role("link", name="Skip to the content")
    expect(skip).to_be_focused()
    expect(skip).to_be_in_viewport()
    page.keyboard.press("Enter")
    expect(page.locator("main")).to_be_focused()


# ---- 6. the device map tells its states by mark and size, not only by small words ----

def test_every_tile_state_has_its_own_mark_at_12px_or_more(page: Page):
    open_example(page, "mig-8-gpu")
    marks = page.evaluate("""() => { const seen = {};
        document.querySelectorAll('#results .tile').forEach(t => {
          const state = [...t.classList].find(c => c.startsWith('tile-') && c !== 'tile-current');
          const small = t.querySelector('small');
          seen[state] = [getComputedStyle(small, '::before').content, parseFloat(getComputedStyle(small).fontSize)]; });
        return seen; }""")
    assert len(marks) >= 3, marks
    for state, (mark, size) in marks.items():
        assert mark not in ("none", "normal", '""'), f"{state} has no mark"
        assert size >= 12, f"{state}'s word is {size} px"
    by_mark = {}
    for state, (mark, _) in marks.items():
        by_mark.setdefault(mark, []).append(state)
    assert all(len(states) == 1 for states in by_mark.values()), f"two states share a mark: {by_mark}"


# ---- 7. screenshots at four sizes ----

SIZES = [("phone", PHONE, False), ("laptop", LAPTOP, False), ("desktop", DESKTOP, False), ("presenter", PROJECTOR, True)]


@pytest.mark.parametrize("name, size, present", SIZES, ids=[s[0] for s in SIZES])
def test_screenshots_without_overflow_and_with_the_editor_in_view(page: Page, name, size, present):
    query = "?present=1" if present else ""
    compare = compare_url(page)
    page.set_viewport_size(size)
    pages = [("playground", "/?example=mig-8-gpu" + ("&present=1" if present else ""), True),
             ("lesson", LESSON + query, True),
             ("compare", compare + ("&present=1" if present and "?" in compare else query), False)]
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    for what, url, has_editor in pages:
        page.goto(url)
        if has_editor:
            expect(page.locator("#editor .cm-editor")).to_be_visible()
            expect(outcome(page)).to_have_count(1)
        page.screenshot(path=SCREENSHOTS / f"screens-{what}-{name}-{size['width']}x{size['height']}.png",
                        animations="disabled")
        assert horizontal_overflow(page) <= 0, f"{what} at {size}: {horizontal_overflow(page)} px too wide"
        if has_editor:
            assert in_viewport(page, "#editor") > 0, f"{what} at {size}: the editor is off-screen"
            assert editor_lines_in_view(page) >= 5, f"{what} at {size}: under 5 editor lines in view"
