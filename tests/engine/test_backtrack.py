"""No backtracking across pods, shown: when a later pod stays Pending, the playground searches for
nodes that would have fit every pod, and says what it found beside the scheduler's answer."""
from __future__ import annotations

from allocator.engine.pods import PENDING, SCHEDULED
from allocator.engine.run import allocate_text
from tests.engine import cluster as k


def prefers(node: str) -> dict:
    return {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 100, "preference": {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}}]}}


def cluster(*pods, gpus_a=1, gpus_b=1):
    return k.dump(
        k.node("node-a"), k.node("node-b", labels={"fabric": "yes"}), k.device_class(),
        k.resource_slice("node-a", [k.gpu(f"gpu-{i}", i) for i in range(gpus_a)]),
        k.resource_slice("node-b", [k.gpu(f"gpu-{i}", i) for i in range(gpus_b)]),
        k.template("one-gpu", k.claim_spec(k.request())),
        *pods,
    )


def test_an_earlier_pod_takes_the_only_node_a_later_one_can_use_and_the_joint_assignment_is_shown():
    anywhere = k.pod("anywhere", templates=[("gpu", "one-gpu")], affinity=prefers("node-b"))
    fabric_only = k.pod("fabric-only", templates=[("gpu", "one-gpu")], node_selector={"fabric": "yes"})
    _, outcome = allocate_text(cluster(anywhere, fabric_only))
    first, second = outcome.pods
    # the scheduler's answer stays the result
    assert (first.outcome, first.node, second.outcome) == (SCHEDULED, "node-b", PENDING)
    assert outcome.outcome == "unsatisfiable"
    joint = second.joint
    assert joint.nodes == {"default/anywhere": "node-a", "default/fabric-only": "node-b"} and joint.exhaustive
    assert ("the scheduler places pods one at a time and never revisits a placement; this order leaves "
            "default/fabric-only Pending, but default/anywhere on node-a and default/fabric-only on node-b would "
            "fit all") in second.notes[-1]
    assert second.as_dict()["jointAssignment"]["nodes"] == joint.nodes


def test_when_no_assignment_fits_all_the_search_says_order_is_not_the_reason():
    pods = [k.pod(f"p{i}", templates=[("gpu", "one-gpu")]) for i in range(3)]
    _, outcome = allocate_text(cluster(*pods))
    assert [p.outcome for p in outcome.pods] == [SCHEDULED, SCHEDULED, PENDING]
    joint = outcome.pods[2].joint
    assert joint.nodes is None and joint.exhaustive
    assert "not why default/p2 is Pending: no assignment of these 3 pods to nodes fits all" in joint.message


def test_nothing_is_searched_when_the_first_pod_is_already_pending():
    lonely = k.pod("lonely", templates=[("gpu", "one-gpu")], node_selector={"fabric": "no"})
    _, outcome = allocate_text(cluster(lonely))
    assert outcome.pods[0].outcome == PENDING and outcome.pods[0].joint is None


def test_every_pod_scheduled_means_no_search():
    pods = [k.pod(f"p{i}", templates=[("gpu", "one-gpu")]) for i in range(2)]
    _, outcome = allocate_text(cluster(*pods))
    assert [p.outcome for p in outcome.pods] == [SCHEDULED, SCHEDULED]
    assert all(p.joint is None and "jointAssignment" not in p.as_dict() for p in outcome.pods)


def test_a_pending_pod_past_the_searched_pods_is_not_searched_and_nothing_breaks():
    """Found by the pod-group differential (seed 1710): 8 pods scheduled, the 9th Pending; the search
    may vary the first 8 only, so it says nothing (it used to search them and then fail to find the
    Pending pod among them, a StopIteration)."""
    pods = [k.pod(f"p{i}", templates=[("gpu", "one-gpu")]) for i in range(9)]
    _, outcome = allocate_text(cluster(*pods, gpus_a=4, gpus_b=4))
    assert [p.outcome for p in outcome.pods] == [SCHEDULED] * 8 + [PENDING]
    assert all(p.joint is None for p in outcome.pods)
