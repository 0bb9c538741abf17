"""Explanation data: verdicts, the furthest attempt of a failed search, and the panels' data."""
from allocator import gallery
from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.run import allocate_text


def explain(slug, **gates):
    example = gallery.get(slug)
    merged = {**example.gates, **gates}
    _, outcome = allocate_text(example.scenario, node_name=example.node,
                               gates=ComponentGates.uniform(gates_from_dict(merged)))
    return outcome, outcome.explanation.as_dict() if outcome.explanation is not None else None


def candidates(explanation, claim, request):
    for c in explanation["claims"]:
        if c["claim"] == claim:
            for r in c["requests"]:
                if r["request"] == request:
                    return {cand["device"]: cand for cand in r["candidates"]}
    raise KeyError((claim, request))


def test_failed_search_is_explained_from_its_furthest_attempt():
    outcome, explanation = explain("partitionable-devices")
    assert outcome.outcome == "unsatisfiable"
    assert explanation["blockedAt"] == {"claim": "default/training", "request": "gpu"}
    first = candidates(explanation, "default/inference", "gpu")
    assert first["gpu-0-part-a"]["verdict"] == "tried"
    blocked = candidates(explanation, "default/training", "gpu")
    assert blocked["gpu-0-part-b"]["code"] == "counter"
    assert blocked["gpu-0-part-b"]["counterSet"] == "gpu-0"


def test_device_map_marks_chosen_in_use_and_tainted_devices():
    _, explanation = explain("taints-tolerations")
    states = {d["device"]: d["state"] for d in explanation["deviceMap"][0]["devices"]}
    assert states == {"gpu-0": "chosen", "gpu-1": "tainted"}
    _, explanation = explain("prioritized-list")
    states = {d["device"]: d["state"] for d in explanation["deviceMap"][0]["devices"]}
    assert states["large-0"] == "in-use"


def test_compatibility_state_records_each_pick_and_the_refusal():
    _, explanation = explain("compatibility-groups")
    (state,) = explanation["compatibility"]
    assert [step["device"] for step in state["steps"]] == ["mig-0", "mig-1"]
    assert state["final"] == "{mig}"
    refused = {d["device"]: d["rejected"] for d in state["devices"]}
    assert "{mig} ∩ {vgpu} = ∅ (set by mig-0 of claim default/mig-job" in refused["vgpu-0"]


def test_node_operations_are_skipped_only_when_every_device_skips_them():
    _, explanation = explain("optional-node-operations")
    (op,) = explanation["nodeOperations"]
    assert op["calls"] == [{"call": "NodePrepareResources", "runs": False},
                           {"call": "NodeUnprepareResources", "runs": False}]
    assert op["nodeDeclaresFeature"] is True


def test_capacity_shares_show_requested_and_consumed_amounts():
    _, explanation = explain("consumable-capacity")
    (device,) = explanation["capacity"]
    web = device["sharesNow"][0]
    assert web["requested"] == {"bandwidth": "1500M"}
    assert web["consumedCapacity"] == {"bandwidth": "2G", "queues": "1"}


def test_ignored_slices_name_the_gate():
    _, explanation = explain("version-skew", DRADeviceCompatibilityGroups=False)
    assert explanation["ignoredSlices"][0]["slice"] == "worker-1-gpu-0-partitions"
    assert explanation["pools"][0]["state"] == "incomplete"
