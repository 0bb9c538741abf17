"""A real cluster dump on the page: opened as a file, run within the usual bounds, and shown
with the chosen node in full and everything else as counts, so a render stays small."""
import re
import sys
from pathlib import Path

from django.core.files.uploadedfile import SimpleUploadedFile

from allocator import gallery, panels
from allocator.run_settings import MAX_SCENARIO_BYTES

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
    assert body.count('class="claim claim-') == panels.MAX_ITEMS


def test_a_small_result_is_not_summarised(client):
    body = client.get("/?example=mig-8-gpu").content.decode()

    assert "Large result" not in body


NODES = 40
DEVICES = 300
PODS = 150


def big_cluster() -> str:
    """40 nodes; node-00 has one pool of 300 devices; pod big wants 30 of them through a claim
    template, and 149 more pods want a little CPU each."""
    docs = [f"apiVersion: v1\nkind: Node\nmetadata: {{name: node-{n:02d}}}\n"
            f"status: {{allocatable: {{cpu: '64', memory: 256Gi, pods: '110'}}}}\n" for n in range(NODES)]
    docs.append("apiVersion: resource.k8s.io/v1\nkind: DeviceClass\nmetadata: {name: gpu}\n"
                "spec:\n  selectors:\n  - cel: {expression: device.driver == 'gpu.example.com'}\n")
    for part in range(3):  # a slice holds at most 128 devices: one pool in three slices
        devices = "".join(f"  - name: gpu-{i:03d}\n" for i in range(part * 100, part * 100 + 100))
        docs.append(f"apiVersion: resource.k8s.io/v1\nkind: ResourceSlice\nmetadata: {{name: node-00-gpus-{part}}}\n"
                    "spec:\n  driver: gpu.example.com\n  nodeName: node-00\n"
                    "  pool: {name: node-00, generation: 1, resourceSliceCount: 3}\n  devices:\n" + devices)
    docs.append("apiVersion: resource.k8s.io/v1\nkind: ResourceClaimTemplate\nmetadata: {name: thirty}\n"
                "spec:\n  spec:\n    devices:\n      requests:\n"
                "      - name: gpus\n        exactly: {deviceClassName: gpu, count: 30}\n")
    docs.append("apiVersion: v1\nkind: Pod\nmetadata: {name: big}\nspec:\n  containers:\n  - name: c\n"
                "    image: train\n    resources:\n      claims:\n      - name: gpus\n"
                "  resourceClaims:\n  - name: gpus\n    resourceClaimTemplateName: thirty\n")
    for i in range(PODS - 1):
        docs.append(f"apiVersion: v1\nkind: Pod\nmetadata: {{name: small-{i:03d}}}\nspec:\n  containers:\n"
                    "  - name: c\n    image: web\n    resources: {requests: {cpu: 100m}}\n")
    return "---\n".join(docs)


def panel(body: str, key: str) -> str:
    start = body.index(f'<div class="panel" id="panel-{key}">')
    following = body.find('<div class="panel" id="panel-', start + 1)
    return body[start:following if following != -1 else len(body)]


def notes(body: str) -> list[str]:
    box = re.search(r'<details class="result-summary".*?<ul>(.*?)</ul>', body, re.S)
    return re.findall(r"<li>(.*?)</li>", box.group(1)) if box else []


def test_every_panel_shows_the_rows_its_note_says_on_a_big_result(client):
    response = client.post("/", {"scenario": big_cluster(), "node": "", "gates-submitted": "1",
                                 **{f"gate-{c}-{g}": "on" for c in ("apiserver", "scheduler", "kubelet")
                                    for g in ("DRAPartitionableDevices", "DRADeviceTaints")}},
                           HTTP_HX_REQUEST="true")
    body = response.content.decode()
    said = notes(body)
    assert heading(body).startswith("✔"), heading(body)

    # Pods: 100 of 150 pod blocks, and the note counts the 50 left out.
    pods = panel(body, "pods")
    assert pods.count('<div class="pod pod-') == panels.MAX_ITEMS
    assert "150 pods; 50 × scheduled not listed" in said

    # Each pod's node table: the rows shown and the folded nodes add up to the 40 nodes.
    first = pods.split('<div class="pod pod-')[1]
    shown = first.count("data-node=")
    folded = sum(int(n) for n in re.findall(r"<summary>(\d+) nodes?: ", first))
    assert shown < NODES and shown + folded == NODES

    # The why table: at most a pool's worth of rows per pool (the 30 chosen among them), and the note
    # counts the rest, so listed and not listed add up to the pool.
    why = panel(body, "why")
    listed = why.count("data-device=") + sum(int(n) for n in re.findall(r"<summary>(\d+) devices?: ", why))
    assert listed == panels.MAX_PER_POOL
    (note,) = [n for n in said if "more devices not listed" in n and n.startswith("default/big")]
    hidden = int(re.search(r"(\d+) more devices not listed", note).group(1))
    assert listed + hidden == DEVICES
    assert why.count('class="verdict-chosen"') == 30

    # The pod's own why, under its block, is cut the same way.
    big = pods.split('data-pod="default/big"')[1].split('<div class="pod pod-')[0]
    own = len(re.findall(r'<tr class="verdict-[a-z-]+"><td>', big))  # a device's row (a node's has data-node)
    own += sum(int(n) for n in re.findall(r'<tr class="verdict-[a-z-]+ folded"><td colspan="3">(\d+) devices?', big))
    assert own == panels.MAX_PER_POOL
    (note,) = [n for n in said if n.startswith("why of pod default/big: ")]
    assert f"{DEVICES - own} more devices not listed" in note

    # The device map: a pool's worth of tiles, the rest counted.
    tiles = panel(body, "devices").count('<span class="tile tile-')
    assert tiles == panels.MAX_PER_POOL
    (note,) = [n for n in said if n.startswith("device map of pool gpu.example.com/node-00")]
    assert f"{DEVICES - tiles} more devices not drawn" in note

    # Every note is about a list that really was cut.
    assert len(said) == 4, said
