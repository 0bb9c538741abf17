"""PodTopologySpread as kube-scheduler 1.37.2 runs it on a pod's own topologySpreadConstraints.

Filter (after NodeResourcesFit, before InterPodAffinity), for `whenUnsatisfiable: DoNotSchedule`:
a node must have every constraint's topology key, and placing the pod there must keep
`pods matching in the node's domain + 1 (if the pod matches itself) - the fewest in any domain`
within `maxSkew`. The domains and counts come from the nodes the pod could go to: those that have
every constraint's key and, per constraint, pass its nodeAffinityPolicy (Honor by default: the
pod's nodeSelector and required node affinity) and nodeTaintsPolicy (Ignore by default; Honor:
no untolerated NoSchedule/NoExecute taint). Fewer domains than `minDomains` make the fewest 0.
Only pods in the pod's namespace count, and a selector that is empty counts none.
`matchLabelKeys` adds the pod's own values of those labels to the selector.

Score (weight 2), for `ScheduleAnyway`: per constraint, a node gets (matching pods in its domain)
x log(domains + 2) + maxSkew - 1, the sum is rounded, and the scores are turned around so the
emptiest node gets 100. Nodes without every key get 0. The system default constraints (for pods
that a Service, ReplicaSet, StatefulSet or ReplicationController selects) are not modelled.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from allocator.engine.labelselect import LabelSelector, label_selector, pod_labels
from allocator.engine.nodefilter import DO_NOT_SCHEDULE, Placement, affinity_matches

NAME = "PodTopologySpread"
CONSTRAINTS_NOT_MATCH = "node(s) didn't match pod topology spread constraints"
NODE_LABEL_NOT_MATCH = CONSTRAINTS_NOT_MATCH + " (missing required label)"
HOSTNAME = "kubernetes.io/hostname"
MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class Constraint:
    max_skew: int
    topology_key: str
    selector: LabelSelector
    min_domains: int
    honor_affinity: bool
    honor_taints: bool


def constraints(raw: dict, action: str) -> list:
    """The pod's constraints with this whenUnsatisfiable, as the plugin reads them."""
    spec = raw.get("spec") or {}
    labels = pod_labels(raw)
    out = []
    for c in spec.get("topologySpreadConstraints") or ():
        if not isinstance(c, dict) or c.get("whenUnsatisfiable") != action:
            continue
        selector = label_selector(c.get("labelSelector"))
        keys = {str(k): labels[str(k)] for k in c.get("matchLabelKeys") or () if str(k) in labels}
        if keys:
            selector = selector.with_labels(keys)
        min_domains = c.get("minDomains")
        out.append(Constraint(int(c.get("maxSkew") or 0), str(c.get("topologyKey") or ""), selector,
                              int(min_domains) if min_domains is not None else 1,
                              c.get("nodeAffinityPolicy", "Honor") != "Ignore",
                              c.get("nodeTaintsPolicy", "Ignore") == "Honor"))
    return out


def _node_affinity_matches(placement: Placement, node) -> bool:
    if any(node.labels.get(key) != value for key, value in placement.node_selector):
        return False
    return placement.affinity is None or affinity_matches(placement.affinity, node)


def _taints_tolerated(placement: Placement, node) -> bool:
    return not any(taint.effect in DO_NOT_SCHEDULE and not any(t.tolerates(taint) for t in placement.tolerations)
                   for taint in node.taints)


def _included(c: Constraint, placement: Placement, node) -> bool:
    if c.honor_affinity and not _node_affinity_matches(placement, node):
        return False
    return not c.honor_taints or _taints_tolerated(placement, node)


def _count(pods: list, selector: LabelSelector, namespace: str) -> int:
    if selector.empty:
        return 0
    return sum(1 for p in pods if not p.deleting and p.namespace == namespace and selector.matches(p.labels))


def _has_keys(node, cs: list) -> bool:
    return all(c.topology_key in node.labels for c in cs)


class Filter:
    """The PreFilter state for one pod; check(node) is the Filter. `nodes` is every node of the
    cluster, `pods_on` gives the PodViews placed on a node."""

    def __init__(self, raw: dict, namespace: str, placement: Placement, nodes: list, pods_on):
        self.constraints = constraints(raw, "DoNotSchedule")
        self.labels = pod_labels(raw)
        self.counts = [dict() for _ in self.constraints]
        for node in nodes:
            if not _has_keys(node, self.constraints):
                continue
            for i, c in enumerate(self.constraints):
                if not _included(c, placement, node):
                    continue
                value = node.labels[c.topology_key]
                self.counts[i][value] = self.counts[i].get(value, 0) + _count(pods_on(node.name), c.selector, namespace)

    def check(self, node) -> str | None:
        for i, c in enumerate(self.constraints):
            value = node.labels.get(c.topology_key)
            if value is None:
                return NODE_LABEL_NOT_MATCH
            counts = self.counts[i]
            fewest = min(counts.values()) if counts else 0
            if len(counts) < c.min_domains:
                fewest = 0
            own = 1 if c.selector.matches(self.labels) else 0
            if counts.get(value, 0) + own - fewest > c.max_skew:
                return CONSTRAINTS_NOT_MATCH
        return None


def scores(raw: dict, namespace: str, placement: Placement, nodes: list, pods_on, feasible: list):
    """(raw, normalized) per feasible node, or None when the pod has no ScheduleAnyway constraint."""
    cs = constraints(raw, "ScheduleAnyway")
    if not cs or not nodes:
        return None
    ignored = {n.name for n in feasible if not _has_keys(n, cs)}
    counts = [dict() for _ in cs]
    for node in feasible:
        if node.name in ignored:
            continue
        for i, c in enumerate(cs):
            if c.topology_key != HOSTNAME:
                counts[i].setdefault(node.labels.get(c.topology_key, ""), 0)
    weights = []
    for i, c in enumerate(cs):
        size = len(feasible) - len(ignored) if c.topology_key == HOSTNAME else len(counts[i])
        weights.append(math.log(size + 2))
    for node in nodes:
        if not _has_keys(node, cs):
            continue
        for i, c in enumerate(cs):
            if not _included(c, placement, node):
                continue
            value = node.labels.get(c.topology_key, "")
            if value in counts[i]:
                counts[i][value] += _count(pods_on(node.name), c.selector, namespace)
    raw_scores = []
    for node in feasible:
        if node.name in ignored:
            raw_scores.append(0)
            continue
        total = 0.0
        for i, c in enumerate(cs):
            value = node.labels.get(c.topology_key)
            if value is None:
                continue
            if c.topology_key == HOSTNAME:
                found = _count(pods_on(node.name), c.selector, namespace)
            else:
                found = counts[i][value]
            total += found * weights[i] + (c.max_skew - 1)
        raw_scores.append(int(math.floor(total + 0.5)))
    kept = [s for node, s in zip(feasible, raw_scores) if node.name not in ignored]
    low = min(kept) if kept else 0
    high = max([0] + kept)
    normalized = []
    for node, score in zip(feasible, raw_scores):
        if node.name in ignored:
            normalized.append(0)
        elif high == 0:
            normalized.append(MAX_NODE_SCORE)
        else:
            normalized.append(MAX_NODE_SCORE * (high + low - score) // high)
    return raw_scores, normalized
