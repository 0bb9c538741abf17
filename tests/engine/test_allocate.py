"""The search: order, backtracking, limits and every feature's effect on which devices win."""
from tests.engine.helpers import (
    allocated,
    claim,
    devices_of,
    gpu_class,
    node,
    reasons,
    request,
    results_of,
    run,
    slice_,
)


def dev(name, **attrs):
    device = {"name": name}
    if attrs:
        device["attributes"] = {k: ({"string": v} if isinstance(v, str) else {"int": v}) for k, v in attrs.items()}
    return device


BIG = 'device.attributes["gpu.example.com"].type == "big"'


def worked_example(slice2_devices, with_b0=True):
    objects = [
        gpu_class(), node(),
        slice_("slice-2", slice2_devices, pool="pool-a", count=2),
        slice_("slice-1", [dev("a0", type="small")], pool="pool-a", count=2),
        claim("c", [request("any2", count=2), request("big", selectors=[{"cel": {"expression": BIG}}])]),
    ]
    if with_b0:
        objects.insert(2, slice_("zz-slice", [dev("b0", type="big")], pool="pool-b"))
    return objects


def test_candidate_order_is_pool_then_slice_name_then_listed_position():
    outcome = run(worked_example([dev("a2", type="small"), dev("a1", type="big")]))
    assert outcome.outcome == "allocated"
    assert devices_of(outcome, "c") == ["any2:a0", "any2:a2", "big:a1"]


def test_backtracking_tries_combinations_in_candidate_order():
    outcome = run(worked_example([dev("a1", type="big"), dev("a2", type="small")], with_b0=False))
    assert devices_of(outcome, "c") == ["any2:a0", "any2:a2", "big:a1"]


def test_more_devices_than_the_node_has_is_unsatisfiable():
    devices = [dev(f"device-{i}") for i in range(4)]
    outcome = run([gpu_class(), node(), slice_("s", devices), claim("c", [request(count=5)])])
    assert outcome.outcome == "unsatisfiable"
    assert outcome.message == "cannot allocate all claims"


def test_exhaustive_failure_is_pruned_instead_of_running_for_seconds():
    devices = [dev(f"d{i}") for i in range(31)]
    outcome = run([gpu_class(), node(), slice_("s", devices), claim("c", [request(count=32)])])
    assert outcome.outcome == "unsatisfiable"
    assert outcome.verdicts[0].steps < 1000


def test_a_short_search_takes_upstreams_own_steps_and_only_a_long_one_is_pruned(monkeypatch):
    from allocator.engine import cycle

    devices = [dev(f"g{i}", numa=i % 2) for i in range(6)]
    objects = [gpu_class(), node(), slice_("s", devices),
               claim("c", [request(count=3)], constraints=[{"distinctAttribute": "gpu.example.com/numa"}])]
    exact = run(objects)
    monkeypatch.setattr(cycle, "EXACT_FIRST_STEPS", 10)  # longer than this: pruned
    pruned = run(objects)
    assert exact.outcome == pruned.outcome == "unsatisfiable"
    assert pruned.verdicts[0].steps < exact.verdicts[0].steps
    assert exact.explanation.as_dict()["claims"] == pruned.explanation.as_dict()["claims"], "the explanation is upstream's either way"


def test_a_big_cluster_does_not_pay_the_unpruned_start_node_after_node(monkeypatch):
    from allocator.engine import cycle
    from allocator.engine.allocate import Allocator

    searches = []
    original = Allocator.run

    def run_(self):
        searches.append(self.prune)
        return original(self)

    monkeypatch.setattr(Allocator, "run", run_)
    objects = [gpu_class()]
    for n in range(8):  # every node: 31 devices for a request of 32, a long search unpruned
        objects += [node(f"node-{n}"), slice_(f"s{n}", [dev(f"d{i}") for i in range(31)], pool=f"p{n}",
                                              node_name=f"node-{n}")]
    objects.append(claim("c", [request(count=32)]))
    outcome = run(objects, node=None, time_limit=0)  # the step budgets alone: a loaded machine must not count
    assert outcome.outcome == "unsatisfiable" and len(outcome.verdicts) == 8
    first_tries = searches.count(False) - 1  # the explanation's exact search of the first node is one more
    assert first_tries * cycle.EXACT_FIRST_STEPS <= cycle.EXACT_FIRST_TOTAL + cycle.EXACT_FIRST_STEPS
    assert searches.count(True) == 8, "every node was searched again with pruning"


def test_step_budget_is_reported_as_giving_up_not_as_unsatisfiable():
    # The second request can never be met, so every combination for the first one is tried.
    devices = [dev(f"d{i}", type="small") for i in range(30)]
    objects = [gpu_class(), node(), slice_("s", devices),
               claim("c", [request("many", count=10), request("big", selectors=[{"cel": {"expression": BIG}}])])]
    outcome = run(objects, max_steps=500)
    assert outcome.outcome == "unsatisfiable"
    assert "search gave up after 500 steps" in outcome.message


def test_distinct_values_fewer_than_wanted_are_pruned():
    devices = [dev(f"d{i}", numa=i % 15) for i in range(30)]
    objects = [gpu_class(), node(), slice_("s", devices),
               claim("c", [request(count=16)], constraints=[{"distinctAttribute": "gpu.example.com/numa"}])]
    # Only the step budget bounds this search (no wall-clock limit): pruning is what keeps it under 20,000 steps,
    # on a loaded machine as on an idle one.
    outcome = run(objects, max_steps=20_000, time_limit=0)
    assert outcome.message == "cannot allocate all claims"


def test_match_attribute_with_all_values_different_is_pruned():
    devices = [dev(f"d{i}", rack=f"r{i}") for i in range(120)]
    objects = [gpu_class(), node(), slice_("s", devices),
               claim("c", [request(count=3)], constraints=[{"matchAttribute": "gpu.example.com/rack"}])]
    outcome = run(objects, max_steps=20_000, time_limit=0)  # the step budget alone, as above
    assert outcome.message == "cannot allocate all claims"


def test_devices_picked_for_an_earlier_claim_are_unavailable_to_later_claims():
    objects = [gpu_class(), node(), slice_("s", [dev("d0"), dev("d1")]),
               claim("first", [request()]), claim("second", [request()])]
    outcome = run(objects)
    assert devices_of(outcome, "first") == ["gpu:d0"]
    assert devices_of(outcome, "second") == ["gpu:d1"]


def test_already_allocated_devices_are_in_use_and_explained():
    objects = [gpu_class(), node(), slice_("s", [dev("d0"), dev("d1")]),
               claim("old", [request()], allocation=allocated(
                   [{"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "d0"}])),
               claim("new", [request()])]
    outcome = run(objects)
    assert devices_of(outcome, "new") == ["gpu:d1"]
    assert [c["metadata"]["name"] for c in outcome.claims] == ["new"]
    assert reasons(outcome, "default/new", "gpu")["d0"] == "in use: already allocated to claim default/old"


def test_node_selector_pins_the_node_for_node_local_slices():
    outcome = run([gpu_class(), node(), slice_("s", [dev("d0")]), claim("c", [request()])])
    allocation = outcome.claims[0]["status"]["allocation"]
    assert allocation["nodeSelector"] == {"nodeSelectorTerms": [{"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["worker-1"]}]}]}


def test_network_attached_devices_carry_their_slice_selector_and_all_nodes_none():
    selector = {"nodeSelectorTerms": [{"matchExpressions": [{"key": "zone", "operator": "In", "values": ["a"]}]}]}
    objects = [gpu_class(), node(labels={"zone": "a"}),
               slice_("net", [dev("n0")], pool="net", node_name=None, nodeSelector=selector),
               slice_("any", [dev("x0")], pool="x", node_name=None, allNodes=True),
               claim("c", [request("a"), request("b")])]
    outcome = run(objects)
    assert devices_of(outcome, "c") == ["a:n0", "b:x0"]
    assert outcome.claims[0]["status"]["allocation"]["nodeSelector"] == selector


def test_without_node_the_first_fitting_node_in_name_order_wins():
    objects = [gpu_class(), node("b-node"), node("a-node"),
               slice_("s-b", [dev("d0")], node_name="b-node", pool="b"),
               slice_("s-a", [dev("d0")], node_name="a-node", pool="a"),
               claim("old", [request()], allocation=allocated(
                   [{"request": "gpu", "driver": "gpu.example.com", "pool": "a", "device": "d0"}], "a-node")),
               claim("c", [request()])]
    outcome = run(objects, node=None)
    assert outcome.node == "b-node"
    assert [v.node for v in outcome.verdicts] == ["a-node", "b-node"]


def test_no_node_fits_gives_the_scheduler_summary_line():
    objects = [gpu_class(), node("n1"), node("n2"), node("n3"),
               slice_("s", [dev("d0")], node_name="n1"), claim("c", [request(count=2)])]
    outcome = run(objects, node=None)
    assert outcome.message == "0/3 nodes are available: 3 cannot allocate all claims."


def test_first_available_falls_back_to_the_next_subrequest():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]),
               claim("c", [{"name": "gpu", "firstAvailable": [
                   {"name": "two", "deviceClassName": "gpu", "count": 2},
                   {"name": "one", "deviceClassName": "gpu", "count": 1}]}])]
    outcome = run(objects)
    assert devices_of(outcome, "c") == ["gpu/one:d0"]


def test_first_available_with_gate_off_is_unschedulable_in_prefilter():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]),
               claim("c", [{"name": "gpu", "firstAvailable": [{"name": "one", "deviceClassName": "gpu"}]}])]
    # DRAPrioritizedList is locked on in 1.37; a 1.36 scheduler can have it off.
    outcome = run(objects, gates={"DRAPrioritizedList": False}, emulated="1.36")
    assert outcome.outcome == "unsatisfiable"
    assert outcome.message == ("resource claim default/c, request gpu: has subrequests, "
                               "but the DRAPrioritizedList feature is disabled")
    assert [w.field for w in outcome.warnings] == ["spec.devices.requests[0].firstAvailable"]


def test_switching_a_locked_gate_is_refused_as_the_scheduler_refuses_it():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]), claim("c", [request()])]
    outcome = run(objects, gates={"DRAPrioritizedList": False})
    assert outcome.outcome == "invalid"
    assert outcome.message == ("kube-scheduler would not start: cannot set feature gate DRAPrioritizedList "
                               "to false, feature is locked to true")
    assert (outcome.problems[0].name, outcome.problems[0].field) == ("scheduler", "featureGates.DRAPrioritizedList")


def test_admin_access_can_share_a_device_with_a_normal_claim():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]),
               claim("normal", [request()]), claim("admin", [request(adminAccess=True)])]
    outcome = run(objects)
    assert devices_of(outcome, "normal") == ["gpu:d0"]
    assert results_of(outcome, "admin")[0] == {
        "request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "d0", "adminAccess": True}


def test_all_mode_takes_every_matching_device_and_fails_on_an_incomplete_pool():
    objects = [gpu_class(), node(), slice_("s", [dev("d0"), dev("d1")]),
               slice_("other", [dev("x")], driver="other.example.com", pool="p", count=2),
               claim("c", [request(allocationMode="All")])]
    outcome = run(objects)
    assert outcome.outcome == "invalid"  # upstream v0.37.2: an error for the whole attempt, not the node
    assert outcome.message == ("claim default/c, request gpu: asks for all devices, but resource pool "
                               "other.example.com/p is currently being updated")
    outcome = run(objects[:3] + objects[4:])
    assert devices_of(outcome, "c") == ["gpu:d0", "gpu:d1"]


def test_taints_need_a_toleration_and_tolerations_are_copied_to_the_result():
    tainted = {"name": "d0", "taints": [{"key": "maintenance", "value": "true", "effect": "NoSchedule"}]}
    toleration = {"key": "maintenance", "operator": "Exists", "effect": "NoSchedule"}
    objects = [gpu_class(), node(), slice_("s", [tainted]), claim("c", [request()])]
    outcome = run(objects)
    assert outcome.outcome == "unsatisfiable"
    assert reasons(outcome, "default/c", "gpu")["d0"] == "taint maintenance=true:NoSchedule is not tolerated"
    outcome = run(objects[:3] + [claim("c", [request(tolerations=[toleration])])])
    assert results_of(outcome, "c")[0]["tolerations"] == [toleration]
    outcome = run(objects, gates={"DRADeviceTaints": False, "DRADeviceTaintRules": False})
    assert outcome.outcome == "allocated"


GPU_COUNTERS = [{"name": "gpu-0", "counters": {"memory": {"value": "8Gi"}}}]


def partition(name, memory="6Gi", groups=None):
    consumption = {"counterSet": "gpu-0", "counters": {"memory": {"value": memory}}}
    if groups:
        consumption["compatibilityGroups"] = groups
    return {"name": name, "consumesCounters": [consumption]}


def partitioned(devices, *claims_):
    return [gpu_class(), node(),
            slice_("gpu-0-counters", counters=GPU_COUNTERS, count=2),
            slice_("gpu-0-devices", devices, count=2), *claims_]


def test_counters_allow_only_one_of_two_large_partitions():
    outcome = run(partitioned([partition("part-a"), partition("part-b")], claim("c", [request(count=2)])))
    assert outcome.outcome == "unsatisfiable"


def test_counter_exhausted_by_an_existing_claim_is_explained_with_amounts():
    existing = claim("old", [request()], allocation=allocated(
        [{"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": "part-a"}]))
    outcome = run(partitioned([partition("part-a"), partition("part-b")], existing, claim("c", [request()])))
    assert outcome.outcome == "unsatisfiable"
    assert reasons(outcome, "default/c", "gpu")["part-b"] == \
        "counter memory in set gpu-0 needs 6Gi, 2Gi left after claim default/old (allocated before) took 6Gi on part-a"
    sets = outcome.explanation.as_dict()["counterSets"]
    assert sets[0]["counters"][0] == {
        "counter": "memory", "total": "8Gi", "allocatedBefore": "6Gi", "allocatedNow": "0", "free": "2Gi"}


def test_partitionable_gate_off_ignores_counter_slices_and_refuses_consuming_devices():
    outcome = run(partitioned([partition("part-a", "2Gi")], claim("c", [request()])),
                  gates={"DRAPartitionableDevices": False})
    assert outcome.outcome == "unsatisfiable"


def test_compatibility_groups_intersect_across_claims():
    devices = [partition("mig-0", "4Gi", ["mig"]), partition("vgpu-0", "4Gi", ["vgpu"]),
               partition("mig-1", "4Gi", ["mig"])]
    outcome = run(partitioned(devices, claim("a", [request()]), claim("b", [request()])),
                  gates={"DRADeviceCompatibilityGroups": True})
    assert devices_of(outcome, "a") == ["gpu:mig-0"]
    assert devices_of(outcome, "b") == ["gpu:mig-1"]
    assert reasons(outcome, "default/b", "gpu")["vgpu-0"] == (
        "compatibility groups in counter set gpu-0: {mig} ∩ {vgpu} = ∅ (set by mig-0 of claim default/a, request gpu)")


def test_compatibility_groups_gate_off_makes_the_pool_incomplete():
    devices = [partition("mig-0", "4Gi", ["mig"]), partition("plain", "4Gi")]
    outcome = run(partitioned(devices, claim("a", [request()])))
    assert outcome.outcome == "unsatisfiable"
    assert outcome.explanation.as_dict()["pools"][0]["state"] == "incomplete"


NIC = {
    "name": "eth1", "allowMultipleAllocations": True,
    "capacity": {
        "bandwidth": {"value": "10G", "requestPolicy": {"default": "1M", "validRange": {"min": "1M", "step": "8"}}},
        "queues": {"value": "8"},
    },
}


def nic_scenario(*claims_):
    return [gpu_class("vnic", "dra.example.com"), node(),
            slice_("nics", [NIC], driver="dra.example.com"), *claims_]


def nic_request(**amounts):
    return request("nic", "vnic", capacity={"requests": amounts})


def test_consumable_capacity_rounds_to_the_step_in_the_step_format():
    outcome = run(nic_scenario(claim("c", [nic_request(bandwidth="1G")])))
    result = results_of(outcome, "c")[0]
    assert result["consumedCapacity"] == {"bandwidth": "1G", "queues": "8"}
    assert len(result["shareID"]) == 36


def test_consumable_capacity_below_min_consumes_min():
    outcome = run(nic_scenario(claim("c", [nic_request(bandwidth="500k", queues="2")])))
    assert results_of(outcome, "c")[0]["consumedCapacity"] == {"bandwidth": "1M", "queues": "2"}


def test_second_share_fails_when_a_capacity_is_used_up():
    outcome = run(nic_scenario(claim("a", [nic_request(bandwidth="1G")]), claim("b", [nic_request(bandwidth="1G")])))
    assert outcome.outcome == "unsatisfiable"
    outcome = run(nic_scenario(claim("a", [nic_request(bandwidth="1G", queues="4")]),
                               claim("b", [nic_request(bandwidth="1G", queues="4")])))
    assert devices_of(outcome, "a") == devices_of(outcome, "b") == ["nic:eth1"]


def test_capacity_requests_with_the_gate_off_are_a_fatal_error():
    outcome = run(nic_scenario(claim("c", [nic_request(bandwidth="1G")])), gates={"DRAConsumableCapacity": False})
    assert outcome.outcome == "invalid"
    assert outcome.message == ("claim default/c, request nic: has capacity requests, "
                               "but the DRAConsumableCapacity feature is disabled")


def test_match_attribute_keeps_devices_of_one_claim_together():
    devices = [dev("d0", numa=0), dev("d1", numa=1), dev("d2", numa=1)]
    objects = [gpu_class(), node(), slice_("s", devices),
               claim("c", [request(count=2)], constraints=[{"matchAttribute": "gpu.example.com/numa"}])]
    outcome = run(objects)
    assert devices_of(outcome, "c") == ["gpu:d1", "gpu:d2"]


def test_distinct_attribute_spreads_devices():
    devices = [dev("d0", numa=0), dev("d1", numa=0), dev("d2", numa=1)]
    objects = [gpu_class(), node(), slice_("s", devices),
               claim("c", [request(count=2)], constraints=[{"distinctAttribute": "gpu.example.com/numa"}])]
    assert devices_of(run(objects), "c") == ["gpu:d0", "gpu:d2"]


def test_skip_node_operations_needs_the_gate_and_the_node_feature():
    objects = [gpu_class(), node(declared=["DRAOptionalNodeOperations"]),
               slice_("s", [dev("d0")], skipNodeOperations=["*"]), claim("c", [request()])]
    outcome = run(objects, gates={"DRAOptionalNodeOperations": True})
    assert results_of(outcome, "c")[0]["skipNodeOperations"] == ["*"]
    # Gate off: the experimental variant (some other alpha gate on) refuses the device; the
    # incubating one (every alpha gate off) ignores skipNodeOperations and does not copy it.
    assert run(objects, gates={"DRAListTypeAttributes": True}).outcome == "unsatisfiable"
    assert "skipNodeOperations" not in results_of(run(objects), "c")[0]
    objects[1] = node()
    outcome = run(objects, gates={"DRAOptionalNodeOperations": True})
    assert outcome.outcome == "unsatisfiable"
    assert "does not declare DRAOptionalNodeOperations" in reasons(outcome, "default/c", "gpu")["d0"]


def test_class_and_claim_config_are_copied_in_request_order():
    device_class = gpu_class()
    device_class["spec"]["config"] = [{"opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}}]
    objects = [device_class, node(), slice_("s", [dev("d0"), dev("d1")]),
               claim("c", [request("one"), request("two")],
                     config=[{"requests": ["two"], "opaque": {"driver": "gpu.example.com", "parameters": {"b": 2}}}])]
    config = run(objects).claims[0]["status"]["allocation"]["devices"]["config"]
    assert config == [
        {"source": "FromClass", "opaque": {"driver": "gpu.example.com", "parameters": {"a": 1}}},
        {"source": "FromClaim", "requests": ["two"], "opaque": {"driver": "gpu.example.com", "parameters": {"b": 2}}},
    ]


def test_a_cel_runtime_error_aborts_with_the_upstream_message():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]),
               claim("c", [request(selectors=[{"cel": {"expression": 'device.attributes["gpu.example.com"].model == "x"'}}])])]
    outcome = run(objects)
    assert outcome.outcome == "invalid"
    assert outcome.message.startswith("claim default/c: selector #0 on device gpu.example.com/pool/d0: "
                                      "CEL runtime error: no such key: model")


def test_unknown_device_class_is_reported_like_the_scheduler():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]), claim("c", [request(device_class="nope")])]
    outcome = run(objects)
    assert outcome.outcome == "unsatisfiable"  # PreFilter: the pod waits for the class
    assert outcome.message == "request gpu: device class nope does not exist"
    assert [w.field for w in outcome.warnings] == ["spec.devices.requests[0].exactly.deviceClassName"]


def test_too_many_devices_for_one_claim_is_fatal():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]), claim("c", [request(count=33)])]
    outcome = run(objects)
    assert outcome.outcome == "invalid"
    assert "adding 33 devices exceeds the claim limit of 32, with 0 already accounted for" in outcome.message


def namespace(name, labels=None):
    return {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": name, "labels": labels or {}}}


def test_admin_access_needs_the_namespace_label_when_the_namespace_is_known():
    objects = [gpu_class(), node(), slice_("s", [dev("d0")]), namespace("team"),
               claim("admin", [request(adminAccess=True)], namespace="team")]
    outcome = run(objects)
    assert outcome.outcome == "invalid"
    assert "requires the `resource.kubernetes.io/admin-access: true` label" in outcome.message
    assert outcome.problems[0].field == "spec.devices.requests[0].exactly.adminAccess"
    objects[3] = namespace("team", {"resource.kubernetes.io/admin-access": "true"})
    assert run(objects).outcome == "allocated"
