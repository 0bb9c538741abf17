"""Pod groups and the claims they share (`DRAWorkloadResourceClaims`, beta and off by default in 1.37).

A `PodGroup` (scheduling.k8s.io/v1beta1) may list `resourceClaims`, each naming a ResourceClaim or
a ResourceClaimTemplate. A pod of the group (`spec.schedulingGroup.podGroupName`) whose own
`spec.resourceClaims` entry matches one of them exactly (same name, same claim or template name)
uses the group's claim, and the claim is reserved for the group (one `reservedFor` entry naming
the PodGroup) instead of for each pod:

- from a template, the resourceclaim controller makes ONE claim for the group, owned by the
  PodGroup and named `<podgroup>-<claim>-<suffix>`; the group's pods all use it, so the first pod
  scheduled allocates it and the others can only run where that allocation is available;
- a pod entry that matches no group claim stays the pod's own (a claim per pod from a template).

With the gate off (in the scheduler, which stands in for kube-controller-manager here) the group's
claims are not consulted: every pod gets its own claim from a template and reserves claims for
itself, as before pod groups.

The pod group cycle (GenericWorkload on), as kube-scheduler 1.37.2's queue and scheduleOnePodGroup
run it: the queue takes the pending pods of a PodGroup together, as one entity, at the turn of the
first of them to arrive (`queue_turns`); the group's pods are tried one after another (priority,
then arrival), each placed where it fits as one by one would, and after each the GangScheduling
plugin's PlacementFeasible judges the group (`placement_feasible`): a gang (`minCount` above 1)
whose pods can no longer reach minCount stops the cycle, and every pod it placed is taken back (no
pod of the gang is bound); otherwise the pods that fit are bound. The GangScheduling PreEnqueue keeps
out of the queue the pods of a gang that has fewer than minCount pods (pending or bound), and the
pods of a PodGroup that does not exist (`preenqueue_gate`).
"""
from __future__ import annotations

import copy
from dataclasses import dataclass

from allocator.engine.sentence import Sentence
from allocator.engine.objects import build_claim
from allocator.engine.problems import WARNING, Problem
from allocator.engine.validation import dns_label_errors, dns_subdomain_errors

GROUP = "scheduling.k8s.io"
API_VERSION = f"{GROUP}/v1beta1"
GATE = "DRAWorkloadResourceClaims"
GENERIC_GATE = "GenericWorkload"  # PodGroup itself and spec.schedulingGroup (beta, off by default in 1.37)
MAX_CLAIMS = 4  # MaxPodGroupResourceClaims
POD_CLAIM_ANNOTATION = "resource.kubernetes.io/pod-claim-name"
_SAFE = "bcdfghjklmnpqrstvwxz2456789"


def understood(api_version, kind) -> bool:
    return kind == "PodGroup" and isinstance(api_version, str) and api_version.startswith(f"{GROUP}/")


@dataclass(frozen=True)
class ClaimEntry:
    """One entry of a `resourceClaims` list, a pod's or a PodGroup's (the same three fields): its
    name and the ResourceClaim or ResourceClaimTemplate it names."""

    name: str
    claim_name: str | None
    template_name: str | None

    @classmethod
    def read(cls, entry: dict) -> "ClaimEntry":
        return cls(entry.get("name") or "", entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName"))


@dataclass(frozen=True)
class PodGroup:
    namespace: str
    name: str
    uid: str
    claims: tuple  # ClaimEntry
    min_count: int | None  # schedulingPolicy.gang.minCount
    statuses: dict  # status.resourceClaimStatuses: claim name -> ResourceClaim name (None: none needed)
    ref: tuple | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def consumer(self) -> dict:
        return {"apiGroup": GROUP, "resource": "podgroups", "name": self.name, "uid": self.uid}


def read_pod_group(data: dict, ref, *, kind: str, name: str) -> tuple[PodGroup | None, list[Problem]]:
    """The PodGroup and the problems found (as the apiserver validates the parts read here)."""
    def problem(message, path, severity="error"):
        return Problem(message, kind=kind, name=name, path=path, severity=severity, ref=ref)

    api_version = data.get("apiVersion")
    if api_version != API_VERSION:
        return None, [problem(f"{api_version} is not served by Kubernetes 1.37 for PodGroup (it serves "
                              f"{API_VERSION}, and v1alpha3 with alpha APIs on); write this object as {API_VERSION}: "
                              "it is ignored here", ("apiVersion",), WARNING)]
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    group_name = meta.get("name") if isinstance(meta.get("name"), str) else ""
    namespace = str(meta.get("namespace") or "default")
    problems = []
    if not group_name:
        problems.append(problem("Required value: name or generateName is required", ("metadata", "name")))
    for message in dns_subdomain_errors(group_name) if group_name else ():
        problems.append(problem(f"Invalid value: {group_name!r}: {message}", ("metadata", "name")))
    spec = data.get("spec") if isinstance(data.get("spec"), dict) else {}
    claims, seen = [], set()
    raw_claims = spec.get("resourceClaims") or []
    if not isinstance(raw_claims, list):
        problems.append(problem("Invalid value: must be a list", ("spec", "resourceClaims")))
        raw_claims = []
    if len(raw_claims) > MAX_CLAIMS:
        problems.append(problem(f"Too many: {len(raw_claims)}: must have at most {MAX_CLAIMS} items",
                                ("spec", "resourceClaims")))
    for i, entry in enumerate(raw_claims):
        path = ("spec", "resourceClaims", i)
        entry = entry if isinstance(entry, dict) else {}
        claim_name = entry.get("name") if isinstance(entry.get("name"), str) else ""
        if not claim_name:
            problems.append(problem("Required value", path + ("name",)))
        elif claim_name in seen:
            problems.append(problem(f'Duplicate value: "{claim_name}"', path + ("name",)))
        else:
            for message in dns_label_errors(claim_name):
                problems.append(problem(f"Invalid value: {claim_name!r}: {message}", path + ("name",)))
        seen.add(claim_name)
        claim = ClaimEntry(claim_name, entry.get("resourceClaimName"), entry.get("resourceClaimTemplateName"))
        if (claim.claim_name is None) == (claim.template_name is None):
            problems.append(problem("Invalid value: exactly one of `resourceClaimName` or "
                                    "`resourceClaimTemplateName` must be specified", path))
        claims.append(claim)
    gang = ((spec.get("schedulingPolicy") or {}).get("gang") or {}) if isinstance(spec.get("schedulingPolicy"), dict) else {}
    min_count = gang.get("minCount") if isinstance(gang.get("minCount"), int) else None
    statuses = {}
    for status in ((data.get("status") or {}).get("resourceClaimStatuses") or ()):
        if isinstance(status, dict) and isinstance(status.get("name"), str):
            statuses[status["name"]] = status.get("resourceClaimName")
    uid = meta.get("uid")
    if not uid:
        import uuid  # only for a group the input gives no uid
        uid = uuid.uuid5(uuid.NAMESPACE_URL, f"podgroup/{namespace}/{group_name}")
    uid = str(uid)
    if any(p.severity == "error" for p in problems):
        return None, problems
    return PodGroup(namespace, group_name, uid, tuple(claims), min_count, statuses, ref), problems


def group_of(pod) -> str | None:
    """The PodGroup a pod belongs to (spec.schedulingGroup.podGroupName), or None."""
    group = (pod.raw.get("spec") or {}).get("schedulingGroup")
    name = group.get("podGroupName") if isinstance(group, dict) else None
    return name if isinstance(name, str) and name else None


def binding(pod, entry: ClaimEntry, groups: dict) -> PodGroup | None:
    """The PodGroup that this pod claim is bound to (the group lists the same entry: the claim is the
    group's), or None for the pod's own."""
    name = group_of(pod)
    group = groups.get(f"{pod.namespace}/{name}") if name else None
    return group if group is not None and entry in group.claims else None


def owned_by_group(claim, group: PodGroup) -> bool:
    for owner in (claim.raw.get("metadata") or {}).get("ownerReferences") or ():
        if isinstance(owner, dict) and owner.get("controller"):
            return (owner.get("kind") == "PodGroup" and owner.get("name") == group.name
                    and str(owner.get("apiVersion", "")).startswith(f"{GROUP}/"))
    return False


def generated_name(group: PodGroup, claim_name: str) -> tuple[str, str]:
    """(generateName, name) as the resourceclaim controller names a PodGroup's claim (the suffix
    derived from the names so that a run repeats)."""
    base = f"{group.name}-{claim_name}-"
    if len(base) > 57:
        base = f"{group.name[:len(group.name) * 57 // len(base)]}-{claim_name[:len(claim_name) * 57 // len(base)]}"
    import hashlib  # only for generated names: OpenSSL's bindings are no part of start-up

    digest = hashlib.sha256(f"podgroup/{group.namespace}/{group.name}/{claim_name}".encode()).digest()
    return base, base[:58] + "".join(_SAFE[b % len(_SAFE)] for b in digest[:5])


def make_claim(group: PodGroup, claim_name: str, template) -> object:
    """The ResourceClaim the controller creates for a PodGroup claim from its template."""
    generate_name, name = generated_name(group, claim_name)
    metadata = {
        "name": name, "generateName": generate_name, "namespace": group.namespace,
        "annotations": {**(template.claim_metadata.get("annotations") or {}), POD_CLAIM_ANNOTATION: claim_name},
        "ownerReferences": [{"apiVersion": API_VERSION, "kind": "PodGroup", "name": group.name, "uid": group.uid,
                             "controller": True}],
    }
    if template.claim_metadata.get("labels"):
        metadata["labels"] = dict(template.claim_metadata["labels"])
    return build_claim({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim", "metadata": metadata,
                        "spec": copy.deepcopy(template.claim_spec)}, template.ref)


# The GangScheduling plugin's own words (PreEnqueue, PlacementFeasible) and the scheduler's for the
# pods of a failed pod group cycle (errPodGroupUnschedulable).
GANG_WAITING = "waiting for minCount pods from a gang to appear in scheduling queue"
GROUP_WAITING = 'waiting for pods\'s pod group "{name}" to appear in scheduling queue'
CANNOT_SATISFY = "minCount ({count}) cannot be satisfied: {scheduled} scheduled, {remaining} remaining"
GROUP_UNSCHEDULABLE = "pod group is unschedulable"


@dataclass
class Turn:
    """One entity the scheduling queue pops: a pod alone (group None), or the pending pods of a
    PodGroup together; `gate` is the PreEnqueue message when the queue never pops it."""

    pods: list
    group: PodGroup | None = None
    gate: Sentence | None = None


def _priority(pod) -> int:
    value = (pod.raw.get("spec") or {}).get("priority")
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _counted(pod) -> bool:
    return ((pod.raw.get("status") or {}).get("phase")) not in ("Succeeded", "Failed")


def preenqueue_gate(pod, groups: dict, pods) -> Sentence | None:
    """The GangScheduling PreEnqueue verdict for a pending pod of a pod group: None when it may enter
    the queue, else the plugin's message (the PodGroup does not exist; a gang has fewer than minCount
    pods, pending or bound, that have not finished)."""
    name = group_of(pod)
    if not name:
        return None
    group = groups.get(f"{pod.namespace}/{name}")
    if group is None:
        return Sentence(GROUP_WAITING.format(name=name), "group-waiting", group=f"{pod.namespace}/{name}")
    if not group.min_count or group.min_count <= 1:
        return None
    have = sum(1 for p in pods if p.namespace == group.namespace and group_of(p) == group.name and _counted(p))
    if have < group.min_count:
        return Sentence(GANG_WAITING, "gang-waiting", group=group.key, count=group.min_count, have=have)
    return None


def queue_turns(pods, groups: dict, generic: bool) -> list[Turn]:
    """The scheduling queue's entities in the order it pops them. Without GenericWorkload every pod is
    its own entity, in input order. With it, the pending pods of one PodGroup form one entity at the
    turn of the first of them (their order within: priority, then arrival); a pod kept out by
    PreEnqueue forms a gated entity (never popped) at its own turn. Bound pods keep their turns (the
    scheduler's cache holds them from the start)."""
    turns: list[Turn] = []
    entities: dict = {}
    for pod in pods:
        name = group_of(pod) if generic and not pod.node_name else None
        if name is None:
            turns.append(Turn([pod]))
            continue
        gate = preenqueue_gate(pod, groups, pods)
        if gate is not None:
            turns.append(Turn([pod], groups.get(f"{pod.namespace}/{name}"), gate))
            continue
        key = f"{pod.namespace}/{name}"
        if key not in entities:
            entities[key] = Turn([], groups[key])
            turns.append(entities[key])
        entities[key].pods.append(pod)
    for turn in entities.values():
        turn.pods.sort(key=lambda p: -_priority(p))  # stable: arrival order among equals
    return turns


def placement_feasible(min_count: int, scheduled: int, remaining: int) -> str | None:
    """GangScheduling's PlacementFeasible, for the part the cycle acts on: its message when the group
    can no longer reach minCount (the cycle stops), else None (it goes on, or has reached it)."""
    if remaining + scheduled < min_count:
        return CANNOT_SATISFY.format(count=min_count, scheduled=scheduled, remaining=remaining)
    return None


def scheduled_count(group: PodGroup, pods) -> int:
    """The group's pods the scheduler's cache holds as scheduled before its cycle: those bound in the
    input that have not finished."""
    return sum(1 for p in pods if p.namespace == group.namespace and group_of(p) == group.name
               and p.node_name and _counted(p))


GANG_NOTE = ("PodGroup {key} asks for gang scheduling (minCount {count}): kube-scheduler takes its pending pods "
             "together in one pod group cycle and binds all of them or none")
GROUP_NOTE = ("PodGroup {key}: kube-scheduler takes its pending pods together in one pod group cycle, at the turn of "
              "the first of them, and binds each one that fits")
SHORT_GANG_NOTE = ("PodGroup {key} asks for gang scheduling (minCount {count}) and the scenario holds {have} of its "
                   "pods: kube-scheduler keeps them all out of its scheduling queue (GangScheduling PreEnqueue) until "
                   "{count} exist, so none is scheduled")
MISSING_GROUP_NOTE = ("the pod belongs to PodGroup {key}, which the scenario does not hold: kube-scheduler keeps the "
                      "pod out of its scheduling queue (GangScheduling PreEnqueue) until that PodGroup exists")


def gang_notes(group: PodGroup, pods) -> list[Sentence]:
    """What the playground says of a pod of `group` (GenericWorkload on) about its pod group cycle: a
    gang (minCount above 1) binds all or none, and is kept out of the queue while fewer than minCount
    of its pods (pending or bound, not finished) exist; a basic group is tried together."""
    if not group.min_count or group.min_count <= 1:
        return [Sentence(GROUP_NOTE.format(key=group.key), "group-cycle", group=group.key)]
    have = sum(1 for p in pods if p.namespace == group.namespace and group_of(p) == group.name and _counted(p))
    if have < group.min_count:
        return [Sentence(SHORT_GANG_NOTE.format(key=group.key, count=group.min_count, have=have), "gang-short",
                         group=group.key, count=group.min_count, have=have)]
    return [Sentence(GANG_NOTE.format(key=group.key, count=group.min_count), "gang", group=group.key,
                     count=group.min_count)]
