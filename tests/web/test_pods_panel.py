"""The Pods panel: every pod's verdicts, the scores of feasible nodes, and a why per pending pod."""
import pytest

from tests.engine import cluster as k

pytestmark = pytest.mark.django_db


def two_pending_pods() -> str:
    return k.dump(
        k.node("node-a"), k.node("node-b"),
        k.device_class(), k.resource_slice("node-a", [k.gpu("gpu-0", 0)]),
        k.template("two-gpus", k.claim_spec(k.request(count=2))),
        k.template("three-gpus", k.claim_spec(k.request(count=3))),
        k.pod("train-a", templates=[("gpu", "two-gpus")]),
        k.pod("train-b", templates=[("gpu", "three-gpus")]),
    )


def tied_nodes() -> str:
    return k.dump(k.node("node-a"), k.node("node-b"), k.pod("web", requests={"cpu": "1", "memory": "1Gi"}))


def post(client, scenario: str) -> str:
    return client.post("/", {"scenario": scenario, "gates-submitted": "1"}, HTTP_HX_REQUEST="true").content.decode()


def test_each_pending_pod_has_its_own_why(client):
    body = post(client, two_pending_pods())
    for pod, count in (("default/train-a", 2), ("default/train-b", 3)):
        start = body.index(f'data-pod="{pod}"')
        block = body[start:body.index('<div class="pod ', start + 1) if '<div class="pod ' in body[start + 1:]
                     else len(body)]
        assert 'class="pod-why" open' in block
        assert f"{count} × gpu.example.com" in block
        assert "0/2 nodes are available: 2 cannot allocate all claims." in block


def test_feasible_nodes_show_their_scores_and_the_tie(client):
    body = post(client, tied_nodes())
    assert "<th scope=\"col\">Score</th>" in body
    assert "taints 100×3" in body
    assert "2 nodes share the best score (node-a, node-b): the scheduler picks one of them at random" in body


def test_a_pod_no_node_had_room_for_says_so_in_its_why(client):
    body = post(client, k.dump(k.node("node-a", allocatable={"cpu": "1", "memory": "1Gi", "pods": "110"}),
                               k.pod("big", requests={"cpu": "2"})))
    assert "0/1 nodes are available: 1 Insufficient cpu." in body
    assert "cpu: the pod asks 2, 0 of 1 in use" in body
    assert "no node got as far as the DRA search" in body


def test_a_big_cluster_folds_the_node_table_by_reason(client):
    nodes = [k.node(f"node-{i:02}") for i in range(20)]
    taint = [{"key": "dedicated", "value": "infra", "effect": "NoSchedule"}]
    nodes += [k.node(f"infra-{i}", taints=taint) for i in range(3)]
    body = post(client, k.dump(*nodes, k.pod("web", requests={"cpu": "1"})))
    block = body[body.index('data-pod="default/web"'):]
    assert block.count('<tr class="verdict-chosen"') == 5  # the chosen node among the five best
    assert '15 nodes: feasible too (the 5 best scored are listed)</summary>' in block
    assert '3 nodes: node(s) had untolerated taint(s)</summary>' in block
