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
itself, as before pod groups. The gang part of a PodGroup (`schedulingPolicy.gang.minCount`: all
or none of the group's pods bound) is not modelled: pods are still placed one by one, and a note says so.
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


GANG_NOTE = ("PodGroup {key} asks for gang scheduling (minCount {count}): kube-scheduler binds all or none of "
             "its pods; the playground places them one by one and does not undo the ones that fit")
SHORT_GANG_NOTE = ("not modelled: PodGroup {key} asks for gang scheduling (minCount {count}) and the scenario holds "
                   "{have} of its pods: kube-scheduler keeps them all out of its scheduling queue until {count} exist, "
                   "so none is scheduled; the playground places them one by one")
MISSING_GROUP_NOTE = ("not modelled: the pod belongs to PodGroup {key}, which the scenario does not hold: kube-scheduler "
                      "keeps the pod out of its scheduling queue until that PodGroup exists; the playground schedules it "
                      "on its own, with claims of its own")


def gang_notes(group: PodGroup, pods) -> list[Sentence]:
    """What the playground says of a pod of `group` (GenericWorkload on) about the pod group cycle it
    does not run. kube-scheduler's queue takes the group's pending pods together; for a gang
    (minCount above 1) its cycle binds all or none, and its GangScheduling PreEnqueue keeps every pod
    of the group out of the queue while fewer than minCount of them (pending or bound, not finished)
    exist. A group without a gang places its pods as one by one does, and gets no note."""
    if not group.min_count or group.min_count <= 1:
        return []
    have = sum(1 for p in pods if p.namespace == group.namespace and group_of(p) == group.name
               and ((p.raw.get("status") or {}).get("phase")) not in ("Succeeded", "Failed"))
    if have < group.min_count:
        return [Sentence(SHORT_GANG_NOTE.format(key=group.key, count=group.min_count, have=have), "gang-short",
                         group=group.key, count=group.min_count, have=have)]
    return [Sentence(GANG_NOTE.format(key=group.key, count=group.min_count), "gang", group=group.key,
                     count=group.min_count)]
