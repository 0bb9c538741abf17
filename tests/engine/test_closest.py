"""The node closest to fitting a pending pod (engine/closest.py), on a dump where the first nodes by
name have all their GPUs taken, one node has 4 free GPUs behind a taint and one has 8 free GPUs but
is 5 CPUs short."""
from allocator.engine.closest import Closeness, closest_first
from allocator.engine.run import allocate_text
from tests.engine import cluster as c

TAINT = [{"key": "dedicated", "value": "training", "effect": "NoSchedule"}]


def gpus(node: str) -> list:
    return [c.gpu(f"gpu-{i}", i) for i in range(8)]


def bound_pod_with_gpus(owner: str, node: str, count: int) -> list:
    """A pod bound to `node` and its claim, allocated the node's first `count` GPUs."""
    claim = c.claim(f"{owner}-gpus", c.claim_spec(c.request(count=count)), owner_pod=owner,
                    allocation=c.allocation_on(node, *[("gpu", f"gpu-{i}") for i in range(count)]),
                    reserved_for=[owner])
    pod = c.pod(owner, node_name=node, claims=[("gpu", f"{owner}-gpus")], claim_statuses=[("gpu", f"{owner}-gpus")])
    return [claim, pod]


def closest_node_dump(named_claim: bool = False) -> str:
    items = [c.device_class()]
    for name, extra in (("node-a", {}), ("node-b", {}), ("node-c", {"taints": TAINT}),
                        ("node-d", {"allocatable": {"cpu": "3", "memory": "65843128Ki", "pods": "110"}})):
        items += [c.node(name, **extra), c.resource_slice(name, gpus(name))]
    taken = {"node-a": 8, "node-b": 8, "node-c": 4}
    for name, count in taken.items():
        items += bound_pod_with_gpus(f"trainer-{name}", name, count)
    if named_claim:
        items.append(c.claim("four-gpus", c.claim_spec(c.request(count=4))))
        items.append(c.pod("waiting", claims=[("gpu", "four-gpus")], requests={"cpu": "8"}))
    else:
        items.append(c.template("four-gpus", c.claim_spec(c.request(count=4))))
        items.append(c.pod("waiting", templates=[("gpu", "four-gpus")], requests={"cpu": "8"}))
    return c.dump(*items)


def test_the_node_behind_a_taint_with_free_gpus_comes_first_then_the_one_short_of_cpu():
    _, outcome = allocate_text(closest_node_dump())
    (pending,) = [p for p in outcome.pods if p.outcome == "pending"]
    order = outcome.closest[pending.key]

    assert [n.node for n in order] == ["node-c", "node-d", "node-a", "node-b"]
    tainted, short, full = order[0], order[1], order[2]
    assert (tainted.failing, tainted.devices_short, tainted.resources_short, tainted.free_devices) == (1, 0, 0, 4)
    assert (short.failing, short.devices_short, short.resources_short, short.free_devices) == (1, 0, 1, 8)
    assert (full.devices_short, full.free_devices) == (4, 0)


def test_a_claim_the_pod_names_counts_its_devices_as_a_template_does():
    _, outcome = allocate_text(closest_node_dump(named_claim=True))
    (order,) = outcome.closest.values()
    assert [(n.node, n.devices_short) for n in order] == [("node-c", 0), ("node-d", 0), ("node-a", 4), ("node-b", 4)]


def test_a_pod_that_schedules_has_no_closest_nodes():
    _, outcome = allocate_text(closest_node_dump().replace("cpu: '8'", "cpu: '1'"))
    (waiting,) = [p for p in outcome.pods if p.name == "waiting"]
    assert waiting.outcome == "scheduled" and waiting.node == "node-d"
    assert outcome.closest == {}


class _Verdict:
    def __init__(self, node, reasons, fits=False):
        self.node, self.reasons, self.fits = node, reasons, fits
        self.reason = ", ".join(reasons)


def test_fewer_failing_checks_beat_fewer_devices_short():
    nodes = [_Verdict("a", ["Insufficient cpu", "Insufficient memory"]), _Verdict("b", ["cannot allocate"]),
             _Verdict("c", [], fits=True)]
    order = closest_first(nodes, asked=2, free={"a": 2, "b": 0})
    assert [n.node for n in order] == ["b", "a"]
    assert order[0] == Closeness("b", 1, 2, 0, 0, ("cannot allocate",))


# ---- a scenario of claims, without Pods ---------------------------------------------------------


def claims_only_dump() -> str:
    """Three nodes of 8 GPUs: node-a has all 8 taken, node-b 6, node-c 1; a claim asks for 8."""
    items = [c.device_class()]
    for name, taken in (("node-a", 8), ("node-b", 6), ("node-c", 1)):
        items += [c.node(name), c.resource_slice(name, gpus(name))]
        items.append(c.claim(f"held-{name}", c.claim_spec(c.request(count=taken)),
                             allocation=c.allocation_on(name, *[("gpu", f"gpu-{i}") for i in range(taken)])))
    items.append(c.claim("eight-gpus", c.claim_spec(c.request(count=8))))
    return c.dump(*items)


def test_claims_that_fit_no_node_are_explained_on_the_node_with_the_most_free_devices():
    _, outcome = allocate_text(claims_only_dump())
    assert outcome.outcome == "unsatisfiable"
    assert [(n.node, n.free_devices, n.devices_short) for n in outcome.claims_closest] == [
        ("node-c", 7, 1), ("node-b", 2, 6), ("node-a", 0, 8)]
    assert outcome.explanation.node == "node-c"  # not node-a, the first by name


def test_claims_on_one_node_asked_for_are_not_ranked():
    _, outcome = allocate_text(claims_only_dump(), node_name="node-a")
    assert outcome.claims_closest == [] and outcome.explanation.node == "node-a"
