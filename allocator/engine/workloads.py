"""Workloads expanded into the pods their controllers would create.

Real manifests hold Deployments, Jobs, StatefulSets and DaemonSets more often than bare Pods.
Each is turned into the pods its controller (kube-controller-manager 1.37) creates, which are
then scheduled like any other pod, in input order:

- ReplicaSet: `replicas` pods named `<rs>-<5 chars>` (the apiserver's generateName), with the
  template's labels; a Deployment first makes the ReplicaSet `<deployment>-<pod-template-hash>`
  and adds the `pod-template-hash` label to it and its pods.
- StatefulSet: `replicas` pods `<sts>-<ordinal>` (from `spec.ordinals.start`), with the
  pod-name and pod-index labels, hostname and subdomain.
- Job: `min(parallelism, completions)` pods (parallelism defaults to 1); an Indexed Job's pods
  get their completion index as annotation and label, in the generateName and the hostname.
  A CronJob: the pods of one Job it would start (the schedule itself is not run).
- DaemonSet: one pod per Node it should run on (the template's node name, node selector and
  required node affinity, and the node's NoSchedule/NoExecute taints against the template's
  tolerations plus the ones the controller adds), each pinned to its node by the required node
  affinity the controller writes (`metadata.name In [node]`, replacing the template's terms).

Pods the input already holds for a workload (a controller owner reference to it) count: only
the missing ones are made. Every made pod carries a controller owner reference to its
workload, and the scenario records which workload it came from.

A Deployment's `pod-template-hash` (in its ReplicaSet's name and so in its pods' names) and the
`controller-revision-hash` label of a StatefulSet's and a DaemonSet's pods are the ones
kube-controller-manager 1.37.2 computes (engine/templatehash.py, judged by the podhash oracle):
the names are as a cluster would name them, save the five random characters the apiserver adds.
Where the template holds something that module does not reproduce exactly, the hash is an
estimate and the workload's label and a note say so. Pods of the workload already in the input
carry the cluster's own label: made pods take theirs.
"""
from __future__ import annotations

import copy
import json
from dataclasses import dataclass, field

from allocator.engine.sentence import Sentence
from allocator.engine.nodematch import SelectorError, selector_matches
from allocator.engine.objects import Toleration, node_selector
from allocator.engine.problems import WARNING, Problem

KINDS = {
    ("apps/v1", "Deployment"), ("apps/v1", "ReplicaSet"), ("apps/v1", "StatefulSet"), ("apps/v1", "DaemonSet"),
    ("batch/v1", "Job"), ("batch/v1", "CronJob"),
}
MAX_PODS = 500  # per workload: a page, not a cluster; the rest are said to be left out
_SAFE = "bcdfghjklmnpqrstvwxz2456789"  # the apiserver's alphabet for random name suffixes

# The tolerations the DaemonSet controller adds to every pod it makes (kube 1.37).
DAEMON_TOLERATIONS = (
    ("node.kubernetes.io/not-ready", "NoExecute"),
    ("node.kubernetes.io/unreachable", "NoExecute"),
    ("node.kubernetes.io/disk-pressure", "NoSchedule"),
    ("node.kubernetes.io/memory-pressure", "NoSchedule"),
    ("node.kubernetes.io/pid-pressure", "NoSchedule"),
    ("node.kubernetes.io/unschedulable", "NoSchedule"),
)
NETWORK_UNAVAILABLE = ("node.kubernetes.io/network-unavailable", "NoSchedule")


def understood(api_version, kind) -> bool:
    return (api_version, kind) in KINDS


@dataclass
class Workload:
    """A workload object of the input, at its position."""

    kind: str
    namespace: str
    name: str
    uid: str
    raw: dict
    ref: tuple | None
    index: int  # position in the input

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def label(self) -> str:
        return f"{self.kind} {self.key}"


@dataclass
class MadePod:
    """A pod a controller would create: its manifest, its place in the input and its origin."""

    raw: dict
    index: int
    kind: str  # the workload's kind and namespace/name, for its problems
    key: str
    workload: str  # a Sentence, e.g. "Deployment default/web (ReplicaSet default/web-6d4cf56db6)"
    ref: tuple | None
    base: tuple  # the path of its pod template in the workload, for locating problems
    node: str | None = None  # a DaemonSet's pod: the node it is made for


@dataclass
class Expansion:
    pods: list = field(default_factory=list)  # MadePod, in input order
    problems: list = field(default_factory=list)  # located by the caller


def read_workload(data: dict, ref, index: int) -> Workload:
    meta = data.get("metadata") if isinstance(data.get("metadata"), dict) else {}
    namespace = str(meta.get("namespace") or "default")
    name = str(meta.get("name") or "")
    uid = str(meta.get("uid") or _uid(f"{data.get('kind')}/{namespace}/{name}"))
    return Workload(str(data.get("kind")), namespace, name, uid, data, ref, index)


# --- names and hashes -------------------------------------------------------------------------


def _uid(seed: str):
    """A stable uid for an object the input does not give one (uuid is imported only for workloads)."""
    import uuid
    return uuid.uuid5(uuid.NAMESPACE_URL, seed)


def with_suffix(generate_name: str, seed: str) -> str:
    """generateName plus five characters, as the apiserver names it (derived from `seed` so a run repeats)."""
    import hashlib  # only for generated names: OpenSSL's bindings are no part of start-up

    digest = hashlib.sha256(seed.encode()).digest()
    return generate_name[:58] + "".join(_SAFE[b % len(_SAFE)] for b in digest[:5])


def _prefix(name: str) -> str:
    return f"{name}-"


# --- reading the parts of a workload ------------------------------------------------------------


def _int(holder: dict, key: str, default: int | None) -> int | None:
    value = holder.get(key)
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Bad((key,), f"Invalid value: {json.dumps(value)}: must be an integer")
    return value


class _Bad(ValueError):
    def __init__(self, path: tuple, message: str):
        super().__init__(message)
        self.path, self.message = path, message


_SPEC_TYPES = {  # the pod template fields the scheduling reads, and the JSON type each must have
    "affinity": dict, "nodeSelector": dict, "tolerations": list, "resourceClaims": list, "containers": list,
    "initContainers": list, "schedulingGroup": dict, "overhead": dict, "resources": dict,
    "topologySpreadConstraints": list, "volumes": list, "schedulingGates": list,
}


def _template(spec: dict, base: tuple) -> dict:
    template = spec.get("template")
    if not isinstance(template, dict) or not isinstance(template.get("spec"), dict):
        raise _Bad(base + ("template",), "Required value: a pod template (template.spec) is needed to make pods")
    if template.get("metadata") is not None and not isinstance(template["metadata"], dict):
        raise _Bad(base + ("template", "metadata"), "Invalid value: must be an object")
    pod_spec = template["spec"]
    for key, kind in _SPEC_TYPES.items():
        if pod_spec.get(key) is not None and not isinstance(pod_spec[key], kind):
            raise _Bad(base + ("template", "spec", key),
                       f"Invalid value: must be {'an object' if kind is dict else 'a list'}")
    affinity = pod_spec.get("affinity") or {}
    for key in ("nodeAffinity", "podAffinity", "podAntiAffinity"):
        if affinity.get(key) is not None and not isinstance(affinity[key], dict):
            raise _Bad(base + ("template", "spec", "affinity", key), "Invalid value: must be an object")
    return template


def _owner(kind: str, name: str, uid: str, api_version: str = "apps/v1") -> dict:
    return {"apiVersion": api_version, "kind": kind, "name": name, "uid": uid,
            "controller": True, "blockOwnerDeletion": True}


def _pod(template: dict, *, namespace: str, name: str, generate_name: str | None, owner: dict,
         labels: dict | None = None, annotations: dict | None = None) -> dict:
    meta_in = template.get("metadata") if isinstance(template.get("metadata"), dict) else {}
    meta = {"name": name, "namespace": namespace}
    if generate_name:
        meta["generateName"] = generate_name
    given_labels = meta_in.get("labels") if isinstance(meta_in.get("labels"), dict) else {}
    given_annotations = meta_in.get("annotations") if isinstance(meta_in.get("annotations"), dict) else {}
    merged_labels = {**given_labels, **(labels or {})}
    if merged_labels:
        meta["labels"] = merged_labels
    merged_annotations = {**given_annotations, **(annotations or {})}
    if merged_annotations:
        meta["annotations"] = merged_annotations
    if isinstance(meta_in.get("finalizers"), list) and meta_in["finalizers"]:
        meta["finalizers"] = list(meta_in["finalizers"])
    meta["ownerReferences"] = [owner]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": meta, "spec": copy.deepcopy(template["spec"])}


# --- the controllers ------------------------------------------------------------------------------


class _Existing:
    """The input's pods by their controller owner: what the controllers have made already."""

    def __init__(self, pods: list):
        self.by_owner: dict = {}
        for pod in pods:
            meta = pod.raw.get("metadata") or {}
            for owner in meta.get("ownerReferences") or ():
                if isinstance(owner, dict) and owner.get("controller"):
                    key = (owner.get("kind"), pod.namespace, owner.get("name"))
                    self.by_owner.setdefault(key, []).append(pod)
                    break

    def of(self, kind: str, namespace: str, name: str) -> list:
        return [p for p in self.by_owner.get((kind, namespace, name), []) if not p.terminal]

    def replica_sets_of(self, namespace: str, deployment: str) -> list:
        """Owners of existing pods that are ReplicaSets of this Deployment by name and hash label."""
        found = []
        for (kind, ns, name), pods in self.by_owner.items():
            if kind != "ReplicaSet" or ns != namespace:
                continue
            hashes = {((p.raw.get("metadata") or {}).get("labels") or {}).get("pod-template-hash") for p in pods}
            if any(h and name == f"{deployment}-{h}" for h in hashes):
                found.append(name)
        return found


def _replicas(workload: Workload, spec: dict, base: tuple) -> int:
    try:
        replicas = _int(spec, "replicas", 1)
    except _Bad as bad:
        raise _Bad(base + bad.path, bad.message) from None
    if replicas < 0:
        raise _Bad(base + ("replicas",), f"Invalid value: {replicas}: must be greater than or equal to 0")
    return replicas


def _replica_set_pods(rs_name: str, rs_uid: str, namespace: str, template: dict, count: int, *, extra_labels: dict,
                      existing: int, seed: str) -> list[dict]:
    owner = _owner("ReplicaSet", rs_name, rs_uid)
    pods = []
    for i in range(existing, count):
        generate_name = _prefix(rs_name)
        name = with_suffix(generate_name, f"{seed}/{i}")
        pods.append(_pod(template, namespace=namespace, name=name, generate_name=generate_name, owner=owner,
                         labels=extra_labels))
    return pods


def _expand_replica_set(w: Workload, existing: _Existing, out: "_Out") -> None:
    spec = w.raw.get("spec") if isinstance(w.raw.get("spec"), dict) else {}
    template = _template(spec, ("spec",))
    replicas = _replicas(w, spec, ("spec",))
    have = len(existing.of("ReplicaSet", w.namespace, w.name))
    out.made(w, _replica_set_pods(w.name, w.uid, w.namespace, template, replicas, extra_labels={},
                                  existing=have, seed=f"rs/{w.key}"), ("spec", "template"), replicas, have)


def _expand_deployment(w: Workload, existing: _Existing, out: "_Out", owned_sets: set, gates) -> None:
    spec = w.raw.get("spec") if isinstance(w.raw.get("spec"), dict) else {}
    template = _template(spec, ("spec",))
    replicas = _replicas(w, spec, ("spec",))
    if (w.namespace, w.name) in owned_sets:
        out.note(w, Sentence("its ReplicaSet is in the input: the ReplicaSet's pods stand for the Deployment's",
                             "replica-set-in-input"))
        return
    status = w.raw.get("status") if isinstance(w.raw.get("status"), dict) else {}
    collisions = status.get("collisionCount") if isinstance(status.get("collisionCount"), int) else None
    rs_names = existing.replica_sets_of(w.namespace, w.name)
    estimated = False
    if rs_names:  # a dump: the controller's ReplicaSet exists, with its real hash
        rs_name = rs_names[0]
        pod_hash = rs_name[len(w.name) + 1:]
    else:
        from allocator.engine.templatehash import pod_template_hash  # only a Deployment needs it
        computed = pod_template_hash(template, collisions, gates=gates)
        pod_hash = computed.value
        rs_name = f"{w.name}-{pod_hash}"
        if not computed.exact:
            estimated = True
            out.note(w, Sentence(f"pod-template-hash {pod_hash} is an estimate, not the one a cluster computes: "
                                 f"{computed.why}; its ReplicaSet's and pods' names differ from a real cluster's",
                                 "template-hash-estimate", hash=pod_hash, why=computed.why))
    rs_uid = str(_uid(f"ReplicaSet/{w.namespace}/{rs_name}"))
    have = len(existing.of("ReplicaSet", w.namespace, rs_name))
    pods = _replica_set_pods(rs_name, rs_uid, w.namespace, template, replicas,
                             extra_labels={"pod-template-hash": pod_hash}, existing=have, seed=f"rs/{w.namespace}/{rs_name}")
    out.made(w, pods, ("spec", "template"), replicas, have, via=f"ReplicaSet {w.namespace}/{rs_name}",
             estimated=estimated)


def _revision(w: Workload, template: dict, pods: list, out: "_Out", gates) -> str:
    """The controller-revision-hash of a StatefulSet's or DaemonSet's pods: the one its pods in the
    input carry, else the one kube-controller-manager computes (a note says when it is an estimate)."""
    for pod in pods:
        label = ((pod.raw.get("metadata") or {}).get("labels") or {}).get("controller-revision-hash")
        if isinstance(label, str) and label:
            return label
    from allocator.engine.templatehash import controller_revision_hash  # only these workloads need it
    status = w.raw.get("status") if isinstance(w.raw.get("status"), dict) else {}
    collisions = status.get("collisionCount") if isinstance(status.get("collisionCount"), int) else None
    computed = controller_revision_hash(w.kind, w.name, template, collisions, gates=gates)
    if not computed.exact:
        out.note(w, Sentence(f"controller-revision-hash {computed.value} is an estimate, not the one a cluster "
                             f"computes: {computed.why}", "revision-hash-estimate", hash=computed.value, why=computed.why))
    return computed.value


def _expand_stateful_set(w: Workload, existing: _Existing, out: "_Out", gates) -> None:
    spec = w.raw.get("spec") if isinstance(w.raw.get("spec"), dict) else {}
    template = _template(spec, ("spec",))
    replicas = _replicas(w, spec, ("spec",))
    ordinals = spec.get("ordinals") if isinstance(spec.get("ordinals"), dict) else {}
    try:
        start = _int(ordinals, "start", 0)
    except _Bad as bad:
        raise _Bad(("spec", "ordinals") + bad.path, bad.message) from None
    have = {p.name for p in existing.of("StatefulSet", w.namespace, w.name)}
    revision = _revision(w, template, existing.of("StatefulSet", w.namespace, w.name), out, gates)
    owner = _owner("StatefulSet", w.name, w.uid)
    pods = []
    for ordinal in range(start, start + replicas):
        name = f"{w.name}-{ordinal}"
        if name in have:
            continue
        pod = _pod(template, namespace=w.namespace, name=name, generate_name=None, owner=owner, labels={
            "controller-revision-hash": revision,
            "statefulset.kubernetes.io/pod-name": name,
            "apps.kubernetes.io/pod-index": str(ordinal),
        })
        pod["spec"]["hostname"] = name
        if isinstance(spec.get("serviceName"), str) and spec["serviceName"]:
            pod["spec"]["subdomain"] = spec["serviceName"]
        pods.append(pod)
    note = None
    if spec.get("podManagementPolicy", "OrderedReady") == "OrderedReady" and len(pods) > 1:
        note = Sentence("podManagementPolicy OrderedReady: the controller creates each pod once the one before it is "
                        "Running and Ready; here all are scheduled in ordinal order", "ordered-ready")
    out.made(w, pods, ("spec", "template"), replicas, len(have), extra_note=note)


def _job_pods(job_name: str, job_uid: str, namespace: str, spec: dict, base: tuple, existing: list,
              seed: str) -> tuple[list[dict], int, str | None]:
    template = _template(spec, base)
    try:
        parallelism = _int(spec, "parallelism", 1)
        completions = _int(spec, "completions", None)
    except _Bad as bad:
        raise _Bad(base + bad.path, bad.message) from None
    if spec.get("suspend") is True:
        return [], 0, Sentence("suspended (spec.suspend): the Job controller creates no pods", "job-suspended")
    wanted = parallelism if completions is None else min(parallelism, completions)
    labels = {
        "batch.kubernetes.io/controller-uid": job_uid, "batch.kubernetes.io/job-name": job_name,
        "controller-uid": job_uid, "job-name": job_name,
    }
    owner = _owner("Job", job_name, job_uid, "batch/v1")
    indexed = spec.get("completionMode") == "Indexed"
    pods = []
    if indexed:
        taken = {((p.raw.get("metadata") or {}).get("annotations") or {}).get("batch.kubernetes.io/job-completion-index")
                 for p in existing}
        free = [i for i in range(completions or 0) if str(i) not in taken]
        for index in free[:max(0, wanted - len(existing))]:
            generate_name = f"{job_name}-{index}-"
            if len(generate_name) > 58:
                generate_name = generate_name[:58 - len(f"-{index}-")] + f"-{index}-"
            pod = _pod(template, namespace=namespace, name=with_suffix(generate_name, f"{seed}/{index}"),
                       generate_name=generate_name, owner=owner,
                       labels={**labels, "batch.kubernetes.io/job-completion-index": str(index)},
                       annotations={"batch.kubernetes.io/job-completion-index": str(index)})
            pod["spec"]["hostname"] = f"{job_name}-{index}"
            pods.append(pod)
    else:
        for i in range(len(existing), wanted):
            generate_name = _prefix(job_name)
            pods.append(_pod(template, namespace=namespace, name=with_suffix(generate_name, f"{seed}/{i}"),
                             generate_name=generate_name, owner=owner, labels=labels))
    return pods, wanted, None


def _expand_job(w: Workload, existing: _Existing, out: "_Out") -> None:
    spec = w.raw.get("spec") if isinstance(w.raw.get("spec"), dict) else {}
    have = existing.of("Job", w.namespace, w.name)
    pods, wanted, reason = _job_pods(w.name, w.uid, w.namespace, spec, ("spec",), have, f"job/{w.key}")
    if reason:
        out.note(w, reason)
        return
    out.made(w, pods, ("spec", "template"), wanted, len(have))


def _expand_cron_job(w: Workload, existing: _Existing, out: "_Out") -> None:
    spec = w.raw.get("spec") if isinstance(w.raw.get("spec"), dict) else {}
    job_template = spec.get("jobTemplate")
    if not isinstance(job_template, dict) or not isinstance(job_template.get("spec"), dict):
        raise _Bad(("spec", "jobTemplate"), "Required value: a Job template (jobTemplate.spec) is needed to make pods")
    if spec.get("suspend") is True:
        out.note(w, Sentence("suspended (spec.suspend): the CronJob controller starts no Job", "cron-job-suspended"))
        return
    # The controller names each Job after its scheduled time in minutes since the epoch; one stands for all.
    from allocator.engine.templatehash import fnv32a  # imported when needed: most inputs hold no workload
    job_name = f"{w.name}-{fnv32a(w.key.encode()) % 29_000_000}"
    job_uid = str(_uid(f"Job/{w.namespace}/{job_name}"))
    base = ("spec", "jobTemplate", "spec")
    pods, wanted, reason = _job_pods(job_name, job_uid, w.namespace, job_template["spec"], base, [],
                                     f"job/{w.namespace}/{job_name}")
    if reason:
        out.note(w, reason)
        return
    out.made(w, pods, base + ("template",), wanted, 0, via=f"Job {w.namespace}/{job_name}",
             extra_note=Sentence("the pods of one Job the CronJob would start (its schedule is not run; the Job's "
                                 "name stands for the one of a scheduled time)", "cron-job-one-job"))


def daemon_tolerations(pod_spec: dict) -> list:
    """The template's tolerations with the ones the DaemonSet controller adds (an existing toleration
    of the same key, operator and effect is replaced)."""
    tolerations = [t for t in pod_spec.get("tolerations") or () if isinstance(t, dict)]
    added = list(DAEMON_TOLERATIONS) + ([NETWORK_UNAVAILABLE] if pod_spec.get("hostNetwork") else [])
    for key, effect in added:
        toleration = {"key": key, "operator": "Exists", "effect": effect}
        for i, t in enumerate(tolerations):
            if t.get("key") == key and (t.get("operator") or "Equal") == "Exists" and t.get("effect", "") == effect:
                tolerations[i] = toleration
                break
        else:
            tolerations.append(toleration)
    return tolerations


def daemon_nodes(raw: dict, nodes: dict) -> tuple[list[str], dict]:
    """The nodes a DaemonSet should run a pod on, in name order, and why each other node has none."""
    from allocator.engine.nodefilter import DO_NOT_SCHEDULE, Placement, tolerated  # the pods' modules, when needed
    spec = raw.get("spec") if isinstance(raw.get("spec"), dict) else {}
    template = spec.get("template") if isinstance(spec.get("template"), dict) else {}
    pod_spec = template.get("spec") if isinstance(template.get("spec"), dict) else {}
    tolerations = tuple(
        Toleration(t.get("key") or "", t.get("operator") or "Equal", str(t.get("value") or ""), t.get("effect") or "", t)
        for t in daemon_tolerations(pod_spec))
    placement = Placement(None, (), None, tolerations)
    required = (((pod_spec.get("affinity") or {}).get("nodeAffinity") or {})
                .get("requiredDuringSchedulingIgnoredDuringExecution"))
    affinity = node_selector(required) if isinstance(required, dict) else None
    selector = {str(k): str(v) for k, v in (pod_spec.get("nodeSelector") or {}).items()}
    chosen, skipped = [], {}
    for name in sorted(nodes):
        node = nodes[name]
        if pod_spec.get("nodeName") and pod_spec["nodeName"] != name:
            skipped[name] = Sentence(f"the template's spec.nodeName is {pod_spec['nodeName']}", "node-name",
                                     node=pod_spec["nodeName"])
            continue
        if any(node.labels.get(k) != v for k, v in selector.items()):
            skipped[name] = Sentence("the node does not match the template's nodeSelector", "node-selector")
            continue
        try:
            if affinity is not None and not selector_matches(affinity, node):
                skipped[name] = Sentence("the node does not match the template's required node affinity",
                                         "node-affinity")
                continue
        except SelectorError:  # the controller ignores a selector it cannot parse
            skipped[name] = Sentence("the template's required node affinity cannot be parsed", "node-affinity-unparsed")
            continue
        taint = next((t for t in node.taints if t.effect in DO_NOT_SCHEDULE and not tolerated(placement, t)), None)
        if taint is not None:
            shown_taint = f"{taint.key}={taint.value}:{taint.effect}"
            skipped[name] = Sentence(f"the pods do not tolerate the node's taint {shown_taint}", "taint", taint=shown_taint)
            continue
        chosen.append(name)
    return chosen, skipped


def _pinned(pod_spec: dict, node: str) -> None:
    """The node affinity the DaemonSet controller writes: required terms replaced by one that names the node."""
    term = {"matchFields": [{"key": "metadata.name", "operator": "In", "values": [node]}]}
    affinity = pod_spec.setdefault("affinity", {})
    node_affinity = affinity.setdefault("nodeAffinity", {})
    required = node_affinity.get("requiredDuringSchedulingIgnoredDuringExecution")
    if isinstance(required, dict):
        required["nodeSelectorTerms"] = [term]
    else:
        node_affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": [term]}


def _existing_daemon_nodes(pods: list) -> set:
    nodes = set()
    for pod in pods:
        spec = pod.raw.get("spec") or {}
        if spec.get("nodeName"):
            nodes.add(spec["nodeName"])
            continue
        required = (((spec.get("affinity") or {}).get("nodeAffinity") or {})
                    .get("requiredDuringSchedulingIgnoredDuringExecution") or {})
        for term in required.get("nodeSelectorTerms") or ():
            for field_ in (term or {}).get("matchFields") or ():
                if field_.get("key") == "metadata.name" and field_.get("operator") == "In":
                    nodes.update(field_.get("values") or ())
    return nodes


def _expand_daemon_set(w: Workload, existing: _Existing, out: "_Out", nodes: dict, gates) -> None:
    spec = w.raw.get("spec") if isinstance(w.raw.get("spec"), dict) else {}
    template = _template(spec, ("spec",))
    if not nodes:
        out.note(w, Sentence("the scenario has no Node objects: a DaemonSet runs one pod per node, so it has none here",
                             "daemon-set-no-nodes"))
        return
    chosen, skipped = daemon_nodes(w.raw, nodes)
    have = _existing_daemon_nodes(existing.of("DaemonSet", w.namespace, w.name))
    revision = _revision(w, template, existing.of("DaemonSet", w.namespace, w.name), out, gates)
    meta = w.raw.get("metadata") if isinstance(w.raw.get("metadata"), dict) else {}
    generation = meta.get("generation") if isinstance(meta.get("generation"), int) else None
    owner = _owner("DaemonSet", w.name, w.uid)
    labels = {"controller-revision-hash": revision, "pod-template-generation": str(generation or 1)}
    pods, made_for = [], []
    for node in chosen:
        if node in have:
            continue
        made_for.append(node)
        generate_name = _prefix(w.name)
        pod = _pod(template, namespace=w.namespace, name=with_suffix(generate_name, f"ds/{w.key}/{node}"),
                   generate_name=generate_name, owner=owner, labels=labels)
        pod["spec"]["tolerations"] = daemon_tolerations(pod["spec"])
        _pinned(pod["spec"], node)
        pods.append(pod)
    shown = list(skipped.items())[:5]
    parts = {"count": len(skipped), "skipped": shown, "more": len(skipped) - len(shown)}
    listed = "; ".join(f"{n}: {why}" for n, why in shown) + (f" and {parts['more']} more" if parts["more"] else "")
    counted = f"{len(skipped)} node{'s' if len(skipped) > 1 else ''} ({listed})"
    note = Sentence(f"no pod on {counted}", "daemon-set-nodes-left", **parts) if skipped else None
    if not chosen:
        out.note(w, Sentence(f"no node would run its pod: {counted}" if skipped else "no node would run its pod",
                             "daemon-set-no-node", **parts))
        return
    out.made(w, pods, ("spec", "template"), len(chosen), len(have & set(chosen)), extra_note=note, nodes=made_for)


# --- the whole input -----------------------------------------------------------------------------


class _Out:
    def __init__(self):
        self.expansion = Expansion()

    def made(self, w: Workload, pods: list, base: tuple, wanted: int, have: int, *, via: str | None = None,
             estimated: bool = False, extra_note: str | None = None, nodes: list | None = None) -> None:
        # `Deployment default/web (ReplicaSet default/web-6d4cf56db6, hash estimated)`: the estimate is
        # said where the pod-template-hash in the names is the playground's, not the cluster's.
        inside = f"{via}, hash estimated" if estimated else via
        origin = Sentence(w.label + (f" ({inside})" if inside else ""), "workload", workload=w.label, via=via,
                          estimated=estimated)
        if len(pods) > MAX_PODS:
            self.note(w, Sentence(f"{len(pods)} pods to make; the first {MAX_PODS} are scheduled, the rest left out",
                                  "too-many-pods", count=len(pods), max=MAX_PODS))
            pods = pods[:MAX_PODS]
        for i, raw in enumerate(pods):
            self.expansion.pods.append(MadePod(raw, w.index, w.kind, w.key, origin, w.ref, base,
                                               nodes[i] if nodes else None))
        if extra_note:
            self.note(w, extra_note)
        if wanted == 0:
            self.note(w, Sentence("0 replicas: its controller creates no pods", "zero-replicas"))
        elif have and not pods:
            self.note(w, Sentence(f"the input already holds all {have} of its pods: none made", "all-pods-present",
                                  have=have))
        elif have:
            self.note(w, Sentence(f"the input already holds {have} of its {wanted} pods: {len(pods)} made",
                                  "some-pods-present", have=have, wanted=wanted, made=len(pods)))

    def note(self, w: Workload, message: str) -> None:
        self.expansion.problems.append(Problem(message, kind=w.kind, name=w.key,
                                               path=("spec",), severity=WARNING, ref=w.ref))


def expand(workloads: list, *, pods: list, nodes: dict, gates=None) -> Expansion:
    """The pods the workloads' controllers would create, given the input's pods and nodes and the
    apiserver's gates (None: its defaults)."""
    out = _Out()
    existing = _Existing(pods)
    owned_sets = set()  # (namespace, deployment) whose ReplicaSet is itself in the input
    for w in workloads:
        meta = w.raw.get("metadata") if isinstance(w.raw.get("metadata"), dict) else {}
        if w.kind == "ReplicaSet" and isinstance(meta.get("ownerReferences"), list):
            for owner in meta["ownerReferences"]:
                if isinstance(owner, dict) and owner.get("controller") and owner.get("kind") == "Deployment":
                    owned_sets.add((w.namespace, owner.get("name")))
    for w in workloads:
        try:
            if w.kind == "Deployment":
                _expand_deployment(w, existing, out, owned_sets, gates)
            elif w.kind == "ReplicaSet":
                _expand_replica_set(w, existing, out)
            elif w.kind == "StatefulSet":
                _expand_stateful_set(w, existing, out, gates)
            elif w.kind == "Job":
                _expand_job(w, existing, out)
            elif w.kind == "CronJob":
                _expand_cron_job(w, existing, out)
            elif w.kind == "DaemonSet":
                _expand_daemon_set(w, existing, out, nodes, gates)
        except _Bad as bad:
            out.expansion.problems.append(Problem(
                Sentence(f"{bad.message} (so no pods are made)", "workload-not-expanded", detail=bad.message),
                kind=w.kind, name=w.key, path=bad.path, severity=WARNING, ref=w.ref))
        except (TypeError, AttributeError, ValueError, KeyError) as exc:  # a field of the wrong type
            out.expansion.problems.append(Problem(
                Sentence(f"cannot read the workload ({exc}), so no pods are made", "workload-unreadable",
                         error=str(exc)),
                kind=w.kind, name=w.key, path=("spec",), severity=WARNING, ref=w.ref))
    return out.expansion


def for_one_node(pods: list, daemon_pods: dict, node_name: str) -> tuple[list, int]:
    """The pods of a run restricted to one node: a DaemonSet's pods made for the other nodes are
    out of view (the controller makes them, but only this node is asked about); how many were left out."""
    kept = [p for p in pods if daemon_pods.get(p.key, node_name) == node_name]
    return kept, len(pods) - len(kept)


def asks_for_devices(pod: dict) -> bool:
    """A pod spec with resource claims, or requests of an extended resource (which DRA may back)."""
    spec = pod.get("spec") or {}
    if spec.get("resourceClaims"):
        return True
    for key in ("initContainers", "containers"):
        for container in spec.get(key) or ():
            resources = (container or {}).get("resources") or {}
            for section in ("requests", "limits"):
                if any("/" in str(name) and not str(name).startswith(("kubernetes.io/", "hugepages-"))
                       for name in (resources.get(section) or {})):
                    return True
    return False
