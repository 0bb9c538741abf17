"""NodeResourcesFit: effective requests, what bound pods hold, pod count, extended resources
(also backed by DRA), and the scheduler's summary line with mixed reasons."""
from allocator.engine import noderesources as fit
from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.objects import build_pod
from allocator.engine.pods import PENDING, SCHEDULED
from allocator.engine.run import UNSATISFIABLE, allocate_text
from tests.engine import cluster as k

GI = 1024 ** 3


def schedule(*objects, **options):
    _, outcome = allocate_text(k.dump(*objects), **options)
    return outcome


def result(outcome, name):
    return next(p for p in outcome.pods if p.name == name)


def verdicts(pod) -> dict:
    return {n.node: ("fits" if n.fits else n.reason) for n in pod.nodes}


def requests_of(**kwargs) -> dict:
    return fit.pod_requests(build_pod(k.pod("p", **kwargs)))


def small_node(name, cpu="4", memory="8Gi", pods="110", **extra):
    return k.node(name, allocatable={"cpu": cpu, "memory": memory, "pods": pods, **extra})


# -- a pod's effective requests ------------------------------------------------------------------


def test_app_containers_add_up_and_init_containers_count_at_their_peak():
    raw = k.pod("p", init=[({"cpu": "2", "memory": "1Gi"}, False), ({"cpu": "2", "memory": "3Gi"}, False)])
    raw["spec"]["containers"] = [
        {"name": "c1", "image": "x", "resources": {"requests": {"cpu": "2", "memory": "1Gi"}}},
        {"name": "c2", "image": "x", "resources": {"requests": {"cpu": "1", "memory": "1Gi"}}},
    ]
    assert fit.pod_requests(build_pod(raw)) == {"cpu": 3000, "memory": 3 * GI}


def test_sidecars_run_beside_the_app_and_beside_the_init_containers_started_after_them():
    # sidecar 1 CPU, then an ordinary init container of 2 CPU, app 1 CPU:
    # the app phase needs 1 + 1, the init phase 2 + 1 (the sidecar already runs).
    requests = requests_of(requests={"cpu": "1"}, init=[({"cpu": "1"}, True), ({"cpu": "2"}, False)])
    assert requests["cpu"] == 3000
    requests = requests_of(requests={"cpu": "3"}, init=[({"cpu": "1"}, True), ({"cpu": "2"}, False)])
    assert requests["cpu"] == 4000  # app phase: 3 + the sidecar's 1


def test_an_init_container_before_the_sidecar_does_not_share_the_node_with_it():
    requests = requests_of(requests={"cpu": "1"}, init=[({"cpu": "2"}, False), ({"cpu": "1"}, True)])
    assert requests["cpu"] == 2000  # max(app 1 + sidecar 1, init 2 alone)


def test_overhead_is_added_on_top():
    requests = requests_of(requests={"cpu": "500m", "memory": "1Gi"}, overhead={"cpu": "250m", "memory": "120Mi"})
    assert requests == {"cpu": 750, "memory": GI + 120 * 1024 ** 2}


def test_pod_level_requests_replace_the_containers_cpu_and_memory():
    raw = k.pod("p", requests={"cpu": "1", "memory": "1Gi", "example.com/foo": "2"})
    raw["spec"]["resources"] = {"requests": {"cpu": "3"}}
    assert fit.pod_requests(build_pod(raw)) == {"cpu": 3000, "memory": GI, "example.com/foo": 2}


def test_scoring_gives_containers_without_requests_the_scheduler_defaults():
    assert requests_of() == {}
    assert requests_of() == {} and fit.pod_requests(build_pod(k.pod("p")), non_zero=True) == {
        "cpu": fit.DEFAULT_MILLI_CPU, "memory": fit.DEFAULT_MEMORY}


# -- nodes: what bound pods hold -------------------------------------------------------------------


def test_running_pods_hold_their_requests_and_finished_ones_do_not():
    outcome = schedule(
        small_node("node-a"),
        k.pod("busy", node_name="node-a", requests={"cpu": "3"}),
        k.pod("done", node_name="node-a", requests={"cpu": "4"}, phase="Succeeded"),
        k.pod("new", requests={"cpu": "2"}),
    )
    new = result(outcome, "new")
    assert new.outcome == PENDING
    assert new.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert new.nodes[0].details == ["cpu: the pod asks 2, 3 of 4 in use"]


def test_pods_placed_earlier_in_the_run_hold_their_requests():
    outcome = schedule(small_node("node-a"), k.pod("first", requests={"cpu": "3"}),
                       k.pod("second", requests={"cpu": "2"}))
    assert result(outcome, "first").outcome == SCHEDULED
    assert result(outcome, "second").message == "0/1 nodes are available: 1 Insufficient cpu."


def test_a_full_node_says_too_many_pods():
    outcome = schedule(small_node("node-a", pods="1"), k.pod("old", node_name="node-a"), k.pod("new"))
    assert verdicts(result(outcome, "new")) == {"node-a": "Too many pods"}


def test_every_short_resource_of_a_node_is_counted():
    outcome = schedule(small_node("node-a", cpu="1", memory="1Gi"), small_node("node-b", cpu="1"),
                       k.pod("big", requests={"cpu": "2", "memory": "2Gi"}))
    big = result(outcome, "big")
    assert big.nodes[0].reasons == ["Insufficient cpu", "Insufficient memory"]
    # counts lead the strings the scheduler sorts
    assert big.message == "0/2 nodes are available: 1 Insufficient memory, 2 Insufficient cpu."


def test_extended_resources_are_counted_against_what_the_node_advertises():
    outcome = schedule(small_node("node-a", **{"example.com/foo": "2"}), small_node("node-b"),
                       k.pod("user", node_name="node-a", requests={"example.com/foo": "1"}),
                       k.pod("p", requests={"example.com/foo": "2"}))
    assert verdicts(result(outcome, "p")) == {"node-a": "Insufficient example.com/foo",
                                              "node-b": "Insufficient example.com/foo"}


def test_a_node_without_allocatable_is_not_checked_and_the_run_says_so():
    bare = k.node("node-a")
    del bare["status"]["allocatable"]
    outcome = schedule(bare, k.pod("p", requests={"cpu": "64"}))
    assert result(outcome, "p").outcome == SCHEDULED
    assert any("node node-a: no status.allocatable" in w.message for w in outcome.warnings)


def test_the_summary_line_mixes_resource_taint_and_dra_reasons_sorted_as_the_scheduler_sorts():
    taint = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    outcome = schedule(
        small_node("node-a", cpu="1"),
        k.node("node-b", taints=taint),
        k.node("node-c"),
        small_node("node-d", cpu="1", memory="1Gi"),
        k.device_class(), k.template("single-gpu", k.claim_spec(k.request())),
        k.pod("p", requests={"cpu": "2", "memory": "2Gi"}, templates=[("gpu", "single-gpu")]),
    )
    assert outcome.outcome == UNSATISFIABLE
    assert result(outcome, "p").message == (
        "0/4 nodes are available: 1 Insufficient memory, 1 cannot allocate all claims, "
        "1 node(s) had untolerated taint(s), 2 Insufficient cpu.")


# -- extended resources backed by DRA ----------------------------------------------------------------


def gpu_class(name="gpu.example.com", resource="example.com/gpu"):
    device_class = k.device_class(name)
    device_class["spec"]["extendedResourceName"] = resource
    return device_class


def test_an_extended_resource_backed_by_dra_gets_a_special_claim_on_a_node_without_it():
    outcome = schedule(
        small_node("node-a"), gpu_class(), k.resource_slice("node-a", [k.gpu("gpu-0", 0), k.gpu("gpu-1", 1)]),
        k.pod("p", requests={"cpu": "1", "example.com/gpu": "2"}),
    )
    p = result(outcome, "p")
    assert p.outcome == SCHEDULED and p.node == "node-a"
    [claim] = p.claims
    assert claim.pod_claim_name == "(extended resources)" and claim.name.startswith("p-extended-resources-")
    assert claim.extended_resources == [
        {"containerName": "main", "resourceName": "example.com/gpu", "requestName": "container-0-request-1"}]
    results = claim.allocation["devices"]["results"]
    assert [(r["request"], r["device"]) for r in results] == [("container-0-request-1", "gpu-0"),
                                                             ("container-0-request-1", "gpu-1")]
    [written] = outcome.claims
    assert written["metadata"]["name"] == claim.name


def test_the_implicit_class_resource_name_works_too():
    outcome = schedule(small_node("node-a"), k.device_class(), k.resource_slice("node-a", [k.gpu("gpu-0", 0)]),
                       k.pod("p", requests={"deviceclass.resource.kubernetes.io/gpu.example.com": "1"}))
    assert result(outcome, "p").outcome == SCHEDULED


def test_a_node_whose_device_plugin_advertises_the_resource_needs_no_claim():
    outcome = schedule(small_node("node-a", **{"example.com/gpu": "1"}), gpu_class(),
                       k.pod("p", requests={"example.com/gpu": "1"}))
    p = result(outcome, "p")
    assert p.outcome == SCHEDULED and p.claims == []


def test_too_few_devices_for_the_extended_resource_is_dra_saying_no():
    outcome = schedule(small_node("node-a"), gpu_class(), k.resource_slice("node-a", [k.gpu("gpu-0", 0)]),
                       k.pod("p", requests={"example.com/gpu": "2"}))
    assert result(outcome, "p").message == "0/1 nodes are available: 1 cannot allocate all claims."


def test_with_the_gate_off_the_resource_is_simply_insufficient():
    gates = ComponentGates.uniform(gates_from_dict({"DRAExtendedResource": False}, emulated="1.36"))
    outcome = schedule(small_node("node-a"), gpu_class(), k.resource_slice("node-a", [k.gpu("gpu-0", 0)]),
                       k.pod("p", requests={"example.com/gpu": "1"}), gates=gates)
    assert result(outcome, "p").message == "0/1 nodes are available: 1 Insufficient example.com/gpu."


def test_init_containers_reuse_the_devices_of_later_containers():
    raw = k.pod("p", requests={"example.com/gpu": "2"},
                init=[({"example.com/gpu": "1"}, False), ({"example.com/gpu": "3"}, False)])
    classes = fit.ExtendedResourceClasses({"c": _class("c", "example.com/gpu")}, enabled=True)
    requests, mappings = fit.extended_claim_requests(build_pod(raw), {"example.com/gpu": 3}, classes)
    # container 2 (the app) asks 2; init 0 reuses them; init 1 needs one more.
    assert [(r["name"], r["exactly"]["count"]) for r in requests] == [("container-1-request-0", 1),
                                                                      ("container-2-request-0", 2)]
    assert [(m["containerName"], m["requestName"]) for m in mappings] == [
        ("main", "container-2-request-0"), ("init-0", "container-2-request-0"),
        ("init-1", "container-2-request-0"), ("init-1", "container-1-request-0")]


def _class(name, resource):
    from allocator.engine.objects import build_device_class

    device_class = k.device_class(name)
    device_class["spec"]["extendedResourceName"] = resource
    return build_device_class(device_class)


def test_a_cluster_dump_short_of_cpu_gives_the_schedulers_line():
    from tests.engine.test_pods import DUMP

    text = DUMP.read_text().replace(
        "      name: train\n      resources:\n        claims:\n        - name: gpu\n    resourceClaims:",
        "      name: train\n      resources:\n        requests:\n          cpu: \"40\"\n        claims:\n"
        "        - name: gpu\n    resourceClaims:", 1)
    assert 'cpu: "40"' in text
    _, outcome = allocate_text(text)
    trainer = result(outcome, "trainer-1")
    assert trainer.outcome == PENDING
    assert trainer.message == "0/3 nodes are available: 1 node(s) had untolerated taint(s), 2 Insufficient cpu."
    # trainer-0, running on gpu-node-1, holds 4 CPUs there
    assert [n.details for n in trainer.nodes[1:]] == [["cpu: the pod asks 40, 4 of 32 in use"],
                                                      ["cpu: the pod asks 40, 0 of 32 in use"]]


def test_a_resized_running_pod_holds_the_larger_of_its_spec_and_what_the_kubelet_reports():
    resized = k.pod("resized", node_name="node-a", requests={"cpu": "1"})
    resized["status"]["containerStatuses"] = [{"name": "main", "resources": {"requests": {"cpu": "3"}}}]
    outcome = schedule(small_node("node-a"), resized, k.pod("new", requests={"cpu": "2"}))
    assert result(outcome, "new").nodes[0].details == ["cpu: the pod asks 2, 3 of 4 in use"]


def test_an_unreadable_request_is_invalid_input_that_names_the_field():
    bad = k.pod("p", requests={"cpu": "lots"})
    _, outcome = allocate_text(k.dump(small_node("node-a"), bad))
    assert outcome.outcome == "invalid"
    [problem] = outcome.problems
    assert problem.field == "spec.containers[0].resources.requests.cpu"
    assert problem.message.startswith('Invalid value: "lots": quantities must match')


def test_an_apiserver_without_the_gate_drops_the_class_extended_resource_name_on_create():
    gates = ComponentGates(apiserver=gates_from_dict({"DRAExtendedResource": False}, emulated="1.36"))
    scenario, outcome = allocate_text(k.dump(small_node("node-a"), gpu_class(),
                                             k.resource_slice("node-a", [k.gpu("gpu-0", 0)]),
                                             k.pod("p", requests={"example.com/gpu": "1"})),
                                      gates=gates, replay_create=True)
    assert any(w.field == "spec.extendedResourceName" and "DRAExtendedResource" in w.message
               for w in outcome.warnings)
    assert result(outcome, "p").message == "0/1 nodes are available: 1 Insufficient example.com/gpu."


def test_a_limit_without_a_request_is_the_request_as_the_apiserver_defaults_it():
    raw = k.pod("p")
    raw["spec"]["containers"][0]["resources"]["limits"] = {"cpu": "2", "example.com/foo": "1"}
    raw["spec"]["containers"][0]["resources"]["requests"] = {"cpu": "500m"}
    assert fit.pod_requests(build_pod(raw)) == {"cpu": 500, "example.com/foo": 1}


NODE_ALLOCATABLE = """
apiVersion: v1
kind: Node
metadata: {name: node-0}
status: {allocatable: {cpu: "8", memory: 32Gi, pods: "110"}}
---
apiVersion: resource.k8s.io/v1
kind: DeviceClass
metadata: {name: gpu.example.com}
spec: {selectors: [{cel: {expression: 'device.driver == "gpu.example.com"'}}]}
---
apiVersion: resource.k8s.io/v1
kind: ResourceSlice
metadata: {name: node-0-cpus}
spec:
  driver: gpu.example.com
  nodeName: node-0
  pool: {name: node-0, generation: 1, resourceSliceCount: 1}
  devices:
  - name: cpus-0
    nodeAllocatableResources: {cpu: {mapping: {deviceMultiplier: "4"}}}
---
apiVersion: resource.k8s.io/v1
kind: ResourceClaimTemplate
metadata: {name: one, namespace: default}
spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com}}]}}}
---
apiVersion: v1
kind: Pod
metadata: {name: with-claim, namespace: default}
spec:
  resourceClaims: [{name: r, resourceClaimTemplateName: one}]
  containers: [{name: main, image: app, resources: {requests: {cpu: "6"}, claims: [{name: r}]}}]
---
apiVersion: v1
kind: Pod
metadata: {name: plain, namespace: default}
spec:
  containers: [{name: main, image: app, resources: {requests: {cpu: "1"}}}]
"""


ON = ComponentGates.uniform(gates_from_dict({"DRANodeAllocatableResources": True}))


def _pods(text: str, gates=ON) -> dict:
    _, outcome = allocate_text(text, gates=gates)
    return {p.name: p for p in outcome.pods}


def test_mapped_cpu_is_added_to_the_pod_and_refused_with_the_schedulers_reason():
    """6 CPUs asked and 4 mapped by the claim's device do not fit 8: kube-scheduler's DynamicResources
    says "Insufficient cpu" (6 + 4 asked, as its numbers show); with the gate off the pod fits."""
    pods = _pods(NODE_ALLOCATABLE)
    refused = pods["with-claim"]
    assert refused.outcome == PENDING
    assert refused.message == "0/1 nodes are available: 1 Insufficient cpu."
    assert [str(d) for d in refused.nodes[0].details] == [
        "cpu: the pod asks 10 (4 of it for its claims' devices), 0 of 8 in use"]
    assert not any("not modelled" in n for p in pods.values() for n in p.notes)
    assert _pods(NODE_ALLOCATABLE, gates=None)["with-claim"].outcome == SCHEDULED


def test_the_chosen_nodes_statuses_are_the_pods_and_count_for_the_pods_after_it():
    """3 CPUs asked + 4 mapped: the pod's status.nodeAllocatableResourceClaimStatuses carries the claim's
    mapping, and 7 of 8 CPUs are then in use, so a pod asking 2 no longer fits."""
    text = NODE_ALLOCATABLE.replace('cpu: "6"', 'cpu: "3"').replace('requests: {cpu: "1"}', 'requests: {cpu: "2"}')
    pods = _pods(text)
    placed = pods["with-claim"]
    assert placed.outcome == SCHEDULED
    assert [s.as_dict() for s in placed.node_allocatable] == [{
        "resourceClaimName": placed.claims[0].name, "containers": ["main"], "mapping": [{"name": "cpu", "quantity": "4"}]}]
    assert pods["plain"].message == "0/1 nodes are available: 1 Insufficient cpu."
    assert [str(d) for d in pods["plain"].nodes[0].details] == ["cpu: the pod asks 2, 7 of 8 in use"]


OVERHEAD_AND_CORES = NODE_ALLOCATABLE.replace(
    'nodeAllocatableResources: {cpu: {mapping: {deviceMultiplier: "4"}}}',
    'allowMultipleAllocations: true\n    capacity: {cores: {value: "8"}}\n'
    '    nodeAllocatableResources: {cpu: {mapping: {capacityKey: cores, capacityMultiplier: "500m"}},'
    ' memory: {overhead: {perPod: 1Gi, perContainer: 2Gi}}}').replace(
    "spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com}}]}}}",
    "spec: {spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com,"
    " capacity: {requests: {cores: '6'}}}}]}}}").replace(
    'containers: [{name: main, image: app, resources: {requests: {cpu: "6"}, claims: [{name: r}]}}]',
    'containers: [{name: main, image: app, resources: {requests: {cpu: "1"}, claims: [{name: r}]}},'
    ' {name: side, image: app, resources: {claims: [{name: r}]}}]')


def test_consumed_capacity_times_its_multiplier_and_an_overhead_per_pod_and_per_container():
    """6 cores consumed × 500m = 3 CPUs, once for the claim; memory 1Gi per pod + 2Gi for each of the
    two containers that reference the claim."""
    status = _pods(OVERHEAD_AND_CORES)["with-claim"].node_allocatable[0]
    assert status.as_dict()["mapping"] == [{"name": "cpu", "quantity": "3"}]
    assert status.as_dict()["overhead"] == [{"name": "memory", "perPod": "1Gi", "perContainer": "2Gi"}]
    assert status.containers == ["main", "side"]
    assert status.shown() == [("cpu", "3"), ("memory", "5Gi")]


SHARING_POD = """---
apiVersion: v1
kind: Pod
metadata: {{name: {name}, namespace: default}}
spec:
  resourceClaims: [{{name: r, resourceClaimName: shared}}]
  containers: [{{name: main, image: app, resources: {{requests: {{cpu: "1"}}, claims: [{{name: r}}]}}}}]
"""
SHARED = NODE_ALLOCATABLE.replace("""---
apiVersion: v1
kind: Pod
metadata: {name: with-claim""", """---
apiVersion: resource.k8s.io/v1
kind: ResourceClaim
metadata: {name: shared, namespace: default}
spec: {devices: {requests: [{name: r, exactly: {deviceClassName: gpu.example.com}}]}}
""" + SHARING_POD.format(name="first") + SHARING_POD.format(name="second") + """---
apiVersion: v1
kind: Pod
metadata: {name: with-claim""")


def test_a_claim_with_a_mapped_device_is_not_shared_across_pods():
    pods = _pods(SHARED)
    assert pods["first"].outcome == SCHEDULED
    assert pods["second"].message == ("0/1 nodes are available: 1 node allocatable resource claim shared has a "
                                      "mapped device and cannot be shared across pods.")
    assert _pods(SHARED, gates=None)["second"].outcome == SCHEDULED


def test_a_bound_pods_statuses_count_on_its_node_with_the_gate_on():
    bound = """---
apiVersion: v1
kind: Pod
metadata: {name: running, namespace: default}
spec: {nodeName: node-0, containers: [{name: main, image: app}]}
status:
  phase: Running
  nodeAllocatableResourceClaimStatuses:
  - {resourceClaimName: earlier, containers: [main], mapping: [{name: cpu, quantity: "7500m"}]}
"""
    pods = _pods(NODE_ALLOCATABLE + bound)
    assert pods["plain"].message == "0/1 nodes are available: 1 Insufficient cpu."
    assert _pods(NODE_ALLOCATABLE + bound, gates=None)["plain"].outcome == SCHEDULED


def test_pod_level_requests_must_cover_the_containers_and_the_claims():
    text = NODE_ALLOCATABLE.replace('  resourceClaims: [{name: r, resourceClaimTemplateName: one}]',
                                    '  resources: {requests: {cpu: "7"}}\n'
                                    '  resourceClaims: [{name: r, resourceClaimTemplateName: one}]')
    assert _pods(text)["with-claim"].message == (
        "0/1 nodes are available: 1 pod level request for cpu is insufficient to cover the aggregated container "
        "and node-allocatable DRA requests.")


def test_a_pending_pod_with_statuses_of_its_own_says_their_merge_is_not_modelled():
    stale = NODE_ALLOCATABLE.replace(
        "metadata: {name: plain, namespace: default}",
        "metadata: {name: plain, namespace: default}\nstatus:\n  nodeAllocatableResourceClaimStatuses:\n"
        "  - {resourceClaimName: old, mapping: [{name: cpu, quantity: '1'}]}")
    notes = {name: [n for n in pod.notes if n.startswith("not modelled")] for name, pod in _pods(stale).items()}
    assert notes["with-claim"] == []
    assert notes["plain"] == [
        "not modelled: this pending pod already carries status.nodeAllocatableResourceClaimStatuses; when "
        "kube-scheduler writes the ones it works out, it merges them into these by claim name (a strategic merge "
        "patch), and the playground shows the ones it works out alone"]
    assert not any(pod.notes for pod in _pods(stale, gates=None).values())


def test_the_text_report_says_what_a_pods_claims_add():
    from allocator.engine.report import human_report

    _, outcome = allocate_text(OVERHEAD_AND_CORES, gates=ON)
    assert "  added by its claims' devices (node-allocatable): with-claim-r-bdmb8 cpu 3, memory 5Gi" in human_report(outcome)
