"""NodeResourcesFit: a pod's CPU, memory, ephemeral storage, pod count and extended resources
against what a node has left.

The pod's effective request per resource is the larger of
- the app containers plus the restartable init containers (sidecars), summed, and
- each ordinary init container plus the sidecars started before it,
with the pod overhead added on top. Pod-level `spec.resources.requests` replace the containers'
CPU and memory. A node offers `status.allocatable` minus the requests of the pods bound to it
(every pod with `spec.nodeName` that has not finished, and every pod placed earlier in the run).

Extended resources a node does not advertise may be backed by DRA: a DeviceClass names them
(`spec.extendedResourceName`, or implicitly `deviceclass.resource.kubernetes.io/<class>`), and
NodeResourcesFit leaves them to DynamicResources, which allocates devices for them.
"""
from __future__ import annotations

import math
from dataclasses import dataclass, field
from decimal import Decimal

from allocator.engine.objects import Container, DeviceClass, Node, Pod

CPU, MEMORY, EPHEMERAL, PODS = "cpu", "memory", "ephemeral-storage", "pods"
NATIVE = (CPU, MEMORY, EPHEMERAL)
CLASS_PREFIX = "deviceclass.resource.kubernetes.io/"

# What the scheduler assumes for a container that requests no CPU or memory, when scoring.
DEFAULT_MILLI_CPU = 100
DEFAULT_MEMORY = 200 * 1024 * 1024

TOO_MANY_PODS = "Too many pods"


def insufficient(resource: str) -> str:
    return f"Insufficient {resource}"


def is_extended(name: str) -> bool:
    """An extended resource: a qualified name outside the kubernetes.io domain."""
    return "/" in name and "kubernetes.io/" not in name and not name.startswith("requests.")


def is_scalar(name: str) -> bool:
    """Resources NodeResourcesFit counts besides CPU, memory and ephemeral storage."""
    return (is_extended(name) or name.startswith("hugepages-") or "kubernetes.io/" in name
            or name.startswith("attachable-volumes-"))


def is_dra_extended(name: str) -> bool:
    return is_extended(name) or name.startswith(CLASS_PREFIX)


# --- a pod's requests ---------------------------------------------------------------------


def _amounts(resources: dict) -> dict:
    return {name: q.value for name, q in resources.items()}


def _add(total: dict, more: dict) -> None:
    for name, value in more.items():
        total[name] = total.get(name, Decimal(0)) + value


def _max(total: dict, other: dict) -> None:
    for name, value in other.items():
        if name not in total or value > total[name]:
            total[name] = value


def _container(container: Container, *, use_status: bool, defaults: dict | None) -> dict:
    requests = _amounts(container.requests)
    if use_status and container.status_requests:
        _max(requests, _amounts(container.status_requests))
    for name, value in (defaults or {}).items():
        requests.setdefault(name, value)
    return requests


def pod_requests(pod: Pod, *, non_zero: bool = False, use_status: bool = False,
                 pod_level: bool = True) -> dict:
    """The pod's effective requests as integers: CPU in millicores, the rest in units.

    `non_zero` gives every container that names no CPU or memory the scheduler's defaults (for
    scoring); `use_status` takes what the kubelet reports for resized containers (bound pods).
    With pod-level requests, a default is given only where neither the pod level nor any
    container (nor the overhead) names the resource at all (1.37's getNonMissingContainerRequests)."""
    level = pod.pod_requests if pod_level else None
    defaults = None
    if non_zero:
        defaults = {CPU: Decimal(DEFAULT_MILLI_CPU) / 1000, MEMORY: Decimal(DEFAULT_MEMORY)}
        if level:  # IsPodLevelRequestsSet
            named = pod_requests(pod, use_status=use_status)
            defaults = {k: v for k, v in defaults.items() if k not in named}
    total: dict = {}
    for container in pod.containers:
        _add(total, _container(container, use_status=use_status, defaults=defaults))
    sidecars: dict = {}
    init_peak: dict = {}
    for container in pod.init_containers:
        # Only sidecars can be resized in place; ordinary init containers count as specified.
        requests = _container(container, use_status=use_status and container.sidecar, defaults=defaults)
        if container.sidecar:
            _add(total, requests)  # runs for the pod's whole life
            _add(sidecars, requests)
            running = dict(sidecars)
        else:
            running = dict(requests)
            _add(running, sidecars)  # the sidecars started before it still run
        _max(init_peak, running)
    _max(total, init_peak)
    if level is not None:
        for name in (CPU, MEMORY):
            if name in level:
                total[name] = level[name].value
    _add(total, _amounts(pod.overhead))
    return {name: _units(name, value) for name, value in total.items() if name == CPU or name in NATIVE or is_scalar(name)}


def _units(name: str, value: Decimal) -> int:
    """Kubernetes MilliValue() for CPU and Value() for the rest: rounded up."""
    return math.ceil(value * 1000) if name == CPU else math.ceil(value)


def show(name: str, amount: int) -> str:
    """A request or capacity as a person reads it: `500m`, `2Gi`, `3`."""
    if name == CPU:
        return f"{amount // 1000}" if amount % 1000 == 0 else f"{amount}m"
    if name in (MEMORY, EPHEMERAL) or name.startswith("hugepages-"):
        for suffix, size in (("Ti", 1024 ** 4), ("Gi", 1024 ** 3), ("Mi", 1024 ** 2), ("Ki", 1024)):
            if amount and amount % size == 0:
                return f"{amount // size}{suffix}"
    return str(amount)


# --- the nodes ------------------------------------------------------------------------------


@dataclass
class NodeUsage:
    """What the pods bound to one node request, as the scheduler's cache sums it."""

    node: str
    requested: dict = field(default_factory=dict)  # name -> int
    non_zero: dict = field(default_factory=dict)  # CPU and memory with the defaults, for scoring
    pods: list = field(default_factory=list)  # "namespace/name"

    def add(self, pod: Pod, *, use_status: bool) -> None:
        for name, value in pod_requests(pod, use_status=use_status).items():
            self.requested[name] = self.requested.get(name, 0) + value
        non_zero = pod_requests(pod, non_zero=True, use_status=use_status)
        for name in (CPU, MEMORY):
            self.non_zero[name] = self.non_zero.get(name, 0) + non_zero.get(name, 0)
        self.pods.append(pod.key)


def allocatable(node: Node) -> dict | None:
    """status.allocatable as integers (CPU in millicores); None when the node gives none."""
    if node.allocatable is None:
        return None
    return {name: _units(name, q.value) for name, q in node.allocatable.items()}


class ExtendedResourceClasses:
    """Which DeviceClass backs an extended resource name (DRAExtendedResource)."""

    def __init__(self, classes: dict, *, enabled: bool):
        self.enabled = enabled
        self.by_name: dict = {}
        self.conflicts: dict = {}
        if not enabled:
            return
        explicit: dict = {}
        for device_class in classes.values():
            self.by_name[CLASS_PREFIX + device_class.name] = device_class
            if device_class.extended_resource_name:
                explicit.setdefault(device_class.extended_resource_name, []).append(device_class)
        for name, owners in explicit.items():
            # Several classes for one name: the playground takes the newest (then the first by name).
            owners.sort(key=lambda c: c.name)
            owners.sort(key=lambda c: c.created, reverse=True)
            self.by_name[name] = owners[0]
            if len(owners) > 1:
                self.conflicts[name] = [c.name for c in owners]

    def get(self, resource: str) -> DeviceClass | None:
        return self.by_name.get(resource) if self.enabled else None


def delegated_to_dra(resource: str, node_allocatable: dict, classes: ExtendedResourceClasses) -> bool:
    """NodeResourcesFit leaves an extended resource to DRA on a node that does not advertise it
    (or advertises none of it) when a DeviceClass backs it."""
    if not classes.enabled or node_allocatable.get(resource, 0) > 0:
        return False
    return classes.get(resource) is not None


@dataclass
class Shortfall:
    """One reason NodeResourcesFit rejects a node, with the numbers behind it."""

    resource: str
    reason: str
    requested: int
    used: int
    capacity: int

    def detail(self) -> str:
        return (f"{self.resource}: the pod asks {show(self.resource, self.requested)}, "
                f"{show(self.resource, self.used)} of {show(self.resource, self.capacity)} in use")


def fit(requests: dict, node_allocatable: dict, usage: NodeUsage, classes: ExtendedResourceClasses) -> list:
    """Every Shortfall of the node for a pod with these requests (empty: it fits)."""
    out = []
    allowed = node_allocatable.get(PODS, 0)
    if len(usage.pods) + 1 > allowed:
        out.append(Shortfall(PODS, TOO_MANY_PODS, 1, len(usage.pods), allowed))
    if not any(requests.values()):
        return out
    for name in NATIVE:
        asked = requests.get(name, 0)
        used, capacity = usage.requested.get(name, 0), node_allocatable.get(name, 0)
        if asked > 0 and asked > capacity - used:
            out.append(Shortfall(name, insufficient(name), asked, used, capacity))
    for name in sorted(n for n in requests if n not in NATIVE):
        asked = requests[name]
        if asked == 0 or delegated_to_dra(name, node_allocatable, classes):
            continue
        used, capacity = usage.requested.get(name, 0), node_allocatable.get(name, 0)
        if asked > capacity - used:
            out.append(Shortfall(name, insufficient(name), asked, used, capacity))
    return out


def dra_extended(requests: dict, node_allocatable: dict | None, classes: ExtendedResourceClasses) -> dict:
    """The extended resources DynamicResources must allocate devices for on this node."""
    if not classes.enabled:
        return {}
    out = {}
    for name, asked in requests.items():
        if asked and is_dra_extended(name) and classes.get(name) is not None \
                and (node_allocatable or {}).get(name, 0) == 0:
            out[name] = asked
    return out


# --- the special claim for extended resources backed by DRA -------------------------------


def _container_request(index: int, container: Container, resource: str, class_name: str,
                       reusable: list) -> tuple[dict | None, list]:
    """The device request one container needs for `resource`, after what it can reuse of the
    requests of containers that outlive it (an init container borrows the devices of later
    long-lived containers)."""
    quantity = container.requests.get(resource)
    if quantity is None or not quantity.is_integer() or quantity.int_value() == 0:
        return None, []
    wanted = quantity.int_value()
    mappings, have = [], 0
    for other in reusable:
        if other is None:
            continue
        have += other["exactly"]["count"]
        mappings.append({"containerName": container.name, "resourceName": resource, "requestName": other["name"]})
        if have >= wanted:
            return None, mappings
    position = sorted(container.requests).index(resource)
    name = f"container-{index}-request-{position}"
    request = {"name": name, "exactly": {"deviceClassName": class_name, "allocationMode": "ExactCount",
                                         "count": wanted - have}}
    mappings.append({"containerName": container.name, "resourceName": resource, "requestName": name})
    return request, mappings


def extended_claim_requests(pod: Pod, resources: dict, classes: ExtendedResourceClasses) -> tuple[list, list]:
    """The device requests of the pod's special claim for these extended resources and the
    container-to-request mappings the scheduler records in the pod status, as it builds them:
    one request per container and resource (`container-<i>-request-<j>`, containers counted
    init containers first, resources in name order), ordinary init containers sharing the
    largest of theirs, requests in name order."""
    containers = pod.containers_in_order
    first_app = len(pod.init_containers)
    long_lived = [i for i, c in enumerate(containers) if i >= first_app or c.sidecar]
    short_lived = [i for i, c in enumerate(containers) if i < first_app and not c.sidecar]
    requests, mappings = [], []
    for resource in sorted(resources):
        device_class = classes.get(resource)
        if device_class is None:
            continue
        long_requests: list = [None] * len(containers)
        long_maps, short_maps = [], []
        for i in long_lived:
            long_requests[i], found = _container_request(i, containers[i], resource, device_class.name, [])
            long_maps.extend(found)
        biggest, short_names = None, set()
        for i in short_lived:
            request, found = _container_request(i, containers[i], resource, device_class.name, long_requests[i:])
            if request is not None:
                short_names.add(request["name"])
                if biggest is None or biggest["exactly"]["count"] < request["exactly"]["count"]:
                    biggest = request
            short_maps.extend(found)
        if biggest is not None and len(short_names) > 1:
            for mapping in short_maps:
                if mapping["requestName"] in short_names:
                    mapping["requestName"] = biggest["name"]
        if biggest is not None:
            requests.append(biggest)
        requests.extend(r for r in long_requests if r is not None)
        mappings.extend(long_maps + short_maps)
    requests.sort(key=lambda r: r["name"])
    return requests, mappings


# --- node-allocatable resources from DRA (DRANodeAllocatableResources, alpha in 1.37) ---------------
#
# With the gate on, a device whose `nodeAllocatableResources` maps a claim's allocation to CPU, memory,
# ephemeral storage or hugepages (mapping: per device or per consumed capacity; overhead: per pod and
# per container) adds that demand to the pod: DynamicResources' Filter checks it against the node's
# allocatable minus what is requested there (reasons "Insufficient cpu" and so on, its plugin's),
# refuses to share a claim with a mapped device across pods, and the scheduler's cache then counts it
# among the node's requested resources for every later pod. None of that is modelled here: such pods
# get a "not modelled" note (NODE_ALLOCATABLE_NOTE), proven by the differential in
# tests/upstream/test_scheduler_upstream.py.

NODE_ALLOCATABLE_GATE = "DRANodeAllocatableResources"
NODE_ALLOCATABLE_NOTE = ("not modelled: {gate} is on and devices in the scenario's ResourceSlices carry "
                         "nodeAllocatableResources: kube-scheduler adds the CPU, memory or hugepages they map to "
                         "this pod's requests once its claims are allocated, and counts them on the node for the "
                         "pods after it; the playground does not, so its node, verdicts and scores may differ")


def node_allocatable_devices(slices) -> bool:
    """Whether any device of these ResourceSlices maps an allocation to node-allocatable resources."""
    return any(d.node_allocatable for s in slices for d in s.devices)
