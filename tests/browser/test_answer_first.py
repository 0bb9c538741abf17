"""Issue 24, item 1 — the answer first: a pasted file is answered for the nodes it names, the
example it replaced is forgotten, and the results lead with what the user asked about."""
import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import open_example, outcome

pytestmark = pytest.mark.browser

# A whole file as a user copies it from elsewhere: nothing of the simple-gpu example is in it.
DUMP = """\
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata:
  name: nic.example.com
spec:
  selectors:
  - cel:
      expression: device.driver == "nic.example.com"
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata:
  name: node-a-nics
spec:
  driver: nic.example.com
  nodeName: node-a
  pool:
    name: node-a
    generation: 1
    resourceSliceCount: 1
  devices:
  - name: nic-0
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata:
  name: one-nic
  namespace: default
spec:
  devices:
    requests:
    - name: nic
      exactly:
        deviceClassName: nic.example.com
"""


def paste_over_everything(page: Page, text: str) -> None:
    """Select all in the editor and paste `text` from the clipboard, as a user does (CodeMirror
    reads the paste event's clipboard data)."""
    content = page.locator("#editor .cm-content")
    content.click()
    page.keyboard.press("Control+a")
    content.evaluate("""(el, text) => {
        const data = new DataTransfer();
        data.setData("text/plain", text);
        el.dispatchEvent(new ClipboardEvent("paste", {clipboardData: data, bubbles: true, cancelable: true}));
    }""", text)


def test_a_file_pasted_over_an_example_runs_on_its_own_nodes_and_forgets_the_example(page: Page):
    open_example(page, "simple-gpu")
    expect(page.locator("#node option:checked")).to_have_text("worker-1")
    expect(outcome(page)).to_contain_text("Allocated on node worker-1")

    with page.expect_response(lambda r: r.request.method == "POST"):
        paste_over_everything(page, DUMP)

    expect(page.locator("#editor .cm-content")).to_contain_text("node-a-nics")
    expect(page.locator("#results .node-dropped")).to_have_text(
        "Node worker-1 is not in the scenario any more; ran on any node.")
    expect(outcome(page)).to_contain_text("Allocated on node node-a")
    expect(page.locator("#node option:checked")).to_have_text("any node (first that fits)")
    # Nothing of the example is left: no notes, no "edited from" line.
    expect(page.locator(".example-info")).to_have_count(0)
    expect(page.locator(".example-edited")).to_have_count(0)

    # The next edit runs on any node as the menu says, without the note.
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.press("Control+End")
        page.keyboard.type("\n# edited\n")
    expect(outcome(page)).to_contain_text("Allocated on node node-a")
    expect(page.locator("#results .node-dropped")).to_have_count(0)
