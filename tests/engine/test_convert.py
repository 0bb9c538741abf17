"""resource.k8s.io/v1beta1 and v1beta2 objects are read as v1, with the conversion's field moves."""
import copy

from allocator.engine.convert import to_v1
from allocator.engine.pods import SCHEDULED
from allocator.engine.run import ALLOCATED, INVALID, allocate_text
from allocator.engine.scenario import read_scenario
from tests.engine import cluster as k

V1BETA1_CLAIM = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaim
metadata:
  creationTimestamp: "2025-05-02T10:00:00Z"
  name: two-gpus
  namespace: default
  resourceVersion: "7731"
  uid: 4b0f7c1e-8a49-4f0e-a0b6-7f3c9d1e2a10
spec:
  devices:
    requests:
    - name: gpus
      deviceClassName: gpu.example.com
      allocationMode: ExactCount
      count: 2
      selectors:
      - cel:
          expression: device.attributes["gpu.example.com"].model == "LATEST-GPU-MODEL"
status: {}
"""

V1BETA1_SLICE = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceSlice
metadata:
  creationTimestamp: "2025-05-02T09:58:00Z"
  generateName: node-b-gpu.example.com-
  name: node-b-gpu.example.com-4s8kq
  resourceVersion: "7702"
  uid: 0e8b1a3c-5d7f-4a2b-9c1d-3e5f7a9b1c2d
spec:
  driver: gpu.example.com
  nodeName: node-b
  pool:
    generation: 1
    name: node-b
    resourceSliceCount: 1
  devices:
  - name: gpu-0
    basic:
      attributes:
        model:
          string: LATEST-GPU-MODEL
        index:
          int: 0
      capacity:
        memory:
          value: 80Gi
  - name: gpu-1
    basic:
      attributes:
        model:
          string: LATEST-GPU-MODEL
        index:
          int: 1
      capacity:
        memory:
          value: 80Gi
"""

CLASS = k.dump(k.device_class(), k.node("node-b"))


def run(*docs, **options):
    return allocate_text("---\n".join(docs), **options)


def test_v1beta1_claim_and_slice_allocate_as_v1():
    scenario, outcome = run(CLASS, V1BETA1_SLICE, V1BETA1_CLAIM)
    assert scenario.errors == []
    assert outcome.outcome == ALLOCATED and outcome.node == "node-b"
    [claim] = outcome.claims
    assert [r["device"] for r in claim["status"]["allocation"]["devices"]["results"]] == ["gpu-0", "gpu-1"]
    assert claim["apiVersion"] == "resource.k8s.io/v1"


def test_flat_request_fields_move_under_exactly():
    data = to_v1(read_scenario(V1BETA1_CLAIM).loaded.objects[0].data).data
    assert data["apiVersion"] == "resource.k8s.io/v1"
    assert data["spec"]["devices"]["requests"] == [{
        "name": "gpus",
        "exactly": {
            "deviceClassName": "gpu.example.com", "allocationMode": "ExactCount", "count": 2,
            "selectors": [{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "LATEST-GPU-MODEL"'}}],
        },
    }]


def test_basic_device_fields_move_into_the_device():
    data = to_v1(read_scenario(V1BETA1_SLICE).loaded.objects[0].data).data
    device = data["spec"]["devices"][0]
    assert "basic" not in device
    assert device["attributes"]["index"] == {"int": 0} and device["capacity"]["memory"] == {"value": "80Gi"}


def test_conversion_leaves_the_input_alone():
    original = read_scenario(V1BETA1_SLICE).loaded.objects[0].data
    before = copy.deepcopy(original)
    to_v1(original)
    assert original == before


def test_subrequests_stay_subrequests():
    data = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
                {"name": "big", "deviceClassName": "gpu.example.com"}]}]}}}
    request = to_v1(data).data["spec"]["devices"]["requests"][0]
    assert "exactly" not in request and request["firstAvailable"][0]["name"] == "big"


def test_zero_values_do_not_make_an_exact_request():
    data = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceClaim", "metadata": {"name": "c"},
            "spec": {"devices": {"requests": [{"name": "gpu", "count": 0, "deviceClassName": "",
                                               "firstAvailable": [{"name": "a", "deviceClassName": "x"}]}]}}}
    assert "exactly" not in to_v1(data).data["spec"]["devices"]["requests"][0]


def test_v1beta1_empty_node_name_and_false_all_nodes_are_unset():
    data = {"apiVersion": "resource.k8s.io/v1beta1", "kind": "ResourceSlice", "metadata": {"name": "s"},
            "spec": {"driver": "d", "nodeName": "", "allNodes": True, "pool": {"name": "p"}}}
    assert "nodeName" not in to_v1(data).data["spec"]
    data["spec"].update(allNodes=False, nodeName="n1")
    spec = to_v1(data).data["spec"]
    assert "allNodes" not in spec and spec["nodeName"] == "n1"


def test_v1beta2_is_v1_already():
    text = k.dump(k.device_class(), k.node("node-b"),
                  k.resource_slice("node-b", [k.gpu("gpu-0", 0)], api_version="resource.k8s.io/v1beta2"),
                  k.claim("c", k.claim_spec(k.request())))
    scenario, outcome = allocate_text(text)
    assert outcome.outcome == ALLOCATED
    [warning] = [w for w in scenario.warnings if "v1beta2" in w.message]
    assert warning.kind == "ResourceSlice" and warning.field == "apiVersion" and warning.line is not None
    assert "converted as the apiserver does (same fields as v1)" in warning.message


def test_one_warning_per_kind_says_what_moved():
    second = V1BETA1_SLICE.replace("node-b-gpu.example.com-4s8kq", "other").replace("nodeName: node-b",
                                                                                      "nodeName: node-c")
    second = second.replace("name: node-b\n", "name: node-c\n")
    scenario, _ = run(CLASS, V1BETA1_SLICE, second, V1BETA1_CLAIM)
    messages = [w.message for w in scenario.warnings]
    assert ("resource.k8s.io/v1beta1 read as resource.k8s.io/v1, converted as the apiserver does "
            "(`basic` device fields moved into the device); so are 1 more ResourceSlice object in "
            "resource.k8s.io/v1beta1") in messages
    assert ("resource.k8s.io/v1beta1 read as resource.k8s.io/v1, converted as the apiserver does "
            "(request fields moved under `exactly`)") in messages


def test_a_problem_in_a_basic_device_points_at_the_field_as_written():
    bad = V1BETA1_SLICE.replace("        index:\n          int: 1", "        index:\n          int: 1\n"
                                "        bad name:\n          int: 2")
    scenario, outcome = run(CLASS, bad, V1BETA1_CLAIM)
    assert outcome.outcome == INVALID
    [problem] = scenario.errors
    assert problem.field == "spec.devices[1].basic.attributes"
    lines = "---\n".join([CLASS, bad, V1BETA1_CLAIM]).splitlines()
    assert lines[problem.line - 1] == "      attributes:" and "bad name" in lines[problem.line + 4]


def test_a_problem_in_a_flat_request_points_at_the_field_as_written():
    bad = V1BETA1_CLAIM.replace("count: 2", "count: -1")
    scenario, outcome = run(CLASS, V1BETA1_SLICE, bad)
    [problem] = scenario.errors
    assert problem.field == "spec.devices.requests[0].count"
    text = "---\n".join([CLASS, V1BETA1_SLICE, bad])
    assert text.splitlines()[problem.line - 1].strip() == "count: -1"


def test_missing_device_class_in_a_v1beta1_claim_points_at_the_flat_field():
    _, outcome = run(k.dump(k.node("node-b")), V1BETA1_SLICE, V1BETA1_CLAIM)
    assert outcome.outcome == "unsatisfiable"
    [problem] = [w for w in outcome.warnings if "does not exist" in w.message]
    assert problem.field == "spec.devices.requests[0].deviceClassName"
    assert "device class gpu.example.com does not exist" in problem.message


def test_v1beta1_device_fields_outside_basic_are_dropped_with_a_warning():
    flat = V1BETA1_SLICE.replace("  - name: gpu-1\n    basic:\n", "  - name: gpu-1\n    nodeName: node-b\n    basic:\n")
    scenario, _ = run(CLASS, flat, V1BETA1_CLAIM)
    [warning] = [w for w in scenario.warnings if w.message.startswith("unknown field")]
    assert warning.message == 'unknown field "spec.devices[1].nodeName"'
    assert warning.field == "spec.devices[1].nodeName" and warning.line is not None


def test_source_path_is_idempotent():
    conversion = to_v1(read_scenario(V1BETA1_SLICE).loaded.objects[0].data)
    once = conversion.source_path(("spec", "devices", 0, "attributes", "model"))
    assert once == ("spec", "devices", 0, "basic", "attributes", "model")
    assert conversion.source_path(once) == once
    assert conversion.source_path(("spec", "devices", 0, "name")) == ("spec", "devices", 0, "name")


def test_v1beta1_template_feeds_a_pod():
    template = """\
apiVersion: resource.k8s.io/v1beta1
kind: ResourceClaimTemplate
metadata:
  namespace: default
  name: double-gpu
spec:
  spec:
    devices:
      requests:
      - name: gpu
        deviceClassName: gpu.example.com
        count: 2
"""
    _, outcome = run(CLASS, V1BETA1_SLICE, template, k.dump(k.pod("p", templates=[("gpus", "double-gpu")])))
    [pod] = outcome.pods
    assert pod.outcome == SCHEDULED and pod.node == "node-b"
    assert [r["device"] for r in pod.claims[0].allocation["devices"]["results"]] == ["gpu-0", "gpu-1"]


def test_older_alpha_versions_are_refused_with_a_way_out():
    alpha = V1BETA1_CLAIM.replace("v1beta1", "v1alpha3")
    scenario, outcome = run(CLASS, alpha)
    assert outcome.outcome == INVALID
    assert scenario.errors[0].message.startswith("resource.k8s.io/v1alpha3 is not supported")
    assert scenario.errors[0].field == "apiVersion"
