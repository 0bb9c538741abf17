"""The scheduler's node filters that run before DRA, for one pod.

In the default profile the Filter plugins run in this order, and a node's
verdict is the first one that rejects it: NodeUnschedulable, NodeName,
TaintToleration, NodeAffinity (node selector and required node affinity),
NodePorts, NodeResourcesFit (see noderesources), the volume plugins,
PodTopologySpread (see topologyspread), InterPodAffinity (see interpod),
DynamicResources. Ports and volumes are not modelled.

Messages are the plugins' own reasons, so the `0/N nodes are available: ...`
line reads as in a real cluster.
"""
from __future__ import annotations

from dataclasses import dataclass

from allocator.engine.nodematch import SelectorError, selector_matches
from allocator.engine.objects import Node, NodeSelector, Taint, Toleration, node_selector

UNSCHEDULABLE = "node(s) were unschedulable"
NODE_NAME = "node(s) didn't match the requested node name"
NODE_AFFINITY = "node(s) didn't match Pod's node affinity/selector"
AFFINITY_CONFLICT = "pod affinity terms conflict"
NOT_IN_PREFILTER_RESULT = "node(s) didn't satisfy plugin(s) [NodeAffinity]"

UNSCHEDULABLE_TAINT = Taint("node.kubernetes.io/unschedulable", "", "NoSchedule")
DO_NOT_SCHEDULE = ("NoSchedule", "NoExecute")


@dataclass(frozen=True)
class Placement:
    """What a pod asks of its node, read from `spec`."""

    node_name: str | None
    node_selector: tuple  # (key, value) pairs, all required
    affinity: NodeSelector | None  # requiredDuringSchedulingIgnoredDuringExecution
    tolerations: tuple  # of Toleration


def placement_of(pod: dict) -> Placement:
    spec = pod.get("spec") or {}
    required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    return Placement(
        node_name=spec.get("nodeName") or None,
        node_selector=tuple((str(k), str(v)) for k, v in (spec.get("nodeSelector") or {}).items()),
        affinity=node_selector(required) if required is not None else None,
        tolerations=tuple(
            Toleration(t.get("key") or "", t.get("operator") or "Equal", str(t.get("value") or ""),
                       t.get("effect") or "", t)
            for t in spec.get("tolerations") or () if isinstance(t, dict)
        ),
    )


def tolerated(placement: Placement, taint: Taint) -> bool:
    return any(t.tolerates(taint) for t in placement.tolerations)


# TaintToleration's reason in 1.37 names no taint; the report gives the taint as a detail.
UNTOLERATED_TAINT = "node(s) had untolerated taint(s)"


def untolerated_taint(placement: Placement, node: Node) -> Taint | None:
    """The first NoSchedule or NoExecute taint of `node` the pod does not tolerate."""
    for taint in node.taints:
        if taint.effect in DO_NOT_SCHEDULE and not tolerated(placement, taint):
            return taint
    return None


def unmodelled_features(pod: dict) -> list[str]:
    """What the pod asks that the playground's scheduling does not check: the plugins that would
    judge it (NodePorts, the volume plugins), and a node nominated for it."""
    spec = pod.get("spec") or {}
    containers = [c for key in ("initContainers", "containers") for c in spec.get(key) or () if isinstance(c, dict)]
    found = []
    if any(p.get("hostPort") for c in containers for p in c.get("ports") or () if isinstance(p, dict)):
        found.append("host ports (NodePorts)")
    if any(isinstance(v, dict) and ({"persistentVolumeClaim", "ephemeral"} & set(v)) for v in spec.get("volumes") or ()):
        found.append("persistent volumes (VolumeBinding, VolumeRestrictions, NodeVolumeLimits, VolumeZone)")
    # A nominated pod (preemption made room for it) has its node tried first, and taken if it fits.
    if isinstance(pod.get("status"), dict) and pod["status"].get("nominatedNodeName"):
        found.append("nominated node (status.nominatedNodeName)")
    return found


def prefilter_nodes(placement: Placement) -> tuple[set | None, str | None]:
    """NodeAffinity's PreFilter: the node names that `matchFields` on `metadata.name` allows
    (None: any node), or the conflict message when the terms allow none."""
    if placement.affinity is None or not placement.affinity.terms:
        return None, None
    names: set | None = None
    for term in placement.affinity.terms:
        term_names: set | None = None
        for req in term.match_fields:
            if req.key == "metadata.name" and req.operator == "In":
                values = set(req.values)
                term_names = values if term_names is None else term_names & values
        if term_names is None:
            return None, None  # this term can match any node; terms are ORed
        names = term_names if names is None else names | term_names
    if names is not None and not names:
        return None, AFFINITY_CONFLICT
    return names, None


def affinity_matches(selector: NodeSelector, node: Node) -> bool:
    """Terms are ORed; a term that cannot be parsed matches nothing (the plugin ignores the error)."""
    for term in selector.terms:
        try:
            if selector_matches(NodeSelector((term,)), node):
                return True
        except SelectorError:
            continue
    return False


def filter_node(placement: Placement, node: Node) -> str | None:
    """The first pre-DRA filter that rejects `node`, as its reason; None when all pass."""
    if node.unschedulable and not tolerated(placement, UNSCHEDULABLE_TAINT):
        return UNSCHEDULABLE
    if placement.node_name and placement.node_name != node.name:
        return NODE_NAME
    if untolerated_taint(placement, node) is not None:
        return UNTOLERATED_TAINT
    if any(node.labels.get(key) != value for key, value in placement.node_selector):
        return NODE_AFFINITY
    if placement.affinity is not None and not affinity_matches(placement.affinity, node):
        return NODE_AFFINITY
    return None
