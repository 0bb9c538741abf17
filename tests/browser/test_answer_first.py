"""Issue 24, item 1 — the answer first: a pasted file is answered for the nodes it names, the
example it replaced is forgotten, and the results lead with what the user asked about."""
import re
from pathlib import Path

import pytest
from playwright.sync_api import Page, expect

from tests.browser.helpers import link_holding, open_example, outcome, paste_over_everything

pytestmark = pytest.mark.browser

# A whole file as a user copies it from elsewhere: nothing of the simple-gpu example is in it.
DUMP = (Path(__file__).resolve().parents[1] / "dumps" / "pasted-nics.yaml").read_text()


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


def paste_and_wait(page: Page, text: str) -> None:
    with page.expect_response(lambda r: r.request.method == "POST"):
        paste_over_everything(page, text)


# ---- a dump: the pending pod first, the rest folded, the closest node first ------------------------

def test_a_dump_leads_with_its_pending_pod_and_folds_the_bound_pods_behind_a_count_and_a_filter(page: Page):
    from tests.engine.test_closest import closest_node_dump

    open_example(page, "simple-gpu")
    paste_and_wait(page, closest_node_dump())

    jump = page.locator("#results nav.pending-pods")
    expect(jump.locator("h3")).to_have_text("1 pod not scheduled")
    expect(jump).to_contain_text("0/4 nodes are available")
    # The jump list comes before any panel.
    assert jump.evaluate("n => !!(n.compareDocumentPosition(document.getElementById('panel-pods')) "
                         "& Node.DOCUMENT_POSITION_FOLLOWING)")
    jump.locator("a", has_text="default/waiting").click()
    expect(page).to_have_url(re.compile(r"#pod-default-waiting$"))
    expect(page.locator("#pod-default-waiting")).to_be_in_viewport()

    bound = page.locator("#results details.bound-pods")
    expect(bound.locator("summary")).to_have_text("3 pods already bound to a node")
    expect(bound).not_to_have_attribute("open", re.compile(".*"))  # folded by results.js
    bound.locator("summary").click()
    cards = bound.locator(".pod")
    expect(cards).to_have_count(3)
    bound.locator("input[type=search]").fill("node-b")
    expect(bound.locator(".pod:visible")).to_have_count(1)
    expect(bound.locator(".pod:visible")).to_contain_text("trainer-node-b")

    claims = page.locator("#results details.claims-before")
    expect(claims.locator("summary")).to_have_text("3 claims allocated before this run")
    expect(claims).not_to_have_attribute("open", re.compile(".*"))  # folded to its count, with a filter
    expect(claims.locator("input[type=search]")).to_have_count(1)


def test_the_pending_pods_node_table_and_why_lead_with_the_node_closest_to_fitting(page: Page):
    from tests.engine.test_closest import closest_node_dump

    open_example(page, "simple-gpu")
    paste_and_wait(page, closest_node_dump())

    pod = page.locator("#pod-default-waiting")
    expect(pod.locator("table.pod-nodes tbody tr")).to_have_count(4)
    expect(pod.locator("table.pod-nodes tbody tr td:first-child")).to_have_text(["node-c", "node-d", "node-a", "node-b"])
    closest = pod.locator(".closest-node")
    expect(closest).to_contain_text("Closest to fitting: node node-c")
    expect(closest).to_contain_text("4 free devices in its own slices")
    expect(closest).to_contain_text("Shown first because it fails the fewest filter checks")
    # The sentence comes before the Why.
    assert closest.evaluate("n => !!(n.compareDocumentPosition(n.parentElement.querySelector('.pod-why')) "
                            "& Node.DOCUMENT_POSITION_FOLLOWING)")


def test_a_node_table_past_ten_rows_folds_to_its_count(page: Page):
    from tests.engine import cluster as c

    items = [c.device_class()] + [c.node(f"n-{i:02}") for i in range(12)]
    items.append(c.template("one-gpu", c.claim_spec(c.request())))
    items.append(c.pod("waiting", templates=[("gpu", "one-gpu")]))
    open_example(page, "simple-gpu")
    paste_and_wait(page, c.dump(*items))

    fold = page.locator("#pod-default-waiting details.fold")
    expect(fold.locator("summary")).to_have_text("12 nodes")
    fold.locator("summary").click()
    fold.locator("input[type=search]").fill("n-07")
    expect(fold.locator("tr[data-filter-row]:visible")).to_have_count(1)


# ---- claims allocated together, or each alone -------------------------------------------------

def test_claims_failing_together_can_be_judged_each_alone_with_one_button(page: Page):
    from tests.engine.test_each_claim_alone import TEXT

    open_example(page, "simple-gpu")
    paste_and_wait(page, TEXT)
    expect(outcome(page)).to_contain_text("Invalid input")
    expect(page.locator("#claims-together")).to_contain_text("allocated together, as one pod’s claims")

    with page.expect_response(lambda r: r.request.method == "POST"):
        page.locator("#claims-together button.each-claim-alone").click()
    expect(outcome(page)).to_contain_text("Each claim judged alone: 2 of 3 can be allocated")
    expect(page.locator('#claims-alone li[data-claim="default/numa0"]')).to_contain_text("allocated on node node-1")
    expect(page.locator('#claims-alone li[data-claim="default/performance"]')).to_contain_text("coreType")

    with page.expect_response(lambda r: r.request.method == "POST"):
        page.locator("#claims-alone button.claims-together-again").click()
    expect(outcome(page)).to_contain_text("Invalid input")


def test_judging_each_claim_alone_stays_for_the_next_edit_and_a_link_opens_with_it(page: Page, browser):
    from tests.engine.test_each_claim_alone import TEXT

    open_example(page, "simple-gpu")
    paste_and_wait(page, TEXT)
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.locator("#claims-together button.each-claim-alone").click()
    expect(outcome(page)).to_contain_text("Each claim judged alone: 2 of 3 can be allocated")

    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+End")
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.type("\n# an edit\n")
    expect(outcome(page)).to_contain_text("Each claim judged alone")

    url = link_holding(page, eachClaimAlone=True, scenario=lambda text: bool(text) and "# an edit" in text)
    other = browser.new_page(base_url=page.url.split("/#")[0].split("/?")[0].rstrip("/") + "/")
    try:
        other.goto(url)
        expect(other.locator("#results .outcome h2")).to_contain_text("Each claim judged alone: 2 of 3 can be allocated")
        expect(other.locator("#each-claim-alone-state")).to_have_value("1")
    finally:
        other.close()


# ---- the smaller defects --------------------------------------------------------------------

def test_a_cel_compile_error_is_printed_once_with_its_caret_under_the_mistake_in_monospace(page: Page):
    open_example(page, "simple-gpu")
    paste_and_wait(page, DUMP.replace('device.driver == "nic.example.com"', 'device.driver == "nic.example.com" &&'))

    expect(page.locator("#results .outcome")).to_contain_text("compilation failed")
    expect(page.locator("#results .outcome p.message")).to_have_count(0)
    snippet = page.locator("#results .problems pre.problem-snippet")
    expect(snippet).to_have_count(1)
    font = snippet.evaluate("n => getComputedStyle(n).fontFamily")
    assert "mono" in font.lower(), font
    # The caret sits under the character after "&&" (monospace: equal widths per character).
    source, caret = snippet.inner_text().split("\n")
    assert caret.index("^") == len(source)


def test_a_yaml_error_is_marked_on_the_line_of_the_mistake(page: Page):
    open_example(page, "simple-gpu")
    paste_and_wait(page, DUMP.replace("metadata:\n  name: one-nic", "metadata\n  name: one-nic"))
    bad_line = DUMP.splitlines().index("  name: one-nic")  # the line above it, 1-based
    expect(page.locator("#results .problems .goto-line")).to_have_attribute("data-line", str(bad_line))
    marker = page.locator("#editor .cm-gutter-lint .cm-lint-marker-error")
    expect(marker).to_have_count(1)
    expect(page.locator("#editor .cm-lintRange-error")).to_contain_text("metadata")


def test_a_cold_start_gives_a_primer_and_the_kubernetes_docs(page: Page):
    open_example(page, "simple-gpu")
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+a")
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.press("Delete")
    primer = page.locator("#results .primer")
    expect(primer).to_contain_text("Dynamic Resource Allocation (DRA)")
    expect(primer.locator("a")).to_have_attribute(
        "href", "https://kubernetes.io/docs/concepts/scheduling-eviction/dynamic-resource-allocation/")


def test_the_status_writers_grid_of_a_scenario_without_rbac_comes_with_its_button_and_stays(page: Page):
    open_example(page, "mig-8-gpu")
    panel = page.locator("#panel-status-writers")
    expect(panel).to_contain_text("The scenario has no RBAC objects of its own")
    expect(panel.locator("table")).to_have_count(0)
    with page.expect_response(lambda r: r.request.method == "POST"):
        panel.get_by_role("button", name="Show who may write").click()
    expect(panel.locator("table.status-writers").first).to_be_visible()
    page.locator("#editor .cm-content").click()
    page.keyboard.press("Control+End")
    with page.expect_response(lambda r: r.request.method == "POST"):
        page.keyboard.type("\n# an edit\n")
    expect(outcome(page)).to_contain_text("Allocated")
    expect(panel.locator("table.status-writers").first).to_be_visible()
