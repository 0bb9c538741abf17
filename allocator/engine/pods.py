"""Scheduling a scenario's pods: one scheduling cycle per pod, in input order.

For every pod without `spec.nodeName`, as the control plane would:

1. the resourceclaim controller finds or creates the pod's claims (a template
   becomes a claim owned by the pod, named `<pod>-<claim>-<suffix>`);
2. PreEnqueue/PreFilter: scheduling gates, missing claims, NodeAffinity's
   node-name restriction, unknown device classes;
3. Filter, node by node: the pre-DRA filters (see nodefilter), NodeResourcesFit
   (see noderesources), then DynamicResources: allocated claims must be
   available on the node and the allocator must find devices for the others
   (and for extended resources backed by DRA, in a special claim);
4. the feasible nodes are scored (see scoring) and the best one is chosen, the
   claims get their allocation and the pod in `reservedFor`, and later pods
   see those devices, and the node's CPU and memory, as taken.

The result is plain data (dataclasses) that the report and the web page render.
"""
from __future__ import annotations

import copy
import functools
import hashlib
import time
import uuid
from dataclasses import dataclass, field, replace

from allocator.engine import backtrack, cel, interpod, podgroups, topologyspread, workloads
from allocator.engine import noderesources as fit
from allocator.engine.allocate import Allocator
from allocator.engine.attempt import allocated_state
from allocator.engine.cycle import (
    ExactFirst,
    NodeAttempt,
    attempt_node,
    explain_attempt,
    fit_error,
    prefilter_problems,
)
from allocator.engine.explain import with_steps
from allocator.engine.sentence import Sentence
from allocator.engine.gates import AllocatorFeatures, ComponentGates
from allocator.engine.nodefilter import (
    NOT_IN_PREFILTER_RESULT,
    Placement,
    UNTOLERATED_TAINT,
    filter_node,
    placement_of,
    prefilter_nodes,
    unmodelled_features,
    untolerated_taint,
)
from allocator.engine.nodematch import SelectorError, check_selector, selector_matches
from allocator.engine.objects import Pod, ResourceClaim, ResourceClaimTemplate, build_claim, build_pod
from allocator.engine.outcome import fatal_problem, output_claim
from allocator.engine.pools import PoolGatherError, SliceIndex
from allocator.engine.problems import WARNING, Problem
from allocator.engine.results import build_allocation
from allocator.engine.outcome import NodeVerdict, Outcome
from allocator.engine.run_common import (
    ALLOCATED,
    DEFAULT_MAX_STEPS,
    DEFAULT_TIME_LIMIT,
    INVALID,
    UNSATISFIABLE,
    candidate_nodes,
    node_for,
    unknown_node,
)
from allocator.engine.scenario import Scenario
from allocator.engine.scoring import Candidate, ImageSpread, Ranking, rank

SCHEDULED, PENDING, INVALID_POD, BOUND = "scheduled", "pending", "invalid", "bound"
# The DynamicResources plugin's PreBind wait for binding conditions: polled every 5 s, and its
# bindingTimeout argument defaults to 600 s (kube-scheduler 1.37's default profile).
BINDING_POLL_SECONDS, BINDING_TIMEOUT_SECONDS = 5, 600

NO_NODES = "no nodes available to schedule pods"
NOT_AVAILABLE = "resourceclaim not available on the node"
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
EXTENDED_CLAIM_ANNOTATION = "resource.kubernetes.io/extended-resource-claim"
NOT_MODELLED = Sentence(
    "Pods: host ports, volumes and priority are not checked, nor the default topology spread a Service or "
    "ReplicaSet would give a pod without constraints; nodes are filtered by spec.nodeName, unschedulable, "
    "taints, nodeSelector and required node affinity, resource requests (NodeResourcesFit), topology spread "
    "constraints (PodTopologySpread), pod (anti-)affinity (InterPodAffinity) and DRA. "
    "A Pending pod's message leaves out the preemption part the scheduler appends", "pods-not-modelled"
)
# The apiserver's generateName suffix: five characters from this alphabet (no vowels, no 0/1/3).
_SUFFIX_ALPHABET = "bcdfghjklmnpqrstvwxz2456789"


# --- the data the pod view shows ------------------------------------------------------------


@dataclass
class PodClaim:
    """One entry of `spec.resourceClaims` and the ResourceClaim behind it (or the special claim
    the scheduler makes for extended resources backed by DRA)."""

    pod_claim_name: str
    name: str | None  # the ResourceClaim; None when none is needed or it could not be made
    namespace: str
    template: str | None = None  # resourceClaimTemplateName
    generated: bool = False  # made from the template here, as the resourceclaim controller would
    allocation: dict | None = None  # status.allocation, after this run
    allocated_before: bool = False  # allocated in the input already
    reserved_for: list = field(default_factory=list)  # status.reservedFor, after this run
    extended_resources: list | None = None  # the special claim: container -> request mappings
    group: str | None = None  # the PodGroup (namespace/name) whose claim this is, reserved for the group

    def as_dict(self) -> dict:
        out = {
            "podClaimName": self.pod_claim_name,
            "name": self.name,
            "namespace": self.namespace,
            "template": self.template,
            "generated": self.generated,
            "allocatedBefore": self.allocated_before,
            "allocation": self.allocation,
            "reservedFor": self.reserved_for,
        }
        if self.extended_resources is not None:
            out["extendedResources"] = self.extended_resources
        if self.group is not None:
            out["podGroup"] = self.group
        return out


@dataclass
class PodNode:
    """One node's verdict for one pod."""

    node: str
    fits: bool
    reason: str | None = None  # every reason, joined with ", "
    devices: list = field(default_factory=list)  # for a fitting node: what the pod would get there
    steps: int = 0
    reasons: list = field(default_factory=list)  # a plugin may give several (NodeResourcesFit does)
    details: list = field(default_factory=list)  # the numbers behind resource reasons
    score: dict | None = None  # for a feasible node: total and per plugin

    def __post_init__(self):
        if self.reason and not self.reasons:
            self.reasons = [self.reason]
        elif self.reasons and not self.reason:
            self.reason = ", ".join(self.reasons)

    def as_dict(self) -> dict:
        out = {"node": self.node, "fits": self.fits, "reason": self.reason}
        if not self.fits and len(self.reasons) > 1:
            out["reasons"] = list(self.reasons)
        if self.details:
            out["details"] = list(self.details)
        if self.fits:
            out["devices"] = self.devices
            if self.score is not None:
                out["score"] = self.score
        return out


@dataclass
class PodResult:
    name: str
    namespace: str
    outcome: str  # scheduled, pending, invalid, bound
    node: str | None = None
    message: str | None = None
    claims: list = field(default_factory=list)  # PodClaim
    nodes: list = field(default_factory=list)  # PodNode, in name order
    notes: list = field(default_factory=list)
    problems: list = field(default_factory=list)  # for invalid: located Problems
    explanation: dict | None = None  # explain() for the chosen node, else a node DRA rejected
    requests: dict = field(default_factory=dict)  # the effective requests NodeResourcesFit checks, as text
    ranking: Ranking | None = None  # the scores of the feasible nodes
    workload: str | None = None  # the workload whose controller made this pod (see workloads)
    joint: object | None = None  # backtrack.JointAssignment, on the first Pending pod it explains
    # status.nodeAllocatableResourceClaimStatuses after the run (ClaimStatus; DRANodeAllocatableResources)
    node_allocatable: tuple = ()
    refused_with_devices: list = field(default_factory=list)  # nodes where DRA found devices but their demand did not fit

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    def as_dict(self, *, with_explanation: bool = False) -> dict:
        out = {
            "name": self.name,
            "namespace": self.namespace,
            "node": self.node,
            "outcome": self.outcome,
            "message": self.message,
            "claims": [c.as_dict() for c in self.claims],
            "nodes": [n.as_dict() for n in self.nodes],
            "notes": list(self.notes),
            "requests": dict(self.requests),
        }
        if self.workload is not None:
            out["workload"] = self.workload
        if self.joint is not None:
            out["jointAssignment"] = self.joint.as_dict()
        if self.node_allocatable:
            out["nodeAllocatable"] = [s.as_dict() for s in self.node_allocatable]
        if self.ranking is not None:
            out["scoring"] = self.ranking.as_dict()
        if self.problems:
            out["problems"] = [p.as_dict() for p in self.problems]
        if with_explanation:
            out["explanation"] = with_steps(self.explanation)
        return out


# --- the cluster as it changes from pod to pod ---------------------------------------------


def _pod(pod) -> Pod:
    """The pod with the name and UID the apiserver would give a manifest that has none."""
    if isinstance(pod, dict):
        pod = build_pod(pod)
    name, uid = pod.name, pod.uid
    meta = pod.raw.get("metadata") or {}
    if not name and meta.get("generateName"):  # named by the apiserver on create
        name = _with_suffix(meta["generateName"], f"pod/{pod.namespace}/{meta['generateName']}")
    if not uid:  # a manifest, not a cluster object: any stable UID will do
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"pod/{pod.namespace}/{name}"))
    if (name, uid) == (pod.name, pod.uid):
        return pod
    return replace(pod, name=name, uid=uid)


class _Claims:
    """Every ResourceClaim by namespace/name, replaced as pods get theirs allocated."""

    def __init__(self, claims: list, features: AllocatorFeatures):
        self.features = features
        self.by_key: dict = {c.key: c for c in claims}
        self.state = allocated_state(list(self.by_key.values()), features)

    def get(self, namespace: str, name: str) -> ResourceClaim | None:
        return self.by_key.get(f"{namespace}/{name}")

    def put(self, claim: ResourceClaim) -> None:
        self.by_key[claim.key] = claim

    def owned_by(self, pod: Pod, pod_claim_name: str) -> ResourceClaim | None:
        """A claim the controller made for this pod claim earlier (it adopts it instead of a new one)."""
        for claim in self.by_key.values():
            annotations = (claim.raw.get("metadata") or {}).get("annotations") or {}
            if claim.namespace == pod.namespace and annotations.get(POD_CLAIM_ANNOTATION) == pod_claim_name \
                    and _controlled_by(claim, pod):
                return claim
        return None

    def refresh(self) -> None:
        self.state = allocated_state(list(self.by_key.values()), self.features)


def _controlled_by(claim: ResourceClaim, pod: Pod) -> bool:
    for owner in (claim.raw.get("metadata") or {}).get("ownerReferences") or ():
        if not isinstance(owner, dict) or not owner.get("controller"):
            continue
        if owner.get("kind") != "Pod" or owner.get("name") != pod.name:
            return False
        return not (pod.uid_given and owner.get("uid")) or owner.get("uid") == pod.uid
    return False


def _with_status(claim: ResourceClaim, *, allocation: dict | None = None, pod: Pod | None = None,
                 consumer: dict | None = None) -> ResourceClaim:
    """The claim after the scheduler's PreBind: allocation written, the pod (or, for a PodGroup's
    claim, its group) added to reservedFor."""
    raw = dict(claim.raw)
    status = dict(raw.get("status") or {})
    if allocation is not None:
        status["allocation"] = allocation
    if pod is not None:
        consumer = consumer or pod.consumer
        reserved = list(status.get("reservedFor") or [])
        if not any(isinstance(r, dict) and r.get("uid") == consumer["uid"] for r in reserved):
            reserved.append(consumer)
        status["reservedFor"] = reserved
    raw["status"] = status
    return build_claim(raw, claim.ref)


# --- claims from templates ------------------------------------------------------------------


def generated_name(pod_name: str, pod_claim_name: str, namespace: str) -> tuple[str, str]:
    """(generateName, name) as the resourceclaim controller and the apiserver make them. The
    controller shortens long names in proportion (and then drops the trailing dash); the random
    suffix is derived from the names here so that a run is repeatable."""
    base = f"{pod_name}-{pod_claim_name}-"
    if len(base) > 57:
        keep_pod = len(pod_name) * 57 // len(base)
        keep_claim = len(pod_claim_name) * 57 // len(base)
        base = f"{pod_name[:keep_pod]}-{pod_claim_name[:keep_claim]}"
    return base, _with_suffix(base, f"{namespace}/{pod_name}/{pod_claim_name}")


def _with_suffix(generate_name: str, seed: str) -> str:
    """generateName plus five characters, as the apiserver names it (here derived from `seed`)."""
    digest = hashlib.sha256(seed.encode()).digest()
    return generate_name[:58] + "".join(_SUFFIX_ALPHABET[b % len(_SUFFIX_ALPHABET)] for b in digest[:5])


def _generate(pod: Pod, pod_claim_name: str, template: ResourceClaimTemplate) -> ResourceClaim:
    generate_name, name = generated_name(pod.name, pod_claim_name, pod.namespace)
    metadata = {
        "name": name,
        "generateName": generate_name,
        "namespace": pod.namespace,
        "annotations": {**(template.claim_metadata.get("annotations") or {}), POD_CLAIM_ANNOTATION: pod_claim_name},
        "ownerReferences": [{
            "apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
            "controller": True, "blockOwnerDeletion": True,
        }],
    }
    if template.claim_metadata.get("labels"):
        metadata["labels"] = dict(template.claim_metadata["labels"])
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": metadata,
        "spec": copy.deepcopy(template.claim_spec),
    }
    return build_claim(raw, template.ref)


@dataclass
class _Resolved:
    entries: list = field(default_factory=list)  # (PodClaim, ResourceClaim | None)
    error: str | None = None  # the first reason the scheduler cannot use the claims yet
    notes: list = field(default_factory=list)
    consumers: dict = field(default_factory=dict)  # claim key -> reservedFor entry, for a PodGroup's claims

    def fail(self, message: str) -> None:
        self.error = self.error or message


def _resolve_claims(pod: Pod, claims: _Claims, scenario: Scenario, features: AllocatorFeatures,
                    groups: dict | None = None) -> _Resolved:
    """The pod's claims as the scheduler finds them once the resourceclaim controller has run;
    `groups` (PodGroups by key) when DRAWorkloadResourceClaims is on."""
    resolved = _Resolved()
    statuses = {s.get("name"): s for s in ((pod.raw.get("status") or {}).get("resourceClaimStatuses") or ())
                if isinstance(s, dict)}
    for raw_entry in (pod.raw.get("spec") or {}).get("resourceClaims") or ():
        entry = podgroups.ClaimEntry.read(raw_entry)
        view = PodClaim(entry.name, None, pod.namespace)
        group = podgroups.binding(pod, entry, groups) if groups else None
        if group is not None:
            view.group = group.key
            claim = _group_claim(pod, group, view, entry, claims, scenario, features, resolved)
            if claim is not None:
                resolved.consumers[claim.key] = group.consumer
        elif entry.claim_name:
            view.name = entry.claim_name
            claim = claims.get(pod.namespace, view.name)
            if claim is None:
                resolved.fail(f'could not find ResourceClaim "{pod.namespace}/{view.name}"')
        else:
            view.template = entry.template_name
            claim = _template_claim(pod, view, statuses.get(view.pod_claim_name), claims, scenario, features,
                                    resolved)
        resolved.entries.append((view, claim))
    return resolved


def _group_claim(pod: Pod, group, view: PodClaim, entry: podgroups.ClaimEntry, claims: _Claims,
                 scenario: Scenario, features: AllocatorFeatures, resolved: _Resolved) -> ResourceClaim | None:
    """A PodGroup's claim: the one it names, or the one the controller made (or makes) for the group."""
    if entry.claim_name:
        view.name = entry.claim_name
        claim = claims.get(pod.namespace, view.name)
        if claim is None:
            resolved.fail(f'could not find ResourceClaim "{pod.namespace}/{view.name}"')
        return claim
    view.template = entry.template_name
    recorded = group.statuses.get(view.pod_claim_name)
    claim = claims.get(pod.namespace, recorded) if recorded else None
    if claim is None:
        claim = next((c for c in claims.by_key.values() if c.namespace == group.namespace
                      and ((c.raw.get("metadata") or {}).get("annotations") or {}).get(POD_CLAIM_ANNOTATION)
                      == view.pod_claim_name and podgroups.owned_by_group(c, group)), None)
    if claim is not None:
        view.name = claim.name
        return claim
    template = next((t for t in scenario.templates if t.key == f"{pod.namespace}/{view.template}"), None)
    if template is None:
        resolved.notes.append(Sentence(
            f"the resourceclaim controller cannot create PodGroup {group.key}'s claim {view.pod_claim_name}: "
            f"resource claim template \"{view.template}\" not found", "group-template-missing",
            group=group.key, claim=view.pod_claim_name, template=view.template))
        resolved.fail(f'pod "{pod.key}": ResourceClaim not created yet')
        return None
    claim = podgroups.make_claim(group, view.pod_claim_name, template)
    view.name, view.generated = claim.name, True
    claims.put(claim)
    return claim


def _template_claim(pod: Pod, view: PodClaim, status: dict | None, claims: _Claims, scenario: Scenario,
                    features: AllocatorFeatures, resolved: _Resolved) -> ResourceClaim | None:
    """The claim for a template entry: the one the pod status records, one the controller made
    earlier, or a new one from the template."""
    if status is not None:
        recorded = status.get("resourceClaimName")
        if not recorded:
            return None  # the pod records that no claim is needed
        view.name = recorded
        claim = claims.get(pod.namespace, recorded)
        if claim is not None:
            if not _controlled_by(claim, pod):
                resolved.fail(f"ResourceClaim {claim.key} was not created for Pod {pod.key} (Pod is not owner)")
            return claim
        resolved.notes.append(Sentence(f"claim {pod.namespace}/{recorded} recorded in the pod status is missing; "
                                       "the resourceclaim controller makes a new one from the template",
                                       "recorded-claim-missing", claim=f"{pod.namespace}/{recorded}"))
    claim = claims.owned_by(pod, view.pod_claim_name)
    if claim is not None:
        view.name = claim.name
        return claim
    key = f"{pod.namespace}/{view.template}"
    template = next((t for t in scenario.templates if t.key == key), None)
    if template is None:
        refusal = (f'resource claim template "{view.template}": resourceclaimtemplate.resource.k8s.io '
                   f'"{view.template}" not found')
    elif not features.admin_access and template.requests_admin_access:
        refusal = "admin access is requested, but the feature is disabled"
    else:
        claim = _generate(pod, view.pod_claim_name, template)
        view.name, view.generated = claim.name, True
        claims.put(claim)
        return claim
    event = f"PodResourceClaim {view.pod_claim_name}: {refusal}"  # the controller's event message
    resolved.notes.append(Sentence(f"the resourceclaim controller cannot create the claim (event "
                                   f"FailedResourceClaimCreation: {event})", "claim-not-created", event=event))
    resolved.fail(f'pod "{pod.key}": ResourceClaim not created yet')
    return None


# --- one scheduling cycle -------------------------------------------------------------------


@dataclass
class _Cycle:
    nodes: list = field(default_factory=list)  # PodNode
    chosen: str | None = None
    allocator: Allocator | None = None  # the chosen node's
    chosen_attempt: NodeAttempt | None = None
    # The node DRA rejected that explains the failure: the first one that has devices at all.
    failed: NodeAttempt | None = None
    prefilter: str | None = None  # PreFilter rejected the pod with this message
    fatal: Problem | None = None  # the allocator stopped the cycle
    ranking: Ranking | None = None
    extended: tuple | None = None  # the chosen node's special claim and its mappings
    node_allocatable: list | None = None  # the chosen node's ClaimStatus list (DRANodeAllocatableResources)
    refused_with_devices: list = field(default_factory=list)  # nodes the node-allocatable check refused


class _Capacity:
    """Node resources as the scheduler's cache holds them while the run places pods: every pod
    bound in the input that has not finished, plus the pods placed so far."""

    def __init__(self, scenario: Scenario, *, extended_resources: bool,
                 node_allocatable: fit.NodeAllocatable | None = None):
        self.classes = fit.ExtendedResourceClasses(scenario.classes, enabled=extended_resources)
        self.node_allocatable = node_allocatable  # set when DRANodeAllocatableResources is on
        self.usage: dict = {}
        self.images = ImageSpread.of(list(scenario.nodes.values()))
        self.placed: dict = {}  # node name -> the PodViews of the pods there (InterPodAffinity, PodTopologySpread)
        for pod in scenario.pods:
            if pod.node_name and not pod.terminal:
                dra = fit.demand_of(pod.claim_statuses) if node_allocatable is not None else None
                self.on(pod.node_name).add(_pod(pod), use_status=True, dra=dra)
                self.place(pod, pod.node_name)

    def on(self, node_name: str) -> fit.NodeUsage:
        usage = self.usage.get(node_name)
        if usage is None:
            usage = self.usage[node_name] = fit.NodeUsage(node_name)
        return usage

    def place(self, pod: Pod, node_name: str) -> None:
        self.placed.setdefault(node_name, []).append(interpod.PodView.of(pod.raw, pod.namespace))

    def pods_on(self, node_name: str) -> list:
        return self.placed.get(node_name, [])

    def save(self) -> tuple:
        """What a failed pod group cycle puts back (restore)."""
        return copy.deepcopy(self.usage), {node: list(views) for node, views in self.placed.items()}

    def restore(self, saved: tuple) -> None:
        self.usage, self.placed = copy.deepcopy(saved[0]), {node: list(views) for node, views in saved[1].items()}


def _devices(allocator: Allocator) -> list:
    out = []
    for ci, picks in enumerate(allocator.results):
        for pick in picks:
            device = pick.device
            out.append({"claim": allocator.claims[ci].key, "request": pick.rd.name,
                        "driver": device.driver, "pool": device.pool, "device": device.name})
    return out


def _subrequest_positions(allocator: Allocator | None) -> list:
    """The firstAvailable position of every subrequest the allocation uses (DynamicResources scores them)."""
    if allocator is None:
        return []
    used = set()
    for picks in allocator.results:
        for pick in picks:
            rd = pick.rd
            if rd.parent_name is not None:
                used.add((rd.claim_index, rd.request_index, rd.sub_index))
    return [sub for _, _, sub in sorted(used)]


def _extended_claim(pod: Pod, requests: list) -> ResourceClaim:
    """The special claim the scheduler creates in PreBind for extended resources backed by DRA."""
    generate_name = f"{pod.name}-extended-resources-"
    raw = {
        "apiVersion": "resource.k8s.io/v1",
        "kind": "ResourceClaim",
        "metadata": {
            "name": _with_suffix(generate_name, f"{pod.namespace}/{pod.name}/extended-resources"),
            "generateName": generate_name,
            "namespace": pod.namespace,
            "annotations": {EXTENDED_CLAIM_ANNOTATION: "true"},
            "ownerReferences": [{"apiVersion": "v1", "kind": "Pod", "name": pod.name, "uid": pod.uid,
                                 "controller": True}],
        },
        "spec": {"devices": {"requests": requests}},
    }
    return build_claim(raw, pod.ref)


def _cycle(pod: Pod, placement: Placement, pod_claims: list, names: list, *, scenario: Scenario,
           cluster: _Claims, capacity: _Capacity, index: SliceIndex, features: AllocatorFeatures, options: dict,
           record: bool = False, resources: bool = True, claim_names: dict | None = None) -> _Cycle:
    cycle = _Cycle()
    allowed, conflict = prefilter_nodes(placement)
    if conflict:
        cycle.prefilter = conflict
        return cycle
    available_on = []
    for claim in pod_claims:
        selector = claim.allocation.node_selector if claim.allocation is not None else None
        if selector is not None:
            try:
                check_selector(selector)
            except SelectorError as exc:
                cycle.fatal = Problem(f"claim {claim.key}: status.allocation.nodeSelector: {exc}",
                                      kind="ResourceClaim", name=claim.key,
                                      path=("status", "allocation", "nodeSelector"), ref=claim.ref)
                return cycle
            available_on.append(selector)
    problems = prefilter_problems(pod_claims, scenario.classes, features)
    if problems:
        cycle.prefilter = problems[0].message
        return cycle
    pending = [c for c in pod_claims if c.allocation is None]
    requests = fit.pod_requests(pod)
    footprint = _Footprint.of(pod, pod_claims, claim_names, capacity, features) if resources else None
    candidates, feasible = [], {}
    spreading = placing = None
    if resources:  # a pod bound already never meets these filters
        cluster_nodes = [node_for(scenario, n) for n in names]
        spreading = topologyspread.Filter(pod.raw, pod.namespace, placement, cluster_nodes, capacity.pods_on)
        view = interpod.PodView.of(pod.raw, pod.namespace)
        # A pod without pod (anti-)affinity terms only meets the placed pods that have some.
        every = bool(view.required_affinity or view.required_anti_affinity or view.preferred_affinity
                     or view.preferred_anti_affinity)
        placed = [(node, other) for node in cluster_nodes for other in capacity.pods_on(node.name)
                  if every or other.with_affinity]
        placing = interpod.Filter(view, placed, scenario.namespaces)
    for name in names:
        if allowed is not None and name not in allowed:
            cycle.nodes.append(PodNode(name, False, NOT_IN_PREFILTER_RESULT))
            continue
        node = node_for(scenario, name)
        reason = filter_node(placement, node)
        if reason:
            taint = untolerated_taint(placement, node) if reason == UNTOLERATED_TAINT else None
            shown = f"{taint.key}={taint.value}:{taint.effect}" if taint else ""
            details = [Sentence(f"taint {shown} is not tolerated", "taint", taint=shown)] if taint else []
            cycle.nodes.append(PodNode(name, False, reason, details=details))
            continue
        allocatable = fit.allocatable(node)
        if resources and allocatable is not None:
            shortfalls = fit.fit(requests, allocatable, capacity.on(name), capacity.classes)
            if shortfalls:
                cycle.nodes.append(PodNode(name, False, reasons=[s.reason for s in shortfalls],
                                           details=[_shortfall(s) for s in shortfalls]))
                continue
        reason = (spreading.check(node) or placing.check(node)) if spreading is not None else None
        if reason:
            cycle.nodes.append(PodNode(name, False, reason))
            continue
        refusal = footprint.refused(node) if footprint is not None else None
        if refusal:
            cycle.nodes.append(PodNode(name, False, refusal))
            continue
        claims_here, extended = pending, None
        wanted = fit.dra_extended(requests, allocatable, capacity.classes)
        if wanted:
            device_requests, mappings = fit.extended_claim_requests(pod, wanted, capacity.classes)
            if device_requests:
                extended = (_extended_claim(pod, device_requests), mappings)
                claims_here = pending + [extended[0]]
        allocator, attempt = None, None
        if claims_here:
            try:
                attempt = attempt_node(node, claims=claims_here, scenario=scenario, index=index, features=features,
                                       allocated=cluster.state, options=options, record=record)
            except PoolGatherError as exc:
                cycle.fatal = Problem(str(exc))
                return cycle
            if attempt.fatal is not None:
                cycle.fatal = fatal_problem(scenario, attempt.fatal)
                return cycle
            allocator = attempt.allocator
            if not attempt.fits:
                cycle.nodes.append(PodNode(name, False, attempt.message, steps=attempt.steps))
                explained = cycle.failed
                if explained is None or (not explained.allocator.candidates and allocator.candidates):
                    cycle.failed = attempt
                continue
        statuses = None
        if footprint is not None:
            try:
                statuses, shortfalls = footprint.check(node, allocator, allocatable, capacity.on(name),
                                                       extended[0] if extended else None)
            except fit.FootprintError as exc:
                cycle.fatal = Problem(f'running "DynamicResources" filter plugin: {exc}')  # kube-scheduler's error
                return cycle
            if shortfalls:
                cycle.refused_with_devices.append(name)
                added = fit.demand_of(statuses)
                cycle.nodes.append(PodNode(name, False, reasons=[s if isinstance(s, str) else s.reason
                                                                 for s in shortfalls],
                                           details=[_claims_shortfall(s, added) for s in shortfalls
                                                    if not isinstance(s, str)],
                                           steps=allocator.steps if allocator else 0))
                continue
        # Allocated claims must be usable on the node; DRA checks this after trying the allocator.
        if any(not selector_matches(selector, node) for selector in available_on):
            cycle.nodes.append(PodNode(name, False, NOT_AVAILABLE, steps=allocator.steps if allocator else 0))
            continue
        verdict = PodNode(name, True, None, _devices(allocator) if allocator else [],
                          steps=allocator.steps if allocator else 0)
        cycle.nodes.append(verdict)
        candidates.append(Candidate(node, allocatable if resources else None, capacity.on(name),
                                    _subrequest_positions(allocator)))
        feasible[name] = (verdict, allocator, attempt, extended, statuses)
    if not candidates:
        return cycle
    extra = {}
    if spreading is not None and len(candidates) > 1:
        feasible_nodes = [c.node for c in candidates]
        spread = topologyspread.scores(pod.raw, pod.namespace, placement, cluster_nodes, capacity.pods_on,
                                       feasible_nodes)
        if spread is not None:
            extra[topologyspread.NAME] = spread
        affinity = interpod.scores(view, placed, scenario.namespaces, feasible_nodes)
        if affinity is not None:
            extra[interpod.NAME] = affinity
    # The scheduler sizes its search (percentageOfNodesToScore) by the nodes PreFilter leaves.
    searched = len(names) if allowed is None else sum(1 for name in names if name in allowed)
    cycle.ranking = rank(pod, candidates, capacity.images, total_nodes=searched, extra=extra)
    for score in cycle.ranking.scores:
        if score.plugins:
            feasible[score.node][0].score = {"total": score.total, "plugins": score.plugins}
    cycle.chosen = cycle.ranking.chosen
    _, cycle.allocator, cycle.chosen_attempt, cycle.extended, cycle.node_allocatable = feasible[cycle.chosen]
    return cycle


@dataclass
class _Footprint:
    """DynamicResources' node-allocatable part of one pod's Filter (DRANodeAllocatableResources on)."""

    pod: Pod
    claims: list  # the pod's ResourceClaims, in its order
    names: dict  # pod claim name -> ResourceClaim name
    node_allocatable: fit.NodeAllocatable
    mapped: dict  # claim key -> whether its allocation holds a device with a mapping (PreFilter)

    @classmethod
    def of(cls, pod: Pod, claims: list, names: dict | None, capacity: _Capacity,
           features: AllocatorFeatures) -> "_Footprint | None":
        found = capacity.node_allocatable
        if found is None or not found.any:
            return None
        mapped = {c.key: found.mapped((c.raw.get("status") or {}).get("allocation")) for c in claims
                  if c.allocation is not None}
        return cls(pod, claims, names or {}, found, mapped)

    def refused(self, node) -> str | None:
        """A claim with a mapped device already reserved for another pod, where it is available."""
        for claim in self.claims:
            selector = claim.allocation.node_selector if claim.allocation is not None else None
            if claim.allocation is None or (selector is not None and not selector_matches(selector, node)):
                continue
            reason = fit.refused_sharing(self.pod, claim, self.mapped[claim.key],
                                         self.node_allocatable.workload_claims)
            if reason:
                return reason
        return None

    def check(self, node, allocator: Allocator | None, allocatable: dict | None, usage: fit.NodeUsage,
              special: ResourceClaim | None = None) -> tuple:
        """(the ClaimStatus list on this node or None, the reasons the node fails for it). The special
        claim for extended resources counts too, under the scheduler's in-memory name for it."""
        fresh = {}
        if allocator is not None:
            fresh = {c.key: build_allocation(allocator, ci) for ci, c in enumerate(allocator.claims)}
        entries = [(c.name, fresh.get(c.key) or (c.raw.get("status") or {}).get("allocation")) for c in self.claims]
        if special is not None:
            entries.append((fit.SPECIAL_CLAIM_NAME, fresh.get(special.key)))
        statuses = self.node_allocatable.statuses(self.pod, entries, self.names, node)
        if statuses is None:
            return None, []
        short = fit.pod_level_short(self.pod, statuses)
        if short:
            return statuses, [short]
        if allocatable is None:
            return statuses, []
        requests = fit.pod_requests(self.pod, dra=fit.demand_of(statuses))
        return statuses, fit.dra_fit(requests, allocatable, usage)


def _shortfall(s: fit.Shortfall) -> Sentence:
    """The numbers behind one NodeResourcesFit reason."""
    return Sentence(s.detail(), "shortfall", resource=s.resource, requested=fit.show(s.resource, s.requested),
                    used=fit.show(s.resource, s.used), capacity=fit.show(s.resource, s.capacity))


def _claims_shortfall(s: fit.Shortfall, added: dict) -> Sentence:
    """The numbers behind one of DynamicResources' own Insufficient reasons: what the pod's claims'
    devices add is part of what it asks."""
    if not added.get(s.resource):
        return _shortfall(s)
    parts = {"resource": s.resource, "requested": fit.show(s.resource, s.requested),
             "added": fit.show_exact(s.resource, added[s.resource]), "used": fit.show(s.resource, s.used),
             "capacity": fit.show(s.resource, s.capacity)}
    return Sentence("{resource}: the pod asks {requested} ({added} of it for its claims' devices), {used} of "
                    "{capacity} in use".format(**parts), "shortfall-claims", **parts)


# --- the whole run ---------------------------------------------------------------------------


def _node_names(scenario: Scenario, index: SliceIndex, node_name: str | None, warnings: list) -> list[str]:
    if node_name:
        missing = unknown_node(scenario, index, node_name)
        if missing is not None:
            warnings.append(missing)
        return [node_name]
    if scenario.nodes:
        return sorted(scenario.nodes)
    names = candidate_nodes(scenario, index)
    if names:
        warnings.append(Problem(Sentence(
            "the scenario has no Node objects: the nodes that ResourceSlices name stand in for them, "
            "without labels or taints", "no-nodes"), severity=WARNING))
    return names


def schedule_pods(
    scenario: Scenario,
    *,
    node_name: str | None = None,
    gates: ComponentGates | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: float = DEFAULT_TIME_LIMIT,
    explain_result: bool = True,
    share_ids=None,
    joint_search: bool = True,
) -> Outcome:
    """Schedule every pod of the scenario that has no node yet, one after the other; when a later
    pod stays Pending, say whether another assignment of the pods to nodes would have fit all."""
    gates = gates or ComponentGates()
    warnings = list(scenario.warnings) + [Problem(NOT_MODELLED, severity=WARNING)]
    if scenario.errors:
        return Outcome(INVALID, message=scenario.errors[0].render(), problems=scenario.errors,
                       warnings=warnings, pods=[])

    features = AllocatorFeatures.from_gates(gates.scheduler)
    index = SliceIndex(scenario.scheduler_slices(gates.scheduler))  # DeviceTaintRules applied
    names = _node_names(scenario, index, node_name, warnings)
    cluster = _Claims(scenario.claims, features)
    capacity = _Capacity(scenario, extended_resources=gates.scheduler.enabled("DRAExtendedResource"),
                         node_allocatable=_node_allocatable(scenario, gates))
    warnings.extend(_capacity_warnings(scenario, names, capacity))
    options = {
        "max_steps": max_steps,
        "deadline": time.monotonic() + time_limit if time_limit else None,
        "cel_options": cel.Options(list_type_attributes=features.list_type_attributes, stored=True),
        "share_ids": share_ids,
        "exact_first": ExactFirst(),
    }
    groups = scenario.pod_groups if gates.scheduler.enabled(podgroups.GATE) else {}
    generic = gates.scheduler.enabled(podgroups.GENERIC_GATE)
    results: list[PodResult] = []
    to_allocate: dict = {}  # claim key -> the claim as it was before this run (output order)
    used: set = set()
    pods = scenario.pods
    if node_name and scenario.daemon_pods:
        pods, left_out = workloads.for_one_node(pods, scenario.daemon_pods, node_name)
        if left_out:
            warnings.append(Problem(Sentence(
                f"{left_out} DaemonSet pod{'s' if left_out > 1 else ''} made for other nodes than {node_name} "
                "left out: the run asks about that node only", "daemon-pods-left-out", count=left_out,
                node=node_name), severity=WARNING))
    def one(raw, gate=None) -> PodResult:
        pod = _pod(raw)
        result, pod_claims = _schedule_one(pod, scenario=scenario, cluster=cluster, capacity=capacity, index=index,
                                           names=names, features=features, options=options,
                                           explain_result=explain_result, groups=groups, generic=generic, gate=gate)
        used.update(c.key for c in pod_claims)
        if result.outcome != BOUND:
            for claim in pod_claims:
                if claim.allocation is None:
                    to_allocate.setdefault(claim.key, claim)
        return result

    done: dict = {}
    for turn in podgroups.queue_turns(pods, scenario.pod_groups, generic):
        if turn.group is None or turn.gate is not None:
            done[id(turn.pods[0])] = one(turn.pods[0], turn.gate)
        else:
            done.update(_pod_group_cycle(turn, one, cluster, capacity, pods))
    results.extend(done[id(raw)] for raw in pods)

    if joint_search:
        again = functools.partial(schedule_pods, node_name=node_name, gates=gates, max_steps=max_steps,
                                  time_limit=time_limit, explain_result=False, joint_search=False)
        joint = backtrack.joint_assignment(scenario, results, again)
        if joint is not None:
            first = next(r for r in results if r.outcome == PENDING and r.key in joint.pods)
            first.joint = joint
            first.notes.append(joint.message)
    unused = [c.key for c in scenario.claims if c.allocation is None and c.key not in used]
    if unused:
        listed = ", ".join(unused[:5]) + (f" and {len(unused) - 5} more" if len(unused) > 5 else "")
        warnings.append(Problem(Sentence(
            f"ResourceClaim {listed}: not used by any Pod, so not allocated (the scheduler allocates a claim "
            "for the pod that uses it)", "claims-unused", claims=unused[:5], more=max(len(unused) - 5, 0)),
            severity=WARNING))
    if results and all(r.outcome == BOUND for r in results):
        warnings.append(Problem(Sentence("every Pod already has spec.nodeName: nothing to schedule",
                                         "nothing-to-schedule"), severity=WARNING))
    return _outcome(results, to_allocate, cluster, warnings)


def _pod_group_cycle(turn, one, cluster: _Claims, capacity: _Capacity, pods: list) -> dict:
    """The pod group cycles of one queue entity (scheduleOnePodGroup with the default algorithm): the
    group's pods tried in the queue's order, each placed as one by one would (the pods placed before
    it in the cycle count), GangScheduling's PlacementFeasible after each. When the group can no
    longer reach minCount (1 for a basic group) the cycle stops; for a gang every pod it placed is
    taken back, and the pods not tried yet get the plugin's message; a placed pod's message then says
    the group is unschedulable. A cycle that bound some pods and left others requeues those at once
    (the queue keeps their turn): they are tried again in a new cycle, until one binds none. Returns
    the results by id of the input pod."""
    group = turn.group
    min_count = group.min_count if group.min_count and group.min_count > 1 else 1
    results: dict = {}
    queued = list(turn.pods)
    while queued:
        failed, tried = _one_pod_group_cycle(group, min_count, queued, one, cluster, capacity, pods, results)
        if failed is not None or not any(r.outcome == SCHEDULED for r in tried):
            break
        queued = [raw for raw in queued if results[id(raw)].outcome == PENDING]
    return results


def _one_pod_group_cycle(group, min_count: int, queued: list, one, cluster: _Claims, capacity: _Capacity,
                         pods: list, results: dict) -> tuple:
    """One pod group cycle over `queued`; fills `results`. Returns (the PlacementFeasible message when
    the group cannot reach minCount, else None; the results of the pods tried)."""
    scheduled = podgroups.scheduled_count(group, pods) + sum(
        1 for r in results.values() if r.outcome == SCHEDULED)
    remaining = len(queued)
    saved = (dict(cluster.by_key), capacity.save())
    tried = []
    failed = None
    for raw in queued:
        result = one(raw)
        results[id(raw)] = result
        tried.append(result)
        remaining -= 1
        if result.outcome == SCHEDULED:
            scheduled += 1
        failed = podgroups.placement_feasible(min_count, scheduled, remaining)
        if failed is not None:
            break
    if failed is None or min_count == 1:  # a basic group: every pod keeps its own answer
        return failed, tried
    placed = [r for r in tried if r.outcome == SCHEDULED]
    _take_back(cluster, capacity, saved, tried)
    failing = next((r for r in tried if r.outcome == PENDING), None)
    for result in placed:
        result.outcome, result.node = PENDING, None
        result.message = Sentence(f"{podgroups.GROUP_UNSCHEDULABLE}, {failed}", "group-unschedulable",
                                  reason=failed)
        result.notes.append(_gang_failed_note(group, failing, min_count))
    if failing is not None:
        failing.notes.append(Sentence(
            f"PodGroup {group.key} is a gang (minCount {min_count}): because this pod does not fit, fewer than "
            f"{min_count} of its pods can be scheduled, and kube-scheduler binds none of them",
            "gang-blocked", group=group.key, count=min_count))
    for raw in queued[len(tried):]:  # not tried: the cycle stopped before them
        result = one(raw, Sentence(failed, "group-not-tried", reason=failed))
        result.notes.append(_gang_failed_note(group, failing, min_count))
        results[id(raw)] = result
    return failed, tried


def _gang_failed_note(group, failing, min_count: int) -> Sentence:
    if failing is None:
        return Sentence(f"PodGroup {group.key} cannot have {min_count} of its pods scheduled: kube-scheduler binds "
                        "none of them in this cycle", "gang-failed-none", group=group.key, count=min_count)
    return Sentence(f"PodGroup {group.key} is a gang (minCount {min_count}) and pod {failing.key} does not fit "
                    f"({failing.message}), so fewer than {min_count} of its pods can be scheduled: kube-scheduler "
                    "binds none of them and this pod stays Pending although a node was found for it",
                    "gang-failed", group=group.key, count=min_count, pod=failing.key, message=failing.message)


def _take_back(cluster: _Claims, capacity: _Capacity, saved: tuple, tried: list) -> None:
    """Undo the pods a failed pod group cycle placed: the claims as they were before the cycle (a claim
    made during it stays made, without allocation or reservation), the nodes' usage as it was."""
    claims, usage = saved
    for key, claim in list(cluster.by_key.items()):
        if key in claims:
            cluster.by_key[key] = claims[key]
        else:
            raw = dict(claim.raw)
            status = {k: v for k, v in (raw.get("status") or {}).items() if k not in ("allocation", "reservedFor")}
            raw["status"] = status
            cluster.by_key[key] = build_claim(raw, claim.ref)
    cluster.refresh()
    capacity.restore(usage)
    for result in tried:
        for view in result.claims:
            current = cluster.get(view.namespace, view.name) if view.name else None
            status = (current.raw.get("status") or {}) if current is not None else {}
            view.allocation = status.get("allocation")
            view.reserved_for = list(status.get("reservedFor") or [])


def _capacity_warnings(scenario: Scenario, names: list, capacity: _Capacity) -> list:
    warnings = []
    bare = [n for n in names if n in scenario.nodes and scenario.nodes[n].allocatable is None]
    if bare:
        listed = ", ".join(bare[:5]) + (f" and {len(bare) - 5} more" if len(bare) > 5 else "")
        warnings.append(Problem(Sentence(
            f"node {listed}: no status.allocatable, so CPU, memory and pod count are not checked there "
            "(a cluster dump has it; add it to a hand-written Node to model NodeResourcesFit)", "no-allocatable",
            nodes=bare[:5], more=max(len(bare) - 5, 0)), severity=WARNING))
    for resource, owners in capacity.classes.conflicts.items():
        warnings.append(Problem(Sentence(
            f"DeviceClasses {', '.join(owners)} all name the extended resource {resource}: the playground "
            f"uses {owners[0]}, the newest", "extended-resource-classes", classes=list(owners), resource=resource),
            severity=WARNING))
    return warnings


def _node_allocatable(scenario: Scenario, gates: ComponentGates) -> fit.NodeAllocatable | None:
    """DRANodeAllocatableResources in the scheduler: the devices it reads nodeAllocatableResources from."""
    if not gates.scheduler.enabled(fit.NODE_ALLOCATABLE_GATE):
        return None
    found = fit.NodeAllocatable(scenario.scheduler_slices(gates.scheduler))
    found.workload_claims = gates.scheduler.enabled(podgroups.GATE)
    return found


def _schedule_one(pod: Pod, *, scenario, cluster: _Claims, capacity: _Capacity, index, names, features, options,
                  explain_result: bool, groups: dict | None = None, generic: bool = False,
                  gate: Sentence | None = None) -> tuple[PodResult, list]:
    result = PodResult(pod.name, pod.namespace, PENDING, workload=scenario.pod_workloads.get(pod.key),
                       node_allocatable=pod.claim_statuses)
    result.requests = {name: fit.show(name, amount) for name, amount in sorted(fit.pod_requests(pod).items())
                       if amount}
    resolved = _resolve_claims(pod, cluster, scenario, features, groups)
    result.notes.extend(resolved.notes)
    result.notes.extend(_group_notes(pod, scenario, groups, generic))
    unique = list({c.key: c for _, c in resolved.entries if c is not None}.values())
    result.notes.extend(_sharing_notes(pod, unique))
    unmodelled = unmodelled_features(pod.raw)
    if unmodelled and not (pod.raw.get("spec") or {}).get("nodeName"):
        result.notes.append(Sentence(f"not modelled: this pod's {', '.join(unmodelled)}; its node, verdicts and "
                                     "scores may differ from the scheduler's, and so may those of the pods after it",
                                     "not-modelled", features=unmodelled))
    result.notes.extend(_kept_statuses_notes(pod, capacity))
    placement = placement_of(pod.raw)
    run_cycle = functools.partial(_cycle, pod, placement, unique, names, scenario=scenario, cluster=cluster,
                                  capacity=capacity, index=index, features=features, options=options,
                                  record=explain_result,
                                  claim_names={v.pod_claim_name: c.name for v, c in resolved.entries if c is not None})
    if placement.node_name:
        _bound(pod, result, resolved, unique, placement.node_name, names, run_cycle, cluster, scenario)
    else:
        extended = _unbound(pod, result, resolved, unique, names, run_cycle, cluster, capacity, scenario,
                            explain_result, gate)
        if extended is not None:
            claim, mappings = extended
            resolved.entries.append((PodClaim("(extended resources)", claim.name, claim.namespace, generated=True,
                                              extended_resources=mappings), claim))
            unique.append(claim)
    result.claims = _claim_views(resolved, cluster)
    return result, unique


def _kept_statuses_notes(pod: Pod, capacity: _Capacity) -> list[Sentence]:
    """A pending pod that carries node-allocatable statuses already (an earlier attempt's): the scheduler's
    patch merges its new statuses into them, which the playground does not."""
    if capacity.node_allocatable is None or not pod.claim_statuses or pod.node_name:
        return []
    return [Sentence("not modelled: this pending pod already carries status.nodeAllocatableResourceClaimStatuses; "
                     "when kube-scheduler writes the ones it works out, it merges them into these by claim name (a "
                     "strategic merge patch), and the playground shows the ones it works out alone",
                     "node-allocatable-kept")]


def _group_notes(pod: Pod, scenario: Scenario, groups: dict | None, generic: bool) -> list[Sentence]:
    name = podgroups.group_of(pod)
    if not name:
        return []
    if not generic:
        return [Sentence(f"{podgroups.GENERIC_GATE} is off: the scheduler knows no PodGroups (the apiserver would "
                         "drop spec.schedulingGroup), so the pod is scheduled on its own with claims of its own",
                         "generic-gate-off", gate=podgroups.GENERIC_GATE)]
    key = f"{pod.namespace}/{name}"
    group = scenario.pod_groups.get(key)
    if group is None:
        return [Sentence(podgroups.MISSING_GROUP_NOTE.format(key=key), "group-missing", group=key)]
    notes = []
    if group.claims and not groups:
        notes.append(Sentence(f"{podgroups.GATE} is off: PodGroup {group.key}'s resourceClaims are not consulted, "
                              "every pod gets and reserves claims of its own", "group-claims-gate-off",
                              gate=podgroups.GATE, group=group.key))
    if not pod.node_name:
        notes.extend(podgroups.gang_notes(group, scenario.pods))
    return notes


def _sharing_notes(pod: Pod, claims: list) -> list[Sentence]:
    notes = []
    for claim in claims:
        others = [str(r.get("name")) for r in (claim.raw.get("status") or {}).get("reservedFor") or ()
                  if isinstance(r, dict) and r.get("uid") != pod.uid]
        if claim.allocation is not None and others:
            notes.append(Sentence(f"claim {claim.key} is allocated and in use by {', '.join(others)}: the pod shares "
                                  "it, so it can only run where that allocation is available", "shared-claim",
                                  claim=claim.key, users=others))
    return notes


def _binding_notes(claims: list, cluster: _Claims, node: str) -> list[Sentence]:
    """Devices with bindingConditions hold the pod in PreBind (DRADeviceBindingConditions): the scheduler
    has chosen the node and written the allocation, and binds the pod only once the driver reports every
    condition true in the claim's status; a failure condition, or the binding timeout, fails the attempt."""
    notes = []
    for claim in claims:
        current = cluster.get(claim.namespace, claim.name) or claim
        allocation = (current.raw.get("status") or {}).get("allocation") or {}
        for entry in (allocation.get("devices") or {}).get("results") or ():
            conditions = entry.get("bindingConditions")
            if not conditions:
                continue
            device = f"{entry.get('driver')}/{entry.get('pool')}/{entry.get('device')}"
            failures = list(entry.get("bindingFailureConditions") or ())  # required beside bindingConditions
            notes.append(Sentence(
                f"not bound yet: device {device} of claim {claim.key} has bindingConditions "
                f"{', '.join(conditions)}; kube-scheduler waits in PreBind (event \"waiting for binding conditions "
                f"for device on node {node}\"), checking every {BINDING_POLL_SECONDS} s for up to "
                f"{BINDING_TIMEOUT_SECONDS} s, until the driver sets them True in the claim's status.devices; "
                f"a bindingFailureCondition ({', '.join(failures)}) set True, or the timeout, fails this attempt: "
                "the pod leaves the claim's reservedFor, and its next attempt "
                "deallocates the claim to try other devices",
                "binding-conditions", device=device, claim=claim.key, conditions=list(conditions),
                failures=failures, node=node, poll=BINDING_POLL_SECONDS, timeout=BINDING_TIMEOUT_SECONDS))
    return notes


def _unbound(pod: Pod, result: PodResult, resolved: _Resolved, claims: list, names: list, run_cycle,
             cluster: _Claims, capacity: _Capacity, scenario: Scenario, explain_result: bool,
             gate: Sentence | None = None) -> tuple | None:
    """A pod waiting for the scheduler: PreEnqueue, then one scheduling cycle. Returns the special
    claim for extended resources (and its mappings) when the pod got one. `gate`: the GangScheduling
    PreEnqueue's message when it keeps the pod out of the queue."""
    gates = [g.get("name") for g in (pod.raw.get("spec") or {}).get("schedulingGates") or () if isinstance(g, dict)]
    if gate is not None:
        result.message = gate
    elif gates:  # the SchedulingGates plugin's own words
        result.message = Sentence(f"waiting for scheduling gates: [{' '.join(gates)}]", "scheduling-gates",
                                  gates=gates)
    elif resolved.error:
        result.message = resolved.error
    if result.message and getattr(gate, "form", "") == "group-not-tried":
        result.nodes = [PodNode(n, False, result.message) for n in names]
        return None
    if result.message:
        result.notes.append(Sentence("the scheduler does not try the pod until this is resolved (PreEnqueue)",
                                     "preenqueue"))
        result.nodes = [PodNode(n, False, result.message) for n in names]
        return None
    if not names:
        result.message = NO_NODES
        return None
    cycle = run_cycle()
    result.nodes = cycle.nodes
    result.ranking = cycle.ranking
    if cycle.fatal is not None:
        problem = _relocate(scenario.locate(cycle.fatal), resolved, scenario)
        result.outcome, result.message, result.problems = INVALID_POD, problem.message, [problem]
    elif cycle.chosen is None:
        result.message = fit_error(len(names), [n.reasons for n in cycle.nodes if not n.fits], cycle.prefilter)
        result.refused_with_devices = cycle.refused_with_devices
        if cycle.prefilter:
            result.nodes = [PodNode(n, False, cycle.prefilter) for n in names]
        if explain_result and cycle.failed is not None:
            result.explanation = explain_attempt(cycle.failed)
    else:
        result.outcome, result.node = SCHEDULED, cycle.chosen
        special = [cycle.extended[0]] if cycle.extended is not None else []
        _commit(pod, claims + special, cycle.allocator, cluster, resolved.consumers)
        result.notes.extend(_binding_notes(claims + special, cluster, cycle.chosen))
        _count_on_node(pod, result, cycle, capacity)
        capacity.place(pod, cycle.chosen)
        if explain_result and cycle.chosen_attempt is not None:
            result.explanation = explain_attempt(cycle.chosen_attempt)
        return cycle.extended
    return None


def _count_on_node(pod: Pod, result: PodResult, cycle: _Cycle, capacity: _Capacity) -> None:
    """The assumed pod in the scheduler's cache: its requests, and with DRANodeAllocatableResources
    the chosen node's claim statuses, which the scheduler also writes into the pod's status."""
    statuses = cycle.node_allocatable or ()
    capacity.on(cycle.chosen).add(pod, use_status=False, dra=fit.demand_of(statuses) if statuses else None)
    if statuses:
        result.node_allocatable = tuple(statuses)


def _bound(pod: Pod, result: PodResult, resolved: _Resolved, claims: list, node_name: str, names: list,
           run_cycle, cluster: _Claims, scenario: Scenario) -> None:
    """A pod with spec.nodeName never meets the scheduler. The resourceclaim controller reserves its
    allocated claims for it; claims that are not allocated stay so, and the kubelet waits. For those,
    the cycle shows what the scheduler would have said (NodeName filters the other nodes)."""
    result.outcome, result.node = BOUND, node_name
    for claim in claims:
        if claim.allocation is not None:
            cluster.put(_with_status(claim, pod=pod, consumer=resolved.consumers.get(claim.key)))
    waiting = f"bound to node {node_name} (spec.nodeName): the kubelet cannot start it"
    if resolved.error:
        result.message = Sentence(f"{waiting}: {resolved.error}", "bound-claim-error", node=node_name,
                                  error=resolved.error)
        return
    if all(c.allocation is not None for c in claims) or not names:
        result.message = Sentence(f"bound to node {node_name} (spec.nodeName): not scheduled again", "bound",
                                  node=node_name)
        return
    cycle = run_cycle(resources=False)  # the pod already counts on its node
    result.nodes = cycle.nodes
    pending = ", ".join(c.key for c in claims if c.allocation is None)
    parts = {"node": node_name, "claims": pending}
    if cycle.fatal is not None:
        result.problems = [_relocate(scenario.locate(cycle.fatal), resolved, scenario)]
        problem = result.problems[0].message
        result.message = Sentence(f"{waiting} while claim {pending} is not allocated; {problem}", "bound-invalid",
                                  problem=problem, **parts)
    elif cycle.chosen is None:
        summary = fit_error(len(names), [n.reasons for n in cycle.nodes if not n.fits], cycle.prefilter)
        result.message = Sentence(f"{waiting} while claim {pending} is not allocated, and the scheduler "
                                  f"would not find devices either: {summary}", "bound-no-devices", summary=summary,
                                  **parts)
    else:
        result.message = Sentence(f"{waiting} while claim {pending} is not allocated (only the scheduler "
                                  f"allocates claims); it would find devices on {cycle.chosen}", "bound-would-fit",
                                  chosen=cycle.chosen, **parts)


def _commit(pod: Pod, claims: list, allocator: Allocator | None, cluster: _Claims,
            consumers: dict | None = None) -> None:
    """Reserve and PreBind: allocations are written and every claim is reserved for the pod."""
    allocations = {}
    if allocator is not None:
        for ci, claim in enumerate(allocator.claims):
            allocations[claim.key] = build_allocation(allocator, ci)
    for claim in claims:
        current = cluster.get(claim.namespace, claim.name) or claim
        cluster.put(_with_status(current, allocation=allocations.get(claim.key), pod=pod,
                                 consumer=(consumers or {}).get(claim.key)))
    cluster.refresh()


def _claim_views(resolved: _Resolved, cluster: _Claims) -> list:
    views = []
    for view, claim in resolved.entries:
        if claim is not None:
            current = cluster.get(claim.namespace, claim.name) or claim
            status = current.raw.get("status") or {}
            view.allocation = status.get("allocation")
            view.allocated_before = claim.allocation is not None
            view.reserved_for = list(status.get("reservedFor") or [])
        views.append(view)
    return views


def _relocate(problem: Problem, resolved: _Resolved, scenario: Scenario) -> Problem:
    """A problem in a claim made from a template belongs to the template's `spec.spec`."""
    for view, claim in resolved.entries:
        if view.generated and claim is not None and problem.kind == "ResourceClaim" and problem.name == claim.key:
            relocated = Problem(problem.message, kind="ResourceClaimTemplate",
                                name=f"{claim.namespace}/{view.template}", path=("spec",) + tuple(problem.path),
                                severity=problem.severity, ref=claim.ref)
            return scenario.locate(relocated)
    return problem


def _outcome(results: list, to_allocate: dict, cluster: _Claims, warnings: list) -> Outcome:
    claims = []
    for key, before in to_allocate.items():
        now = cluster.by_key.get(key, before)
        claims.append(output_claim(before, (now.raw.get("status") or {}).get("allocation")))
    considered = [r for r in results if r.outcome != BOUND]
    invalid = [r for r in considered if r.outcome == INVALID_POD]
    pending = [r for r in considered if r.outcome == PENDING]
    scheduled = [r for r in considered if r.outcome == SCHEDULED]
    focus = (invalid or pending or scheduled or [None])[0]
    outcome = Outcome(ALLOCATED, claims=claims, warnings=warnings, pods=results)
    if invalid:
        outcome.outcome = INVALID
        outcome.problems = [p for r in invalid for p in r.problems]
    elif pending:
        outcome.outcome = UNSATISFIABLE
    if focus is not None:
        outcome.node = focus.node if focus.outcome == SCHEDULED else None
        if focus.outcome != SCHEDULED:
            more = len(invalid) + len(pending) - 1
            outcome.message = Sentence(f"pod {focus.key}: {focus.message}" + (
                f" ({more} more pod{'s' if more > 1 else ''} not scheduled)" if more else ""), "pod-message",
                pod=focus.key, message=focus.message, more=more)
        outcome.verdicts = [NodeVerdict(n.node, n.fits, n.reason, n.steps) for n in focus.nodes]
        outcome.explanation = focus.explanation
    return outcome
