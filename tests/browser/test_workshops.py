"""A full lesson in a real browser: a wrong attempt, Hint, Reset, the right edit, a reload, the next step;
and the compare view of version skew."""
import re
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from .helpers import outcome, replace_in_editor, screenshot  # noqa: E402

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]
LESSON = "/workshops/dra-in-90-minutes/3"
SKEW = "/workshops/dra-in-90-minutes/9"


def at(path: str):
    """The page at `path`; the playground may keep the attendee's text in a `#s=` fragment."""
    return re.compile(re.escape(path) + r"(#.*)?$")


def open_lesson(page: Page, url: str) -> None:
    page.goto(url)
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect(page.locator("#lesson")).to_be_visible()


def expect_text(page: Page, present: str, absent: str | None = None) -> None:
    """Wait for the whole text (CodeMirror draws only the lines in view and copies every edit into the textarea)."""
    page.wait_for_function("([p, a]) => { const area = document.getElementById('scenario');"
                           " if (!area) return false; const v = area.value;"
                           " return v.includes(p) && (!a || !v.includes(a)); }", arg=[present, absent])


def test_a_full_lesson(page: Page):
    open_lesson(page, LESSON)
    expect(page.locator(".lesson-title")).to_have_text("3. Why is my claim pending?")
    expect(outcome(page)).to_contain_text("Cannot allocate")

    # A wrong attempt: the failing check says what is wrong.
    replace_in_editor(page, "count: 4", "count: 5")
    page.get_by_role("button", name="Check").click()
    failed = page.locator("#check-result li.check-failed")
    expect(failed.first).to_contain_text("jax-test is still pending:")  # and the engine's why headline
    expect(failed.first).to_contain_text("default/jax-test")
    expect(page.locator("#check-result .check-passed")).to_have_count(0)

    # Hints come one at a time.
    hints = page.locator("#lesson-hints li")
    expect(page.locator("#lesson-hints")).to_be_hidden()
    page.get_by_role("button", name="Hint").click()
    expect(hints.nth(0)).to_be_visible()
    expect(hints.nth(1)).to_be_hidden()
    page.get_by_role("button", name="Next hint (1/2)").click()
    expect(hints.nth(1)).to_contain_text("How many chips are left")

    # Reset puts the start back.
    page.get_by_role("link", name="Reset this step").click()
    expect_text(page, "count: 4", "count: 5")

    # The right edit passes.
    replace_in_editor(page, "count: 4", "count: 3")
    expect(outcome(page)).to_contain_text("Allocated on node tpu-node-1")
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check-result .check-passed")).to_contain_text("All checks pass.")
    expect(page.locator("#check-result li.check-failed")).to_have_count(0)
    screenshot(page.locator("#lesson"), "workshop-lesson-passed")

    # A reload keeps the attendee's text.
    page.reload()
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect_text(page, "count: 3", "count: 4")
    expect(outcome(page)).to_contain_text("Allocated on node tpu-node-1")

    # Alt+→ opens the next step; the overview remembers the passed step.
    page.keyboard.press("Alt+ArrowRight")
    expect(page).to_have_url(at("/workshops/dra-in-90-minutes/4"))
    expect(page.locator(".lesson-title")).to_have_text("4. CEL selectors and attributes")
    expect(page.locator("#editor .cm-editor")).to_be_visible()  # the page's scripts have run
    page.keyboard.press("Alt+ArrowLeft")
    expect(page).to_have_url(at(LESSON))
    expect(page.locator("#editor .cm-editor")).to_be_visible()  # its scripts have run and noted the step
    page.goto("/workshops/dra-in-90-minutes/")
    expect(page.locator('.lesson-list li[data-step="3"] .lesson-done')).to_be_visible()
    expect(page.locator('.lesson-list li[data-step="1"] .lesson-done')).to_be_hidden()
    expect(page.locator(".workshop-progress")).to_contain_text("step 3 of 13")
    page.get_by_role("link", name="Continue at step 3").click()
    expect(page).to_have_url(at(LESSON))
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect_text(page, "count: 3", "count: 4")


def test_show_solution_puts_the_settings_in_the_form(page: Page):
    open_lesson(page, SKEW)
    expect(outcome(page)).to_contain_text("Cannot allocate")
    page.locator(".lesson-solution summary").click()
    page.get_by_role("button", name="Put the solution in the editor").click()
    expect(page.get_by_label("DRADeviceCompatibilityGroups on kube-scheduler")).to_be_checked()
    expect(outcome(page)).to_contain_text("Allocated on node gpu-node-1")
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check-result .check-passed")).to_be_visible()


def test_presenter_mode_enlarges_the_lesson(page: Page):
    open_lesson(page, "/workshops/dra-in-90-minutes/1?present=1")
    expect(page.locator("html")).to_have_class(re.compile(r"\bpresent\b"))
    expect(page.locator(".lesson-title")).to_have_css("font-size", "48.4px")  # 2.2rem of presenter mode's 22px root
    expect(page.get_by_role("link", name="Next →")).to_have_attribute("href", "/workshops/dra-in-90-minutes/2?present=1")


def test_compare_view_of_version_skew(page: Page):
    open_lesson(page, SKEW)
    in_lesson = page.locator("#lesson-comparison")  # the lesson opens in compare mode
    expect(in_lesson.locator("#side-a .pools")).to_contain_text("incomplete")
    expect(in_lesson.locator("#side-b .pools")).not_to_contain_text("incomplete")
    screenshot(in_lesson, "lesson-in-compare-mode")
    page.get_by_role("link", name="Open in compare").click()
    side_a, side_b = page.locator("#side-a"), page.locator("#side-b")
    expect(side_a.locator(".pools")).to_contain_text("incomplete")
    expect(side_b.locator(".pools")).not_to_contain_text("incomplete")
    expect(side_a).to_contain_text("Cannot allocate")
    expect(side_b).to_contain_text("Allocated on node gpu-node-1")
    expect(page.locator("#differences tr.diff-pool")).to_contain_text("incomplete")
    screenshot(page.locator("#differences"), "compare-version-skew")

    # The link holds both sides.
    link = page.get_by_role("link", name="Link to this comparison").get_attribute("href")
    page.goto(link)
    expect(page.locator("#side-a .pools")).to_contain_text("incomplete")


def test_an_instructors_workshop_is_linted_shared_and_run_from_its_link(page: Page):
    tiny = (Path(__file__).resolve().parents[1] / "workshops" / "files" / "tiny.yaml").read_text()
    page.goto("/workshops/")
    page.get_by_role("link", name="share it").click()

    # A mistake comes back at its line, with the text kept.
    page.locator("#workshop-text").fill(tiny.replace("- claim: single-gpu", "- claim: nope"))
    page.get_by_role("button", name="Lint and share").click()
    expect(page.locator(".workshop-problems")).to_contain_text("(lesson 1): the claim check names claim default/nope")

    page.locator("#workshop-text").fill(tiny)
    page.get_by_role("button", name="Lint and share").click()
    expect(page).to_have_url(re.compile(r"/w/[a-z2-7]{10}$"))
    page.get_by_role("link", name="Take the smaller GPU").click()
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check-result li.check-failed")).to_contain_text("The claim should get gpu-0.")
    replace_in_editor(page, '"40Gi"', '"16Gi"')
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.get_by_role("button", name="Check").click()
    expect(page.locator("#check-result .check-passed")).to_contain_text("That was the last step.")


def test_reset_puts_back_the_lessons_versions_and_their_gate_values(page: Page, tmp_path, monkeypatch):
    """A lesson that emulates 1.35: Reset puts the version select back and the gates at their 1.35
    defaults (DRAPartitionableDevices off there), not at the 1.37 binary's."""
    from allocator.workshops import library

    tiny = (Path(__file__).resolve().parents[1] / "workshops" / "files" / "tiny.yaml").read_text()
    (tmp_path / "emulated.yaml").write_text(
        tiny.replace("  node: worker-1\n", '  node: worker-1\n  versions: {emulated: "1.35"}\n', 1))
    monkeypatch.setattr(library, "SHIPPED_DIR", tmp_path)
    library.clear()
    try:
        open_lesson(page, "/workshops/emulated/1")
        select = page.locator('select[name="emulated-scheduler"]')
        box = page.get_by_label("DRAPartitionableDevices on kube-scheduler")
        expect(select).to_have_value("1.35")
        expect(box).not_to_be_checked()
        if not page.locator("details.gates").evaluate("d => d.open"):
            page.locator("details.gates > summary").click()
        select.select_option("")  # the binary's own version, 1.37
        box.check()
        page.get_by_role("link", name="Reset this step").click()
        expect(page.locator('select[name="emulated-scheduler"]')).to_have_value("1.35")
        expect(page.get_by_label("DRAPartitionableDevices on kube-scheduler")).not_to_be_checked()
    finally:
        library.clear()


def test_a_lessons_large_text_typed_into_is_kept_for_the_next_visit(page: Page):
    # A run of a text over 512 KB sends the editor's text without copying it into the form's
    # textarea; the lesson's progress must still be the text the attendee typed.
    from scripts.bench_browser import big_document

    from .helpers import click_in_editor, editor_text, put_in_editor

    open_lesson(page, LESSON)
    put_in_editor(page, big_document(600_000))
    click_in_editor(page)
    page.keyboard.type("# typed at the end")
    page.wait_for_timeout(1000)  # typing rests: the lesson saves its progress

    open_lesson(page, LESSON)  # a new visit (not a reload: the draft of the tab's history plays no part)
    page.wait_for_function("() => window.playgroundEditor && window.playgroundEditor.text().endsWith('# typed at the end')")
    assert editor_text(page).endswith("# typed at the end")
