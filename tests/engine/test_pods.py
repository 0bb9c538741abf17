"""Scheduling pods: claims from templates, node filters before DRA, one cycle per pod."""
from pathlib import Path

import pytest

from allocator.engine import pods
from allocator.engine.gates import AllocatorFeatures, ComponentGates, gates_from_dict
from allocator.engine.nodefilter import NODE_AFFINITY, placement_of, prefilter_nodes
from allocator.engine.cycle import fit_error
from allocator.engine.pods import BOUND, PENDING, SCHEDULED, generated_name
from allocator.engine.run import ALLOCATED, INVALID, UNSATISFIABLE, allocate_text
from allocator.engine.scenario import read_scenario
from tests.conftest import REALWORLD_DIR
from tests.engine import cluster as k

ROOT = Path(__file__).resolve().parents[2]
DUMP = ROOT / "tests" / "dumps" / "gpu-cluster.yaml"
REALWORLD = REALWORLD_DIR  # ../shared/realworld, or /work/shared/realworld beside a clone elsewhere


def schedule(text, **options):
    _, outcome = allocate_text(text, **options)
    return outcome


def pod_result(outcome, name):
    return next(p for p in outcome.pods if p.name == name)


def verdicts(result) -> dict:
    return {n.node: (n.reason if not n.fits else "fits") for n in result.nodes}


def devices(result) -> list:
    return [f"{r['pool']}/{r['device']}" for c in result.claims if c.allocation
            for r in c.allocation["devices"]["results"]]


def two_gpu_nodes(*more, gpus_on_b=1):
    return [
        k.node("node-a"), k.node("node-b", labels={"accelerator": "gpu"}),
        k.device_class(),
        k.resource_slice("node-b", [k.gpu(f"gpu-{i}", i) for i in range(gpus_on_b)]),
        k.template("single-gpu", k.claim_spec(k.request())),
        *more,
    ]


# -- a real dump --------------------------------------------------------------------------


def test_pending_pod_in_a_cluster_dump_fits_on_the_second_gpu_node_only():
    outcome = schedule(DUMP.read_text())
    trainer = pod_result(outcome, "trainer-1")
    assert outcome.outcome == ALLOCATED and outcome.node == "gpu-node-2"
    assert trainer.outcome == SCHEDULED and trainer.node == "gpu-node-2"
    assert verdicts(trainer) == {
        "cp-1": "node(s) had untolerated taint(s)",
        "gpu-node-1": "cannot allocate all claims",
        "gpu-node-2": "fits",
    }
    assert devices(trainer) == ["gpu-node-2/gpu-0"]
    [claim] = trainer.claims
    assert claim.name == "trainer-1-gpu-q9v4c" and not claim.generated  # the controller made it already
    assert claim.reserved_for == [{"resource": "pods", "name": "trainer-1",
                                   "uid": "c9f0f895-fb98-4b91-99f5-1c5c2b8e7d02"}]


def test_a_cluster_dump_loads_without_noise():
    scenario = read_scenario(DUMP.read_text())
    assert scenario.errors == []
    assert [w.message.split(" read as")[0] for w in scenario.warnings] == ["resource.k8s.io/v1beta2"]
    assert len(scenario.pods) == 3 and len(scenario.nodes) == 3 and len(scenario.slices) == 2


def test_running_pods_in_the_dump_are_left_where_they_are():
    outcome = schedule(DUMP.read_text())
    coredns = pod_result(outcome, "coredns-6f6b679f8f-x2lqk")
    trainer0 = pod_result(outcome, "trainer-0")
    assert coredns.outcome == BOUND and coredns.node == "cp-1" and coredns.nodes == []
    assert trainer0.outcome == BOUND and devices(trainer0) == ["gpu-node-1/gpu-0"]
    assert trainer0.claims[0].allocated_before


def test_kinds_the_playground_does_not_use_are_listed_once():
    text = k.dump(
        k.node("node-b"), k.device_class(),
        {"apiVersion": "v1", "kind": "Namespace", "metadata": {"name": "ml"}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e1", "namespace": "ml"}},
        {"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e2", "namespace": "ml"}},
        k.pod("idle"),
    )
    scenario = read_scenario(text)
    ignored = [w.message for w in scenario.warnings if "ignored" in w.message]
    assert ignored[0].startswith("v1 Event: ignored (2 objects)")
    assert len(ignored) == 1, "Namespaces are read (their labels gate admin access)"


# -- claims from templates ----------------------------------------------------------------


def mig_node():
    """One node, two GPUs of four MIG slices each (10Gi of the GPU's 40Gi); three slices of gpu-0 taken."""
    counters = [{"name": f"gpu-{g}", "counters": {"memory": {"value": "40Gi"}}} for g in range(2)]
    migs = []
    for g in range(2):
        for m in range(4):
            migs.append({
                "name": f"gpu-{g}-mig-{m}",
                "attributes": {"type": {"string": "mig"}, "parentUUID": {"string": f"GPU-{g}"}},
                "consumesCounters": [{"counterSet": f"gpu-{g}", "counters": {"memory": {"value": "10Gi"}}}],
            })
    mig_class = k.device_class("mig.example.com", "device.driver == 'gpu.example.com' && "
                                                  "device.attributes['gpu.example.com'].type == 'mig'")
    taken = k.claim("batch-0-mig", k.claim_spec(k.request("mig", "mig.example.com", count=3)),
                    allocation=k.allocation_on("node-m", *(("mig", f"gpu-0-mig-{m}") for m in range(3))),
                    reserved_for=["batch-0"])
    return [
        k.node("node-m"), mig_class,
        k.resource_slice("node-m", [], suffix="ctrs", count=2, counters=counters),
        k.resource_slice("node-m", migs, suffix="devs", count=2),
        taken,
    ]


def test_template_claim_gets_two_mig_slices_of_one_gpu():
    spec = k.claim_spec(k.request("mig", "mig.example.com", count=2),
                        constraints=[{"requests": ["mig"], "matchAttribute": "gpu.example.com/parentUUID"}])
    text = k.dump(*mig_node(), k.template("two-migs", spec), k.pod("infer", templates=[("mig", "two-migs")]))
    outcome = schedule(text)
    infer = pod_result(outcome, "infer")
    assert infer.outcome == SCHEDULED and infer.node == "node-m"
    assert devices(infer) == ["node-m/gpu-1-mig-0", "node-m/gpu-1-mig-1"]
    [claim] = infer.claims
    generate_name, name = generated_name("infer", "mig", "default")
    assert claim.generated and claim.template == "two-migs" and claim.name == name
    assert generate_name == "infer-mig-" and len(name) == len("infer-mig-") + 5
    [output] = outcome.claims
    assert output["metadata"] == {"name": name, "namespace": "default"}
    assert output["status"]["allocation"]["devices"]["results"][0]["device"] == "gpu-1-mig-0"


def test_generated_claim_is_owned_by_the_pod_and_annotated():
    text = k.dump(*two_gpu_nodes(k.pod("train", templates=[("gpu", "single-gpu")])))
    scenario = read_scenario(text)
    cluster = pods._Claims(scenario.claims, AllocatorFeatures())
    resolved = pods._resolve_claims(pods._pod(scenario.pods[0]), cluster, scenario, AllocatorFeatures())
    [(view, claim)] = resolved.entries
    meta = claim.raw["metadata"]
    assert meta["annotations"] == {"resource.kubernetes.io/pod-claim-name": "gpu"}
    assert meta["ownerReferences"] == [{"apiVersion": "v1", "kind": "Pod", "name": "train",
                                        "uid": k.pod_uid("train"), "controller": True, "blockOwnerDeletion": True}]
    assert meta["generateName"] == "train-gpu-" and claim.name == view.name


def test_long_generated_names_are_shortened_in_proportion():
    pod_name, claim_name = "p" * 50, "c" * 20
    generate_name, name = generated_name(pod_name, claim_name, "default")
    assert generate_name == "p" * 39 + "-" + "c" * 15  # 50 * 57 // 72 and 20 * 57 // 72, no trailing dash
    assert len(name) == len(generate_name) + 5


def test_generated_names_are_repeatable():
    assert generated_name("a", "gpu", "default") == generated_name("a", "gpu", "default")
    assert generated_name("a", "gpu", "default") != generated_name("b", "gpu", "default")


def test_missing_template_leaves_the_pod_pending_with_the_schedulers_message():
    outcome = schedule(k.dump(*two_gpu_nodes(k.pod("train", templates=[("gpu", "no-such-template")]))))
    train = pod_result(outcome, "train")
    assert outcome.outcome == UNSATISFIABLE and outcome.exit_code == 1
    assert train.outcome == PENDING
    assert train.message == 'pod "default/train": ResourceClaim not created yet'
    assert any('resource claim template "no-such-template": resourceclaimtemplate.resource.k8s.io '
               '"no-such-template" not found' in note for note in train.notes)


def test_missing_claim_names_the_claim():
    outcome = schedule(k.dump(*two_gpu_nodes(k.pod("train", claims=[("gpu", "shared-gpu")]))))
    assert pod_result(outcome, "train").message == 'could not find ResourceClaim "default/shared-gpu"'


def test_claim_recorded_in_pod_status_but_owned_by_another_pod_is_refused():
    stolen = k.claim("other-gpu-abcde", k.claim_spec(k.request()), owner_pod="other")
    text = k.dump(*two_gpu_nodes(stolen, k.pod("train", templates=[("gpu", "single-gpu")],
                                               claim_statuses=[("gpu", "other-gpu-abcde")])))
    assert pod_result(schedule(text), "train").message == (
        "ResourceClaim default/other-gpu-abcde was not created for Pod default/train (Pod is not owner)")


def test_existing_generated_claim_is_adopted_instead_of_a_new_one():
    made = k.claim("train-gpu-zzzzz", k.claim_spec(k.request()), owner_pod="train")
    outcome = schedule(k.dump(*two_gpu_nodes(made, k.pod("train", templates=[("gpu", "single-gpu")]))))
    [claim] = pod_result(outcome, "train").claims
    assert claim.name == "train-gpu-zzzzz" and not claim.generated


def test_unknown_device_class_is_the_prefilter_message():
    spec = k.claim_spec(k.request(device_class_name="nope.example.com"))
    text = k.dump(*two_gpu_nodes(k.template("odd", spec), k.pod("train", templates=[("gpu", "odd")])))
    train = pod_result(schedule(text), "train")
    assert train.message == "0/2 nodes are available: request gpu: device class nope.example.com does not exist."
    assert verdicts(train) == {"node-a": "request gpu: device class nope.example.com does not exist",
                               "node-b": "request gpu: device class nope.example.com does not exist"}


def test_subrequests_with_prioritized_list_off_are_the_prefilter_message():
    spec = k.claim_spec({"name": "gpu", "firstAvailable": [{"name": "any", "deviceClassName": k.DRIVER}]})
    text = k.dump(*two_gpu_nodes(k.template("alt", spec), k.pod("train", templates=[("gpu", "alt")])))
    gates = ComponentGates.uniform(gates_from_dict({"DRAPrioritizedList": False}, emulated="1.36"))
    train = pod_result(schedule(text, gates=gates), "train")
    assert train.message == (f"0/2 nodes are available: resource claim default/{train.claims[0].name}, request gpu: "
                             "has subrequests, but the DRAPrioritizedList feature is disabled.")


# -- several pods ------------------------------------------------------------------------


def test_two_pods_compete_for_the_last_gpu():
    text = k.dump(*two_gpu_nodes(k.pod("first", templates=[("gpu", "single-gpu")]),
                                 k.pod("second", templates=[("gpu", "single-gpu")])))
    outcome = schedule(text)
    first, second = pod_result(outcome, "first"), pod_result(outcome, "second")
    assert first.outcome == SCHEDULED and first.node == "node-b"
    assert second.outcome == PENDING
    assert second.message == "0/2 nodes are available: 2 cannot allocate all claims."
    assert outcome.outcome == UNSATISFIABLE
    assert outcome.message == "pod default/second: 0/2 nodes are available: 2 cannot allocate all claims."
    reasons = {c["device"]: c["reason"] for c in second.explanation.as_dict()["claims"][0]["requests"][0]["candidates"]}
    assert second.explanation.as_dict()["node"] == "node-b"
    assert reasons["gpu-0"] == f"in use: already allocated to claim default/{first.claims[0].name}"


def test_later_pods_see_devices_earlier_pods_took():
    text = k.dump(*two_gpu_nodes(*(k.pod(f"p{i}", templates=[("gpu", "single-gpu")]) for i in range(3)),
                                 gpus_on_b=3))
    outcome = schedule(text)
    assert [devices(pod_result(outcome, f"p{i}")) for i in range(3)] == [
        ["node-b/gpu-0"], ["node-b/gpu-1"], ["node-b/gpu-2"]]
    assert outcome.outcome == ALLOCATED and outcome.exit_code == 0


def test_shared_claim_is_allocated_once_and_reserved_for_both_pods():
    shared = k.claim("shared-gpu", k.claim_spec(k.request()))
    text = k.dump(*two_gpu_nodes(shared, k.pod("a", claims=[("gpu", "shared-gpu")]),
                                 k.pod("b", claims=[("gpu", "shared-gpu")])))
    outcome = schedule(text)
    b = pod_result(outcome, "b")
    assert b.outcome == SCHEDULED and b.node == "node-b"
    assert [r["name"] for r in b.claims[0].reserved_for] == ["a", "b"]
    assert verdicts(b) == {"node-a": "resourceclaim not available on the node", "node-b": "fits"}
    assert len(outcome.claims) == 1


# -- node filters before DRA -------------------------------------------------------------


def test_node_affinity_that_excludes_the_only_node_with_devices():
    affinity = k.required_affinity({"matchExpressions": [
        {"key": "accelerator", "operator": "NotIn", "values": ["gpu"]}]})
    text = k.dump(*two_gpu_nodes(k.pod("train", templates=[("gpu", "single-gpu")], affinity=affinity)))
    train = pod_result(schedule(text), "train")
    assert train.message == ("0/2 nodes are available: 1 cannot allocate all claims, "
                             "1 node(s) didn't match Pod's node affinity/selector.")
    assert verdicts(train) == {"node-a": "cannot allocate all claims", "node-b": NODE_AFFINITY}


def test_claim_allocated_earlier_on_another_node():
    held = k.claim("shared-gpu", k.claim_spec(k.request()), allocation=k.allocation_on("node-b", ("gpu", "gpu-0")),
                   reserved_for=["runner"])
    text = k.dump(*two_gpu_nodes(
        held, k.pod("runner", claims=[("gpu", "shared-gpu")], node_name="node-b"),
        k.pod("helper", claims=[("gpu", "shared-gpu")], node_selector={"kubernetes.io/hostname": "node-a"})))
    helper = pod_result(schedule(text), "helper")
    assert helper.message == ("0/2 nodes are available: 1 node(s) didn't match Pod's node affinity/selector, "
                              "1 resourceclaim not available on the node.")
    assert any("in use by runner" in note for note in helper.notes)


def test_allocated_claim_takes_its_pod_to_the_claims_node():
    held = k.claim("shared-gpu", k.claim_spec(k.request()), allocation=k.allocation_on("node-b", ("gpu", "gpu-0")))
    outcome = schedule(k.dump(*two_gpu_nodes(held, k.pod("late", claims=[("gpu", "shared-gpu")]))))
    late = pod_result(outcome, "late")
    assert late.outcome == SCHEDULED and late.node == "node-b"
    assert late.claims[0].allocated_before and outcome.claims == []  # nothing was left to allocate


def test_untolerated_and_tolerated_taints():
    taint = [{"key": "dedicated", "value": "gpu", "effect": "NoSchedule"}]
    nodes = [k.node("node-b", taints=taint), k.device_class(), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
             k.template("single-gpu", k.claim_spec(k.request()))]
    plain = pod_result(schedule(k.dump(*nodes, k.pod("p", templates=[("gpu", "single-gpu")]))), "p")
    assert plain.message == "0/1 nodes are available: 1 node(s) had untolerated taint(s)."
    toleration = [{"key": "dedicated", "operator": "Equal", "value": "gpu", "effect": "NoSchedule"}]
    tolerant = k.pod("p", templates=[("gpu", "single-gpu")], tolerations=toleration)
    assert pod_result(schedule(k.dump(*nodes, tolerant)), "p").node == "node-b"


def test_prefer_no_schedule_taints_do_not_filter():
    taint = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    text = k.dump(k.node("node-b", taints=taint), k.pod("p"))
    assert pod_result(schedule(text), "p").node == "node-b"


def test_unschedulable_node_unless_tolerated():
    nodes = [k.node("node-b", unschedulable=True)]
    assert pod_result(schedule(k.dump(*nodes, k.pod("p"))), "p").message == (
        "0/1 nodes are available: 1 node(s) were unschedulable.")
    toleration = [{"key": "node.kubernetes.io/unschedulable", "operator": "Exists", "effect": "NoSchedule"}]
    assert pod_result(schedule(k.dump(*nodes, k.pod("p", tolerations=toleration))), "p").node == "node-b"


def test_match_fields_narrow_the_nodes_before_filtering():
    affinity = k.required_affinity({"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["node-a"]}]})
    text = k.dump(*two_gpu_nodes(k.pod("p", templates=[("gpu", "single-gpu")], affinity=affinity)))
    p = pod_result(schedule(text), "p")
    assert verdicts(p) == {"node-a": "cannot allocate all claims",
                           "node-b": "node(s) didn't satisfy plugin(s) [NodeAffinity]"}


def test_match_fields_that_cannot_all_hold_are_a_conflict():
    placement = placement_of({"spec": k.pod("p", affinity=k.required_affinity({"matchFields": [
        {"key": "metadata.name", "operator": "In", "values": ["a"]},
        {"key": "metadata.name", "operator": "In", "values": ["b"]}]}))["spec"]})
    assert prefilter_nodes(placement) == (None, "pod affinity terms conflict")


def test_an_affinity_term_that_cannot_be_parsed_matches_nothing():
    affinity = k.required_affinity(
        {"matchExpressions": [{"key": "accelerator", "operator": "Gt", "values": ["x"]}]},
        {"matchExpressions": [{"key": "accelerator", "operator": "In", "values": ["gpu"]}]})
    text = k.dump(*two_gpu_nodes(k.pod("p", templates=[("gpu", "single-gpu")], affinity=affinity)))
    assert pod_result(schedule(text), "p").node == "node-b"


def test_bound_pod_is_not_scheduled_and_does_not_count():
    text = k.dump(*two_gpu_nodes(k.pod("fixed", node_name="node-a")))
    outcome = schedule(text)
    assert pod_result(outcome, "fixed").outcome == BOUND
    assert outcome.outcome == ALLOCATED
    assert any("nothing to schedule" in w.message for w in outcome.warnings)


def test_bound_pod_with_unallocated_claims_is_checked_against_its_node_only():
    text = k.dump(*two_gpu_nodes(k.pod("fixed", templates=[("gpu", "single-gpu")], node_name="node-a")))
    fixed = pod_result(schedule(text), "fixed")
    assert fixed.outcome == BOUND
    assert verdicts(fixed) == {"node-a": "cannot allocate all claims",
                               "node-b": "node(s) didn't match the requested node name"}
    assert fixed.message.startswith("bound to node node-a (spec.nodeName): the kubelet cannot start it while "
                                    f"claim default/{fixed.claims[0].name} is not allocated")
    assert fixed.message.endswith("1 cannot allocate all claims, 1 node(s) didn't match the requested node name.")


def test_node_option_considers_only_that_node():
    text = k.dump(*two_gpu_nodes(k.pod("p", templates=[("gpu", "single-gpu")])))
    p = pod_result(schedule(text, node_name="node-a"), "p")
    assert p.message == "0/1 nodes are available: 1 cannot allocate all claims."
    assert [n.node for n in p.nodes] == ["node-a"]


def test_scheduling_gates_hold_the_pod():
    gated = k.pod("p")
    gated["spec"]["schedulingGates"] = [{"name": "example.com/quota"}]
    assert pod_result(schedule(k.dump(k.node("node-a"), gated)), "p").message == (
        "waiting for scheduling gates: [example.com/quota]")


def test_no_nodes_at_all():
    text = k.dump(k.device_class(), k.template("single-gpu", k.claim_spec(k.request())),
                  k.pod("p", templates=[("gpu", "single-gpu")]))
    assert pod_result(schedule(text), "p").message == "no nodes available to schedule pods"


def test_without_node_objects_the_slices_nodes_stand_in():
    text = k.dump(k.device_class(), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
                  k.template("single-gpu", k.claim_spec(k.request())), k.pod("p", templates=[("gpu", "single-gpu")]))
    outcome = schedule(text)
    assert pod_result(outcome, "p").node == "node-b"
    assert any("no Node objects" in w.message for w in outcome.warnings)


def test_unused_pending_claims_are_reported_not_allocated():
    loose = k.claim("loose", k.claim_spec(k.request()))
    outcome = schedule(k.dump(*two_gpu_nodes(loose, k.pod("p"))))
    assert any("ResourceClaim default/loose: not used by any Pod" in w.message for w in outcome.warnings)
    assert outcome.claims == []


def test_what_is_not_modelled_is_said():
    outcome = schedule(k.dump(k.node("node-a"), k.pod("p")))
    assert any("host ports, volumes and priority are not checked" in w.message for w in outcome.warnings)


def test_cel_runtime_error_in_a_template_claim_is_invalid_and_points_at_the_template():
    broken = "device.attributes['gpu.example.com'].nope == 'x'"
    spec = k.claim_spec(k.request(selectors=[{"cel": {"expression": broken}}]))
    text = k.dump(*two_gpu_nodes(k.template("broken", spec), k.pod("p", templates=[("gpu", "broken")])))
    outcome = schedule(text)
    p = pod_result(outcome, "p")
    assert outcome.outcome == INVALID and outcome.exit_code == 2 and p.outcome == "invalid"
    [problem] = p.problems
    assert problem.kind == "ResourceClaimTemplate" and problem.name == "default/broken"
    assert "CEL runtime error" in problem.message and problem.line is not None


def test_fit_error_sorts_the_histogram_as_strings():
    reasons = ["node(s) were unschedulable"] * 2 + ["cannot allocate all claims"] * 10
    assert fit_error(12, reasons) == (
        "0/12 nodes are available: 10 cannot allocate all claims, 2 node(s) were unschedulable.")


def test_scenarios_without_pods_keep_the_claims_path():
    text = k.dump(k.node("node-b"), k.device_class(), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
                  k.claim("c", k.claim_spec(k.request())))
    outcome = schedule(text)
    assert outcome.pods is None and outcome.node == "node-b" and outcome.outcome == ALLOCATED


# -- every real-world file with Pods -----------------------------------------------------


def realworld_pod_files():
    if REALWORLD is None:
        return []
    return sorted(p for p in REALWORLD.rglob("*") if p.suffix in (".yaml", ".yml")
                  and b"kind: Pod" in p.read_bytes())


@pytest.mark.parametrize("node", [None, "node-1"])
def test_every_realworld_file_with_pods_gets_an_answer(node):
    files = realworld_pod_files()
    if not files:
        pytest.skip("../shared/realworld not found")
    for path in files:
        scenario, outcome = allocate_text(path.read_bytes(), node_name=node, time_limit=2)
        assert outcome.outcome in (ALLOCATED, UNSATISFIABLE, INVALID), path
        if outcome.outcome == INVALID:
            assert outcome.problems and outcome.message, path
            assert any(p.line is not None or p.kind for p in outcome.problems), path
        if scenario.pods:
            assert outcome.pods is not None and len(outcome.pods) == len(scenario.pods), path
            assert all(p.message or p.outcome == "scheduled" for p in outcome.pods), path


# -- binding conditions: the pod waits in PreBind -------------------------------------------------------


def _fabric_gpu(**more):
    device = k.gpu("gpu-0", 0)
    device.update(more)
    return device


def test_a_device_with_binding_conditions_leaves_the_pod_waiting_in_prebind_and_the_note_says_for_what():
    text = k.dump(*two_gpu_nodes(k.pod("trainer", templates=[("gpu", "single-gpu")])))
    text = text.replace("name: gpu-0\n", "name: gpu-0\n      bindingConditions: [dra.example.com/attached]\n"
                        "      bindingFailureConditions: [dra.example.com/failed]\n      bindsToNode: true\n")
    result = pod_result(schedule(text), "trainer")
    assert result.outcome == SCHEDULED and result.node == "node-b"
    [note] = [n for n in result.notes if getattr(n, "form", "") == "binding-conditions"]
    assert note.startswith(f"not bound yet: device {k.DRIVER}/node-b/gpu-0 of claim default/trainer-gpu-")
    assert "has bindingConditions dra.example.com/attached; kube-scheduler waits in PreBind" in note
    assert '"waiting for binding conditions for device on node node-b"' in note
    assert "checking every 5 s for up to 600 s" in note
    assert "a bindingFailureCondition (dra.example.com/failed) set True, or the timeout, fails this attempt" in note


def test_a_pod_whose_devices_have_no_binding_conditions_gets_no_prebind_note():
    result = pod_result(schedule(k.dump(*two_gpu_nodes(k.pod("trainer", templates=[("gpu", "single-gpu")])))),
                        "trainer")
    assert result.outcome == SCHEDULED and not [n for n in result.notes if "PreBind" in n]


def test_a_pod_with_a_nominated_node_is_said_not_modelled():
    # kube-scheduler tries status.nominatedNodeName first and takes it if it fits; the playground does not.
    nominated = k.pod("trainer", templates=[("gpu", "single-gpu")])
    nominated["status"] = {"phase": "Pending", "nominatedNodeName": "node-a"}
    result = pod_result(schedule(k.dump(*two_gpu_nodes(nominated))), "trainer")
    assert [n for n in result.notes if n.startswith("not modelled:")] == [
        "not modelled: this pod's nominated node (status.nominatedNodeName); its node, verdicts and scores may "
        "differ from the scheduler's, and so may those of the pods after it"]
    plain = pod_result(schedule(k.dump(*two_gpu_nodes(k.pod("trainer", templates=[("gpu", "single-gpu")])))), "trainer")
    assert not [n for n in plain.notes if n.startswith("not modelled:")]
