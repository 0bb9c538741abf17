"""The Pods panel in a browser: two pending pods, each with its own why."""
import pytest

pytest.importorskip("playwright")

from playwright.sync_api import Page, expect  # noqa: E402

from allocator.run_settings import RunSettings  # noqa: E402
from allocator.sharing import fragment  # noqa: E402
from tests.web.test_pods_panel import two_pending_pods  # noqa: E402

from .helpers import screenshot  # noqa: E402

pytestmark = pytest.mark.browser


def test_two_pending_pods_each_show_their_own_why(page: Page):
    page.goto(f"/#{fragment(RunSettings(scenario=two_pending_pods()))}")
    panel = page.locator("#panel-pods")
    for pod, count in (("default/train-a", "2 × gpu.example.com"), ("default/train-b", "3 × gpu.example.com")):
        block = panel.locator(f"div.pod[data-pod='{pod}']")
        expect(block).to_contain_text("0/2 nodes are available: 2 cannot allocate all claims.")
        why = block.locator("details.pod-why")
        expect(why).to_have_count(1)
        expect(why).to_have_attribute("open", "")
        expect(why.locator("caption")).to_contain_text(count)
        expect(why.locator("tr.verdict-rejected, tr.verdict-unused, tr.verdict-tried").first).to_be_visible()
    screenshot(panel, "pods--two-pending-whys")


def test_feasible_nodes_show_their_scores_and_the_tie(page: Page):
    from tests.web.test_pods_panel import tied_nodes

    page.goto(f"/#{fragment(RunSettings(scenario=tied_nodes()))}")
    block = page.locator("#panel-pods div.pod[data-pod='default/web']")
    expect(block.locator("td.score")).to_have_count(2)
    expect(block.locator("tr[data-node='node-a'] td.score")).to_contain_text("taints 100×3")
    expect(block.locator(".scoring-note")).to_contain_text("picks one of them at random")
    screenshot(block, "pods--scores-and-tie")
