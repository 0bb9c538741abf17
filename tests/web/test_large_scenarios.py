"""A real cluster dump on the page: opened as a file, run within the usual bounds, and shown
with the chosen node in full and everything else as counts, so a render stays small."""
import re
import sys
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

from allocator import gallery, summary
from allocator.runs import MAX_SCENARIO_BYTES

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "scripts"))
from bench_allocate import generate  # noqa: E402


def heading(body: str) -> str:
    match = re.search(r'<div class="outcome[^>]*>\s*<h2>\s*(.*?)\s*</h2>', body, re.S)
    return " ".join(match.group(1).split()) if match else ""


def post_file(client, content: bytes, **extra):
    upload = SimpleUploadedFile("dump.yaml", content, content_type="application/yaml")
    data = {"scenario": "this text is not the scenario", "node": "", "scenario-file": upload, **extra}
    return client.post("/", data, HTTP_HX_REQUEST="true")


def test_a_file_opened_on_the_page_is_the_scenario(client):
    example = gallery.get("simple-gpu")
    response = post_file(client, example.scenario.encode())

    assert response.status_code == 200
    assert heading(response.content.decode()) == heading(client.get("/?example=simple-gpu").content.decode())


def test_a_file_in_utf16_is_read_too(client):
    response = post_file(client, gallery.get("simple-gpu").scenario.encode("utf-16"))

    assert "Invalid" not in heading(response.content.decode())


def test_a_file_over_the_limit_is_refused_while_it_arrives(client, monkeypatch):
    monkeypatch.setattr("allocator.uploads.MAX_SCENARIO_BYTES", 1000)
    monkeypatch.setattr("allocator.pages.MAX_SCENARIO_BYTES", 1000)

    response = post_file(client, b"#" * 5000)

    assert response.status_code == 200  # htmx swaps only 2xx answers: the refusal replaces the result
    body = response.content.decode()
    assert "Refused" in body and "the limit is 1,000 bytes" in body


def test_the_page_and_the_api_take_a_cluster_dump_of_32_mib():
    assert MAX_SCENARIO_BYTES == 32 * 1024 * 1024


def test_a_cluster_dump_shows_the_chosen_node_in_full_and_the_rest_as_counts(client):
    dump = generate(30).encode()  # 30 nodes, 1,920 devices, 29 of the nodes full

    response = post_file(client, dump)

    body = response.content.decode()
    assert heading(body) == "✔ Allocated on node node-0029"
    assert "Large result: some lists are shown as counts" in body
    assert "<summary>30 nodes tried</summary>" in body  # one line each: not cut below 1,000 nodes
    assert re.search(r"133 more claims already allocated, not listed \(by pool: node-\d+ 8, ", body)
    assert body.count('class="claim claim-') == summary.MAX_ITEMS


def test_summaries_keep_every_chosen_device_and_count_the_rest_per_pool():
    candidates = [{"pool": f"pool-{p}", "device": f"d{i}", "verdict": "rejected", "reason": "selector"}
                  for p in range(2) for i in range(500)]
    candidates[450]["verdict"] = "chosen"
    context = {"why": [{"claim": "ns/c", "requests": [{"request": "gpu", "candidates": candidates}]}]}

    summarised = summary.summarise(context)

    shown = summarised["why"][0]["requests"][0]["candidates"]
    assert len(shown) == 2 * summary.MAX_PER_POOL + 1 and candidates[450] in shown
    assert summarised["summary"] == [
        "ns/c, request gpu: 871 more devices not listed (rejected 871; by pool: pool-1 436, pool-0 435)"]


def test_a_small_result_is_not_summarised(client):
    body = client.get("/?example=mig-8-gpu").content.decode()

    assert "Large result" not in body


def test_each_pods_node_table_keeps_the_node_that_fits_and_counts_the_rest():
    from allocator.engine.pods import PodNode, PodResult
    from allocator.engine.run import Outcome

    nodes = [PodNode(f"node-{n:04d}", n == 700, None if n == 700 else "cannot allocate all claims") for n in range(1000)]
    pods = [PodResult(f"p{i}", "default", "scheduled", node="node-0700", nodes=nodes) for i in range(150)]
    context = {"outcome": Outcome("allocated", pods=pods)}

    summarised = summary.summarise(context)

    shown = summarised["outcome"].pods
    assert len(shown) == summary.MAX_ITEMS and len(pods[0].nodes) == 1000  # the run's own result is untouched
    assert all(len(p.nodes) == summary.MAX_NODES + 1 and nodes[700] in p.nodes for p in shown)
    assert summarised["summary"][0] == "150 pods; 50 × scheduled not listed"


def test_counter_sets_and_compatibility_groups_list_at_most_a_pool_s_worth_of_devices():
    members = [{"device": f"d{i}", "allocatedNow": i == 300, "groups": []} for i in range(400)]
    counter_set = {"pool": "p", "counterSet": "gpu-0", "devices": members, "bars": []}
    context = {"counter_sets": [counter_set], "compatibility": [{**counter_set, "steps": []}]}

    summarised = summary.summarise(context)

    for cs in summarised["counter_sets"] + summarised["compatibility"]:
        assert len(cs["devices"]) == summary.MAX_PER_POOL + 1 and members[300] in cs["devices"]
    assert summarised["summary"] == [
        "counter set p/gpu-0: 335 more devices drawing on it not listed",
        "compatibility groups of counter set p/gpu-0: 335 more devices drawing on it not listed",
    ]
