"""Opening a scenario file on the page: a small one lands in the editor, a cluster dump runs as
it is and is shown read-only, and closing it gives the editor back."""
import sys
from pathlib import Path

import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from allocator import gallery  # noqa: E402

from .helpers import open_example, outcome  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bench_allocate import generate  # noqa: E402

pytestmark = pytest.mark.browser


def test_a_small_file_opens_in_the_editor_and_runs(page: Page):
    open_example(page, "mig-8-gpu")
    text = gallery.get("simple-gpu").scenario

    page.set_input_files("#scenario-file", files=[{"name": "simple.yaml", "mimeType": "text/yaml",
                                                   "buffer": text.encode()}])

    expect(outcome(page)).to_contain_text("Allocated on node worker-1")
    expect(page.locator("#editor .cm-editor")).to_be_visible()
    assert page.locator("#scenario").input_value() == text


def test_a_cluster_dump_runs_as_a_file_shown_read_only_until_closed(page: Page):
    open_example(page, "simple-gpu")
    dump = generate(24).encode()  # 24 nodes, 1,536 devices, about 0.7 MB
    assert len(dump) > 512 * 1024

    page.set_input_files("#scenario-file", files=[{"name": "dump.yaml", "mimeType": "text/yaml", "buffer": dump}])

    expect(outcome(page)).to_contain_text("Allocated on node node-0023", timeout=30_000)
    expect(page.locator("#node")).to_have_value("")  # the run was for any node; the dropdown still says so
    expect(page.locator("#file-view")).to_be_visible()
    expect(page.locator("#editor")).to_be_hidden()
    expect(page.locator("#file-name")).to_have_text("dump.yaml")
    expect(page.locator("#file-preview")).to_contain_text("kind: DeviceClass")
    expect(page.locator("#results")).to_contain_text("Large result: some lists are shown as counts")

    page.click("#file-close")

    expect(page.locator("#editor .cm-editor")).to_be_visible()
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")

