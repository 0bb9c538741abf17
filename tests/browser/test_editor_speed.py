"""Typing at speed: the wait before a run follows the server, an older answer never paints over a
newer one, and the draft is kept from the moment of typing. Timings are measured by
scripts/bench_browser.py, not asserted here."""
import re
import threading
import time
from urllib.parse import urlparse

import pytest

pytest.importorskip("playwright")

from django.core.signals import request_started  # noqa: E402
from playwright.sync_api import Page, expect  # noqa: E402

from .helpers import click_in_editor, editor_text, open_example, outcome, put_in_editor, replace_in_editor  # noqa: E402

pytestmark = pytest.mark.browser


class SlowRuns:
    """A real delay in the live server: the next `count` runs of the playground form (POST /) sleep
    `seconds` before Django handles them; the request and its answer are otherwise untouched."""

    def __init__(self):
        self.lock = threading.Lock()
        self.count = 0
        self.seconds = 0.0
        self.started = threading.Event()

    def slow_next(self, count: int, seconds: float) -> None:
        with self.lock:
            self.count, self.seconds = count, seconds
            self.started.clear()

    def __call__(self, sender, environ=None, **kwargs):
        if not environ or environ.get("REQUEST_METHOD") != "POST" or environ.get("PATH_INFO") != "/":
            return
        with self.lock:
            if self.count <= 0:
                return
            self.count -= 1
            seconds = self.seconds
        self.started.set()
        time.sleep(seconds)


@pytest.fixture
def slow_runs():
    hook = SlowRuns()
    request_started.connect(hook, weak=False)
    yield hook
    request_started.disconnect(hook)


def run_wait(page: Page) -> int:
    return page.evaluate("window.playgroundRuns.wait()")


def test_an_older_answer_never_paints_over_a_newer_one(page: Page, slow_runs):
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")

    slow_runs.slow_next(1, 2.5)
    replace_in_editor(page, '"40Gi"', '"400Gi"')  # no GPU has 400Gi: this answer would say "Cannot allocate"
    assert slow_runs.started.wait(10), "the edit never reached the server"
    replace_in_editor(page, '"400Gi"', '"16Gi"')  # typed while that slow answer is still on its way

    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")
    page.wait_for_timeout(3000)  # the slow answer has come back by now
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")


def run_and_wait(page: Page) -> None:
    answered = page.evaluate("window.playgroundRuns.answered()")
    page.evaluate("window.playgroundRuns.runNow()")
    deadline = time.monotonic() + 10
    while page.evaluate("window.playgroundRuns.answered()") <= answered:
        assert time.monotonic() < deadline, "the run was never answered"
        page.wait_for_timeout(20)


def expected_wait(round_trips: list) -> int:
    median = sorted(round_trips)[len(round_trips) // 2]
    return round(min(400, max(40, median)))


def test_the_wait_before_a_run_grows_for_slow_answers_and_shrinks_for_fast_ones(page: Page, slow_runs):
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")

    slow_runs.slow_next(5, 1.5)
    for _ in range(5):
        run_and_wait(page)
    slow = page.evaluate("window.playgroundRuns.roundTrips()")
    assert run_wait(page) == 400 == expected_wait(slow)  # 600 ms or more, held at the longest wait

    for _ in range(5):
        run_and_wait(page)
    fast = page.evaluate("window.playgroundRuns.roundTrips()")
    assert max(fast) < min(slow)  # only answers without the delay are remembered now
    assert run_wait(page) == expected_wait(fast)  # below 400 ms once the machine answers within 200 ms

    replace_in_editor(page, '"40Gi"', '"16Gi"')
    # The edit waits the short wait (its first key may have run at once and added a round trip meanwhile).
    assert int(page.locator("#playground").get_attribute("data-run-wait")) < 400
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")


def test_a_reload_right_after_typing_keeps_the_edit(page: Page):
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    replace_in_editor(page, "single-gpu", "kept-draft")
    page.wait_for_timeout(200)
    page.reload()
    expect(page.locator("#scenario")).to_have_value(re.compile("kept-draft"))
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    assert "kept-draft" in editor_text(page)


def test_typing_copies_the_text_into_the_form_once_per_pause_not_per_key(page: Page):
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.evaluate("""() => {
      window.copies = 0;
      document.getElementById("scenario").addEventListener("input", () => { window.copies++; });
    }""")
    click_in_editor(page)
    keys = "# a note typed at speed"
    page.keyboard.type(keys)
    expect(page.locator("#results")).to_have_attribute("data-error-lines", "[]")
    page.wait_for_timeout(500)
    assert page.locator("#scenario").input_value().endswith(keys)  # copied before the run read it
    assert page.evaluate("window.copies") < len(keys) / 2


def test_a_draft_is_saved_with_one_history_write_per_pause(page: Page):
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.evaluate("""() => {
      window.historyWrites = 0;
      const write = history.replaceState.bind(history);
      history.replaceState = (...args) => { window.historyWrites++; return write(...args); };
    }""")
    click_in_editor(page)
    page.keyboard.type("# one pause")
    expect(page.locator("#results")).to_have_attribute("data-error-lines", "[]")
    page.wait_for_function("() => history.state && history.state.draft && "
                           "history.state.draft.scenario.endsWith('# one pause')")
    page.wait_for_timeout(600)
    assert page.evaluate("window.historyWrites") == 1


def test_a_text_over_512_kb_is_edited_as_plain_text_so_a_key_does_not_reparse_it(page: Page):
    from scripts.bench_browser import big_document

    open_example(page, "simple-gpu")
    expect(page.locator("#editor .cm-content .cm-line span").first).to_be_attached()  # YAML colours
    text = big_document(600_000)
    put_in_editor(page, text)
    expect(page.locator("#editor-status")).to_contain_text("Syntax colours are off while the text is over 512 KB")
    expect(page.locator("#editor .cm-content .cm-line span")).to_have_count(0)
    click_in_editor(page)
    page.keyboard.type("# typed")
    assert editor_text(page).endswith("# typed")
    # Back under the size (less some room), the colours come back.
    put_in_editor(page, text[:300_000])
    expect(page.locator("#editor .cm-content .cm-line span").first).to_be_attached()


CURSOR_BLINK = """() => {
  const layer = document.querySelector("#editor .cm-cursorLayer");
  return { animation: getComputedStyle(layer).animationName,
           running: document.getAnimations().filter((a) => a.effect && a.effect.target === layer).length };
}"""


def test_the_caret_stays_lit_while_typing_and_blinks_again_once_typing_rests(page: Page):
    # A blink restarted on every key (CodeMirror's own way) is a CSS animation started per key, which
    # costs the page a second frame after the key's; a caret that stays lit while the text changes does not.
    open_example(page, "simple-gpu")
    click_in_editor(page)
    page.wait_for_timeout(700)
    resting = page.evaluate(CURSOR_BLINK)
    assert resting["animation"].startswith("cm-blink") and resting["running"] == 1
    for key in "# typed":
        page.keyboard.type(key)
        typing = page.evaluate(CURSOR_BLINK)
        assert typing == {"animation": "none", "running": 0}
    page.keyboard.press("ArrowLeft")  # moving the caret keeps it lit too
    assert page.evaluate(CURSOR_BLINK) == {"animation": "none", "running": 0}
    page.wait_for_function("""() => {
      const layer = document.querySelector("#editor .cm-cursorLayer");
      return getComputedStyle(layer).animationName.startsWith("cm-blink"); }""", timeout=3000)
    assert editor_text(page).endswith("# typed")


def test_a_run_of_a_text_over_512_kb_sends_the_editors_text_without_copying_it_into_the_form(page: Page):
    # Putting 1 MB into the form's textarea costs Chromium 80–300 ms, and a run starts at each pause in typing.
    from scripts.bench_browser import big_document

    open_example(page, "simple-gpu")
    answered = page.evaluate("window.playgroundRuns.answered()")
    put_in_editor(page, big_document(600_000))
    expect(page.locator("#editor-status")).to_contain_text("Syntax colours are off")
    # The run of the text put in is answered before typing starts: the run looked at is the typing's.
    page.wait_for_function("(n) => window.playgroundRuns.answered() > n", arg=answered)
    page.evaluate("""() => {
      window.copies = 0;
      document.getElementById("scenario").addEventListener("input", () => { window.copies++; });
    }""")
    click_in_editor(page)
    with page.expect_request(lambda r: r.method == "POST" and urlparse(r.url).path == "/") as sent:  # the run
        page.keyboard.type("# typed in the large text")
    body = sent.value.post_data_json
    assert body["scenario"][0].endswith("# typed in the large text")
    assert page.evaluate("window.copies") == 0
    assert not page.locator("#scenario").input_value().endswith("# typed in the large text")
    # Whatever else reads the form still gets the text: Share posts the form as it is.
    page.evaluate("window.playgroundEditor.sync()")
    assert page.locator("#scenario").input_value().endswith("# typed in the large text")


def test_a_run_still_on_its_way_when_typing_resumes_lengthens_the_wait(page: Page, slow_runs):
    # A large dump the server takes longer on than the pauses in typing: without an answer to time, the
    # wait stayed at its first value and every short pause sent the whole text again.
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    assert run_wait(page) == 150  # no answer timed yet
    slow_runs.slow_next(1, 3.0)
    replace_in_editor(page, '"40Gi"', '"16Gi"')
    assert slow_runs.started.wait(10), "the edit never reached the server"
    page.wait_for_timeout(600)
    page.keyboard.type(" ")  # typing resumes while that run is still on its way
    assert int(page.locator("#playground").get_attribute("data-run-wait")) == 400  # 600 ms or more, held at 400
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")


def test_the_first_edit_after_a_rest_runs_at_once_when_the_server_answers_fast(page: Page):
    # Timers under Playwright's clock: the run must start within a frame of the key, not after the wait.
    page.clock.install()
    open_example(page, "simple-gpu")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.clock.pause_at(page.evaluate("Date.now()") + 1000)  # a rest; from here time moves only when told
    for _ in range(5):  # answers that took no time on the page's clock, however loaded the machine is
        run_and_wait(page)
    wait = run_wait(page)
    assert wait == 40
    click_in_editor(page)
    page.clock.run_for(1000)  # the click is no edit; rest again
    with page.expect_request(lambda r: r.method == "POST" and urlparse(r.url).path == "/", timeout=5000):
        page.keyboard.type("#")
        page.clock.run_for(20)  # a frame, less than the wait
    # Keys that follow within the wait are gathered as before: one run after the last of them.
    page.evaluate("() => { window.sent = 0; document.body.addEventListener('htmx:beforeRequest', () => window.sent++); }")
    page.keyboard.type("a")
    page.clock.run_for(5)
    page.keyboard.type("b")
    page.clock.run_for(5)
    assert page.evaluate("window.sent") == 0, "a key within the wait ran at once"
    page.clock.run_for(wait + 20)
    page.wait_for_function("() => window.sent === 1")
    assert editor_text(page).endswith("#ab")
