"""InterPodAffinity as kube-scheduler 1.37.2 runs it: a Filter on required terms, a Score on the rest.

Filter (after PodTopologySpread, before DynamicResources), for one node:

- the pod's required podAffinity: for every term the node must have the topology key, and some
  pod in that topology domain must match all the terms together; when no pod anywhere matches
  them, a pod that matches its own terms may start the group (on a node with every key);
- the pod's required podAntiAffinity: no pod matching a term may be in the node's domain;
- the required podAntiAffinity of the pods already placed: none of their terms that matches this
  pod may cover the node (a pod's domain is its node's value of the term's topology key).

A term matches a pod in its namespaces (the pod's own by default, `namespaces`, or every
namespace whose labels `namespaceSelector` selects) whose labels its `labelSelector` selects.
Score (weight 2): per topology domain, the weights of the pod's preferred terms that placed pods
match (anti-affinity counts negative), and of the placed pods' preferred terms, and 1 for each of
their required affinity terms, that match this pod; a node gets its domains' sums, normalized to
0..100 between the lowest and the highest. The InterPodAffinityHostnameFastPath gate (alpha, off)
is not modelled.
"""
from __future__ import annotations

from dataclasses import dataclass

from allocator.engine.labelselect import EVERYTHING, NOTHING, LabelSelector, label_selector, pod_labels

NAME = "InterPodAffinity"
AFFINITY_NOT_MATCH = "node(s) didn't match pod affinity rules"
ANTI_AFFINITY_NOT_MATCH = "node(s) didn't match pod anti-affinity rules"
EXISTING_ANTI_AFFINITY_NOT_MATCH = "node(s) didn't satisfy existing pods anti-affinity rules"
HARD_POD_AFFINITY_WEIGHT = 1  # InterPodAffinityArgs' default
MAX_NODE_SCORE = 100


@dataclass(frozen=True)
class Term:
    namespaces: frozenset
    namespace_selector: LabelSelector
    selector: LabelSelector
    topology_key: str
    weight: int = 0

    def matches(self, pod: "PodView", namespace_labels: dict | None) -> bool:
        if pod.namespace in self.namespaces or self.namespace_selector.matches(namespace_labels or {}):
            return self.selector.matches(pod.labels)
        return False

    def merged(self, namespaces: dict) -> "Term":
        """A term of the pod being scheduled: a namespaceSelector that is not empty becomes the
        namespaces it selects among the scenario's Namespace objects."""
        if self.namespace_selector.empty:
            return self
        chosen = {name for name, labels in namespaces.items() if self.namespace_selector.matches(labels)}
        return Term(self.namespaces | chosen, NOTHING, self.selector, self.topology_key, self.weight)


def _term(raw, namespace: str, weight: int = 0) -> Term | None:
    if not isinstance(raw, dict):
        return None
    listed = [str(n) for n in raw.get("namespaces") or ()]
    has_selector = raw.get("namespaceSelector") is not None
    namespaces = frozenset(listed) if listed or has_selector else frozenset({namespace})
    namespace_selector = label_selector(raw.get("namespaceSelector")) if has_selector else NOTHING
    return Term(namespaces, namespace_selector, label_selector(raw.get("labelSelector")),
                str(raw.get("topologyKey") or ""), weight)


def _terms(block, namespace: str) -> tuple:
    if not isinstance(block, dict):
        return ()
    return tuple(t for t in (_term(raw, namespace) for raw in block.get("requiredDuringSchedulingIgnoredDuringExecution") or ())
                 if t is not None)


def _weighted(block, namespace: str) -> tuple:
    if not isinstance(block, dict):
        return ()
    out = []
    for raw in block.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
        if isinstance(raw, dict):
            term = _term(raw.get("podAffinityTerm"), namespace, int(raw.get("weight") or 0))
            if term is not None:
                out.append(term)
    return tuple(out)


@dataclass(frozen=True)
class PodView:
    """A pod as these plugins read it."""

    namespace: str
    labels: dict
    required_affinity: tuple
    required_anti_affinity: tuple
    preferred_affinity: tuple
    preferred_anti_affinity: tuple
    with_affinity: bool  # spec.affinity has podAffinity or podAntiAffinity (NodeInfo's PodsWithAffinity)
    deleting: bool = False

    @staticmethod
    def of(raw: dict, namespace: str) -> "PodView":
        affinity = (raw.get("spec") or {}).get("affinity") or {}
        affinity = affinity if isinstance(affinity, dict) else {}
        positive, negative = affinity.get("podAffinity"), affinity.get("podAntiAffinity")
        return PodView(
            namespace=namespace,
            labels=pod_labels(raw),
            required_affinity=_terms(positive, namespace),
            required_anti_affinity=_terms(negative, namespace),
            preferred_affinity=_weighted(positive, namespace),
            preferred_anti_affinity=_weighted(negative, namespace),
            with_affinity=positive is not None or negative is not None,
            deleting=(raw.get("metadata") or {}).get("deletionTimestamp") is not None,
        )


def _all_match(terms: tuple, pod: PodView) -> bool:
    return bool(terms) and all(t.matches(pod, None) for t in terms)


def _add(counts: dict, node, key: str, value: int = 1) -> None:
    if key in node.labels:
        pair = (key, node.labels[key])
        counts[pair] = counts.get(pair, 0) + value


class Filter:
    """The PreFilter state for one pod; check(node) is the Filter. `placed` is (node, PodView) for
    every pod on a node of the cluster."""

    def __init__(self, pod: PodView, placed: list, namespaces: dict):
        self.pod = pod
        self.affinity = tuple(t.merged(namespaces) for t in pod.required_affinity)
        self.anti_affinity = tuple(t.merged(namespaces) for t in pod.required_anti_affinity)
        own_labels = namespaces.get(pod.namespace) or {}
        self.existing_anti: dict = {}
        self.affinity_counts: dict = {}
        self.anti_counts: dict = {}
        for node, other in placed:
            for term in other.required_anti_affinity:
                if term.matches(pod, own_labels):
                    _add(self.existing_anti, node, term.topology_key)
            if _all_match(self.affinity, other):
                for term in self.affinity:
                    _add(self.affinity_counts, node, term.topology_key)
            for term in self.anti_affinity:
                if term.matches(other, None):
                    _add(self.anti_counts, node, term.topology_key)
        self.skip = not self.existing_anti and not self.affinity and not self.anti_affinity

    def check(self, node) -> str | None:
        if self.skip:
            return None
        if not self._affinity_fits(node):
            return AFFINITY_NOT_MATCH
        if self.anti_counts:
            for term in self.anti_affinity:
                value = node.labels.get(term.topology_key)
                if value is not None and self.anti_counts.get((term.topology_key, value), 0) > 0:
                    return ANTI_AFFINITY_NOT_MATCH
        if self.existing_anti:
            if any(self.existing_anti.get(pair, 0) > 0 for pair in node.labels.items()):
                return EXISTING_ANTI_AFFINITY_NOT_MATCH
        return None

    def _affinity_fits(self, node) -> bool:
        if not self.affinity:
            return True
        others_here = True
        for term in self.affinity:
            value = node.labels.get(term.topology_key)
            if value is None:
                return False
            if self.affinity_counts.get((term.topology_key, value), 0) <= 0:
                others_here = False
        if others_here:
            return True
        # No pod matches anywhere: the first pod of a group that selects itself may go first.
        return not self.affinity_counts and _all_match(self.affinity, self.pod)


def scores(pod: PodView, placed: list, namespaces: dict, feasible: list) -> tuple[list, list] | None:
    """(raw, normalized) per feasible node, or None when the plugin skips the pod (PreScore)."""
    preferred = pod.preferred_affinity or pod.preferred_anti_affinity
    affinity = tuple(t.merged(namespaces) for t in pod.preferred_affinity)
    anti_affinity = tuple(t.merged(namespaces) for t in pod.preferred_anti_affinity)
    own_labels = namespaces.get(pod.namespace) or {}
    topology: dict = {}  # (key, value) -> sum
    for node, other in placed:
        if not preferred and not other.with_affinity:
            continue
        if not node.labels:
            continue
        for term, sign in [(t, 1) for t in affinity] + [(t, -1) for t in anti_affinity]:
            if term.matches(other, None):
                _add(topology, node, term.topology_key, sign * term.weight)
        for term in other.required_affinity:
            if term.matches(pod, own_labels):
                _add(topology, node, term.topology_key, HARD_POD_AFFINITY_WEIGHT)
        for term, sign in [(t, 1) for t in other.preferred_affinity] + [(t, -1) for t in other.preferred_anti_affinity]:
            if term.matches(pod, own_labels):
                _add(topology, node, term.topology_key, sign * term.weight)
    if not topology:
        return None
    raw = [sum(total for (key, value), total in topology.items() if node.labels.get(key) == value)
           for node in feasible]
    low, high = min(raw), max(raw)
    spread = high - low
    normalized = [int(MAX_NODE_SCORE * ((r - low) / spread)) if spread > 0 else 0 for r in raw]
    return raw, normalized


__all__ = ["EVERYTHING", "Filter", "PodView", "Term", "scores"]
