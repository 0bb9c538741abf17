"""Choosing among the feasible nodes: the default profile's Score plugins.

Each plugin scores every feasible node, its scores are normalized to 0..100 where the plugin
does so, and the node's total is the sum of plugin score x plugin weight. The highest total
wins; among equal totals the scheduler picks one at random. With a single feasible node
nothing is scored.

Modelled: NodeResourcesFit (LeastAllocated over CPU and memory, weight 1),
NodeResourcesBalancedAllocation (CPU and memory, weight 1), TaintToleration (PreferNoSchedule
taints, weight 3), NodeAffinity (preferred terms, weight 2), ImageLocality (the containers'
images in the node's status.images, weight 1), DynamicResources (the position of the chosen
firstAvailable subrequests, weight 2), and, computed from the other pods by topologyspread and
interpod and handed in, PodTopologySpread and InterPodAffinity (weight 2 each).
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field

from allocator.engine.nodefilter import placement_of
from allocator.engine.noderesources import CPU, MEMORY, NodeUsage, pod_requests
from allocator.engine.nodematch import SelectorError, selector_matches
from allocator.engine.objects import Node, Pod, node_selector

MAX_NODE_SCORE = 100
FIRST_AVAILABLE_MAX = 8  # the most subrequests a firstAvailable request may list

LEAST_ALLOCATED = "NodeResourcesFit"
BALANCED = "NodeResourcesBalancedAllocation"
TAINTS = "TaintToleration"
AFFINITY = "NodeAffinity"
DRA = "DynamicResources"
IMAGES = "ImageLocality"
SPREAD = "PodTopologySpread"
POD_AFFINITY = "InterPodAffinity"
WEIGHTS = {TAINTS: 3, AFFINITY: 2, LEAST_ALLOCATED: 1, BALANCED: 1, IMAGES: 1, DRA: 2, SPREAD: 2, POD_AFFINITY: 2}

# ImageLocality counts image sizes between these bounds (per container for the upper one).
MIB = 1024 * 1024
IMAGE_MIN = 23 * MIB
IMAGE_MAX_PER_CONTAINER = 1000 * MIB


@dataclass
class Candidate:
    """A feasible node as scoring sees it."""

    node: Node
    allocatable: dict | None  # integers, CPU in millicores; None: the node gives no status.allocatable
    usage: NodeUsage
    subrequests: list = field(default_factory=list)  # (index in firstAvailable) per allocated subrequest


@dataclass
class NodeScore:
    node: str
    plugins: dict  # plugin -> {"raw": int, "score": int (normalized), "weight": int}
    total: int

    def as_dict(self) -> dict:
        return {"node": self.node, "total": self.total, "plugins": self.plugins}


@dataclass
class Ranking:
    scores: list  # NodeScore, in the candidates' order
    chosen: str | None
    tied: list  # node names sharing the best total (more than one: the scheduler picks at random)
    note: str = ""

    def as_dict(self) -> dict:
        # Each node's score is on its verdict; this says which nodes tie and how the choice was made.
        return {"chosen": self.chosen, "tied": self.tied, "note": self.note}


def _least_allocated(requests: dict, candidate: Candidate) -> int:
    allocatable = candidate.allocatable or {}
    total = weights = 0
    for name in (CPU, MEMORY):
        capacity = allocatable.get(name, 0)
        if capacity == 0:
            continue
        requested = candidate.usage.non_zero.get(name, 0) + requests.get(name, 0)
        score = 0 if requested > capacity else (capacity - requested) * MAX_NODE_SCORE // capacity
        total += score
        weights += 1
    return total // weights if weights else 0


def _balance(used: list, capacities: list) -> int:
    """100 less the standard deviation of the used fractions (each at most 1), in percent."""
    fractions = [min(u / c, 1.0) for u, c in zip(used, capacities)]
    std = 0.0
    if len(fractions) == 2:
        std = abs((fractions[0] - fractions[1]) / 2)
    elif len(fractions) > 2:
        mean = sum(fractions) / len(fractions)
        std = math.sqrt(sum((f - mean) ** 2 for f in fractions) / len(fractions))
    return int((1 - std) * MAX_NODE_SCORE)


def _balanced(requests: dict, candidate: Candidate) -> int:
    """How much the pod improves the node's balance: 75 when it changes nothing, towards 100 when it
    evens the node's CPU and memory out, towards 50 when it skews them (kube-scheduler 1.37)."""
    allocatable = candidate.allocatable or {}
    names = [name for name in (CPU, MEMORY) if allocatable.get(name, 0)]
    capacities = [allocatable[name] for name in names]
    before = [candidate.usage.requested.get(name, 0) for name in names]
    after = [used + requests.get(name, 0) for used, name in zip(before, names)]
    change = MAX_NODE_SCORE // 2 + _balance(after, capacities) - _balance(before, capacities)
    return MAX_NODE_SCORE // 2 + change // 2


def _intolerable_preferences(pod: Pod, node: Node) -> int:
    tolerations = [t for t in _tolerations(pod) if t.effect in ("", "PreferNoSchedule")]
    return sum(1 for taint in node.taints if taint.effect == "PreferNoSchedule"
               and not any(t.tolerates(taint) for t in tolerations))


def _tolerations(pod: Pod) -> list:
    return list(placement_of(pod.raw).tolerations)


def _preferred_affinity(pod: Pod, node: Node) -> int:
    affinity = ((pod.raw.get("spec") or {}).get("affinity") or {}).get("nodeAffinity") or {}
    total = 0
    for term in affinity.get("preferredDuringSchedulingIgnoredDuringExecution") or ():
        if not isinstance(term, dict) or not term.get("weight"):
            continue
        selector = node_selector({"nodeSelectorTerms": [term.get("preference") or {}]})
        try:
            if selector is not None and selector_matches(selector, node):
                total += int(term["weight"])
        except SelectorError:
            continue  # a term that cannot be parsed counts for nothing
    return total


@dataclass
class ImageSpread:
    """Every image name the cluster's nodes report, with how many nodes hold it and its size."""

    nodes: int  # all nodes of the cluster
    holders: dict  # image name -> number of nodes
    sizes: dict = field(default_factory=dict)  # image name -> size in bytes

    @staticmethod
    def of(nodes: list) -> "ImageSpread":
        """The scheduler's cache keeps one size per image name: the one the first node that reported
        it gave (its informer lists nodes by name); every node holding the image counts with it."""
        holders: dict = {}
        sizes: dict = {}
        for node in sorted(nodes, key=lambda n: n.name):
            for names, size in node.images:
                for name in names:
                    sizes.setdefault(name, size)
            for name in {n for names, _ in node.images for n in names}:
                holders[name] = holders.get(name, 0) + 1
        return ImageSpread(len(nodes), holders, sizes)


def _image_name(name: str) -> str:
    """The name as the container runtime reports it: `:latest` when no tag is given."""
    return name if name.rfind(":") > name.rfind("/") else f"{name}:latest"


def _image_locality(pod: Pod, node: Node, spread: ImageSpread | None) -> int:
    if spread is None or not spread.nodes:
        return 0
    here = {name for names, _ in node.images for name in names}
    containers = pod.containers_in_order
    total = 0
    for container in containers:
        name = _image_name(container.image)
        if name in here:
            # An image on many nodes counts less, so pods do not all pile onto the nodes that have it.
            total += int(spread.sizes.get(name, 0) * (spread.holders.get(name, 0) / spread.nodes))
    ceiling = IMAGE_MAX_PER_CONTAINER * max(len(containers), 1)
    total = min(max(total, IMAGE_MIN), ceiling)
    return MAX_NODE_SCORE * (total - IMAGE_MIN) // (ceiling - IMAGE_MIN)


def _normalize(raw: list, *, reverse: bool) -> list:
    """The scheduler's default normalization to 0..100 (reversed: fewer is better)."""
    top = max(raw) if raw else 0
    if top == 0:
        return [MAX_NODE_SCORE if reverse else 0 for _ in raw]
    out = []
    for value in raw:
        score = MAX_NODE_SCORE * value // top
        out.append(MAX_NODE_SCORE - score if reverse else score)
    return out


MIN_FEASIBLE_TO_FIND = 100
MIN_PERCENTAGE_TO_FIND = 5


def feasible_nodes_to_find(total: int) -> int:
    """How many feasible nodes the scheduler looks for before it stops filtering, with the default
    percentageOfNodesToScore (adaptive: 50 % less 1 % per 125 nodes, at least 5 %, at least 100 nodes)."""
    if total < MIN_FEASIBLE_TO_FIND:
        return total
    percentage = max(50 - total // 125, MIN_PERCENTAGE_TO_FIND)
    return max(total * percentage // 100, MIN_FEASIBLE_TO_FIND)


def rank(pod: Pod, candidates: list, images: ImageSpread | None = None, *, total_nodes: int = 0,
         extra: dict | None = None) -> Ranking:
    """Score the feasible nodes (in name order) and choose among them. `extra` holds the (raw,
    normalized) scores of the plugins that need the other pods (topologyspread, interpod)."""
    if not candidates:
        return Ranking([], None, [])
    if len(candidates) == 1:
        only = candidates[0].node.name
        return Ranking([NodeScore(only, {}, 0)], only, [only],
                       "one feasible node: the scheduler takes it without scoring")
    # NodeResourcesFit builds its scorer without the PodLevelResources flag (1.37): the pod's side
    # of LeastAllocated is its containers' requests, with defaults, whatever the pod level says.
    requests = pod_requests(pod, non_zero=True, pod_level=False)
    plain = pod_requests(pod)
    raw: dict = {
        LEAST_ALLOCATED: [_least_allocated(requests, c) for c in candidates],
        TAINTS: [_intolerable_preferences(pod, c.node) for c in candidates],
        AFFINITY: [_preferred_affinity(pod, c.node) for c in candidates],
        IMAGES: [_image_locality(pod, c.node, images) for c in candidates],
        DRA: [sum(FIRST_AVAILABLE_MAX - i for i in c.subrequests) for c in candidates],
    }
    notes = []
    if any(plain.get(name, 0) for name in (CPU, MEMORY)):
        raw[BALANCED] = [_balanced(plain, c) for c in candidates]
    else:
        notes.append(f"{BALANCED} skips a pod that requests no CPU or memory")
    normalized = {
        LEAST_ALLOCATED: raw[LEAST_ALLOCATED],
        TAINTS: _normalize(raw[TAINTS], reverse=True),
        AFFINITY: _normalize(raw[AFFINITY], reverse=False),
        IMAGES: raw[IMAGES],
        DRA: _normalize(raw[DRA], reverse=False),
    }
    if BALANCED in raw:
        normalized[BALANCED] = raw[BALANCED]
    for name, (plugin_raw, plugin_normalized) in (extra or {}).items():
        raw[name], normalized[name] = plugin_raw, plugin_normalized
    scores = []
    for i, candidate in enumerate(candidates):
        plugins = {name: {"raw": raw[name][i], "score": normalized[name][i], "weight": WEIGHTS[name]}
                   for name in WEIGHTS if name in raw}
        total = sum(p["score"] * p["weight"] for p in plugins.values())
        scores.append(NodeScore(candidate.node.name, plugins, total))
    best = max(s.total for s in scores)
    tied = [s.node for s in scores if s.total == best]
    if len(tied) > 1:
        notes.append(f"{len(tied)} nodes share the best score ({', '.join(tied)}): the scheduler picks one "
                     f"of them at random; the playground shows {tied[0]}, the first by name")
    enough = feasible_nodes_to_find(total_nodes)
    if len(candidates) > enough:
        notes.append(f"with {total_nodes} nodes the scheduler stops filtering once {enough} are feasible, starting "
                     "where its previous cycle stopped, so it scores only some of these "
                     f"{len(candidates)}; the playground scores them all")
    return Ranking(scores, tied[0], tied, "; ".join(notes))
