"""No backtracking across pods, shown: a bounded search for nodes that would have fit every pod.

kube-scheduler places pods one at a time and never revisits a placement: when an earlier pod
takes the node (or the devices) a later one needed, the later one stays Pending although another
assignment of all of them exists. After a run in which a pod that follows a scheduled one stays
Pending, this module searches, depth first and within bounds, for one node per pod such that each
pod, pinned to its node and scheduled in the same order, fits. The scheduler's answer stays the
result; what is found (or that nothing is) is an explanation beside it.

Pinning is a required node-affinity term naming the node (ANDed with the pod's own terms), and
each candidate assignment is judged by the playground's own scheduling of the pods in order, so
everything the run checks (filters, NodeResourcesFit, DRA) is checked here too. Devices are the
allocator's choice on each node: the search varies nodes, not the devices picked on a node.
"""
from __future__ import annotations

import copy
import time
from dataclasses import dataclass, field, replace

from allocator.engine.nodefilter import NODE_AFFINITY, NODE_NAME, NOT_IN_PREFILTER_RESULT, UNSCHEDULABLE, UNTOLERATED_TAINT
from allocator.engine.objects import build_pod

MAX_PODS = 8  # pods in the search (the first ones of the run that the scheduler considered)
MAX_RUNS = 300  # schedulings of a prefix of the pods
TIME_LIMIT = 2.0  # seconds
# Reasons that do not depend on other pods: a node rejected for one of them is never a candidate.
STATIC = (UNTOLERATED_TAINT, NODE_AFFINITY, NODE_NAME, UNSCHEDULABLE, NOT_IN_PREFILTER_RESULT)
SCHEDULED, PENDING = "scheduled", "pending"
PREENQUEUE = "(PreEnqueue)"


@dataclass
class JointAssignment:
    """What the search found: `nodes` (pod key -> node) when an assignment of all pods fits."""

    pods: list  # pod keys in scheduling order
    nodes: dict | None  # pod key -> node, or None when none was found
    exhaustive: bool  # every candidate assignment was tried
    tried: int  # schedulings run
    message: str = ""

    def as_dict(self) -> dict:
        return {"pods": list(self.pods), "nodes": self.nodes, "exhaustive": self.exhaustive, "tried": self.tried,
                "message": self.message}


@dataclass
class _Search:
    scenario: object
    schedule: object  # scenario -> Outcome, the run's own scheduling without this search
    keys: list
    candidates: dict  # pod key -> [node]
    deadline: float
    tried: int = 0
    cut: bool = False
    memo: dict = field(default_factory=dict)


def _pinned(raw: dict, node: str) -> dict:
    pod = copy.deepcopy(raw)
    spec = pod.setdefault("spec", {})
    term = {"key": "metadata.name", "operator": "In", "values": [node]}
    node_affinity = spec.setdefault("affinity", {}).setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict) and required.get("nodeSelectorTerms"):
        for t in required["nodeSelectorTerms"]:
            if isinstance(t, dict):
                t["matchFields"] = list(t.get("matchFields") or ()) + [term]
    else:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [{"matchFields": [term]}]}
    return pod


def _fits(search: _Search, assignment: tuple) -> bool:
    """Do the first len(assignment) searched pods, pinned, all get scheduled in order?"""
    if assignment in search.memo:
        return search.memo[assignment]
    if search.tried >= MAX_RUNS or time.monotonic() > search.deadline:
        search.cut = True
        return False
    search.tried += 1
    chosen = dict(zip(search.keys, assignment))
    pods = []
    for pod in search.scenario.pods:
        if pod.key in chosen:
            pods.append(build_pod(_pinned(pod.raw, chosen[pod.key]), pod.ref, name=pod.name, uid=pod.uid or None))
        elif (pod.raw.get("spec") or {}).get("nodeName"):
            pods.append(pod)  # bound pods hold their node's resources; pods after the searched ones are left out
    outcome = search.schedule(replace(search.scenario, pods=pods))
    results = {r.key: r for r in outcome.pods or ()}
    ok = all(results.get(k) is not None and results[k].outcome == SCHEDULED and results[k].node == chosen[k]
             for k in chosen)
    search.memo[assignment] = ok
    return ok


def _dfs(search: _Search, assignment: tuple) -> tuple | None:
    if len(assignment) == len(search.keys):
        return assignment
    key = search.keys[len(assignment)]
    for node in search.candidates[key]:
        step = assignment + (node,)
        if _fits(search, step):
            found = _dfs(search, step)
            if found is not None:
                return found
        if search.cut:
            return None
    return None


def _listed(keys: list, nodes: dict) -> str:
    parts = [f"{key} on {nodes[key]}" for key in keys]
    return ", ".join(parts[:-1]) + (" and " if len(parts) > 1 else "") + parts[-1]


def joint_assignment(scenario, results: list, schedule) -> JointAssignment | None:
    """After a run where a pod following a scheduled one stays Pending: the search's answer, or
    None when there is nothing to search (or too much)."""
    considered = [r for r in results if r.outcome in (SCHEDULED, PENDING)
                  and not any(PREENQUEUE in note for note in r.notes)]
    first_pending = next((i for i, r in enumerate(considered) if r.outcome == PENDING), None)
    if first_pending is None or not any(r.outcome == SCHEDULED for r in considered[:first_pending]):
        return None
    if first_pending >= MAX_PODS:
        return None  # the first Pending pod is past the pods the search may vary: too much to search
    considered = considered[:MAX_PODS]
    keys = [r.key for r in considered]
    candidates = {}
    for r in considered:
        nodes = [n.node for n in r.nodes if n.fits or not any(s in (n.reason or "") for s in STATIC)]
        if r.node in nodes:  # the scheduler's own choice first
            nodes.remove(r.node)
            nodes.insert(0, r.node)
        candidates[r.key] = nodes
    if not all(candidates.values()):
        return None  # a pod no node could take whatever the others do: nothing to teach here
    search = _Search(scenario, schedule, keys, candidates, time.monotonic() + TIME_LIMIT)
    found = _dfs(search, ())
    pending = [r.key for r in considered if r.outcome == PENDING]
    if found is not None:
        nodes = dict(zip(keys, found))
        message = (f"the scheduler places pods one at a time and never revisits a placement; this order leaves "
                   f"{', '.join(pending)} Pending, but {_listed(keys, nodes)} would fit all "
                   f"({search.tried} assignment{'s' if search.tried != 1 else ''} tried)")
        return JointAssignment(keys, nodes, not search.cut, search.tried, message)
    if search.cut:
        message = (f"the scheduler places pods one at a time; no assignment of these {len(keys)} pods to nodes "
                   f"that fits all was found within the search's bound ({search.tried} tried)")
    else:
        message = (f"the scheduler places pods one at a time, but that is not why {', '.join(pending)} "
                   f"{'is' if len(pending) == 1 else 'are'} Pending: no assignment of these {len(keys)} pods to "
                   f"nodes fits all ({search.tried} tried, every one)")
    return JointAssignment(keys, None, not search.cut, search.tried, message)
