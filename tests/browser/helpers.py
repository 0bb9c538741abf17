"""What a user does in the playground, as steps the browser tests share."""
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


def outcome(page: Page):
    return page.locator("#results .outcome h2")


def screenshot(locator, name: str) -> None:
    SCREENSHOTS.mkdir(parents=True, exist_ok=True)
    locator.screenshot(path=SCREENSHOTS / f"{name}.png", animations="disabled")
