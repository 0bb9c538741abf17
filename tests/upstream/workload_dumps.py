"""Generated workloads and pod groups for the scheduler differential.

A case is a scenario as a user writes it (Deployments, StatefulSets, Jobs, DaemonSets, bare pods,
PodGroups sharing claims) and the feature gates it runs under. The engine reads the scenario and
expands the workloads itself; the scheduler oracle reads no workloads, so it is given the dump the
engine's expansion stands for: every other object, then the pods in the engine's order (the
controllers' pods are what is judged there, scheduled by kube-scheduler 1.37.2's own framework).

Generation is plain `random` with a seed per case: cheap, and a failing case is named by its seed.
"""
from __future__ import annotations

import json
import random
from decimal import Decimal

import yaml

from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.report import outcome_data
from allocator.engine.run import allocate_text
from allocator.engine.scenario import read_scenario
from allocator.engine.workloads import KINDS

DRIVER = "gpu.example.com"
GROUP_GATES = {"GenericWorkload": True, "DRAWorkloadResourceClaims": True}
GENERIC_ONLY = {"GenericWorkload": True}


def _node(name: str, rng: random.Random) -> dict:
    meta = {"name": name, "labels": {"kubernetes.io/hostname": name}}
    spec = {}
    if rng.random() < 0.5:
        meta["labels"]["gpu"] = "yes"
    if rng.random() < 0.2:
        spec["taints"] = [{"key": rng.choice(["dedicated", "nvidia.com/gpu"]), "effect": rng.choice(["NoSchedule", "NoExecute"])}]
    node = {"apiVersion": "v1", "kind": "Node", "metadata": meta, "spec": spec,
            "status": {"allocatable": {"cpu": "8", "memory": "32Gi", "pods": str(rng.choice([3, 110]))}}}
    return node


def _slice(node: str, count: int) -> dict:
    return {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice", "metadata": {"name": f"{node}-gpus"},
            "spec": {"driver": DRIVER, "nodeName": node, "pool": {"name": node, "generation": 1, "resourceSliceCount": 1},
                     "devices": [{"name": f"gpu-{i}"} for i in range(count)]}}


def _pod_spec(rng: random.Random, claims: list, group: str | None) -> dict:
    spec = {"containers": [{"name": "main", "image": "registry.example.com/app:1.0",
                            "resources": {"requests": {"cpu": rng.choice(["100m", "1", "3"])},
                                          "claims": [{"name": n} for n, _ in claims]}}]}
    if claims:
        spec["resourceClaims"] = [{"name": n, **ref} for n, ref in claims]
    if group:
        spec["schedulingGroup"] = {"podGroupName": group}
    if rng.random() < 0.3:
        spec["nodeSelector"] = {"gpu": "yes"}
    if rng.random() < 0.3:
        spec["tolerations"] = [{"key": "nvidia.com/gpu", "operator": "Exists"}]
    return spec


def _workload(kind: str, name: str, spec: dict, rng: random.Random) -> dict:
    template = {"metadata": {"labels": {"app": name}}, "spec": spec}
    if kind == "Job":
        spec["restartPolicy"] = "Never"
        body = {"template": template, "parallelism": rng.randint(1, 3)}
        if rng.random() < 0.5:
            body.update(completionMode="Indexed", completions=rng.randint(1, 3))
        return {"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": name, "namespace": "default"}, "spec": body}
    body = {"selector": {"matchLabels": {"app": name}}, "template": template}
    if kind != "DaemonSet":
        body["replicas"] = rng.randint(0, 3)
    if kind == "StatefulSet":
        body.update(serviceName=name, podManagementPolicy="Parallel")
    return {"apiVersion": "apps/v1", "kind": kind, "metadata": {"name": name, "namespace": "default"}, "spec": body}


# The class every device of the cases belongs to, and the template each pod's claim comes from.
_DEVICE_CLASS = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                 "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
_ONE_GPU_TEMPLATE = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                     "metadata": {"name": "one-gpu", "namespace": "default"},
                     "spec": {"spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}}}


def case(seed: int) -> tuple[str, dict]:
    """(scenario text, gates) for one seed."""
    rng = random.Random(seed)
    nodes = [f"node-{i}" for i in range(rng.randint(1, 3))]
    objects: list = [_node(n, rng) for n in nodes]
    objects.append(_DEVICE_CLASS)
    objects += [_slice(n, rng.randint(0, 2)) for n in nodes]
    objects.append(_ONE_GPU_TEMPLATE)
    if rng.random() < 0.3:
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                        "metadata": {"name": "shared", "namespace": "default"},
                        "spec": {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER}}]}}})
        shared = True
    else:
        shared = False
    groups = []
    if rng.random() < 0.7:
        group_claims = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        if shared and rng.random() < 0.5:
            group_claims.append({"name": "shared", "resourceClaimName": "shared"})
        objects.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": "group-a", "namespace": "default"},
                        "spec": {"resourceClaims": group_claims}})
        groups.append("group-a")
    for i in range(rng.randint(1, 3)):
        kind = rng.choice(["Deployment", "ReplicaSet", "StatefulSet", "Job", "DaemonSet", "Pod"])
        claims = []
        if rng.random() < 0.8:
            claims.append((rng.choice(["gpu", "gpu", "other"]), {"resourceClaimTemplateName": "one-gpu"}))
        if shared and rng.random() < 0.5:
            claims.append(("shared", {"resourceClaimName": "shared"}))
        group = groups[0] if groups and rng.random() < 0.75 else None
        spec = _pod_spec(rng, claims, group)
        name = f"w{i}"
        if kind == "Pod":
            objects.append({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"},
                            "spec": spec})
        else:
            objects.append(_workload(kind, name, spec, rng))
    gates = rng.choice([GROUP_GATES, GROUP_GATES, GENERIC_ONLY, {}])
    return yaml.safe_dump_all(objects, sort_keys=False), gates


def _member(kind: str, name: str, spec: dict, rng: random.Random, node: str, bound: float,
            may_bind: bool = True) -> dict:
    """A workload of `kind`, or a bare pod, bound to `node` (running) with chance `bound`."""
    if kind != "Pod":
        return _workload(kind, name, spec, rng)
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if rng.random() < bound and may_bind:
        spec["nodeName"] = node
        pod["status"] = {"phase": "Running"}
    return pod


def gang_case(seed: int) -> tuple[str, dict]:
    """(scenario text, gates) for one seed of the queue differential: PodGroups with a gang policy
    (minCount 1 to 4) or a basic one, their pods from Jobs, Deployments and bare pods (sometimes
    fewer than minCount, sometimes one of them bound), pods of a PodGroup the scenario lacks, and
    pods of no group; GenericWorkload on, or off."""
    rng = random.Random(seed)
    nodes = [f"node-{i}" for i in range(rng.randint(1, 3))]
    objects: list = [_node(n, rng) for n in nodes]
    groups = []
    for name in ("gang-a", "gang-b")[:rng.randint(1, 2)]:
        policy = {"gang": {"minCount": rng.randint(1, 4)}} if rng.random() < 0.75 else {"basic": {}}
        objects.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": "default"}, "spec": {"schedulingPolicy": policy}})
        groups.append(name)
    for i in range(rng.randint(1, 4)):
        kind = rng.choice(["Job", "Deployment", "Pod", "Pod"])
        group = rng.choice(groups + groups + ["missing", None])
        objects.append(_member(kind, f"w{i}", _pod_spec(rng, [], group), rng, nodes[0], 0.2))
    gates = rng.choice([GENERIC_ONLY, GENERIC_ONLY, GROUP_GATES, {}])
    return yaml.safe_dump_all(objects, sort_keys=False), gates


def cycle_case(seed: int) -> tuple[str, dict]:
    """(scenario text, gates) for one seed of the pod group cycle differential: gang_case's PodGroups
    (gangs of minCount 1 to 4, basic groups, one the scenario lacks) and pods (Jobs, Deployments, bare
    and bound pods), on nodes with 0 to 2 devices, pods asking for a device from a template and, under
    the pod-group gates, PodGroups sharing one; sized so that some gangs fit and some do not."""
    rng = random.Random(seed)
    nodes = [f"node-{i}" for i in range(rng.randint(1, 3))]
    objects: list = [_node(n, rng) for n in nodes]
    for node in objects:
        node["status"]["allocatable"]["cpu"] = rng.choice(["2", "4", "8"])
    objects.append(_DEVICE_CLASS)
    objects += [_slice(n, rng.randint(0, 2)) for n in nodes]
    objects.append(_ONE_GPU_TEMPLATE)
    groups = []
    for name in ("gang-a", "gang-b")[:rng.randint(1, 2)]:
        policy = {"gang": {"minCount": rng.randint(1, 4)}} if rng.random() < 0.75 else {"basic": {}}
        spec = {"schedulingPolicy": policy}
        if rng.random() < 0.4:
            spec["resourceClaims"] = [{"name": "gpu", "resourceClaimTemplateName": "one-gpu"}]
        objects.append({"apiVersion": "scheduling.k8s.io/v1beta1", "kind": "PodGroup",
                        "metadata": {"name": name, "namespace": "default"}, "spec": spec})
        groups.append(name)
    for i in range(rng.randint(1, 5)):
        kind = rng.choice(["Job", "Deployment", "Pod", "Pod"])
        group = rng.choice(groups + groups + ["missing", None])
        claims = [("gpu", {"resourceClaimTemplateName": "one-gpu"})] if rng.random() < 0.4 else []
        objects.append(_member(kind, f"w{i}", _pod_spec(rng, claims, group), rng, nodes[0], 0.15, may_bind=not claims))
    gates = rng.choice([GENERIC_ONLY, GENERIC_ONLY, GROUP_GATES, {}])
    return yaml.safe_dump_all(objects, sort_keys=False), gates


NODE_ALLOCATABLE = {"DRANodeAllocatableResources": True}


def _mapped_device(rng: random.Random, name: str) -> dict:
    """A device whose allocation adds node resources: mapped per device or per consumed capacity, an
    overhead per pod and per container, on CPU, memory or hugepages; or none."""
    device: dict = {"name": name}
    entries: dict = {}
    for _ in range(rng.choice([0, 1, 1, 2])):
        resource = rng.choice(["cpu", "cpu", "memory", "memory", "hugepages-2Mi"])
        entry = entries.setdefault(resource, {})
        if rng.random() < 0.5:
            amounts = {"cpu": ["1", "2", "4", "500m"], "memory": ["4Gi", "16Gi", "1500Mi"],
                       "hugepages-2Mi": ["512Mi", "2Gi"]}[resource]
            entry["mapping"] = {"deviceMultiplier": rng.choice(amounts)}
        else:
            per = {"cpu": ["100m", "1"], "memory": ["1Gi", "20Gi"], "hugepages-2Mi": ["2Mi", "1Gi"]}[resource]
            overhead = {}
            if rng.random() < 0.7:
                overhead["perPod"] = rng.choice(per)
            if rng.random() < 0.5 or not overhead:
                overhead["perContainer"] = rng.choice(per)
            entry["overhead"] = overhead
    if rng.random() < 0.3:  # consumable cores, mapped per core consumed
        device["allowMultipleAllocations"] = True
        device["capacity"] = {"cores": {"value": "8"}}
        entries["cpu"] = {**entries.get("cpu", {}), "mapping": {"capacityKey": "cores",
                                                                 "capacityMultiplier": rng.choice(["1", "2", "500m"])}}
    if entries:
        device["nodeAllocatableResources"] = entries
    return device


def _node_allocatable_pod(rng: random.Random, name: str, claims: list, node: str | None) -> dict:
    """A pod with one or two containers (and sometimes an init container) referencing its claims,
    sometimes pod-level resources, sometimes bound with node-allocatable statuses of its own."""
    def resources():
        out = {"requests": {"cpu": rng.choice(["100m", "1", "2"]), "memory": rng.choice(["1Gi", "4Gi"])}}
        if rng.random() < 0.2:
            out["limits"] = {"memory": rng.choice(["4Gi", "8Gi"])}
            out["requests"]["memory"] = "1Gi"
        if rng.random() < 0.15:
            out["requests"]["hugepages-2Mi"] = out.setdefault("limits", {})["hugepages-2Mi"] = "512Mi"
        return out
    containers = []
    for i in range(rng.choice([1, 1, 2])):
        res = resources()
        refs = [c for c, _ in claims if rng.random() < 0.8]
        if refs:
            res["claims"] = [{"name": c} for c in refs]
        containers.append({"name": f"c{i}", "image": "registry.example.com/app:1.0", "resources": res})
    spec: dict = {"containers": containers}
    if claims:
        spec["resourceClaims"] = [{"name": c, **ref} for c, ref in claims]
        if rng.random() < 0.2:
            spec["initContainers"] = [{"name": "init", "image": "registry.example.com/init:1.0",
                                       "resources": {"requests": {"cpu": "100m"}, "claims": [{"name": claims[0][0]}]}}]
    if rng.random() < 0.2:  # pod-level resources: one resource, so that a shortfall has one name
        if rng.random() < 0.5:
            total = sum(Decimal(c["resources"]["requests"]["cpu"].rstrip("m")) / (1000 if c["resources"]["requests"]["cpu"].endswith("m") else 1)
                        for c in containers)
            spec["resources"] = {"requests": {"cpu": str(total + rng.choice([0, 1, 4]))}}
        else:
            spec["resources"] = {"limits": {"memory": rng.choice(["8Gi", "24Gi"])}}
            for c in containers:
                c["resources"]["limits"] = {"memory": "4Gi"}
                c["resources"]["requests"]["memory"] = "1Gi"
    pod = {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name, "namespace": "default"}, "spec": spec}
    if node:
        spec["nodeName"] = node
        spec.pop("resourceClaims", None)
        for c in containers:
            c["resources"].pop("claims", None)
        spec.pop("initContainers", None)
        pod["status"] = {"phase": "Running", "nodeAllocatableResourceClaimStatuses": [{
            "resourceClaimName": "earlier", "containers": ["c0"],
            "mapping": [{"name": "cpu", "quantity": rng.choice(["2", "5"])}],
            "overhead": [{"name": "memory", "perPod": "4Gi", "perContainer": "1Gi"}]}]}
    return pod


NODE_ALLOCATABLE_CLAIMS = [
    ("gpu", {"resourceClaimTemplateName": "one-gpu"}),
    ("pair", {"resourceClaimTemplateName": "two-devices"}),
    ("cores", {"resourceClaimTemplateName": "some-cores"}),
    ("shared", {"resourceClaimName": "shared"}),
]


def node_allocatable_case(seed: int) -> tuple[str, dict]:
    """(scenario text, gates) for the node-allocatable differential: devices that map an allocation to
    CPU, memory or hugepages (per device, or per consumed core) or add overheads per
    pod and per container; pods whose containers (and init containers) reference claims from templates or
    a claim several pods share (sometimes allocated and in use already), some with pod-level resources,
    some asking for an extended resource DRA backs, some bound with node-allocatable statuses;
    DRANodeAllocatableResources on (mostly), or off."""
    rng = random.Random(seed)
    nodes = [f"node-{i}" for i in range(rng.randint(1, 3))]
    objects: list = []
    for name in nodes:
        node = _node(name, rng)
        node["status"]["allocatable"].update({"cpu": rng.choice(["4", "8"]), "ephemeral-storage": "100Gi"})
        if rng.random() < 0.5:
            node["status"]["allocatable"]["hugepages-2Mi"] = rng.choice(["1Gi", "4Gi"])
        objects.append(node)
    device_class = {"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": DRIVER},
                    "spec": {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}}
    extended = rng.random() < 0.3  # pods may ask for example.com/gpu, which the class backs with DRA
    if extended:
        device_class["spec"]["extendedResourceName"] = "example.com/gpu"
    objects.append(device_class)
    for name in nodes:
        piece = _slice(name, 0)
        piece["spec"]["devices"] = [_mapped_device(rng, f"dev-{i}") for i in range(rng.randint(1, 3))]
        objects.append(piece)
    request = {"name": "gpu", "exactly": {"deviceClassName": DRIVER}}
    templates = {"one-gpu": [request], "two-devices": [{"name": "gpu", "exactly": {"deviceClassName": DRIVER, "count": 2}}],
                 "some-cores": [{"name": "cores", "exactly": {"deviceClassName": DRIVER, "capacity": {
                     "requests": {"cores": rng.choice(["1", "2", "3"])}}}}]}
    for name, requests in templates.items():
        objects.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                        "metadata": {"name": name, "namespace": "default"},
                        "spec": {"spec": {"devices": {"requests": requests}}}})
    shared = {"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
              "metadata": {"name": "shared", "namespace": "default"}, "spec": {"devices": {"requests": [request]}}}
    if rng.random() < 0.25:  # allocated already, to the first device of the first node, perhaps in use
        shared["status"] = {"allocation": {"devices": {"results": [
            {"request": "gpu", "driver": DRIVER, "pool": nodes[0], "device": "dev-0"}]},
            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                {"key": "metadata.name", "operator": "In", "values": [nodes[0]]}]}]}}}
        if rng.random() < 0.7:
            shared["status"]["reservedFor"] = [{"resource": "pods", "name": "elsewhere", "uid": "uid-elsewhere"}]
    objects.append(shared)
    for i in range(rng.randint(1, 5)):
        claims = [c for c in NODE_ALLOCATABLE_CLAIMS if rng.random() < 0.35]
        bound = rng.choice(nodes) if rng.random() < 0.15 else None
        pod = _node_allocatable_pod(rng, f"p{i}", claims, bound)
        if extended and not bound and rng.random() < 0.4:
            main = pod["spec"]["containers"][0]["resources"]
            main["requests"]["example.com/gpu"] = main.setdefault("limits", {})["example.com/gpu"] = "1"
        objects.append(pod)
    return yaml.safe_dump_all(objects, sort_keys=False), rng.choice([NODE_ALLOCATABLE] * 4 + [{}])


def oracle_dump(text: str) -> str:
    """The dump the engine's expansion stands for: every object but the workloads, then the pods
    in the engine's scheduling order."""
    scenario = read_scenario(text)
    objects = [d for d in yaml.safe_load_all(text) if isinstance(d, dict)
               and (d.get("apiVersion"), d.get("kind")) not in KINDS and d.get("kind") != "Pod"]
    objects += [pod.raw for pod in scenario.pods]
    return yaml.safe_dump_all(objects, sort_keys=False)


def component_gates(gates: dict) -> ComponentGates:
    return ComponentGates.uniform(gates_from_dict(gates))


def ours(text: str, gates: dict) -> dict:
    """The engine's answer for the scenario under the gates, as `manage.py allocate -o json` gives it."""
    _scenario, outcome = allocate_text(text.encode(), gates=component_gates(gates), explain_result=False)
    data = json.loads(json.dumps(outcome_data(outcome)))
    data["exitCode"] = outcome.exit_code
    return data


def compare_sharing(mine: dict, theirs: dict) -> list[str]:
    """What the scheduler differential does not compare: each claim's name and its reservedFor
    (the pod or the PodGroup it is reserved for)."""
    if "error" in theirs:
        return []
    my_pods = {(p["namespace"], p["name"]): p for p in mine.get("pods") or []}
    diffs = []
    for up in theirs.get("pods") or []:
        pod = my_pods.get((up["namespace"], up["name"]))
        if pod is None:
            continue
        my_claims = {c.get("podClaimName"): c for c in pod.get("claims") or []}
        for claim in up.get("claims") or []:
            own = my_claims.get(claim.get("podClaimName"))
            if own is None or claim.get("error"):
                continue
            where = f"pod {up['namespace']}/{up['name']} claim {claim.get('podClaimName')}"
            if own.get("name") != claim.get("name"):
                diffs.append(f"{where}: named {own.get('name')} by the engine, {claim.get('name')} upstream")
            mine_reserved = sorted((r.get("resource"), r.get("name")) for r in own.get("reservedFor") or [])
            up_reserved = sorted((r.get("resource"), r.get("name")) for r in claim.get("reservedFor") or [])
            if mine_reserved != up_reserved:
                diffs.append(f"{where}: reserved for {mine_reserved} by the engine, {up_reserved} upstream")
    return diffs


def oracle_request(text: str, gates: dict) -> dict:
    """The oracle's request for a scenario: the expanded dump, the gates, and claims' reservations."""
    return {"dump": oracle_dump(text), "gates": gates, "reservations": True}
