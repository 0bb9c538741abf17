"""Pod groups share their claims (DRAWorkloadResourceClaims): one claim for the group, reserved for
the group; with the gate off every pod has claims of its own."""
from __future__ import annotations

from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.pods import PENDING, SCHEDULED
from allocator.engine.run import allocate_text
from allocator.engine.scenario import read_scenario
from tests.engine import cluster as k

ON = ComponentGates.uniform(gates_from_dict({"DRAWorkloadResourceClaims": True, "GenericWorkload": True}))
GENERIC_ONLY = ComponentGates.uniform(gates_from_dict({"GenericWorkload": True}))


def pod_group(name="trainers", claims=(("gpu", None, "one-gpu"),), min_count=None, api_version="scheduling.k8s.io/v1beta1"):
    spec = {"resourceClaims": [{"name": n, **({"resourceClaimName": c} if c else {}),
                                **({"resourceClaimTemplateName": t} if t else {})} for n, c, t in claims]}
    if min_count:
        spec["schedulingPolicy"] = {"gang": {"minCount": min_count}}
    return {"apiVersion": api_version, "kind": "PodGroup", "metadata": {"name": name, "namespace": "default"},
            "spec": spec}


def member(name, group="trainers", templates=(("gpu", "one-gpu"),)):
    pod = k.pod(name, templates=list(templates))
    pod["spec"]["schedulingGroup"] = {"podGroupName": group}
    return pod


def cluster(*objects):
    return k.dump(
        k.node("node-a"), k.node("node-b"), k.device_class(),
        k.resource_slice("node-a", [k.gpu("gpu-0", 0)]), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
        k.template("one-gpu", k.claim_spec(k.request())), *objects)


def claims_of(outcome):
    return [[c.name for c in p.claims] for p in outcome.pods]


def test_group_pods_share_one_claim_made_for_the_group_and_reserved_for_it():
    _, outcome = allocate_text(cluster(pod_group(), member("t-0"), member("t-1")), gates=ON)
    first, second = outcome.pods
    assert (first.outcome, first.node, second.outcome, second.node) == (SCHEDULED, "node-a", SCHEDULED, "node-a")
    (name,), (again,) = claims_of(outcome)
    assert name == again and name.startswith("trainers-gpu-") and len(name) == len("trainers-gpu-") + 5
    claim = second.claims[0]
    assert claim.group == "default/trainers" and claim.as_dict()["podGroup"] == "default/trainers"
    assert [(r["resource"], r["name"]) for r in claim.reserved_for] == [("podgroups", "trainers")]
    assert claim.reserved_for[0]["apiGroup"] == "scheduling.k8s.io"
    # the shared allocation is on node-a: the second pod can only go there
    assert {n.node: n.reason for n in second.nodes}["node-b"] == "resourceclaim not available on the node"


def test_with_the_gate_off_each_pod_gets_its_own_claim_reserved_for_itself():
    for gates in (None, GENERIC_ONLY):
        _, outcome = allocate_text(cluster(pod_group(), member("t-0"), member("t-1")), gates=gates)
        (a,), (b,) = claims_of(outcome)
        assert a.startswith("t-0-gpu-") and b.startswith("t-1-gpu-")
        assert [p.node for p in outcome.pods] == ["node-a", "node-b"]
        assert outcome.pods[0].claims[0].reserved_for[0]["name"] == "t-0"
        assert outcome.pods[0].claims[0].group is None
    assert any("DRAWorkloadResourceClaims is off" in n for n in outcome.pods[0].notes)


def test_a_pod_claim_that_does_not_match_the_groups_stays_the_pods_own():
    odd = member("t-1", templates=(("other", "one-gpu"),))
    _, outcome = allocate_text(cluster(pod_group(), member("t-0"), odd), gates=ON)
    assert outcome.pods[1].claims[0].name.startswith("t-1-other-") and outcome.pods[1].claims[0].group is None
    assert outcome.pods[1].node == "node-b"


def test_a_group_sharing_a_named_claim_reserves_it_once_for_the_group():
    named = k.claim("shared-gpu", k.claim_spec(k.request()))
    group = pod_group(claims=(("gpu", "shared-gpu", None),))
    pods = []
    for name in ("t-0", "t-1"):
        pod = k.pod(name, claims=[("gpu", "shared-gpu")])
        pod["spec"]["schedulingGroup"] = {"podGroupName": "trainers"}
        pods.append(pod)
    _, outcome = allocate_text(cluster(named, group, *pods), gates=ON)
    assert [p.outcome for p in outcome.pods] == [SCHEDULED, SCHEDULED]
    reserved = outcome.pods[1].claims[0].reserved_for
    assert [(r["resource"], r["name"]) for r in reserved] == [("podgroups", "trainers")]


def test_a_gang_that_fits_is_bound_whole_and_said_to_be_tried_together():
    _, outcome = allocate_text(cluster(pod_group(claims=(), min_count=2), member("t-0"), member("t-1")), gates=ON)
    assert [(p.outcome, p.node) for p in outcome.pods] == [(SCHEDULED, "node-a"), (SCHEDULED, "node-b")]
    assert any("asks for gang scheduling (minCount 2): kube-scheduler takes its pending pods together in one pod "
               "group cycle and binds all of them or none" in n for n in outcome.pods[0].notes)


def test_a_gang_whose_last_pod_does_not_fit_binds_none_and_names_that_pod():
    """Two devices, three pods of a gang of minCount 3: the third pod does not fit, so the two placed
    are taken back (scheduleOnePodGroup), with the scheduler's own message; the page says which pod."""
    _, outcome = allocate_text(cluster(pod_group(claims=(), min_count=3), member("t-0"), member("t-1"),
                                       member("t-2")), gates=ON)
    assert [p.outcome for p in outcome.pods] == [PENDING, PENDING, PENDING]
    assert [p.message for p in outcome.pods[:2]] == [
        "pod group is unschedulable, minCount (3) cannot be satisfied: 2 scheduled, 0 remaining"] * 2
    assert outcome.pods[2].message == "0/2 nodes are available: 2 cannot allocate all claims."
    assert all(c.allocation is None and not c.reserved_for for p in outcome.pods for c in p.claims)
    assert any(n.startswith("PodGroup default/trainers is a gang (minCount 3) and pod default/t-2 does not fit "
                            "(0/2 nodes are available: 2 cannot allocate all claims.), so fewer than 3 of its pods "
                            "can be scheduled: kube-scheduler binds none of them") for n in outcome.pods[0].notes)
    assert any("because this pod does not fit" in n for n in outcome.pods[2].notes)


def test_a_failed_gang_leaves_its_devices_to_the_pods_after_it():
    alone = k.pod("after", templates=[("gpu", "one-gpu")])
    _, outcome = allocate_text(cluster(pod_group(claims=(), min_count=3), member("t-0"), member("t-1"),
                                       member("t-2"), alone), gates=ON)
    assert (outcome.pods[3].outcome, outcome.pods[3].node) == (SCHEDULED, "node-a")


def test_a_gangs_pods_are_tried_together_at_the_turn_of_the_first():
    """The queue pops the group's pods as one entity: t-1, after a pod of no group in the input, is
    placed before it."""
    alone = k.pod("between", templates=[("gpu", "one-gpu")])
    _, outcome = allocate_text(cluster(pod_group(claims=(), min_count=2), member("t-0"), alone, member("t-1")),
                               gates=ON)
    assert [(p.name, p.outcome) for p in outcome.pods] == [("t-0", SCHEDULED), ("between", PENDING),
                                                           ("t-1", SCHEDULED)]


def test_a_basic_group_binds_the_pods_that_fit():
    _, outcome = allocate_text(cluster(pod_group(claims=()), member("t-0"), member("t-1"), member("t-2")), gates=ON)
    assert [p.outcome for p in outcome.pods] == [SCHEDULED, SCHEDULED, PENDING]
    assert outcome.pods[2].message == "0/2 nodes are available: 2 cannot allocate all claims."


def test_a_gang_short_of_min_count_is_kept_out_of_the_queue():
    """As the real queue does (GangScheduling PreEnqueue, tests/upstream/test_workloads_upstream.py)."""
    _, outcome = allocate_text(cluster(pod_group(min_count=3), member("t-0"), member("t-1")), gates=ON)
    for pod in outcome.pods:
        assert (pod.outcome, pod.message) == (PENDING, "waiting for minCount pods from a gang to appear in scheduling queue")
        assert any(n.startswith("PodGroup default/trainers asks for gang scheduling (minCount 3) and the scenario "
                                "holds 2 of its pods: kube-scheduler keeps them all out of its scheduling queue")
                   for n in pod.notes), pod.notes


def test_a_gang_of_min_count_one_places_its_pods_as_one_by_one_does():
    _, outcome = allocate_text(cluster(pod_group(min_count=1), member("t-0")), gates=ON)
    assert outcome.pods[0].outcome == SCHEDULED
    assert not any("gang" in n for n in outcome.pods[0].notes)


def test_a_pod_of_a_missing_pod_group_is_kept_out_of_the_queue():
    _, outcome = allocate_text(cluster(member("t-0", group="elsewhere")), gates=GENERIC_ONLY)
    assert (outcome.pods[0].outcome, outcome.pods[0].message) == (
        PENDING, 'waiting for pods\'s pod group "elsewhere" to appear in scheduling queue')
    assert any(n.startswith("the pod belongs to PodGroup default/elsewhere, which the scenario does not hold: "
                            "kube-scheduler keeps the pod out of its scheduling queue") for n in outcome.pods[0].notes)


def test_a_pod_group_in_an_unserved_version_is_ignored_with_a_located_warning():
    scenario = read_scenario(cluster(pod_group(api_version="scheduling.k8s.io/v1alpha2")))
    warning = next(w for w in scenario.warnings if w.kind == "PodGroup")
    assert "not served by Kubernetes 1.37" in warning.message and warning.line is not None
    assert scenario.pod_groups == {}


def test_a_pod_group_claim_naming_both_a_claim_and_a_template_is_refused_at_its_line():
    scenario = read_scenario(cluster(pod_group(claims=(("gpu", "c", "one-gpu"),))))
    error = scenario.errors[0]
    assert error.kind == "PodGroup" and error.path == ("spec", "resourceClaims", 0) and error.line is not None
