"""The editor's tools: completion and hover from the scenario's own slices, Format with Undo,
the shortcut list, Compare and Share in the top bar, and a Copy button that comes back."""
import re

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from .helpers import click_in_editor, editor_text, open_example, outcome, put_in_editor, replace_in_editor  # noqa: E402

pytestmark = pytest.mark.browser


def test_completion_in_a_cel_expression_offers_the_slices_own_attribute_names(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
                      'device.attributes["gpu.example.com"].')
    options = page.locator(".cm-tooltip-autocomplete li")
    expect(options.filter(has_text="driverVersion")).to_have_count(1)
    expect(options.filter(has_text="model")).to_have_count(1)
    expect(options.filter(has_text="uuid")).to_have_count(1)
    page.keyboard.type("driverV")
    expect(options).to_have_count(1)  # narrowed to driverVersion
    options.filter(has_text="driverVersion").click()
    assert 'device.attributes["gpu.example.com"].driverVersion' in editor_text(page)


def test_completion_in_a_cel_expression_offers_drivers_capacities_and_the_cel_functions(page: Page):
    """Issue 24 item 5: `device.attributes["<driver>"]`, `capacity`, `compareTo`, `quantity` and `semver`
    offered as you type, the drivers and capacity names from the pasted slices themselves."""
    open_example(page, "simple-gpu")
    options = page.locator(".cm-tooltip-autocomplete li")
    replace_in_editor(page, 'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0',
                      'device.attributes["')
    expect(options.filter(has_text="gpu.example.com")).to_have_count(1)
    page.keyboard.press("Escape")
    page.keyboard.press("End")
    for _ in range(len('device.attributes["')):
        page.keyboard.press("Backspace")
    page.keyboard.type('device.capacity["gpu.example.com"].')
    expect(options.filter(has_text="memory")).to_have_count(1)
    page.keyboard.type("memory.")
    expect(options.filter(has_text="compareTo")).to_have_count(1)
    page.keyboard.type("compareTo(quan")
    expect(options.filter(has_text=re.compile(r"^quantity"))).to_have_count(1)
    page.keyboard.press("Escape")
    page.keyboard.type('tity("40Gi")) >= 0 && sem')
    expect(options.filter(has_text=re.compile(r"^semver"))).to_have_count(1)


def test_completion_offers_the_fields_a_device_knows(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "name: gpu-1", "name: gpu-1")
    page.keyboard.press("End")
    page.keyboard.press("Enter")
    page.keyboard.type("binds")
    expect(page.locator(".cm-tooltip-autocomplete li").filter(has_text="bindsToNode")).to_have_count(1)


def test_hovering_an_attribute_shows_its_values_across_the_devices(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, 'device.driver == "gpu.example.com"', 'device.attributes["gpu.example.com"].uuid != ""')
    page.keyboard.press("Escape")  # the completion list the typing opened
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.wait_for_timeout(1500)  # let the run's answer settle: a swap moves the page under the mouse
    hover = page.locator(".cm-tooltip-hover .cel-hover")
    for _ in range(3):  # a hover is a pause of the mouse over the name; a busy machine may miss one
        point = page.evaluate("window.playgroundEditor.coordsOf('].uuid', 3)")
        middle = (point["top"] + point["bottom"]) / 2
        page.mouse.move(point["left"] - 30, point["top"] - 30)
        page.mouse.move(point["left"], middle)
        page.wait_for_timeout(300)
        page.mouse.move(point["left"] + 2, middle)
        page.wait_for_timeout(1500)
        if hover.count():
            break
    expect(hover).to_contain_text("gpu.example.com/uuid")
    expect(hover).to_contain_text("gpu-2f0d6ac4-4d3b-4b6b-8d1b-3b1f2d5e7a10")
    expect(hover).to_contain_text("gpu-8a1c3e55-0c2f-4f9e-9d35-6e0a7c4b2d91")


FOUR_SPACES = """# One GPU, written with four spaces.
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
    name: gpu.example.com
spec:
    selectors:
        - cel:
              expression: device.driver == "gpu.example.com"
---
apiVersion: v1
kind: Node
metadata:
    name: worker-1
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
    name: worker-1-gpus
spec:
    driver: gpu.example.com
    nodeName: worker-1
    pool:
        name: worker-1
        generation: 1
        resourceSliceCount: 1
    devices:
        - name: gpu-0   # the only one
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


def test_format_reindents_keeps_the_scenario_loadable_and_undo_brings_the_text_back(page: Page):
    open_example(page, "simple-gpu")
    put_in_editor(page, FOUR_SPACES)
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    page.get_by_role("button", name="Format", exact=True).click()
    expect(page.locator("#editor-status")).to_contain_text("comments are kept")
    formatted = editor_text(page)
    assert "\n  selectors:\n    - cel:\n        expression: device.driver" in formatted
    assert "  - name: gpu-0   # the only one\n" in formatted and formatted.startswith("# One GPU")
    expect(page.locator("#results")).to_contain_text("gpu-0")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")

    click_in_editor(page, "Control+z")
    assert editor_text(page) == FOUR_SPACES


def test_format_leaves_unreadable_yaml_alone_and_says_why(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "kind: DeviceClass", "kind: DeviceClass: twice")
    before = editor_text(page)
    page.get_by_role("button", name="Format", exact=True).click()
    expect(page.locator("#editor-status")).to_contain_text("the text was not changed")
    assert editor_text(page) == before


def test_question_mark_opens_the_shortcut_list(page: Page):
    open_example(page, "simple-gpu")
    page.locator("h1").first.click()
    page.keyboard.press("?")
    dialog = page.get_by_role("dialog", name="Keyboard shortcuts")
    expect(dialog).to_be_visible()
    expect(dialog).to_contain_text("Run now")
    expect(dialog).to_contain_text("Format")
    expect(dialog).to_contain_text("Leave the editor")
    page.keyboard.press("Escape")
    expect(dialog).to_be_hidden()
    click_in_editor(page, "End")
    page.keyboard.type("?")  # in the editor it is only a character
    expect(dialog).to_be_hidden()


def test_copied_goes_back_to_copy(page: Page):
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    open_example(page, "simple-gpu")
    page.get_by_role("button", name="Link without storing").click()
    copy = page.locator("#share-result .share-copy")
    expect(copy).to_have_text("Copy")
    copy.click()
    expect(copy).not_to_have_text("Copy")  # "Copied", or "Press Ctrl+C" where the clipboard is refused
    expect(copy).to_have_text("Copy", timeout=5000)


def test_share_and_compare_sit_in_the_top_bar(page: Page):
    open_example(page, "simple-gpu")
    replace_in_editor(page, "single-gpu", "compared-claim")
    expect(page.locator("#results")).to_contain_text("compared-claim")
    page.locator(".topbar").get_by_role("button", name="Share link").click()
    expect(page.locator("#share-url")).to_be_visible()
    page.locator(".topbar").get_by_role("button", name="Compare…").click()
    page.wait_for_url("**/compare?c=*")
    expect(page.locator("#a-scenario")).to_have_value(lambda_text := page.locator("#a-scenario").input_value())
    assert "compared-claim" in lambda_text
