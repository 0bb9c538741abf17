"""Properties of the recorded search over generated scenarios: the rows and the trace agree, a
rejection never blames a pick that had not happened yet, chosen rows are the result, replaying the
trace gives the result, and pruning never changes the answer."""
from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from allocator.engine.allocate import Allocator, SearchLimit
from allocator.engine.attempt import allocated_state
from allocator.engine.explain import explain
from allocator.engine.gates import AllocatorFeatures, gates_from_dict
from allocator.engine.pools import SliceIndex, gather_pools
from allocator.engine.scenario import read_scenario
from allocator.engine.trace import PICK, REJECT, UNDO, SearchRecorder

from .helpers import allocated, claim, dump, gpu_class, node, request, slice_

SIZES = ("small", "large")


@st.composite
def scenarios(draw):
    partitioned = draw(st.booleans())
    n = draw(st.integers(1, 6))
    devices = []
    for i in range(n):
        device = {"name": f"d{i}", "attributes": {
            "numa": {"int": draw(st.integers(0, 2))}, "size": {"string": draw(st.sampled_from(SIZES))}}}
        if partitioned:
            device["consumesCounters"] = [{"counterSet": "gpu", "counters": {
                "memory": {"value": f"{draw(st.integers(1, 4))}Gi"}}}]
        devices.append(device)
    objects = [gpu_class(), node()]
    if partitioned:
        objects.append(slice_("counters", counters=[{"name": "gpu", "counters": {"memory": {"value": "6Gi"}}}],
                              count=2))
    objects.append(slice_("devices", devices, count=2 if partitioned else 1))
    if draw(st.booleans()):
        taken = draw(st.integers(0, n - 1))
        objects.append(claim("old", [request()], allocation=allocated(
            [{"request": "gpu", "driver": "gpu.example.com", "pool": "pool", "device": f"d{taken}"}])))
    for c in range(draw(st.integers(1, 3))):
        requests = []
        for r in range(draw(st.integers(1, 2))):
            fields = {}
            if draw(st.booleans()):
                fields["selectors"] = [{"cel": {"expression":
                                                f'device.attributes["gpu.example.com"].size == "{draw(st.sampled_from(SIZES))}"'}}]
            if draw(st.integers(0, 3)) == 0:
                requests.append({"name": f"r{r}", "firstAvailable": [
                    {"name": "big", "deviceClassName": "gpu", "count": draw(st.integers(1, 3)), **fields},
                    {"name": "one", "deviceClassName": "gpu", "count": 1}]})
            else:
                requests.append(request(f"r{r}", count=draw(st.integers(1, 3)), **fields))
        constraints = None
        if draw(st.booleans()):
            kind = draw(st.sampled_from(["matchAttribute", "distinctAttribute"]))
            constraints = [{kind: "gpu.example.com/numa"}]
        objects.append(claim(f"c{c}", requests, constraints=constraints))
    return dump(*objects)


def search(text: str, *, prune: bool = True):
    scenario = read_scenario(text)
    assert not scenario.errors, scenario.errors
    features = AllocatorFeatures.from_gates(gates_from_dict({}))
    pending = [c for c in scenario.claims if c.allocation is None]
    recorder = SearchRecorder(limit=10**6)
    node_ = scenario.nodes["worker-1"]
    allocator = Allocator(claims=pending, classes=scenario.classes,
                          pools=gather_pools(node_, SliceIndex(scenario.slices), features), node=node_,
                          features=features, allocated=allocated_state(scenario.claims, features),
                          recorder=recorder, prune=prune, max_steps=200_000, share_ids=lambda: "share")
    found = allocator.run()
    return allocator, recorder, found


def picks_of(allocator) -> list:
    return [[(p.rd.name, p.device.id_str) for p in picks] for picks in allocator.results]


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_rows_and_trace_agree_and_never_blame_a_later_pick(text):
    try:
        allocator, recorder, found = search(text)
        exact, exact_recorder, exact_found = search(text, prune=False)
    except SearchLimit:
        return
    # Pruning only cuts branches that cannot succeed.
    assert found == exact_found
    if found:
        assert picks_of(allocator) == picks_of(exact)
    result = picks_of(allocator)

    # Walk the whole trace: every state-dependent refusal names only holders picked before it.
    held: list = []
    for step in recorder.steps:
        claim_key = allocator.claims[step.rd.claim_index].key if step.rd is not None else None
        if step.kind == PICK:
            held.append((claim_key, step.rd.name, step.device.id_str))
        elif step.kind == UNDO:
            held.remove((claim_key, step.rd.name, step.device.id_str))
        elif step.kind == REJECT:
            for holder in step.detail.holders():
                if not holder.before:
                    assert (holder.claim, holder.request, holder.device) in held, (step, held)

    # Replaying the trace's picks and undos gives the result.
    if found:
        replayed: dict = {}
        for step in recorder.steps:
            key = step.rd.claim_index if step.rd is not None else None
            if step.kind == PICK:
                replayed.setdefault(key, []).append((step.rd.name, step.device.id_str))
            elif step.kind == UNDO:
                replayed[key].remove((step.rd.name, step.device.id_str))
        assert [replayed.get(ci, []) for ci in range(len(allocator.claims))] == result

    # The rows: chosen rows are the result; every rejected row is a rejection the trace recorded.
    explanation = explain(exact if not found else allocator, exact_recorder if not found else recorder).as_dict()
    source = exact_recorder if not found else recorder
    source_allocator = exact if not found else allocator
    rejected_steps = {(source_allocator.claims[s.rd.claim_index].key, s.rd.name, s.device.name, s.detail.code)
                      for s in source.steps if s.kind == REJECT}
    for ci, c in enumerate(explanation["claims"]):
        chosen = [(r["request"], row["driver"] + "/" + row["pool"].split("/", 1)[1] + "/" + row["device"])
                  for r in c["requests"] for row in r["candidates"] if row["verdict"] == "chosen"]
        if found:
            assert sorted(chosen) == sorted(result[ci])
        else:
            assert not chosen
        for r in c["requests"]:
            for row in r["candidates"]:
                if row["verdict"] == "rejected" and row["code"] != "no-room" and row.get("stateDependent"):
                    assert (c["claim"], r["request"], row["device"], row["code"]) in rejected_steps


@settings(max_examples=150, derandomize=True, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(scenarios())
def test_a_failure_reports_the_first_attempt_that_got_furthest(text):
    try:
        allocator, recorder, found = search(text, prune=False)
    except SearchLimit:
        return
    if found:
        return
    held: list = []
    best, best_held = (-1, -1), None
    for step in recorder.steps:
        if step.rd is None:
            continue
        rd = step.rd
        key = (rd.claim_index, rd.request_index, rd.sub_index)
        item = (rd.claim_index, rd.request_index, rd.sub_index, step.device.id_str if step.device else None)
        if step.kind == PICK:
            held.append(item)
        elif step.kind == UNDO:
            held.remove(item)
        if step.kind not in (PICK, "enter"):
            continue
        depth = (allocator.request_offset[rd.claim_index] + rd.request_index,
                 sum(1 for h in held if h[:3] == key))
        if depth > best:
            best, best_held = depth, list(held)
    reported = [(ci, p.rd.request_index, p.rd.sub_index, p.device.id_str) for ci, p in recorder.reported_picks()]
    assert sorted(reported) == sorted(best_held)
