"""Each kind of check passes on one result and fails on another, with its own message."""
from pathlib import Path

import pytest
import yaml

from allocator.workshops.checks import Submission, evaluate
from allocator.workshops.model import Variant, parse_workshop
from allocator.workshops.playground import run_inline

EXAMPLES = Path(__file__).resolve().parents[2] / "allocator" / "examples"


def example(slug: str) -> str:
    return (EXAMPLES / f"{slug}.yaml").read_text()


def run_check(check: dict, scenario: str, *, start: str | None = None, node: str = "worker-1", gates=None):
    """The result of one check (given as YAML data) against `scenario`."""
    lesson = {"title": "t", "task": "t", "scenario": start or scenario, "node": node,
              "checks": [{**check, "message": "FAILED: " + next(iter(check))}], "solution": {}}
    if gates:
        lesson["componentGates"] = gates
    workshop, problems = parse_workshop(yaml.safe_dump({"title": "w", "lessons": [lesson]}))
    assert problems == []
    lesson = workshop.lessons[0]
    variant = Variant(scenario=scenario, node=node, gates=lesson.start.gates)
    _, outcome = run_inline(variant)
    [result] = evaluate(lesson.checks, Submission(variant=variant, outcome=outcome, start=lesson.start))
    return result


SIMPLE = example("simple-gpu")
SIMPLE_16 = SIMPLE.replace('quantity("40Gi")', 'quantity("16Gi")')
SIMPLE_200 = SIMPLE.replace('quantity("40Gi")', 'quantity("200Gi")')
PARTITIONS = example("partitionable-devices")
NIC = example("consumable-capacity")
PODS = example("pods")

CASES = [
    # (check, passes on, fails on)
    ({"outcome": "allocated"}, SIMPLE, SIMPLE_200),
    ({"outcome": "unsatisfiable"}, SIMPLE_200, SIMPLE),
    ({"outcome": "allocated", "node": "worker-1"}, SIMPLE, SIMPLE_200),
    ({"outcome": "invalid"}, "kind: [", SIMPLE),
    ({"claim": "single-gpu", "allocated": True}, SIMPLE, SIMPLE_200),
    ({"claim": "default/single-gpu", "allocated": False}, SIMPLE_200, SIMPLE),
    ({"claim": "single-gpu", "devices": ["gpu-1"]}, SIMPLE, SIMPLE_16),
    ({"claim": "single-gpu", "devices": ["gpu.example.com/worker-1/gpu-0"]}, SIMPLE_16, SIMPLE),
    ({"claim": "single-gpu", "match": "gpu-[01]", "count": 1}, SIMPLE, SIMPLE_200),
    ({"claim": "single-gpu", "count": 1, "request": "gpu"}, SIMPLE, SIMPLE_200),
    ({"counter": "memory", "counterSet": "gpu-0", "free": "2Gi"}, PARTITIONS,
     PARTITIONS.replace("value: 6Gi", "value: 4Gi")),
    ({"counter": "memory", "counterSet": "gpu-0", "freeAtLeast": "1Gi"}, PARTITIONS,
     PARTITIONS.replace("value: 8Gi", "value: 6Gi")),
    ({"capacity": "bandwidth", "device": "eth1", "consumed": "8G"}, NIC, NIC.replace("bandwidth: 1.5G", "bandwidth: 3G")),
    ({"capacity": "bandwidth", "device": "eth1", "claim": "web", "consumed": "2G"}, NIC, NIC.replace("bandwidth: 1.5G", "bandwidth: 3G")),
    ({"row": "gpu-0", "claim": "single-gpu", "code": "selector"}, SIMPLE, SIMPLE_16),
    ({"row": "gpu-1", "claim": "single-gpu", "verdict": "chosen"}, SIMPLE, SIMPLE_16),
    ({"gate": "DRADeviceTaints", "component": "scheduler", "value": True}, SIMPLE, None),
    ({"selector": "memory", "claim": "single-gpu"}, SIMPLE,
     SIMPLE.replace('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', "true")),
]


@pytest.mark.parametrize("check, good, bad", CASES, ids=[str(c[0]) for c in CASES])
def test_each_check_passes_and_fails_with_its_message(check, good, bad):
    node = "" if "pod" in check else "worker-1"
    passed = run_check(check, good, node=node)
    assert passed.ok, passed
    assert passed.as_dict()["message"] is None
    if bad is not None:
        failed = run_check(check, bad, node=node)
        assert not failed.ok
        assert failed.as_dict()["message"] == "FAILED: " + next(iter(check))


def test_pod_check_reads_the_pods_node_and_pending_state():
    assert run_check({"pod": "ml/trainer-0", "node": "gpu-node-2"}, PODS, node="").ok
    assert run_check({"pod": "ml/trainer-1", "pending": True}, PODS, node="").ok
    assert not run_check({"pod": "ml/trainer-1", "node": "gpu-node-1"}, PODS, node="").ok
    assert not run_check({"pod": "ml/trainer-0", "pending": True}, PODS, node="").ok


def test_pod_check_reads_a_pending_pods_reason_whole():
    pending = {"pod": "ml/trainer-1", "pending": True}
    assert run_check({**pending, "reason": "cannot allocate all claims"}, PODS, node="").ok
    assert not run_check({**pending, "reason": "cannot allocate"}, PODS, node="").ok  # whole reasons only
    assert not run_check({**pending, "reason": "Insufficient cpu"}, PODS, node="").ok
    assert not run_check({"pod": "ml/trainer-0", "pending": True, "reason": "cannot allocate all claims"},
                         PODS, node="").ok  # trainer-0 is scheduled


def test_gate_check_reads_the_attendees_settings():
    off = {"scheduler": {"DRADeviceTaints": False}}
    assert not run_check({"gate": "DRADeviceTaints", "component": "scheduler", "value": True}, SIMPLE, gates=off).ok
    assert run_check({"gate": "DRADeviceTaints", "component": "scheduler", "value": False}, SIMPLE, gates=off).ok
    assert not run_check({"gate": "DRADeviceTaints", "value": False}, SIMPLE, gates=off).ok  # every component


def test_unchanged_compares_objects_not_text():
    check = {"unchanged": ["ResourceSlice", "DeviceClass/gpu.example.com"]}
    reformatted = SIMPLE.replace("# Two GPUs", "# Edited comment; two GPUs")
    assert run_check(check, reformatted, start=SIMPLE).ok
    assert run_check(check, SIMPLE_16, start=SIMPLE).ok  # only the claim changed
    assert not run_check(check, SIMPLE.replace("value: 24Gi", "value: 48Gi"), start=SIMPLE).ok
    assert not run_check(check, "kind: [", start=SIMPLE).ok


def test_status_writers_check_reads_the_status_authorization():
    text = example("granular-status-authorization")
    pinned = text.replace("""  nodeSelector:
    nodeSelectorTerms:
    - matchExpressions:
      - key: topology.example.com/rack
        operator: In
        values: [rack-a]
""", "  nodeName: worker-1\n")
    assert pinned != text
    check = {"statusWriters": "rack-accelerator", "pinnedToNode": "worker-1", "verb": "associated-node:update"}
    assert run_check(check, pinned).ok
    failed = run_check(check, text)
    assert not failed.ok and failed.message == "FAILED: statusWriters"
    assert run_check({"statusWriters": "rack-accelerator", "pinnedToNode": ""}, text).ok
