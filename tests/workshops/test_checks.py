"""Each kind of check passes on one result and fails on another, with its own message."""
from pathlib import Path

import pytest
import yaml

from allocator.workshops.lint import check_lesson
from allocator.workshops.model import Variant, parse_workshop

EXAMPLES = Path(__file__).resolve().parents[2] / "allocator" / "examples"


def example(slug: str) -> str:
    return (EXAMPLES / f"{slug}.yaml").read_text()


def run_checks(check: dict, scenario: str, *, start: str | None = None, node: str = "worker-1", gates=None,
               editable=None):
    """Every result (the protected objects' first, when one changed) of one check against `scenario`."""
    lesson = {"title": "t", "task": "t", "scenario": start or scenario, "node": node,
              "checks": [{**check, "message": "FAILED: " + next(iter(check))}], "solution": {}}
    if gates:
        lesson["componentGates"] = gates
    if editable is not None:
        lesson["editable"] = editable
    workshop, problems = parse_workshop(yaml.safe_dump({"title": "w", "lessons": [lesson]}))
    assert problems == []
    lesson = workshop.lessons[0]
    results, _ = check_lesson(lesson, Variant(scenario=scenario, node=node, gates=lesson.start.gates))
    return results


def run_check(check: dict, scenario: str, **options):
    """The result of one check (given as YAML data) against `scenario`, edited objects allowed."""
    [result] = run_checks(check, scenario, editable=["DeviceClass", "ResourceSlice", "Node"], **options)
    return result


SIMPLE = example("simple-gpu")
SIMPLE_16 = SIMPLE.replace('quantity("40Gi")', 'quantity("16Gi")')
SIMPLE_200 = SIMPLE.replace('quantity("40Gi")', 'quantity("200Gi")')
PARTITIONS = example("partitionable-devices")
NIC = example("consumable-capacity")
PODS = example("pods")
BINDING = (Path(__file__).parent / "files" / "binding-conditions.yaml").read_text()  # bindsToNode, allNodes
UNBOUND = BINDING.replace("    bindsToNode: true\n", "")
NO_CONDITIONS = UNBOUND.replace("    bindingConditions: [fabric.example.com/attached]\n", "").replace(
    "    bindingFailureConditions: [fabric.example.com/attach-failed]\n", "")
WAITS = ["fabric.example.com/attached"]

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
    ({"counter": "memory", "counterSet": "gpu-0", "freeAtMost": "2Gi"}, PARTITIONS,
     PARTITIONS.replace("value: 6Gi", "value: 4Gi")),
    ({"capacity": "bandwidth", "device": "eth1", "consumedAtMost": "8G"}, NIC,
     NIC.replace("bandwidth: 1.5G", "bandwidth: 3G")),
    ({"capacity": "bandwidth", "device": "eth1", "consumedAtLeast": "8G", "consumedAtMost": "9G"}, NIC,
     NIC.replace("bandwidth: 1.5G", "bandwidth: 1G")),
    ({"claim": "fabric-gpu", "bindingConditions": WAITS}, BINDING, NO_CONDITIONS),
    ({"claim": "fabric-gpu", "bindingFailureConditions": ["fabric.example.com/attach-failed"]}, BINDING, NO_CONDITIONS),
    ({"claim": "fabric-gpu", "bindingConditions": []}, NO_CONDITIONS, BINDING),
    ({"claim": "fabric-gpu", "pinned": True}, BINDING, UNBOUND),
    ({"claim": "fabric-gpu", "pinned": False}, UNBOUND, BINDING),
    ({"claim": "single-gpu", "pinned": True}, SIMPLE, SIMPLE_200),  # a node-local device pins the node too
    ({"row": "gpu-0", "claim": "single-gpu", "code": "selector"}, SIMPLE, SIMPLE_16),
    ({"row": "gpu-1", "claim": "single-gpu", "verdict": "chosen"}, SIMPLE, SIMPLE_16),
    ({"gate": "DRADeviceTaints", "component": "scheduler", "value": True}, SIMPLE, None),
    ({"selects": ["gpu-1"], "claim": "single-gpu", "request": "gpu"}, SIMPLE,
     SIMPLE.replace('device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', "'true'")),
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
    off = {"scheduler": {"DRADeviceTaints": False, "DRADeviceTaintRules": False}}
    assert not run_check({"gate": "DRADeviceTaints", "component": "scheduler", "value": True}, SIMPLE, gates=off).ok
    assert run_check({"gate": "DRADeviceTaints", "component": "scheduler", "value": False}, SIMPLE, gates=off).ok
    assert not run_check({"gate": "DRADeviceTaints", "value": False}, SIMPLE, gates=off).ok  # every component


def test_unchanged_compares_objects_not_text():
    check = {"unchanged": ["ResourceSlice", "DeviceClass/gpu.example.com"]}
    reformatted = SIMPLE.replace("# Two GPUs", "# Edited comment; two GPUs")
    assert run_check(check, reformatted, start=SIMPLE).ok
    assert run_check(check, SIMPLE_16, start=SIMPLE).ok  # only the claim changed
    assert not run_check(check, SIMPLE.replace("value: 24Gi", "value: 48Gi"), start=SIMPLE).ok
    assert not run_checks(check, "kind: [", start=SIMPLE)[-1].ok


RBAC = example("example-driver-rbac")


def test_status_write_check_asks_the_rbac_what_if():
    """The example driver's chart grants associated-node only: its plugin may write the status of the
    node-local claim, not of the fabric GPU's claim, until the role also grants arbitrary-node."""
    local = {"statusWrite": "local-gpu", "driver": "gpu.example.com", "node": "worker-1"}
    fabric = {"statusWrite": "fabric-gpu", "driver": "gpu.example.com", "node": "worker-1"}
    assert run_check(local, RBAC).ok
    failed = run_check(fabric, RBAC)
    assert not failed.ok and failed.message == "FAILED: statusWrite"
    assert run_check({**fabric, "allowed": False}, RBAC).ok
    granted = RBAC.replace('verbs: ["associated-node:update", "associated-node:patch"]',
                           'verbs: ["associated-node:update", "arbitrary-node:update"]')
    assert run_check(fabric, granted).ok
    assert not run_check({**fabric, "verb": "patch"}, granted).ok  # PATCH needs its own verb
    off = {"apiserver": {"DRAResourceClaimGranularStatusAuthorization": False}}
    assert run_check(fabric, RBAC, gates=off).ok  # without the gate only the front door is asked


def test_request_check_reads_the_shape_not_the_selectors():
    text = example("prioritized-list")
    claim = next(d for d in yaml.safe_load_all(text) if d["kind"] == "ResourceClaim"
                 and "firstAvailable" in d["spec"]["devices"]["requests"][0])
    request = claim["spec"]["devices"]["requests"][0]
    name, claim_name = request["name"], claim["metadata"]["name"]
    check = {"request": name, "claim": claim_name, "firstAvailable": [
        {"deviceClassName": "gpu.example.com", "count": 1, "selects": ["large-0"]},
        {"count": 2, "selects": ["small-0", "small-1"]}]}
    assert run_check(check, text).ok
    assert not run_check({**check, "firstAvailable": check["firstAvailable"][::-1]}, text).ok
    assert not run_check(check, SIMPLE).ok  # no such claim
    assert run_check({"request": "gpu", "claim": "single-gpu", "count": 1, "allocationMode": "ExactCount"}, SIMPLE).ok
    assert not run_check({"request": "gpu", "claim": "single-gpu", "allocationMode": "All"}, SIMPLE).ok


def test_selects_compares_the_set_a_selector_picks():
    check = {"selects": ["gpu-1"], "claim": "single-gpu", "request": "gpu"}
    assert run_check(check, SIMPLE).ok
    assert not run_check(check, SIMPLE.replace(
        'device.capacity["gpu.example.com"].memory.compareTo(quantity("40Gi")) >= 0', "'true'")).ok  # a tautology
    assert not run_check(check, SIMPLE_16).ok  # picks both


def test_constraint_check_needs_the_constraint_over_the_requests():
    text = example("distinct-numa")
    docs = [d for d in yaml.safe_load_all(text) if d and d["kind"] == "ResourceClaim"]
    claim = next(d for d in docs if d["spec"]["devices"].get("constraints"))
    constraint = claim["spec"]["devices"]["constraints"][0]
    kind = "matchAttribute" if "matchAttribute" in constraint else "distinctAttribute"
    check = {"constraint": kind, "attribute": constraint[kind], "claim": claim["metadata"]["name"]}
    assert run_check(check, text).ok
    other = "distinctAttribute" if kind == "matchAttribute" else "matchAttribute"
    assert not run_check({**check, "constraint": other}, text).ok


def test_protected_objects_fail_by_default_and_name_what_changed():
    edited = SIMPLE.replace("value: 24Gi", "value: 48Gi")
    first, result = run_checks({"claim": "single-gpu", "allocated": True}, edited, start=SIMPLE)
    assert not first.ok and "ResourceSlice" in first.message and result.ok
    [result] = run_checks({"claim": "single-gpu", "allocated": True}, edited, start=SIMPLE, editable=["ResourceSlice"])
    assert result.ok


def test_a_check_on_an_invalid_scenario_says_where():
    broken = SIMPLE.replace("deviceClassName: gpu.example.com", "deviceClassName: 7")
    valid, result = run_checks({"claim": "single-gpu", "allocated": True}, broken, start=SIMPLE)
    assert not valid.ok and valid.message.startswith("The scenario is invalid:") and valid.line
    assert not result.ok and "not checked" in result.message


def test_a_raising_check_is_broken_not_failed():
    from allocator.workshops.checks import Check, REGISTRY, Kind, Submission, run_check as evaluate_one

    class Raises(Kind):
        key = "raises"

        def passes(self, spec, attempt):
            raise KeyError("nope")

    REGISTRY["raises"] = Raises()
    try:
        result = evaluate_one(Check("raises", {}, "m", 1), Submission(None, None, None))
    finally:
        del REGISTRY["raises"]
    assert not result.ok and result.broken == "KeyError: 'nope'"


def test_why_in_a_message_quotes_the_engines_headline():
    [result] = run_checks({"claim": "single-gpu", "allocated": True}, SIMPLE_200)
    check = {"claim": "single-gpu", "allocated": True, "message": "Still pending: {why}"}
    lesson = {"title": "t", "task": "t", "scenario": SIMPLE_200, "node": "worker-1", "checks": [check], "solution": {}}
    workshop, _ = parse_workshop(yaml.safe_dump({"title": "w", "lessons": [lesson]}))
    [result], (_, outcome) = check_lesson(workshop.lessons[0], workshop.lessons[0].start)
    assert outcome.explanation.headline and result.message == "Still pending: " + outcome.explanation.headline


def test_why_in_a_korean_message_is_the_headline_in_the_pages_language():
    """A Korean message quoting `{why}` shows the headline in Korean (the wording layer's sentence), an
    English one the engine's English: never the engine's English inside a Korean sentence."""
    from django.utils import translation

    from allocator import wording

    check = {"claim": "single-gpu", "allocated": True, "message": "아직 보류 중이에요. {why}"}
    lesson = {"title": "t", "task": "t", "scenario": SIMPLE_200, "node": "worker-1", "checks": [check], "solution": {}}
    workshop, _ = parse_workshop(yaml.safe_dump({"title": "w", "lessons": [lesson]}))
    lesson = workshop.lessons[0]
    with translation.override("ko"):
        [korean], (_, outcome) = check_lesson(lesson, lesson.start)
        said = wording.headline(outcome.explanation)
    english = outcome.explanation.headline
    assert said.lang is None and said.text != english  # the wording layer has this headline in Korean
    assert korean.message == "아직 보류 중이에요. " + said.text
    assert english not in korean.message and "클레임" in korean.message
    with translation.override("en"):
        [result], _ = check_lesson(lesson, lesson.start)
    assert result.message == "아직 보류 중이에요. " + english


def test_an_allocated_claims_allocation_is_the_schedulers_even_where_the_claim_is_editable():
    """The pods lesson lets the attendee delete the finished notebook's claim; rewriting its allocation
    (a device that does not exist, adminAccess, another pool) is refused, as issue 22 found it passing."""
    from dataclasses import replace

    from allocator.workshops.library import shipped

    lesson = next(lesson for lesson in shipped()["dra-in-90-minutes"].lessons if lesson.slug == "pods")
    line = "        - {request: gpu, driver: gpu.example.com, pool: gpu-node-1, device: gpu-0}"
    assert line in lesson.start.scenario
    for corrupted in (line.replace("gpu-0}", "gpu-9}"), line.replace("gpu-0}", "gpu-0, adminAccess: true}"),
                      line.replace("pool: gpu-node-1", "pool: gpu-node-2")):
        results, _ = check_lesson(lesson, replace(lesson.start, scenario=lesson.start.scenario.replace(line, corrupted)))
        assert not results[0].ok and "ResourceClaim ml/notebook-gpu status (its allocation rewritten)" in results[0].message
    results, _ = check_lesson(lesson, lesson.solution)
    assert all(r.ok for r in results)  # the claim deleted


@pytest.mark.parametrize("check, said", [
    ({"counter": "memory", "counterSet": "gpu-0"}, "a counter check needs free, freeAtLeast or freeAtMost"),
    ({"capacity": "bandwidth", "device": "eth1"}, "a capacity check needs consumed, consumedAtLeast or consumedAtMost"),
    ({"capacity": "bandwidth", "device": "eth1", "consumedAtMost": "lots"}, "consumedAtMost: 'lots' is not a quantity"),
    ({"counter": "memory", "counterSet": "gpu-0", "freeAtLeast": True}, "freeAtLeast must be a quantity"),
])
def test_counter_and_capacity_bounds_are_validated_alike(check, said):
    lesson = {"title": "t", "task": "t", "scenario": SIMPLE, "checks": [{**check, "message": "m"}], "solution": {}}
    _, problems = parse_workshop(yaml.safe_dump({"title": "w", "lessons": [lesson]}))
    assert any(said in p.message for p in problems), problems


def test_bounds_are_described_in_words():
    from allocator.workshops.checks import describe

    assert describe("counter", {"counter": "memory", "counterSet": "gpu-0", "freeAtLeast": "1Gi", "freeAtMost": "2Gi"}) \
        == "counter gpu-0/memory has at least 1Gi free and has at most 2Gi free"
    assert describe("capacity", {"capacity": "bandwidth", "device": "eth1", "consumed": "8G"}) \
        == "bandwidth consumed on eth1 is 8G"
