"""Compare: two variants on the same node, the differences drawn, and a link that holds both sides."""
import re

import pytest
from django.test import Client

from allocator import compare, gallery
from allocator.engine.gates import GATES
from allocator.engine.gates import COMPONENTS
from allocator.sharing import ShareError, read_fragment
from allocator.workshops.library import shipped
from allocator.workshops.model import Variant

pytestmark = pytest.mark.django_db
SKEW = next(lesson for lesson in shipped()["dra-in-90-minutes"].lessons if lesson.compare is not None)
SIMPLE = gallery.get("simple-gpu").scenario


def test_link_holds_both_sides():
    a = Variant(scenario=SIMPLE, node="worker-1", gates={"scheduler": {"DRADeviceTaints": False}})
    b = Variant(scenario=SIMPLE.replace("40Gi", "16Gi"), node="worker-1")
    assert compare.decode(compare.encode(a, b)) == (a, b)
    same = Variant(scenario=SIMPLE, node="worker-1")
    assert compare.decode(compare.encode(a, same)) == (a, same)
    with pytest.raises(ShareError):
        compare.decode("not-a-link")


def test_version_skew_shows_the_pool_incomplete_on_one_side_only(client):
    response = client.get("/compare?c=" + compare.encode(SKEW.start, SKEW.compare))
    body = response.content.decode()
    assert response.status_code == 200
    side_a, side_b = body.split('id="side-a"')[1].split('id="side-b"')
    assert "<strong>incomplete</strong>" in side_a and "<strong>incomplete</strong>" not in side_b
    assert "✘ Cannot allocate" in side_a and "✔ Allocated on node gpu-node-1" in side_b
    assert "DRADeviceCompatibilityGroups on kube-scheduler: off in A, on in B" in body
    link = re.search(r'class="open-side" href="/#(s=[^"]+)"', side_b).group(1)
    assert read_fragment(link).gates == SKEW.compare.gates  # each side opens in the playground
    diff = body.split('id="differences"')[1].split("</section>")[0]
    assert re.search(r'<tr class="diff-pool">.*?gpu.nvidia.com/gpu-node-1.*?incomplete.*?usable', diff, re.S)
    assert re.search(r'<tr class="diff-claim">.*?default/mig-job.*?pending.*?allocated: mig: gpu-node-1/gpu-0-mig-3g20gb-9-0',
                     diff, re.S)


def test_without_a_link_compare_opens_on_version_skew(client):
    body = client.get("/compare").content.decode()
    assert "Differences" in body and "incomplete" in body


def test_differences_name_devices_counters_and_reasons():
    def run(text):
        from allocator.workshops.playground import run_inline

        _, outcome = run_inline(Variant(scenario=text, node="worker-1"))
        return outcome

    partitions = gallery.get("partitionable-devices").scenario
    diffs = compare.differences(run(SIMPLE), run(SIMPLE.replace("40Gi", "16Gi")))
    kinds = {(d.kind, d.what): (d.a, d.b) for d in diffs}
    assert kinds[("devices", "default/single-gpu")] == ("gpu: worker-1/gpu-1", "gpu: worker-1/gpu-0")
    assert kinds[("row", "default/single-gpu gpu: gpu.example.com/worker-1/gpu-0")] == ("selector", "chosen")
    diffs = compare.differences(run(partitions), run(partitions.replace("value: 6Gi", "value: 4Gi")))
    assert any(d.kind == "counter" and d.what.endswith("gpu-0: memory") for d in diffs)
    assert compare.differences(run(SIMPLE), run(SIMPLE)) == []


def test_the_form_posts_both_sides_and_redirects_to_the_link(client):
    data = {"a-scenario": SIMPLE, "a-node": "worker-1", "b-scenario": "", "a-gates-submitted": "1",
            "b-gates-submitted": "1"}
    for key, _ in COMPONENTS:
        for name, info in GATES.items():
            if info.default:
                data[f"a-gate-{key}-{name}"] = "on"
                if name != "DRADeviceTaints":
                    data[f"b-gate-{key}-{name}"] = "on"
    response = client.post("/compare", data)
    assert response.status_code == 303
    a, b = compare.decode(response["Location"].split("?c=")[1])
    assert a.scenario == b.scenario == SIMPLE and a.node == b.node == "worker-1"
    assert a.gates == {} and b.gates == {key: {"DRADeviceTaints": False} for key, _ in COMPONENTS}
    body = client.get(response["Location"]).content.decode()
    assert "Same scenario text, different settings." in body


def test_compare_form_is_csrf_protected():
    assert Client(enforce_csrf_checks=True).post("/compare", {"a-scenario": SIMPLE}).status_code == 403


def test_a_broken_link_says_so(client):
    response = client.get("/compare?c=%%%")
    assert response.status_code == 400 and "does not decode" in response.content.decode()


def test_a_comparison_link_nested_too_deeply_is_refused_not_a_crash(client):
    import base64
    import zlib

    packer = zlib.compressobj(9, zlib.DEFLATED, -15)
    packed = packer.compress(b"[" * 100_000) + packer.flush()
    link = base64.urlsafe_b64encode(packed).decode("ascii").rstrip("=")
    with pytest.raises(ShareError, match="nested too deeply"):
        compare.decode(link)
    response = client.get(f"/compare?c={link}")
    assert response.status_code == 400 and "nested too deeply" in response.content.decode()
