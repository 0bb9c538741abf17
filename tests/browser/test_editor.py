"""The CodeMirror editor over the scenario textarea: typing reruns, errors land on their lines, keys behave."""
import re

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from allocator import gallery  # noqa: E402

from .helpers import open_example, outcome, replace_in_editor  # noqa: E402

pytestmark = pytest.mark.browser


def test_typing_in_the_editor_reruns_the_allocation(page: Page):
    open_example(page, "simple-gpu")
    chosen = page.locator("#panel-why tr.verdict-chosen")
    expect(chosen).to_contain_text("gpu-1")

    replace_in_editor(page, "40Gi", "16Gi", after="quantity(")

    expect(chosen).to_contain_text("gpu-0")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    assert 'quantity("16Gi")' in page.locator("#scenario").input_value()


def test_an_edit_is_sent_as_json_and_the_share_button_as_a_plain_form(page: Page):
    open_example(page, "simple-gpu")
    with page.expect_request(lambda r: r.method == "POST" and r.url.endswith("/")) as run:
        replace_in_editor(page, "40Gi", "16Gi", after="quantity(")
    assert run.value.headers["content-type"] == "application/json"
    assert 'quantity(\\"16Gi\\")' in run.value.post_data
    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")
    with page.expect_request(lambda r: r.method == "POST" and "/share" in r.url) as share:
        page.get_by_role("button", name="Share", exact=True).click()
    assert share.value.headers["content-type"].startswith("application/x-www-form-urlencoded")
    expect(page.locator("#share-url")).to_be_visible()


def test_ctrl_enter_runs_now_and_esc_tab_leaves_the_editor(page: Page):
    open_example(page, "simple-gpu")
    before = page.locator("#scenario").input_value()
    page.locator("#editor .cm-content").click()

    with page.expect_response(lambda r: r.request.method == "POST") as response:
        page.keyboard.press("Control+Enter")
    assert response.value.ok
    assert page.locator("#scenario").input_value() == before  # no blank line inserted

    page.keyboard.press("Escape")
    page.keyboard.press("Tab")
    assert page.evaluate("!document.activeElement.closest('.cm-editor')")
    assert page.locator("#scenario").input_value() == before  # Tab moved focus instead of indenting


def test_a_server_error_is_marked_on_its_line_in_the_gutter(page: Page):
    source_lines = gallery.get("simple-gpu").scenario.splitlines()
    bad_line = source_lines.index("  - name: gpu-0") + 1
    open_example(page, "simple-gpu")

    replace_in_editor(page, "gpu-0", "Bad_Name")

    marker = page.locator("#editor .cm-gutter-lint .cm-lint-marker-error")
    expect(marker).to_have_count(1)
    expect(page.locator("#editor .cm-lintRange-error")).to_have_text("- name: Bad_Name")
    line_box = page.locator("#editor .cm-line", has_text="name: Bad_Name").bounding_box()
    marker_box = marker.bounding_box()
    assert line_box["y"] <= marker_box["y"] + marker_box["height"] / 2 <= line_box["y"] + line_box["height"]
    number = page.locator("#editor .cm-lineNumbers .cm-gutterElement").filter(has_text=re.compile(rf"^{bad_line}$"))
    assert abs(number.bounding_box()["y"] - line_box["y"]) < 2

    marker.hover()
    expect(page.locator(".cm-tooltip-lint")).to_contain_text("Bad_Name")

    # The problem list links to the line: the cursor goes back there from the top of the file.
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+Home")
    page.locator(f'#results .goto-line[data-line="{bad_line}"]').first.click()
    expect(page.locator("#editor .cm-activeLine")).to_contain_text("Bad_Name")


def test_without_the_editor_bundle_the_plain_textarea_still_runs(page: Page):
    page.route("**/codemirror-*.js", lambda route: route.abort())
    with page.expect_console_message(lambda m: "editor bundle did not load" in m.text):
        page.goto("/?example=simple-gpu")
    textarea = page.locator("textarea#scenario")
    expect(textarea).to_be_visible()
    expect(page.locator(".cm-editor")).to_have_count(0)

    textarea.fill(textarea.input_value().replace('quantity("40Gi")', 'quantity("16Gi")'))

    expect(page.locator("#panel-why tr.verdict-chosen")).to_contain_text("gpu-0")


def test_the_editor_needs_no_inline_script_or_data_urls(page: Page):
    policy = "default-src 'self'; script-src 'self'; style-src 'self' 'unsafe-inline'"

    def with_policy(route):
        response = route.fetch()
        route.fulfill(response=response, headers={**response.headers, "content-security-policy": policy})

    page.route("**/?example=*", with_policy)
    violations = []
    page.on("console", lambda m: "Content Security Policy" in m.text and violations.append(m.text))
    open_example(page, "simple-gpu")

    replace_in_editor(page, "gpu-0", "Bad_Name")

    expect(page.locator("#editor .cm-lint-marker-error")).to_be_visible()
    assert violations == []
