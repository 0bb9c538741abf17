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
from decimal import Decimal, localcontext

from allocator.engine.nodematch import SelectorError, selector_matches
from allocator.engine.objects import ClaimStatus, Container, DeviceClass, Node, Pod, demand_of
from allocator.engine.quantity import Quantity

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


def aggregate(pod: Pod, amounts) -> dict:
    """Sum the app containers and sidecars, and take the larger of that and each ordinary init
    container plus the sidecars started before it; `amounts(container, init)` gives one container's."""
    total: dict = {}
    for container in pod.containers:
        _add(total, amounts(container, False))
    sidecars: dict = {}
    init_peak: dict = {}
    for container in pod.init_containers:
        requests = amounts(container, True)
        if container.sidecar:
            _add(total, requests)  # runs for the pod's whole life
            _add(sidecars, requests)
            running = dict(sidecars)
        else:
            running = dict(requests)
            _add(running, sidecars)  # the sidecars started before it still run
        _max(init_peak, running)
    _max(total, init_peak)
    return total


def container_requests(pod: Pod, *, use_status: bool = False, defaults: dict | None = None,
                       dra: dict | None = None) -> dict:
    """The containers' requests together (no pod level, no overhead), exact, with `dra` added."""
    # Only sidecars can be resized in place; ordinary init containers count as specified.
    total = aggregate(pod, lambda c, init: _container(c, use_status=use_status and (c.sidecar or not init),
                                                       defaults=defaults))
    _add(total, dra or {})
    return total


def pod_requests(pod: Pod, *, non_zero: bool = False, use_status: bool = False,
                 pod_level: bool = True, dra: dict | None = None) -> dict:
    """The pod's effective requests as integers: CPU in millicores, the rest in units.

    `non_zero` gives every container that names no CPU or memory the scheduler's defaults (for
    scoring); `use_status` takes what the kubelet reports for resized containers (bound pods).
    With pod-level requests, a default is given only where neither the pod level nor any
    container (nor the overhead) names the resource at all (1.37's getNonMissingContainerRequests).
    `dra` is what the pod's claims add to the containers (DRANodeAllocatableResources: name -> Decimal);
    pod-level requests still replace the sum."""
    level = pod.pod_requests if pod_level else None
    defaults = None
    if non_zero:
        defaults = {CPU: Decimal(DEFAULT_MILLI_CPU) / 1000, MEMORY: Decimal(DEFAULT_MEMORY)}
        if level:  # IsPodLevelRequestsSet
            named = pod_requests(pod, use_status=use_status, dra=dra)
            defaults = {k: v for k, v in defaults.items() if k not in named}
    total = container_requests(pod, use_status=use_status, defaults=defaults, dra=dra)
    if level is not None:
        for name in (CPU, MEMORY):
            if name in level:
                total[name] = level[name].value
    _add(total, _amounts(pod.overhead))
    return {name: _units(name, value) for name, value in total.items() if name == CPU or name in NATIVE or is_scalar(name)}


def _units(name: str, value: Decimal) -> int:
    """Kubernetes MilliValue() for CPU and Value() for the rest: rounded up."""
    return math.ceil(value * 1000) if name == CPU else math.ceil(value)


def show_exact(name: str, value: Decimal) -> str:
    """An exact amount as `show` prints it, rounded up as the scheduler counts it."""
    return show(name, _units(name, value))


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

    def add(self, pod: Pod, *, use_status: bool, dra: dict | None = None) -> None:
        """`dra`: what the pod's node-allocatable claim statuses add (see ClaimStatus)."""
        for name, value in pod_requests(pod, use_status=use_status, dra=dra).items():
            self.requested[name] = self.requested.get(name, 0) + value
        non_zero = pod_requests(pod, non_zero=True, use_status=use_status, dra=dra)
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
# With the gate on, a device's `nodeAllocatableResources` turns a claim's allocation into CPU, memory,
# ephemeral-storage or hugepages demand. DynamicResources' Filter works out, per node, one ClaimStatus
# per claim of the pod whose devices carry the field (mapping: deviceMultiplier per device, or the
# consumed capacity times capacityMultiplier; overhead: perPod and perContainer, summed over the claim's
# devices), adds them to the pod's requests and checks the node with its own reasons; it refuses a claim
# with a mapped device that is reserved for someone else. The scheduler then puts the chosen node's
# statuses into the assumed pod's status, so its cache counts them for the pods after it.

NODE_ALLOCATABLE_GATE = "DRANodeAllocatableResources"
SPECIAL_CLAIM_NAME = "<extended-resources>"  # the scheduler's name for the special claim before it creates it
SHARED_MAPPED_CLAIM = "node allocatable resource claim {claim} has a mapped device and cannot be shared across pods"
POD_LEVEL_REQUEST_SHORT = ("pod level request for {resource} is insufficient to cover the aggregated container and "
                           "node-allocatable DRA requests")
POD_LEVEL_HUGEPAGES_SHORT = ("pod level limit for {resource} is insufficient to cover the aggregated container and "
                             "node-allocatable DRA limits")
POD_LEVEL_LIMIT_SHORT = ("pod level limit for {resource} is insufficient to cover the limit and DRA overhead for "
                         "container {container}")
_POD_LEVEL = (CPU, MEMORY)  # and hugepages-*: what pod-level resources may name


def _pod_level_resource(name: str) -> bool:
    return name in _POD_LEVEL or name.startswith("hugepages-")


def node_allocatable_devices(slices) -> bool:
    """Whether any device of these ResourceSlices carries nodeAllocatableResources."""
    return any(d.node_allocatable for s in slices for d in s.devices)


def _placed_on(holder, node: Node) -> bool:
    """A slice's or device's nodeName, allNodes or nodeSelector (one that does not parse matches nothing)."""
    if holder.node_name == node.name or holder.all_nodes:
        return True
    if holder.node_selector is None:
        return False
    try:
        return selector_matches(holder.node_selector, node)
    except SelectorError:
        return False


def _slice_on(piece, node: Node) -> bool:
    """The slices DynamicResources looks at for a node: its own, all-nodes ones, those whose node
    selector matches, and those that select per device."""
    return _placed_on(piece, node) or (piece.node_selector is None and bool(piece.per_device_node_selection))


class FootprintError(Exception):
    """The Filter fails outright (an error status): kube-scheduler aborts the pod's scheduling cycle."""


def _index(slices: list) -> dict:
    """(driver, pool, device name) -> (slice, device), the first slice of the driver and pool that holds a
    device of that name: where DynamicResources finds the device behind an allocation result."""
    out: dict = {}
    for piece in slices:
        for device in piece.devices:
            out.setdefault((piece.driver, piece.pool, device.name), (piece, device))
    return out


def _device(index: dict, result: dict, node: Node | None):
    """The device an allocation result names; None where DynamicResources finds none (or, in a slice that
    selects per device, one that is not on the node)."""
    return _lookup(index, result, node)[0]


def _lookup(index: dict, result: dict, node: Node | None) -> tuple:
    """(the device or None, why DynamicResources finds none, in its words)."""
    name, pool, driver = result.get("device"), result.get("pool"), result.get("driver")
    found = index.get((driver, pool, name))
    if found is None:
        return None, f"device {name} not found in pool {pool} for driver {driver}"
    piece, device = found
    if piece.per_device_node_selection and node is not None and not _placed_on(device, node):
        return None, f"device {name} does not match node"
    return device, None


class NodeAllocatable:
    """The node-allocatable side of DynamicResources for one run: the scheduler's ResourceSlices (with
    DeviceTaintRules applied) and the devices behind allocation results."""

    def __init__(self, slices: list):
        self.slices = list(slices)
        self.any = node_allocatable_devices(self.slices)  # without such devices there is nothing to add
        self.workload_claims = False  # DRAWorkloadResourceClaims: a claim reserved for the pod's group is its own
        self._all = _index(self.slices) if self.any else {}
        self._on_node: dict = {}

    def node_index(self, node: Node) -> dict:
        kept = self._on_node.get(node.name)
        if kept is None:
            kept = self._on_node[node.name] = _index([s for s in self.slices if _slice_on(s, node)])
        return kept

    def mapped(self, allocation: dict | None) -> bool:
        """PreFilter's note of a claim whose allocation holds a device with a `mapping`: such a claim is
        never shared across pods."""
        for result in ((allocation or {}).get("devices") or {}).get("results") or ():
            device = _device(self._all, result, None)
            if device is not None and any(isinstance(e, dict) and e.get("mapping") is not None
                                          for e in (device.node_allocatable or {}).values()):
                return True
        return False

    def statuses(self, pod: Pod, claims: list, names: dict, node: Node) -> list | None:
        """The pod's ClaimStatus list on this node (sorted by claim name), or None when none of its
        claims' devices carries nodeAllocatableResources (then DynamicResources checks nothing more).
        `claims`: (claim name, allocation) in the pod's order; `names`: pod claim name -> claim name.
        Raises FootprintError where kube-scheduler's Filter errors."""
        index = self.node_index(node)
        counted = []
        for claim_name, allocation in claims:
            results = ((allocation or {}).get("devices") or {}).get("results") or ()
            if any((device := _device(index, r, node)) is not None and device.node_allocatable for r in results):
                counted.append((claim_name, results))
        if not counted:
            return None
        by_claim = {}
        for claim_name, results in counted:
            status = _claim_status(claim_name, results, index, node, f"{pod.namespace}/{claim_name}")
            if status.mapping or status.overhead:
                by_claim[claim_name] = status
        for containers in (pod.raw.get("spec") or {}).get("initContainers"), (pod.raw.get("spec") or {}).get("containers"):
            for container in containers or ():
                if not isinstance(container, dict):
                    continue
                for ref in (container.get("resources") or {}).get("claims") or ():
                    status = by_claim.get(names.get(ref.get("name"))) if isinstance(ref, dict) else None
                    if status is not None:
                        status.containers.append(str(container.get("name") or ""))
        return [by_claim[name] for name in sorted(by_claim)]


def _claim_status(claim_name: str, results, index: dict, node: Node, key: str) -> ClaimStatus:
    status = ClaimStatus(claim_name)
    for result in results:
        device, missing = _lookup(index, result, node)
        if device is None:
            raise FootprintError(f"claim {key}, device {result.get('device')}, driver {result.get('driver')}: {missing}")
        for resource, entry in (device.node_allocatable or {}).items():
            if not isinstance(entry, dict):
                continue
            if isinstance(entry.get("mapping"), dict):
                _add_mapping(status, resource, entry["mapping"], result, key)
            overhead = entry.get("overhead")
            if isinstance(overhead, dict):
                pair = status.overhead.get(resource)
                for k, key in enumerate(("perPod", "perContainer")):
                    if overhead.get(key) is None:
                        continue
                    if pair is None:
                        pair = status.overhead[resource] = [None, None]
                    amount = Quantity.parse(overhead[key])
                    pair[k] = amount if pair[k] is None else pair[k].add(amount)
    return status


def _add_mapping(status: ClaimStatus, resource: str, mapping: dict, result: dict, key_of_claim: str) -> None:
    """A device's mapping for one resource: the consumed capacity times its multiplier, or the device
    multiplier (once per allocated device)."""
    key = mapping.get("capacityKey")
    if key:
        consumed = result.get("consumedCapacity")
        if consumed is None:
            raise FootprintError(f"claim {key_of_claim}, device {result.get('device')}: ConsumedCapacity is nil, but "
                                 f"Capacity key '{key}' is set in NodeAllocatableResources for resource {resource}")
        if key not in consumed:
            return  # this allocation does not consume it: nothing mapped
        amount = Quantity.parse(consumed[key])
        multiplier = mapping.get("capacityMultiplier")
        if multiplier is not None and Quantity.parse(multiplier).value != 1:
            with localcontext() as exact:
                exact.prec = 120
                amount = Quantity(amount.value * Quantity.parse(multiplier).value, amount.format)
    elif mapping.get("deviceMultiplier") is not None:
        amount = Quantity.parse(mapping["deviceMultiplier"])
    else:
        return
    status.mapping[resource] = status.mapping[resource].add(amount) if resource in status.mapping else amount


def refused_sharing(pod: Pod, claim, mapped: bool, workload_claims: bool) -> str | None:
    """DynamicResources refuses a claim with a mapped device that is reserved for another pod (or pod
    group): its devices would be counted on two pods."""
    reserved = [r for r in (claim.raw.get("status") or {}).get("reservedFor") or () if isinstance(r, dict)]
    if not mapped or not reserved:
        return None
    group = ((pod.raw.get("spec") or {}).get("schedulingGroup") or {})
    group_name = group.get("podGroupName") if isinstance(group, dict) else None
    for entry in reserved:
        if entry.get("uid") == pod.uid:
            return None
        if workload_claims and group_name and entry.get("apiGroup") == "scheduling.k8s.io" \
                and entry.get("resource") == "podgroups" and entry.get("name") == group_name:
            return None
    return SHARED_MAPPED_CLAIM.format(claim=claim.name)


def pod_level_short(pod: Pod, statuses: list) -> str | None:
    """Pod-level resources must cover what the containers and the claims need together (requests: the
    sum; limits: hugepages summed, other resources per container with its claims' share)."""
    resources = (pod.raw.get("spec") or {}).get("resources")
    if not isinstance(resources, dict) or not statuses:
        return None
    dra = demand_of(statuses)
    level_requests = resources.get("requests") if isinstance(resources.get("requests"), dict) else {}
    if level_requests:
        total = container_requests(pod, dra=dra)
        for name in sorted(level_requests):  # kube-scheduler names one, in map order, where several fall short
            if _pod_level_resource(name) and name in total and total[name] > Quantity.parse(level_requests[name]).value:
                return POD_LEVEL_REQUEST_SHORT.format(resource=name)
    level_limits = resources.get("limits") if isinstance(resources.get("limits"), dict) else {}
    if not level_limits:
        return None
    limits = aggregate(pod, lambda c, init: _amounts(c.limits))
    for name, amount in dra.items():  # the kubelet adds them only to limits that are set, and to hugepages
        if name in limits or name.startswith("hugepages-"):
            limits[name] = limits.get(name, 0) + amount
    for name in sorted(limits):
        if name.startswith("hugepages-") and name in level_limits \
                and limits[name] > Quantity.parse(level_limits[name]).value:
            return POD_LEVEL_HUGEPAGES_SHORT.format(resource=name)
    for container in pod.containers:
        share: dict = {}
        for status in statuses:
            _add(share, status.for_container(container.name))
        for name in sorted(container.limits):
            if name.startswith("hugepages-") or name not in level_limits:
                continue
            if container.limits[name].value + share.get(name, 0) > Quantity.parse(level_limits[name]).value:
                return POD_LEVEL_LIMIT_SHORT.format(resource=name, container=container.name)
    return None


def dra_fit(requests: dict, node_allocatable: dict, usage: NodeUsage) -> list:
    """DynamicResources' own check of the pod's whole requests, claims included, against the node:
    CPU, memory and ephemeral storage when asked for, and every hugepages size."""
    out = []
    for name in NATIVE:
        asked = requests.get(name, 0)
        used, capacity = usage.requested.get(name, 0), node_allocatable.get(name, 0)
        if asked > 0 and asked > capacity - used:
            out.append(Shortfall(name, insufficient(name), asked, used, capacity))
    for name in sorted(n for n in requests if n.startswith("hugepages-")):
        used, capacity = usage.requested.get(name, 0), node_allocatable.get(name, 0)
        if requests[name] > capacity - used:
            out.append(Shortfall(name, insufficient(name), requests[name], used, capacity))
    return out
