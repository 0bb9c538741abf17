"""Hypothesis strategies for dumps of a small cluster with pods, as `kubectl get -o yaml` prints them.

Nodes with allocatable, labels, taints, images, unschedulable; pods with labels, requests and limits,
init containers and sidecars, overhead, pod-level resources, nodeSelector, required and preferred
node affinity, required and preferred pod (anti-)affinity, topology spread constraints, tolerations,
images, claims and claim templates, extended resources (from a device plugin, or backed by DRA
through a DeviceClass's extendedResourceName), and pods already bound with their claims allocated. Everything drawn is what the apiserver stores; small on purpose, so a
disagreement shrinks to its few objects.
"""
from __future__ import annotations

import json

from hypothesis import strategies as st

from tests.upstream.generate import rare

DRIVER = "gpu.example.com"
CPUS = ("500m", "1", "2", "4", "8")
MEMORIES = ("512Mi", "1Gi", "2Gi", "4Gi", "8Gi")
POD_CPUS = ("50m", "100m", "250m", "500m", "1", "1500m", "2", "3")
POD_MEMORIES = ("64Mi", "128Mi", "256Mi", "512Mi", "1Gi", "2Gi", "3Gi")
LABELS = {"zone": ("a", "b"), "disk": ("ssd", "hdd")}
TAINT_KEYS = ("dedicated", "gpu")
EFFECTS = ("NoSchedule", "PreferNoSchedule", "NoExecute")
IMAGES = ("nginx:1.27", "redis:7", "registry.k8s.io/pause:3.10", "example.com/trainer:v2")
IMAGE_SIZES = (10_000_000, 120_000_000, 500_000_000, 1_500_000_000)
DEVICE_PLUGIN = "example.com/foo"
POD_LABELS = {"app": ("web", "db"), "tier": ("front", "back")}
TOPOLOGY_KEYS = ("kubernetes.io/hostname", "zone")
DRA_EXTENDED = "example.com/gpu"


def _pick(draw, values):
    return draw(st.sampled_from(values))


@st.composite
def nodes(draw) -> list:
    count = draw(st.integers(1, 4))
    out = []
    for i in range(count):
        allocatable = {"cpu": _pick(draw, CPUS), "memory": _pick(draw, MEMORIES),
                       "pods": _pick(draw, ("110", "2"))}
        if rare(draw, 4):
            allocatable["ephemeral-storage"] = _pick(draw, ("1Gi", "10Gi"))
        if rare(draw, 4):
            allocatable[DEVICE_PLUGIN] = _pick(draw, ("1", "2"))
        labels = {"kubernetes.io/hostname": f"node-{i}"}
        for key, values in LABELS.items():
            if not rare(draw, 3):
                labels[key] = _pick(draw, values)
        spec = {}
        if rare(draw, 3):
            spec["taints"] = [{"key": _pick(draw, TAINT_KEYS), "value": _pick(draw, ("", "x")),
                               "effect": _pick(draw, EFFECTS)}
                              for _ in range(draw(st.integers(1, 2)))]
            unique = {(t["key"], t["effect"]): t for t in spec["taints"]}
            spec["taints"] = list(unique.values())
        if rare(draw, 8):
            spec["unschedulable"] = True
        status = {"allocatable": allocatable, "capacity": dict(allocatable)}
        images = draw(st.lists(st.sampled_from(IMAGES), unique=True, max_size=3))
        if images:
            status["images"] = [{"names": [name], "sizeBytes": _pick(draw, IMAGE_SIZES)} for name in images]
        out.append({"apiVersion": "v1", "kind": "Node", "metadata": {"name": f"node-{i}", "labels": labels},
                    "spec": spec, "status": status})
    return out


def _quantities(draw, *, extended: tuple = ()) -> dict:
    out = {}
    if not rare(draw, 4):
        out["cpu"] = _pick(draw, POD_CPUS)
    if not rare(draw, 4):
        out["memory"] = _pick(draw, POD_MEMORIES)
    for name in extended:
        if rare(draw, 3):
            out[name] = "1"
    return out


def _resources(draw, extended: tuple) -> dict:
    requests = _quantities(draw, extended=extended)
    resources = {}
    if requests:
        resources["requests"] = requests
    if rare(draw, 3):
        # Limits at or above the requests; a limit alone stands for the request (apiserver default).
        limits = {}
        for name in ("cpu", "memory"):
            if name in requests:
                if rare(draw, 2):
                    limits[name] = requests[name]
            elif rare(draw, 2):
                limits[name] = _pick(draw, POD_CPUS if name == "cpu" else POD_MEMORIES)
        for name in extended:
            if name in requests:
                limits[name] = requests[name]  # extended resources: limit equals request
        if limits:
            resources["limits"] = limits
    elif any(name in requests for name in extended):
        resources["limits"] = {name: requests[name] for name in extended if name in requests}
    return resources


def _container(draw, name: str, extended: tuple) -> dict:
    container = {"name": name, "image": _pick(draw, IMAGES)}
    resources = _resources(draw, extended)
    if resources:
        container["resources"] = resources
    return container


def _amount(quantity: str) -> float:
    units = {"m": 0.001, "Mi": 2**20, "Gi": 2**30}
    for suffix, factor in units.items():
        if quantity.endswith(suffix):
            return float(quantity[:-len(suffix)]) * factor
    return float(quantity)


def _format(name: str, amount: float) -> str:
    return f"{int(amount * 1000)}m" if name == "cpu" else f"{int(amount // 2**20)}Mi"


def _needed(spec: dict, name: str) -> float:
    """What the containers request of `name` together: app containers plus sidecars, or an init
    container's peak (a limit alone stands for the request)."""
    def ask(container):
        resources = container.get("resources") or {}
        value = (resources.get("requests") or {}).get(name) or (resources.get("limits") or {}).get(name)
        return _amount(value) if value else 0.0
    total = sum(ask(c) for c in spec["containers"])
    sidecars, peak = 0.0, 0.0
    for init in spec.get("initContainers") or ():
        if init.get("restartPolicy") == "Always":
            sidecars += ask(init)
            total += ask(init)
        else:
            peak = max(peak, ask(init) + sidecars)
    return max(total, peak)


def _requirement(draw) -> dict:
    key = _pick(draw, tuple(LABELS))
    operator = _pick(draw, ("In", "NotIn", "Exists", "DoesNotExist"))
    requirement = {"key": key, "operator": operator}
    if operator in ("In", "NotIn"):
        requirement["values"] = draw(st.lists(st.sampled_from(LABELS[key]), min_size=1, max_size=2, unique=True))
    return requirement


def _pod_labels(draw) -> dict:
    labels = {} if rare(draw, 5) else {"app": _pick(draw, POD_LABELS["app"])}
    if rare(draw, 2):
        labels["tier"] = _pick(draw, POD_LABELS["tier"])
    return labels


def _pod_selector(draw) -> dict:
    if rare(draw, 10):
        return {}  # every pod
    key = "tier" if rare(draw, 4) else "app"  # most terms are about the app, which most pods have
    if rare(draw, 3):
        operator = _pick(draw, ("In", "NotIn", "Exists", "DoesNotExist"))
        requirement = {"key": key, "operator": operator}
        if operator in ("In", "NotIn"):
            requirement["values"] = [_pick(draw, POD_LABELS[key])]
        return {"matchExpressions": [requirement]}
    return {"matchLabels": {key: _pick(draw, POD_LABELS[key])}}


def _pod_term(draw) -> dict:
    term = {"labelSelector": _pod_selector(draw), "topologyKey": _pick(draw, TOPOLOGY_KEYS)}
    if rare(draw, 10):
        term["namespaces"] = [_pick(draw, ("default", "other"))]
    elif rare(draw, 10):
        term["namespaceSelector"] = {}
    return term


def _pod_affinity(draw) -> dict:
    """Required and preferred podAffinity / podAntiAffinity terms (InterPodAffinity)."""
    out = {}
    for kind in ("podAffinity", "podAntiAffinity"):
        if not rare(draw, 2):
            continue
        block = {}
        if not rare(draw, 3):
            block["requiredDuringSchedulingIgnoredDuringExecution"] = [
                _pod_term(draw) for _ in range(draw(st.integers(1, 2)))]
        if not rare(draw, 3):
            block["preferredDuringSchedulingIgnoredDuringExecution"] = [
                {"weight": draw(st.integers(1, 100)), "podAffinityTerm": _pod_term(draw)}
                for _ in range(draw(st.integers(1, 2)))]
        if block:
            out[kind] = block
    return out


def _spread(draw) -> list:
    """topologySpreadConstraints, one per topology key and action at most (PodTopologySpread)."""
    out, seen = [], set()
    for _ in range(draw(st.integers(1, 2))):
        key, action = _pick(draw, TOPOLOGY_KEYS), _pick(draw, ("DoNotSchedule", "ScheduleAnyway"))
        if (key, action) in seen:
            continue
        seen.add((key, action))
        constraint = {"maxSkew": draw(st.integers(1, 2)), "topologyKey": key, "whenUnsatisfiable": action,
                      "labelSelector": _pod_selector(draw)}
        if action == "DoNotSchedule" and rare(draw, 5):
            constraint["minDomains"] = draw(st.integers(1, 3))
        if rare(draw, 5):
            constraint["nodeAffinityPolicy"] = _pick(draw, ("Honor", "Ignore"))
        if rare(draw, 5):
            constraint["nodeTaintsPolicy"] = _pick(draw, ("Honor", "Ignore"))
        out.append(constraint)
    return out


@st.composite
def pod_spec(draw, *, extended: tuple, claim_names: list) -> dict:
    spec = {"containers": [_container(draw, f"c{i}", extended) for i in range(draw(st.integers(1, 2)))]}
    if rare(draw, 4):
        spec["initContainers"] = []
        for i in range(draw(st.integers(1, 2))):
            init = _container(draw, f"init{i}", ())
            if rare(draw, 2):
                init["restartPolicy"] = "Always"  # a sidecar
            spec["initContainers"].append(init)
    if rare(draw, 8):
        spec["overhead"] = {"cpu": "100m", "memory": "64Mi"}
    if rare(draw, 8):
        # The apiserver wants pod-level requests at least what the containers ask for together.
        level = {}
        for name, values in (("cpu", POD_CPUS), ("memory", POD_MEMORIES)):
            if rare(draw, 4):
                continue
            least = _needed(spec, name)
            options = [v for v in values if _amount(v) >= least]
            level[name] = _pick(draw, options) if options else _format(name, least)
        if level:
            spec["resources"] = {"requests": level}
    if rare(draw, 5):
        key = _pick(draw, tuple(LABELS))
        spec["nodeSelector"] = {key: _pick(draw, LABELS[key])}
    affinity = {}
    if rare(draw, 5):
        terms = [{"matchExpressions": [_requirement(draw)]} for _ in range(draw(st.integers(1, 2)))]
        affinity["requiredDuringSchedulingIgnoredDuringExecution"] = {"nodeSelectorTerms": terms}
    if rare(draw, 4):
        affinity["preferredDuringSchedulingIgnoredDuringExecution"] = [
            {"weight": draw(st.integers(1, 100)), "preference": {"matchExpressions": [_requirement(draw)]}}
            for _ in range(draw(st.integers(1, 2)))]
    if affinity:
        spec["affinity"] = {"nodeAffinity": affinity}
    if rare(draw, 4):
        pod_affinity = _pod_affinity(draw)
        if pod_affinity:
            spec.setdefault("affinity", {}).update(pod_affinity)
    if rare(draw, 6):
        spec["topologySpreadConstraints"] = _spread(draw)
    if rare(draw, 3):
        spec["tolerations"] = []
        for _ in range(draw(st.integers(1, 2))):
            toleration = {"key": _pick(draw, TAINT_KEYS)}
            if rare(draw, 2):
                toleration["operator"] = "Exists"
            else:
                toleration["operator"] = "Equal"
                toleration["value"] = _pick(draw, ("", "x"))
            if rare(draw, 2):
                toleration["effect"] = _pick(draw, EFFECTS)
            spec["tolerations"].append(toleration)
    if claim_names:
        spec["resourceClaims"] = claim_names
    return spec


def _device_spec(draw) -> dict:
    if rare(draw, 5):
        return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                     "allocationMode": "All"}}]}}
    return {"devices": {"requests": [{"name": "gpu", "exactly": {"deviceClassName": "gpu",
                                                                 "count": draw(st.integers(1, 2))}}]}}


@st.composite
def dumps(draw) -> str:
    """One dump as a JSON `kind: List` (the engine and the oracle read YAML or JSON)."""
    node_list = draw(nodes())
    items = list(node_list)
    with_dra = not rare(draw, 3)
    extended = []
    if any(DEVICE_PLUGIN in n["status"]["allocatable"] for n in node_list):
        extended.append(DEVICE_PLUGIN)
    devices = {}  # node -> device names
    if with_dra:
        dra_extended = rare(draw, 2)
        spec = {"selectors": [{"cel": {"expression": f'device.driver == "{DRIVER}"'}}]}
        if dra_extended:
            spec["extendedResourceName"] = DRA_EXTENDED
            extended.append(DRA_EXTENDED)
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "DeviceClass", "metadata": {"name": "gpu"},
                      "spec": spec})
        for node in node_list:
            if rare(draw, 3):
                continue
            name = node["metadata"]["name"]
            count = draw(st.integers(1, 3))
            devices[name] = [f"gpu-{i}" for i in range(count)]
            items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceSlice",
                          "metadata": {"name": f"{name}-{DRIVER}"},
                          "spec": {"driver": DRIVER, "nodeName": name,
                                   "pool": {"name": name, "generation": 1, "resourceSliceCount": 1},
                                   "devices": [{"name": d, "attributes": {"index": {"int": i}}}
                                               for i, d in enumerate(devices[name])]}})
        items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaimTemplate",
                      "metadata": {"name": "gpu", "namespace": "default"}, "spec": {"spec": _device_spec(draw)}})
    pods, used = [], set()
    for i in range(draw(st.integers(1, 4))):
        name = f"pod-{i}"
        claims = []
        if with_dra and rare(draw, 2):
            if rare(draw, 3):
                claims.append({"name": "gpu", "resourceClaimName": f"{name}-gpu"})
                items.append({"apiVersion": "resource.k8s.io/v1", "kind": "ResourceClaim",
                              "metadata": {"name": f"{name}-gpu", "namespace": "default"}, "spec": _device_spec(draw)})
            else:
                claims.append({"name": "gpu", "resourceClaimTemplateName": "gpu"})
        spec = draw(pod_spec(extended=tuple(extended), claim_names=claims))
        pod = {"apiVersion": "v1", "kind": "Pod",
               "metadata": {"name": name, "namespace": "default", "uid": f"00000000-0000-0000-0000-00000000000{i}"},
               "spec": spec, "status": {"phase": "Pending"}}
        labels = _pod_labels(draw)
        if labels:
            pod["metadata"]["labels"] = labels
        free = [(node, d) for node, names in devices.items() for d in names if (node, d) not in used]
        if rare(draw, 3) and not any("resourceClaimTemplateName" in c for c in claims) \
                and not any(DRA_EXTENDED in (c.get("resources") or {}).get("requests", {}) for c in spec["containers"]):
            # Already bound: a claim of its own holds a device on its node.
            node = _pick(draw, [n["metadata"]["name"] for n in node_list])
            spec["nodeName"] = node
            pod["status"]["phase"] = "Running"
            mine = [(n, d) for n, d in free if n == node]
            if claims:
                claim = items[-1]
                if mine and claim["spec"]["devices"]["requests"][0]["exactly"].get("count", 0) == 1:
                    used.add(mine[0])
                    claim["status"] = {
                        "allocation": {
                            "devices": {"results": [{"request": "gpu", "driver": DRIVER, "pool": node,
                                                     "device": mine[0][1]}]},
                            "nodeSelector": {"nodeSelectorTerms": [{"matchFields": [
                                {"key": "metadata.name", "operator": "In", "values": [node]}]}]}},
                        "reservedFor": [{"resource": "pods", "name": name, "uid": pod["metadata"]["uid"]}]}
                else:
                    spec.pop("resourceClaims")
                    items.pop()
        pods.append(pod)
    items += pods
    return json.dumps({"apiVersion": "v1", "kind": "List", "items": items}, indent=1)


def _unmodelled(draw, pod: dict) -> None:
    """Give a pod one thing the playground does not check, judged by another plugin upstream."""
    spec = pod["spec"]
    if _pick(draw, ("hostPort", "volume")) == "hostPort":
        spec["containers"][0]["ports"] = [{"containerPort": 8080, "hostPort": 8080, "protocol": "TCP"}]
    else:
        spec["volumes"] = [{"name": "data", "persistentVolumeClaim": {"claimName": "data"}}]


@st.composite
def dumps_with_unmodelled(draw) -> str:
    """A dump where some pods not yet bound use host ports or volumes; every pod is labelled
    `app: web`."""
    dump = json.loads(draw(dumps()))
    pods = [item for item in dump["items"] if item["kind"] == "Pod"]
    for pod in pods:
        pod["metadata"]["labels"] = {"app": "web"}
        if not pod["spec"].get("nodeName") and rare(draw, 2):
            _unmodelled(draw, pod)
    return json.dumps(dump, indent=1)
