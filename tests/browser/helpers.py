"""What a user does in the playground, as steps the browser tests share."""
import base64
import json
import time
import zlib
from pathlib import Path

from playwright.sync_api import Page, expect

SCREENSHOTS = Path(__file__).resolve().parents[2] / "test-artifacts" / "screenshots"

# A rerun waits 400 ms for typing to pause, then runs the allocator; leave room for a busy CI machine.
expect.set_options(timeout=10_000)


def open_example(page: Page, slug: str) -> None:
    """Open a gallery example and wait until CodeMirror has replaced the textarea."""
    page.goto(f"/?example={slug}")
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect(page.locator("#scenario")).to_be_hidden()


def replace_in_editor(page: Page, old: str, new: str, *, after: str | None = None) -> None:
    """Find `old` (first after `after`, if given) with the editor's search panel, close it, type `new` over it."""
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+Home")
    page.keyboard.press("Control+f")
    field = page.locator("#editor .cm-search input[name=search]")
    for text in [after, old] if after else [old]:
        field.press("Control+a")
        field.press_sequentially(text)  # typed, not filled: the panel reads its query on key-up
        field.press("Enter")  # select the next match after the cursor
    field.press("Escape")
    expect(page.locator("#editor .cm-search")).to_have_count(0)
    page.keyboard.type(new)


def editor_text(page: Page) -> str:
    """The text in the editor (CodeMirror's own, which the hidden textarea copies only when read)."""
    return page.evaluate("window.playgroundEditor.text()")


def set_editor_text(page: Page, text: str) -> None:
    """Select everything in the editor and type `text` over it in one go (or delete it all)."""
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+a")
    if text:
        page.keyboard.insert_text(text)
    else:
        page.keyboard.press("Delete")


def paste_over_everything(page: Page, text: str) -> None:
    """Copy `text` to the clipboard, select all in the editor and paste with Ctrl+V, as a user does:
    the browser's own paste reads the system clipboard (headless Chromium keeps one)."""
    page.context.grant_permissions(["clipboard-read", "clipboard-write"])
    content = page.locator("#editor .cm-content")
    content.click()
    page.evaluate("(text) => navigator.clipboard.writeText(text)", text)
    page.keyboard.press("Control+a")
    page.keyboard.press("Control+v")


def put_in_editor(page: Page, text: str) -> None:
    """Put `text` in the editor as a `#s=` link or an opened file does: into the form's textarea,
    which tells the editor (no run of its own)."""
    page.evaluate("""(text) => { const area = document.getElementById("scenario"); area.value = text;
      area.dispatchEvent(new Event("playground:scenario-replaced")); }""", text)


def click_in_editor(page: Page, key: str = "Control+End") -> None:
    """Click into the editor and move the cursor (to the end of the text unless told)."""
    page.locator("#editor .cm-content").click()
    page.keyboard.press(key)


def outcome(page: Page):
    return page.locator("#results .outcome h2")


def screenshot(locator, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=SCREENSHOTS / f"{name}.png", animations="disabled")


def page_screenshot(page: Page, name: str, full_page: bool = True) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=SCREENSHOTS / f"{name}.png", full_page=full_page, animations="disabled")


def link_state(url: str) -> dict | None:
    """What the address bar's `#s=` link holds (the page writes it shortly after each run)."""
    _, _, fragment = url.partition("#s=")
    if not fragment:
        return None
    packed = base64.urlsafe_b64decode(fragment + "=" * (-len(fragment) % 4))
    return json.loads(zlib.decompress(packed, -15).decode("utf-8"))


def link_holding(page: Page, *, timeout: float = 10.0, **expected) -> str:
    """The page's URL once its `#s=` link holds `expected` (scenario, node, ...; a value or a test
    of it): a link taken before the last edit's draft was written would open something else."""
    deadline = time.monotonic() + timeout
    while True:
        state = link_state(page.url) or {}
        if all(value(state.get(key)) if callable(value) else state.get(key) == value
               for key, value in expected.items()):
            return page.url
        if time.monotonic() > deadline:
            raise AssertionError(f"the address bar never held {expected}; it holds {state}")
        page.wait_for_timeout(50)
