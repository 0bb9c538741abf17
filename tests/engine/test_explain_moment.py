"""Each why row is what the search saw when it considered the device, in the reported attempt."""
import pytest

from allocator import gallery
from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.run import allocate_text

from .helpers import allocated, claim, gpu_class, node, request, run, slice_

VERDICTS = {"chosen", "tried", "rejected", "not-needed", "not-used", "not-reached"}


def example(slug, **gates):
    ex = gallery.get(slug)
    _, outcome = allocate_text(ex.scenario, node_name=ex.node,
                               gates=ComponentGates.uniform(gates_from_dict({**ex.gates, **gates})))
    return outcome


def rows(outcome, claim_key, request_name) -> dict:
    for c in outcome.explanation.as_dict()["claims"]:
        if c["claim"] == claim_key:
            for r in c["requests"]:
                if r["request"] == request_name:
                    return {row["device"]: row for row in r["candidates"]}
    raise KeyError((claim_key, request_name))


def verdicts(outcome, claim_key, request_name) -> dict:
    return {d: (row["verdict"], row["code"]) for d, row in rows(outcome, claim_key, request_name).items()}


def dev(name, **attributes):
    return {"name": name, "attributes": {
        k: {"int": v} if isinstance(v, int) else {"string": v} for k, v in attributes.items()}}


def two_gpus(*claims_, **slice_fields):
    return [gpu_class(), node(), slice_("s", [dev("gpu-0", numa=0), dev("gpu-1", numa=1)], **slice_fields), *claims_]


# --- the gallery ----------------------------------------------------------------------------------


def test_abandoned_subrequest_rows_are_its_own_selector_not_the_later_picks():
    outcome = example("prioritized-list")
    assert verdicts(outcome, "default/flexible", "gpu/large") == {
        "small-0": ("rejected", "selector"), "small-1": ("rejected", "selector"), "large-0": ("rejected", "in-use")}
    assert rows(outcome, "default/flexible", "gpu/large")["large-0"]["heldBy"] == [
        {"claim": "default/already-running", "request": None, "device": "gpu.example.com/worker-1/large-0",
         "allocatedBefore": True}]
    assert verdicts(outcome, "default/flexible", "gpu/two-small")["small-0"] == ("chosen", None)


def test_a_device_is_never_blamed_on_a_claim_allocated_after_it():
    outcome = example("granular-status-authorization")
    accel = rows(outcome, "default/local-gpu", "gpu")["accel-0"]
    assert (accel["verdict"], accel["code"], accel["facts"]["owner"]) == ("rejected", "selector", "class")


def test_a_request_that_already_has_its_device_does_not_reach_the_rest():
    outcome = example("compatibility-groups")
    assert verdicts(outcome, "default/mig-job", "slice")["mig-1"] == ("not-needed", None)
    vgpu = rows(outcome, "default/any-partition", "slice")["vgpu-0"]
    assert vgpu["code"] == "groups"
    assert vgpu["heldBy"][0]["claim"] == "default/mig-job" and vgpu["heldBy"][0]["request"] == "slice"


def test_identical_partitions_get_the_same_reason():
    outcome = example("mig-8-gpu")
    small = rows(outcome, "ml/notebook", "small")
    same = {small[f"gpu-{g}-mig-1g5gb-{i}"]["code"] for g in range(6) for i in range(3)}
    assert same == {"counter"}
    medium = rows(outcome, "ml/notebook", "medium")
    assert {medium[f"gpu-{g}-mig-3g20gb-5"]["code"] for g in range(6)} == {"counter"}


def test_device_map_blocks_partitions_of_a_used_up_counter_set():
    states = {d["device"]: (d["state"], d["blockedBy"])
              for pool in example("mig-8-gpu").explanation.as_dict()["deviceMap"] for d in pool["devices"]}
    assert states["gpu-0-mig-2g10gb-3"] == ("blocked", "gpu-0")
    assert states["gpu-6"] == ("blocked", "gpu-6")  # the whole GPU, with 5 of its 7 slices taken
    assert states["gpu-7"] == ("free", None)


@pytest.mark.parametrize("slug", [e.slug for e in gallery.all_examples()])
def test_every_gallery_row_has_a_verdict_and_chosen_rows_are_the_result(slug):
    outcome = example(slug)
    # None: no DRA search to explain (node-allocatable-cpus: the pending pod fails on the CPUs its claim adds)
    explanation = outcome.explanation.as_dict() if outcome.explanation is not None else None
    if explanation is None:
        return
    results = {}
    for c in outcome.claims:
        key = f"{c['metadata']['namespace']}/{c['metadata']['name']}"
        for r in ((c.get("status") or {}).get("allocation") or {}).get("devices", {}).get("results", []):
            results.setdefault(key, []).append((r["request"], r["device"]))
    for c in explanation["claims"]:
        chosen = []
        for r in c["requests"]:
            for row in r["candidates"]:
                assert row["verdict"] in VERDICTS
                assert (row["code"] is not None) == (row["verdict"] == "rejected" or row["verdict"] == "tried")
                if row["verdict"] == "chosen":
                    chosen.append((r["request"], row["device"]))
        if explanation["success"]:
            assert sorted(chosen) == sorted(results.get(c["claim"], []))


# --- hand-made scenarios ---------------------------------------------------------------------------


def test_count_short_headline_says_so_plainly():
    outcome = run(two_gpus(claim("train", [request(count=3)])))
    assert outcome.explanation.as_dict()["headline"] == (
        "request gpu of claim default/train needs 3 devices; on worker-1 2 devices pass its selectors and "
        "neither is taken; no 3 exist")
    assert verdicts(outcome, "default/train", "gpu") == {"gpu-0": ("tried", "given-up"), "gpu-1": ("tried", "given-up")}


def test_a_constraint_failure_headline_names_the_constraint_and_the_pick_that_fixed_the_value():
    outcome = run(two_gpus(claim("pair", [request(count=2)], constraints=[{"matchAttribute": "gpu.example.com/numa"}])))
    assert outcome.explanation.as_dict()["headline"] == (
        "request gpu of claim default/pair needs 2 devices; with gpu-0 picked, gpu-1 is ruled out by a constraint: "
        "matchAttribute gpu.example.com/numa: 1 differs from 0 (from gpu-0 of claim default/pair, request gpu)")


def test_nothing_matches_the_class_headline_names_the_selector():
    outcome = run([gpu_class(driver="other.example.com"), node(), slice_("s", [dev("gpu-0")]),
                   claim("a", [request()])])
    assert outcome.explanation.as_dict()["headline"] == (
        'every device on worker-1 fails for request gpu of claim default/a: device class gpu selector #0 is false: '
        'device.driver == "other.example.com"')


def test_two_claims_competing_name_the_earlier_pick_as_holder():
    outcome = run(two_gpus(claim("a", [request()]), claim("b", [request(count=2)])))
    b = rows(outcome, "default/b", "gpu")
    assert (b["gpu-0"]["verdict"], b["gpu-0"]["code"]) == ("rejected", "in-use")
    assert b["gpu-0"]["heldBy"] == [{"claim": "default/a", "request": "gpu", "device": "gpu.example.com/pool/gpu-0",
                                     "allocatedBefore": False}]
    assert verdicts(outcome, "default/a", "gpu") == {"gpu-0": ("tried", "given-up"), "gpu-1": ("not-needed", None)}


def test_claims_after_the_blocked_one_are_not_reached():
    outcome = run(two_gpus(claim("a", [request(count=3)]), claim("b", [request()])))
    assert outcome.explanation.as_dict()["blockedAt"] == {"claim": "default/a", "request": "gpu"}
    assert set(verdicts(outcome, "default/b", "gpu").values()) == {("not-reached", None)}


def test_constraint_refusal_names_the_device_that_fixed_the_value():
    outcome = run(two_gpus(claim("c", [request(count=2)], constraints=[{"matchAttribute": "gpu.example.com/numa"}])))
    row = rows(outcome, "default/c", "gpu")["gpu-1"]
    assert (row["verdict"], row["code"]) == ("rejected", "constraint")
    assert row["facts"]["problem"] == "mismatch" and row["heldBy"][0]["device"] == "gpu.example.com/pool/gpu-0"


def test_distinct_attribute_over_too_few_values_is_explained_from_the_unpruned_search():
    devices = [dev(f"g{i}", numa=i % 2) for i in range(4)]
    outcome = run([gpu_class(), node(), slice_("s", devices),
                   claim("c", [request(count=3)], constraints=[{"distinctAttribute": "gpu.example.com/numa"}])])
    assert outcome.outcome == "unsatisfiable" and outcome.explanation.as_dict()["approximate"] is None
    assert verdicts(outcome, "default/c", "gpu") == {
        "g0": ("tried", "given-up"), "g1": ("tried", "given-up"),
        "g2": ("rejected", "constraint"), "g3": ("rejected", "constraint")}


def test_untolerated_taint_is_a_rejection_with_the_taint():
    tainted = dev("gpu-0")
    tainted["taints"] = [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]
    outcome = run([gpu_class(), node(), slice_("s", [tainted]), claim("a", [request()])])
    row = rows(outcome, "default/a", "gpu")["gpu-0"]
    assert (row["verdict"], row["code"], row["facts"]["key"]) == ("rejected", "taint", "maintenance")


def test_admin_access_claim_shares_the_device_in_use():
    existing = claim("old", [request()], allocation=allocated(
        [{"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "gpu-0"}]))
    outcome = run(two_gpus(existing, claim("monitor", [request(adminAccess=True)])))
    assert verdicts(outcome, "default/monitor", "gpu")["gpu-0"] == ("chosen", None)


def test_capacity_short_names_the_share_that_holds_it():
    device = {"name": "eth1", "allowMultipleAllocations": True,
              "capacity": {"bandwidth": {"value": "10G"}}}
    outcome = run([gpu_class(), node(), slice_("s", [device]),
                   claim("a", [request(capacity={"requests": {"bandwidth": "6G"}})]),
                   claim("b", [request(capacity={"requests": {"bandwidth": "6G"}})])])
    row = rows(outcome, "default/b", "gpu")["eth1"]
    assert (row["verdict"], row["code"], row["facts"]["free"]) == ("rejected", "capacity", "4G")
    assert row["heldBy"][0]["claim"] == "default/a" and row["heldBy"][0]["amount"] == "6G"
    assert "needs 6G, 4G free" in outcome.explanation.as_dict()["headline"]


def test_a_search_that_gives_up_says_so_and_does_not_count_rows_it_never_reached():
    devices = [dev(f"g{i}", numa=i % 8) for i in range(40)]
    outcome = run([gpu_class(), node(), slice_("s", devices), claim("a", [request(count=3)]),
                   claim("c", [request(count=9)], constraints=[{"distinctAttribute": "gpu.example.com/numa"}])],
                  max_steps=300)
    assert outcome.message == "search gave up after 300 steps"
    headline = outcome.explanation.as_dict()["headline"]
    assert headline.startswith("the search gave up after") and "pass its selectors" not in headline
    assert outcome.explanation.as_dict()["outcome"] == "gave-up"


def test_every_alternative_of_a_failed_prioritized_request_keeps_the_rows_of_its_try():
    def sized(name, size):
        return {"name": name, "attributes": {"size": {"string": size}}}

    def alternative(name, size):
        return {"name": name, "deviceClassName": "gpu", "count": 2, "selectors": [
            {"cel": {"expression": f'device.attributes["gpu.example.com"].size == "{size}"'}}]}

    outcome = run([gpu_class(), node(), slice_("s", [sized("s0", "small"), sized("l0", "large")]),
                   claim("a", [{"name": "gpu", "firstAvailable": [alternative("large", "large"),
                                                                   alternative("small", "small")]}])])
    assert verdicts(outcome, "default/a", "gpu/large") == {"s0": ("rejected", "selector"), "l0": ("tried", "given-up")}
    assert verdicts(outcome, "default/a", "gpu/small")["l0"] == ("rejected", "selector")
    assert outcome.explanation.as_dict()["headline"] == (
        "request gpu/large of claim default/a needs 2 devices; on worker-1 1 device passes its selectors and it is "
        "not taken; no 2 exist; its other alternatives (small) did not fit either")


def test_pods_mode_explains_with_the_slices_the_scheduler_ignores():
    from . import cluster as k

    counters = [{"name": "gpu-0", "counters": {"memory": {"value": "80Gi"}}}]
    text = k.dump(k.node("node-a"), k.device_class(),
                  k.resource_slice("node-a", [], counters=counters, count=2, suffix="c0unt"),
                  k.resource_slice("node-a", [k.gpu("gpu-1", 1)], count=2),
                  k.pod("p", templates=[("gpu", "t")]),
                  k.template("t", k.claim_spec(k.request())))
    _, outcome = allocate_text(text, gates=ComponentGates.uniform(gates_from_dict({"DRAPartitionableDevices": False})))
    explanation = outcome.pods[0].explanation.as_dict()
    assert explanation["ignoredSlices"] == [{
        "slice": "node-a-gpu.example.com-c0unt", "pool": "gpu.example.com/node-a",
        "reason": "it publishes sharedCounters and DRAPartitionableDevices is disabled"}]
