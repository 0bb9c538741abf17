"""Choosing among feasible nodes: the default profile's scores, ties, and a single feasible node."""
from allocator.engine.pods import SCHEDULED
from allocator.engine.run import allocate_text
from allocator.engine.scoring import _normalize
from tests.engine import cluster as k


def schedule(*objects, **options):
    _, outcome = allocate_text(k.dump(*objects), **options)
    return outcome


def result(outcome, name):
    return next(p for p in outcome.pods if p.name == name)


def scores(pod) -> dict:
    return {s.node: s.total for s in pod.ranking.scores}


def node(name, cpu="4", memory="8Gi", **fields):
    return k.node(name, allocatable={"cpu": cpu, "memory": memory, "pods": "110"}, **fields)


def test_the_emptier_node_wins_by_least_allocated_and_balanced_allocation():
    outcome = schedule(node("node-a"), node("node-b"),
                       k.pod("busy", node_name="node-a", requests={"cpu": "2", "memory": "1Gi"}),
                       k.pod("p", requests={"cpu": "1", "memory": "1Gi"}))
    p = result(outcome, "p")
    assert p.outcome == SCHEDULED and p.node == "node-b"
    by_node = {s.node: s.plugins for s in p.ranking.scores}
    # node-a: cpu (3000m of 4000m) -> 25, memory 2Gi of 8Gi -> 75: least allocated (25 + 75) / 2 = 50
    assert by_node["node-a"]["NodeResourcesFit"] == {"raw": 50, "score": 50, "weight": 1}
    # node-b: cpu 1/4 -> 75, memory 1/8 -> 87: 81
    assert by_node["node-b"]["NodeResourcesFit"]["score"] == 81
    # balanced scores the change (kube-scheduler 1.37): 50 + (50 + after - before) / 2, where a balance
    # is 100 less |cpu fraction - memory fraction| / 2 in percent.
    # node-a: before |0.5 - 0.125| / 2 -> 81, after |0.75 - 0.25| / 2 -> 75: 50 + 44 / 2 = 72
    # node-b: before empty -> 100, after |0.25 - 0.125| / 2 -> 93: 50 + 43 / 2 = 71
    assert by_node["node-a"]["NodeResourcesBalancedAllocation"]["score"] == 72
    assert by_node["node-b"]["NodeResourcesBalancedAllocation"]["score"] == 71
    assert scores(p)["node-b"] > scores(p)["node-a"]
    assert [n.score["total"] for n in p.nodes] == [scores(p)["node-a"], scores(p)["node-b"]]


def test_equal_nodes_tie_and_the_scheduler_picks_at_random():
    outcome = schedule(node("node-a"), node("node-b"), node("node-c", cpu="2"), k.pod("p"))
    p = result(outcome, "p")
    assert p.ranking.tied == ["node-a", "node-b"]
    assert p.node == "node-a"
    assert "picks one of them at random" in p.ranking.note


def test_a_single_feasible_node_is_taken_without_scoring():
    outcome = schedule(node("node-a"), node("node-b", cpu="1"), k.pod("p", requests={"cpu": "2"}))
    p = result(outcome, "p")
    assert p.node == "node-a" and "without scoring" in p.ranking.note
    assert p.nodes[0].score is None


def test_preferred_node_affinity_outweighs_a_little_free_cpu():
    preferred = {"nodeAffinity": {"preferredDuringSchedulingIgnoredDuringExecution": [
        {"weight": 10, "preference": {"matchExpressions": [
            {"key": "zone", "operator": "In", "values": ["blue"]}]}}]}}
    outcome = schedule(node("node-a", cpu="8"), node("node-b", labels={"zone": "blue"}),
                       k.pod("p", affinity=preferred))
    p = result(outcome, "p")
    assert p.node == "node-b"
    by_node = {s.node: s.plugins for s in p.ranking.scores}
    assert by_node["node-b"]["NodeAffinity"] == {"raw": 10, "score": 100, "weight": 2}
    assert by_node["node-a"]["NodeAffinity"]["score"] == 0


def test_an_untolerated_prefer_no_schedule_taint_costs_a_node():
    soft = [{"key": "spot", "value": "true", "effect": "PreferNoSchedule"}]
    outcome = schedule(node("node-a", taints=soft), node("node-b"), k.pod("p"))
    p = result(outcome, "p")
    assert p.node == "node-b"
    by_node = {s.node: s.plugins for s in p.ranking.scores}
    assert by_node["node-a"]["TaintToleration"] == {"raw": 1, "score": 0, "weight": 3}
    assert by_node["node-b"]["TaintToleration"]["score"] == 100


def test_dra_prefers_the_node_where_the_first_subrequest_fits():
    spec = {"devices": {"requests": [{"name": "gpu", "firstAvailable": [
        {"name": "big", "deviceClassName": k.DRIVER, "selectors": [
            {"cel": {"expression": "device.attributes['gpu.example.com'].model == 'BIG'"}}]},
        {"name": "any", "deviceClassName": k.DRIVER},
    ]}]}}
    outcome = schedule(node("node-a"), node("node-b"), k.device_class(),
                       k.resource_slice("node-a", [k.gpu("gpu-0", 0)]),
                       k.resource_slice("node-b", [k.gpu("gpu-0", 0, model="BIG")]),
                       k.template("t", spec), k.pod("p", templates=[("gpu", "t")]))
    p = result(outcome, "p")
    assert p.node == "node-b"
    by_node = {s.node: s.plugins for s in p.ranking.scores}
    assert by_node["node-b"]["DynamicResources"] == {"raw": 8, "score": 100, "weight": 2}
    assert by_node["node-a"]["DynamicResources"] == {"raw": 7, "score": 87, "weight": 2}


def test_normalization_follows_the_scheduler():
    assert _normalize([0, 0], reverse=True) == [100, 100]
    assert _normalize([0, 0], reverse=False) == [0, 0]
    assert _normalize([1, 3], reverse=True) == [67, 0]
    assert _normalize([7, 8], reverse=False) == [87, 100]


def test_a_node_that_already_holds_the_image_scores_for_image_locality():
    holder = node("node-b")
    holder["status"]["images"] = [{"names": ["registry.example.com/app:1.0", "registry.example.com/app@sha256:ab"],
                                   "sizeBytes": 500 * 1024 * 1024}]
    outcome = schedule(node("node-a"), holder, k.pod("p"))
    p = result(outcome, "p")
    assert p.node == "node-b"
    by_node = {s.node: s.plugins for s in p.ranking.scores}
    # 500 MiB on one node of two counts 250 MiB: (250 - 23) / (1000 - 23) of 100
    assert by_node["node-b"]["ImageLocality"] == {"raw": 23, "score": 23, "weight": 1}
    assert by_node["node-a"]["ImageLocality"]["score"] == 0


def test_an_image_without_a_tag_is_looked_up_as_latest():
    from allocator.engine.scoring import _image_name

    assert _image_name("nginx") == "nginx:latest"
    assert _image_name("registry:5000/team/app") == "registry:5000/team/app:latest"
    assert _image_name("registry:5000/team/app:2") == "registry:5000/team/app:2"


def test_a_big_cluster_is_only_partly_searched_by_the_scheduler():
    from allocator.engine.scoring import feasible_nodes_to_find

    assert feasible_nodes_to_find(99) == 99
    assert feasible_nodes_to_find(150) == 100  # 49 % of 150 is 73: at least 100
    assert feasible_nodes_to_find(500) == 230  # 46 %
    assert feasible_nodes_to_find(6000) == 300  # 5 % at the least
    outcome = schedule(*[node(f"node-{i:03}") for i in range(120)], k.pod("p"))
    assert "stops filtering once 100 are feasible" in result(outcome, "p").ranking.note


def test_the_partial_search_counts_the_nodes_node_affinitys_prefilter_leaves_not_every_node():
    # kube-scheduler sizes its search by the nodes NodeAffinity's PreFilter leaves (matchFields on
    # metadata.name): 110 of 250 nodes, so it stops at 100 feasible ones, not at 250's 120.
    named = [f"node-{i:03}" for i in range(110)]
    pinned = k.pod("p")
    pinned["spec"]["affinity"] = {"nodeAffinity": {"requiredDuringSchedulingIgnoredDuringExecution": {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": named}]}]}}}
    outcome = schedule(*[node(f"node-{i:03}") for i in range(250)], pinned)
    note = result(outcome, "p").ranking.note
    assert "with 110 nodes the scheduler stops filtering once 100 are feasible" in note
    assert "of these 110" in note
