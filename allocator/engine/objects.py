"""Typed, read-only views of the Kubernetes objects the allocator works on.

Objects are built from raw parsed dicts that already passed validation, with
the apiserver's defaults applied (allocationMode ExactCount, count 1,
toleration operator Equal, namespace `default`).
"""
from __future__ import annotations

from dataclasses import dataclass, field

from allocator.engine.quantity import Quantity
from allocator.engine.semver import SemverError, Version

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing (a few ms of every start)
if TYPE_CHECKING:
    from typing import Any

# --- attribute values ---------------------------------------------------------

SCALAR_KINDS = ("int", "bool", "string", "version")
LIST_KINDS = ("ints", "bools", "strings", "versions")
LIST_ELEMENT = {"ints": "int", "bools": "bool", "strings": "string", "versions": "version"}


@dataclass(slots=True, eq=False)  # read-only by convention; frozen is slow for 10k+ devices
class AttributeValue:
    """One device attribute: its kind as written (`int`, `strings`, ...) and the value.

    Version values are parsed; `error` is set when a version does not parse
    (evaluation of any selector on such a device then fails, as upstream).
    """

    kind: str | None
    value: Any
    error: str | None = None

    @property
    def is_list(self) -> bool:
        return self.kind in LIST_KINDS

    @property
    def element_kind(self) -> str | None:
        return LIST_ELEMENT.get(self.kind, self.kind)

    def as_set(self) -> frozenset:
        if self.kind is None:
            return frozenset()
        if self.is_list:
            return frozenset(self.value)
        return frozenset((self.value,))

    def comparable_set(self) -> frozenset:
        """Values as list-type constraints compare them: versions by their exact text."""
        if self.element_kind == "version":
            return frozenset(str(v) for v in (self.value if self.is_list else (self.value,)))
        return self.as_set()

    def display(self) -> str:
        if self.kind is None:
            return "<no value>"
        if self.is_list:
            return "[" + ", ".join(_display_scalar(v) for v in self.value) + "]"
        return _display_scalar(self.value)


def _display_scalar(value) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return f'"{value}"'
    return str(value)


def _version(text) -> tuple[Any, str | None]:
    try:
        return Version.parse(text), None
    except SemverError as exc:
        return text, f"parse semantic version: {exc}"


_KINDS = SCALAR_KINDS + LIST_KINDS  # in the order a value is looked for
_KIND_SET = frozenset(_KINDS)


def attribute_value(raw: dict) -> AttributeValue:
    if len(raw) == 1:  # nearly every attribute: its one member is the value
        for kind, value in raw.items():
            if value is not None and kind in _KIND_SET:
                return _attribute_of(kind, value)
    for kind in _KINDS:
        if kind in raw and raw[kind] is not None:
            return _attribute_of(kind, raw[kind])
    return AttributeValue(None, None)


def _attribute_of(kind: str, value) -> AttributeValue:
    if kind == "version":
        parsed, error = _version(value)
        return AttributeValue(kind, parsed, error)
    if kind == "versions":
        parsed = []
        for item in value:
            version, error = _version(item)
            if error:
                return AttributeValue(kind, tuple(value), error)
            parsed.append(version)
        return AttributeValue(kind, tuple(parsed))
    if kind in LIST_ELEMENT:  # a list kind
        return AttributeValue(kind, tuple(value))
    return AttributeValue(kind, value)


def attribute_from_value(value) -> AttributeValue:
    """An attribute value from a CEL result (derived attributes)."""
    if isinstance(value, bool):
        return AttributeValue("bool", value)
    if isinstance(value, int):
        return AttributeValue("int", value)
    if isinstance(value, str):
        return AttributeValue("string", value)
    if isinstance(value, Version):
        return AttributeValue("version", value)
    if isinstance(value, (list, tuple)) and value:
        element = attribute_from_value(value[0]).kind
        if element in SCALAR_KINDS and all(attribute_from_value(v).kind == element for v in value):
            return AttributeValue(element + "s", tuple(value))
    return AttributeValue(None, None, f"derived value of type {type(value).__name__} is not an attribute value")


# --- node selection ---------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class Requirement:
    key: str
    operator: str
    values: tuple = ()

    def as_dict(self) -> dict:
        out = {"key": self.key, "operator": self.operator}
        if self.values:
            out["values"] = list(self.values)
        return out

    def same_as(self, other: "Requirement") -> bool:
        return (
            self.key == other.key
            and self.operator == other.operator
            and frozenset(self.values) == frozenset(other.values)
        )


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class SelectorTerm:
    match_expressions: tuple = ()
    match_fields: tuple = ()


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class NodeSelector:
    terms: tuple

    def as_dict(self) -> dict:
        terms = []
        for term in self.terms:
            entry = {}
            if term.match_expressions:
                entry["matchExpressions"] = [r.as_dict() for r in term.match_expressions]
            if term.match_fields:
                entry["matchFields"] = [r.as_dict() for r in term.match_fields]
            terms.append(entry)
        return {"nodeSelectorTerms": terms}


def node_selector(raw) -> NodeSelector | None:
    if not raw:
        return None
    terms = []
    for term in raw.get("nodeSelectorTerms") or ():
        term = term or {}
        terms.append(
            SelectorTerm(
                tuple(_requirement(r) for r in term.get("matchExpressions") or ()),
                tuple(_requirement(r) for r in term.get("matchFields") or ()),
            )
        )
    return NodeSelector(tuple(terms))


def _requirement(raw: dict) -> Requirement:
    return Requirement(raw.get("key", ""), raw.get("operator", ""), tuple(raw.get("values") or ()))


# --- nodes -----------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class Taint:
    key: str
    value: str
    effect: str


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class Node:
    name: str
    labels: dict = field(default_factory=dict)
    declared_features: frozenset = frozenset()
    taints: tuple = ()
    unschedulable: bool = False
    ref: tuple | None = None
    synthetic: bool = False  # named only by --node or a slice, no Node object
    allocatable: dict | None = None  # status.allocatable: resource name -> Quantity; None when not given
    images: tuple = ()  # status.images: (names, sizeBytes) per image the node holds


def build_node(raw: dict, ref=None) -> Node:
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    labels = meta.get("labels")
    declared = status.get("declaredFeatures")
    allocatable = status.get("allocatable")
    images = status.get("images")
    return Node(
        meta.get("name", ""),
        {str(k): str(v) for k, v in labels.items()} if labels else {},
        frozenset(str(f) for f in declared) if declared else frozenset(),
        _taints(spec.get("taints")),
        bool(spec.get("unschedulable")),
        ref,
        False,
        _resource_list(allocatable, ("status", "allocatable")) if isinstance(allocatable, dict) else None,
        tuple(
            (tuple(str(n) for n in image.get("names") or ()), int(image.get("sizeBytes") or 0))
            for image in images if isinstance(image, dict) and isinstance(image.get("sizeBytes") or 0, int)
        ) if images else (),
    )


class ObjectFieldError(ValueError):
    """A field the typed view cannot read, with its path in the object."""

    def __init__(self, path: tuple, message: str):
        super().__init__(message)
        self.path = path
        self.message = message


def _resource_list(raw, path: tuple) -> dict:
    """A v1 ResourceList (name -> quantity string) as name -> Quantity."""
    out = {}
    for name, value in (raw or {}).items():
        if value is None:  # apimachinery's Quantity reads JSON null as zero
            out[str(name)] = Quantity.parse("0")
            continue
        try:
            out[str(name)] = Quantity.parse(value)
        except ValueError:
            raise ObjectFieldError(path + (str(name),), f'Invalid value: "{value}": quantities must match the '
                                   "regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'") from None
    return out


# --- pods ------------------------------------------------------------------------------


@dataclass(frozen=True)
class Container:
    name: str
    requests: dict  # resources.requests: name -> Quantity
    image: str = ""
    sidecar: bool = False  # an init container with restartPolicy Always
    status_requests: dict = field(default_factory=dict)  # what the kubelet reports it has (resize), max'ed in
    limits: dict = field(default_factory=dict)  # resources.limits: name -> Quantity


@dataclass
class ClaimStatus:
    """One entry of a pod's `status.nodeAllocatableResourceClaimStatuses` (DRANodeAllocatableResources):
    what one claim's devices add to the pod's CPU, memory, ephemeral storage or hugepages. The mapped
    quantity counts once; the overhead's perPod once and its perContainer once per referencing container."""

    claim: str  # resourceClaimName
    containers: list = field(default_factory=list)  # the containers that reference the claim, init ones first
    mapping: dict = field(default_factory=dict)  # resource -> Quantity
    overhead: dict = field(default_factory=dict)  # resource -> [perPod, perContainer] (each a Quantity or None)

    def demand(self) -> dict:
        """What the claim adds to the pod's requests: resource -> Decimal."""
        out: dict = {}
        for name, quantity in self.mapping.items():
            out[name] = out.get(name, 0) + quantity.value
        for name, (per_pod, per_container) in self.overhead.items():
            amount = per_pod.value if per_pod is not None else 0
            if per_container is not None and self.containers:
                amount += per_container.value * len(self.containers)
            out[name] = out.get(name, 0) + amount
        return out

    def for_container(self, container: str) -> dict:
        """What the kubelet adds to one referencing container's limits: the mapping, perPod and one perContainer."""
        if container not in self.containers:
            return {}
        out = {name: q.value for name, q in self.mapping.items()}
        for name, pair in self.overhead.items():
            out[name] = out.get(name, 0) + sum(q.value for q in pair if q is not None)
        return out

    def shown(self) -> list:
        """(resource, amount as a quantity) of what the claim adds to the pod, by resource name."""
        return [(name, str(Quantity(amount, "DecimalSI" if name == "cpu" else "BinarySI")))
                for name, amount in sorted(self.demand().items())]

    def as_dict(self) -> dict:
        out: dict = {"resourceClaimName": self.claim}
        if self.containers:
            out["containers"] = list(self.containers)
        if self.mapping:
            out["mapping"] = [{"name": n, "quantity": str(q)} for n, q in sorted(self.mapping.items())]
        if self.overhead:
            out["overhead"] = [{"name": n, **({"perPod": str(pp)} if pp is not None else {}),
                                **({"perContainer": str(pc)} if pc is not None else {})}
                               for n, (pp, pc) in sorted(self.overhead.items())]
        return out


def demand_of(statuses) -> dict:
    """What these claim statuses add to a pod's requests together: resource -> Decimal."""
    out: dict = {}
    for status in statuses:
        for name, amount in status.demand().items():
            out[name] = out.get(name, 0) + amount
    return out


def _claim_statuses(raw, path: tuple) -> tuple:
    """status.nodeAllocatableResourceClaimStatuses as ClaimStatus values."""
    out = []
    for i, entry in enumerate(raw if isinstance(raw, list) else ()):
        if not isinstance(entry, dict):
            continue
        at = path + (i,)
        status = ClaimStatus(str(entry.get("resourceClaimName") or ""),
                             [str(c) for c in entry.get("containers") or () if isinstance(c, str)])
        for j, mapped in enumerate(entry.get("mapping") or ()):
            if isinstance(mapped, dict) and mapped.get("quantity") is not None:
                quantity = _resource_list({"quantity": mapped["quantity"]}, at + ("mapping", j))["quantity"]
                name = str(mapped.get("name") or "")
                status.mapping[name] = status.mapping[name].add(quantity) if name in status.mapping else quantity
        for j, extra in enumerate(entry.get("overhead") or ()):
            if not isinstance(extra, dict):
                continue
            amounts = _resource_list({k: extra[k] for k in ("perPod", "perContainer") if extra.get(k) is not None},
                                     at + ("overhead", j))
            pair = status.overhead.setdefault(str(extra.get("name") or ""), [None, None])
            for k, key in enumerate(("perPod", "perContainer")):
                if key in amounts:
                    pair[k] = amounts[key] if pair[k] is None else pair[k].add(amounts[key])
        out.append(status)
    return tuple(out)


@dataclass(frozen=True)
class Pod:
    """A Pod as the scheduler reads it."""

    name: str
    namespace: str
    uid: str
    uid_given: bool  # False for a manifest without metadata.uid (a stable one is made up)
    node_name: str | None
    phase: str
    containers: tuple  # Container
    init_containers: tuple  # Container
    overhead: dict  # spec.overhead: name -> Quantity
    pod_requests: dict | None  # spec.resources.requests (pod-level resources), None when not set
    raw: dict
    ref: tuple | None = None
    # status.nodeAllocatableResourceClaimStatuses (ClaimStatus): counted for a bound pod under the gate
    claim_statuses: tuple = ()

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def consumer(self) -> dict:
        return {"resource": "pods", "name": self.name, "uid": self.uid}

    @property
    def terminal(self) -> bool:
        """Succeeded and Failed pods hold no resources: the scheduler does not even watch them."""
        return self.phase in ("Succeeded", "Failed")

    @property
    def containers_in_order(self) -> tuple:
        return self.init_containers + self.containers


def _containers(raw_list, path: tuple, statuses: dict, *, init: bool) -> tuple:
    out = []
    for i, raw in enumerate(raw_list or ()):
        if not isinstance(raw, dict):
            continue
        resources = raw.get("resources") if isinstance(raw.get("resources"), dict) else {}
        name = str(raw.get("name") or "")
        status = statuses.get(name) or {}
        reported = {}
        for source in ((status.get("resources") or {}).get("requests"), status.get("allocatedResources")):
            for rname, quantity in _resource_list(source if isinstance(source, dict) else None,
                                                  ("status", "containerStatuses", name)).items():
                reported[rname] = max(reported.get(rname, quantity), quantity)
        # The apiserver defaults a request to its limit when only the limit is given.
        limits = _resource_list(resources.get("limits") if isinstance(resources.get("limits"), dict) else None,
                                path + (i, "resources", "limits"))
        requests = _resource_list(resources.get("requests") if isinstance(resources.get("requests"), dict) else None,
                                  path + (i, "resources", "requests"))
        out.append(Container(
            name=name,
            image=str(raw.get("image") or ""),
            requests={**limits, **requests},
            sidecar=init and raw.get("restartPolicy") == "Always",
            status_requests=reported,
            limits=limits,
        ))
    return tuple(out)


def build_pod(raw: dict, ref=None, *, name: str | None = None, uid: str | None = None) -> Pod:
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    status = raw.get("status") or {}
    statuses = {}
    for key in ("containerStatuses", "initContainerStatuses"):
        for entry in status.get(key) or ():
            if isinstance(entry, dict) and entry.get("name"):
                statuses[str(entry["name"])] = entry
    pod_resources = spec.get("resources") if isinstance(spec.get("resources"), dict) else {}
    pod_level = pod_resources.get("requests") if isinstance(pod_resources.get("requests"), dict) else None
    return Pod(
        name=name if name is not None else str(meta.get("name") or ""),
        namespace=str(meta.get("namespace") or "default"),
        uid=uid if uid is not None else str(meta.get("uid") or ""),
        uid_given=bool(meta.get("uid")),
        node_name=spec.get("nodeName") or None,
        phase=str(status.get("phase") or ""),
        containers=_containers(spec.get("containers"), ("spec", "containers"), statuses, init=False),
        init_containers=_containers(spec.get("initContainers"), ("spec", "initContainers"), statuses, init=True),
        overhead=_resource_list(spec.get("overhead") if isinstance(spec.get("overhead"), dict) else None,
                                ("spec", "overhead")),
        pod_requests=_resource_list(pod_level, ("spec", "resources", "requests"))
        if isinstance(pod_level, dict) else None,
        raw=raw,
        ref=ref,
        claim_statuses=_claim_statuses(status.get("nodeAllocatableResourceClaimStatuses"),
                                       ("status", "nodeAllocatableResourceClaimStatuses")),
    )


# --- resource claim templates -------------------------------------------------------------


@dataclass(frozen=True)
class ResourceClaimTemplate:
    namespace: str
    name: str
    claim_metadata: dict  # spec.metadata: labels and annotations for the claims made from it
    claim_spec: dict  # spec.spec: the ResourceClaimSpec each claim gets
    raw: dict
    ref: tuple | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"

    @property
    def requests_admin_access(self) -> bool:
        requests = (self.claim_spec.get("devices") or {}).get("requests") or ()
        return any(isinstance(r, dict) and (r.get("exactly") or {}).get("adminAccess") for r in requests)


def build_template(raw: dict, ref=None) -> ResourceClaimTemplate:
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    return ResourceClaimTemplate(
        namespace=str(meta.get("namespace") or "default"),
        name=str(meta.get("name") or ""),
        claim_metadata=spec.get("metadata") or {},
        claim_spec=spec.get("spec") or {},
        raw=raw,
        ref=ref,
    )


# --- device classes ------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class DeviceClass:
    name: str
    selectors: tuple  # CEL expression strings
    config: tuple  # raw `opaque` config entries (dicts with `opaque`)
    ref: tuple | None = None
    extended_resource_name: str | None = None  # spec.extendedResourceName
    created: str = ""  # metadata.creationTimestamp


def build_device_class(raw: dict, ref=None) -> DeviceClass:
    spec = raw.get("spec") or {}
    meta = raw.get("metadata") or {}
    selectors = spec.get("selectors")
    config = spec.get("config")
    return DeviceClass(
        meta.get("name", ""),
        tuple(((s or {}).get("cel") or {}).get("expression") for s in selectors) if selectors else (),
        tuple(config) if config else (),
        ref,
        spec.get("extendedResourceName") or None,
        str(meta.get("creationTimestamp") or ""),
    )


# --- resource slices -----------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class RequestPolicy:
    default: Quantity | None
    valid_values: tuple | None  # ascending Quantities
    valid_range: tuple | None  # (min, max|None, step|None)


@dataclass(slots=True, eq=False)  # read-only by convention; frozen is slow for 10k+ devices
class Capacity:
    value: Quantity
    policy: RequestPolicy | None = None


@dataclass(slots=True, eq=False)  # read-only by convention; frozen is slow for 10k+ devices
class CounterConsumption:
    counter_set: str
    counters: dict  # name -> Quantity
    groups: tuple = ()  # compatibility groups; empty means "no groups"


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class CounterSet:
    name: str
    counters: dict  # name -> Quantity


@dataclass(slots=True, eq=False)  # read-only by convention; frozen is slow for 10k+ devices
class Device:
    name: str
    driver: str
    pool: str
    slice_name: str
    attributes: dict  # name as written -> AttributeValue
    capacity: dict  # name as written -> Capacity
    consumes: tuple = ()
    node_name: str | None = None
    node_selector: NodeSelector | None = None
    all_nodes: bool = False
    taints: tuple = ()
    binds_to_node: bool = False
    binding_conditions: tuple | None = None
    binding_failure_conditions: tuple | None = None
    allow_multiple: bool = False
    index: int = 0  # position in its slice
    node_allocatable: dict | None = None  # nodeAllocatableResources as written (DRANodeAllocatableResources)
    cel_input: object = None  # the CEL view of the device (or why it has none), made on first use
    # Compiled selector -> its result on this device (or the error it raised): a function of the
    # two alone, so kept for as long as the device is (the built slice outlives one run).
    selector_results: dict | None = None

    @property
    def id(self) -> tuple:
        return (self.driver, self.pool, self.name)

    @property
    def id_str(self) -> str:
        return f"{self.driver}/{self.pool}/{self.name}"


@dataclass(slots=True, eq=False)  # read-only by convention; frozen is slow for 10k+ devices
class ResourceSlice:
    name: str
    driver: str
    pool: str
    generation: int
    slice_count: int
    node_name: str | None
    node_selector: NodeSelector | None
    all_nodes: bool
    per_device_node_selection: bool | None  # None when unset
    devices: tuple
    shared_counters: tuple
    skip_node_operations: tuple
    has_compatibility_groups: bool
    has_binding_conditions: bool
    ref: tuple | None = None
    order: int = 0  # position among all slices in the input


def _quantity(raw) -> Quantity:
    return Quantity.parse(0 if raw is None else raw)  # null decodes to the zero quantity, as in Go


def _value_quantity(raw) -> Quantity:
    return _quantity((raw or {}).get("value", 0))


def _policy(raw) -> RequestPolicy | None:
    if not raw:
        return None
    default = _quantity(raw["default"]) if raw.get("default") is not None else None
    valid_values = None
    if raw.get("validValues") is not None:
        valid_values = tuple(_quantity(v) for v in raw["validValues"])
    valid_range = None
    vr = raw.get("validRange")
    if vr is not None:
        valid_range = (
            _quantity(vr["min"]) if vr.get("min") is not None else None,
            _quantity(vr["max"]) if vr.get("max") is not None else None,
            _quantity(vr["step"]) if vr.get("step") is not None else None,
        )
    return RequestPolicy(default, valid_values, valid_range)


def _taints(raw) -> tuple:
    if not raw:
        return ()
    return tuple(Taint(t.get("key", ""), str(t.get("value") or ""), t.get("effect", "")) for t in raw)


def _conditions(raw) -> tuple | None:
    return None if raw is None else tuple(raw)


# The members nearly every device has: a device with no others takes the short path below.
_PLAIN_DEVICE_KEYS = ("name", "attributes", "capacity", "allowMultipleAllocations")
_PLAIN_SCALAR_KINDS = frozenset(("int", "bool", "string"))  # kept as written


def _attributes(raw: dict) -> dict:
    """name -> AttributeValue (attribute_value's answer, with its common case inline)."""
    out = {}
    for name, value in raw.items():
        if type(value) is dict and len(value) == 1:
            (kind, scalar), = value.items()
            if kind in _PLAIN_SCALAR_KINDS and scalar is not None:
                out[name] = AttributeValue(kind, scalar)
                continue
            if kind == "version" and scalar is not None:
                out[name] = AttributeValue(kind, *_version(scalar))
                continue
        out[name] = attribute_value(value or {})
    return out


def _capacities(raw: dict) -> dict:
    """name -> Capacity, a capacity without a request policy the short way."""
    out = {}
    for name, value in raw.items():
        if type(value) is dict and "requestPolicy" not in value:
            out[name] = Capacity(_quantity(value.get("value", 0)))
        else:
            out[name] = Capacity(_value_quantity(value), _policy((value or {}).get("requestPolicy")))
    return out


def build_slice(raw: dict, ref=None, order=0) -> ResourceSlice:
    meta = raw.get("metadata") or {}
    spec = raw.get("spec") or {}
    name = meta.get("name", "")
    driver = spec.get("driver", "")
    pool_raw = spec.get("pool") or {}
    pool = pool_raw.get("name", "")
    devices = []
    has_groups = False
    has_binding = False
    for index, d in enumerate(spec.get("devices") or ()):
        attributes = d.get("attributes")
        capacity = d.get("capacity")
        attributes = _attributes(attributes) if attributes else {}
        capacity = _capacities(capacity) if capacity else {}
        plain = len(d)
        for key in _PLAIN_DEVICE_KEYS:
            if key in d:
                plain -= 1
        if not plain:  # only a name, attributes, capacity and allowMultipleAllocations: the rest is unset
            devices.append(Device(d.get("name", ""), driver, pool, name, attributes, capacity,
                                  allow_multiple=bool(d.get("allowMultipleAllocations")), index=index))
            continue
        consumes = ()
        if d.get("consumesCounters"):
            consumes = []
            for c in d["consumesCounters"]:
                groups = tuple(c.get("compatibilityGroups") or ())
                has_groups = has_groups or bool(groups)
                consumes.append(
                    CounterConsumption(
                        c.get("counterSet", ""),
                        {k: _value_quantity(v) for k, v in (c.get("counters") or {}).items()},
                        groups,
                    )
                )
            consumes = tuple(consumes)
        binding = _conditions(d.get("bindingConditions"))
        has_binding = has_binding or binding is not None
        devices.append(Device(  # in field order
            d.get("name", ""),
            driver,
            pool,
            name,
            attributes,
            capacity,
            consumes,
            d.get("nodeName") or None,
            node_selector(d.get("nodeSelector")),
            bool(d.get("allNodes")),
            _taints(d.get("taints")),
            bool(d.get("bindsToNode")),
            binding,
            _conditions(d.get("bindingFailureConditions")),
            bool(d.get("allowMultipleAllocations")),
            index,
            d.get("nodeAllocatableResources") or None,
        ))
    shared = spec.get("sharedCounters")
    skipped = spec.get("skipNodeOperations")
    return ResourceSlice(  # in field order
        name,
        driver,
        pool,
        int(pool_raw.get("generation") or 0),
        int(pool_raw.get("resourceSliceCount") or 0),
        spec.get("nodeName") or None,
        node_selector(spec.get("nodeSelector")),
        bool(spec.get("allNodes")),
        spec.get("perDeviceNodeSelection"),
        tuple(devices),
        tuple(
            CounterSet(cs.get("name", ""), {k: _value_quantity(v) for k, v in (cs.get("counters") or {}).items()})
            for cs in shared
        ) if shared else (),
        tuple(skipped) if skipped else (),
        has_groups,
        has_binding,
        ref,
        order,
    )


# --- resource claims ------------------------------------------------------------------


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class Toleration:
    key: str
    operator: str
    value: str
    effect: str
    raw: dict

    def tolerates(self, taint: Taint) -> bool:
        if self.effect and self.effect != taint.effect:
            return False
        if self.key and self.key != taint.key:
            return False
        if self.operator == "Exists":
            return True
        return self.operator in ("Equal", "") and self.value == taint.value


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class DerivedAttribute:
    name: str
    expression: str


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class DeviceRequest:
    """An `exactly` request or one `firstAvailable` subrequest."""

    name: str
    class_name: str
    mode: str
    count: int
    selectors: tuple
    admin_access: bool | None
    tolerations: tuple
    capacity_requests: dict | None  # name as written -> Quantity
    derived: tuple = ()
    raw_tolerations: tuple = ()


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class ClaimRequest:
    name: str
    exactly: DeviceRequest | None
    first_available: tuple  # of DeviceRequest


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class DeviceConstraint:
    requests: tuple
    match_attribute: str | None
    distinct_attribute: str | None


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class ClaimConfig:
    requests: tuple
    raw: dict  # the config entry minus `requests`


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class DeviceResult:
    request: str
    driver: str
    pool: str
    device: str
    admin_access: bool
    share_id: str | None
    consumed_capacity: dict | None  # name -> Quantity
    skip_node_operations: tuple = ()

    @property
    def device_id(self) -> tuple:
        return (self.driver, self.pool, self.device)


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class ExistingAllocation:
    results: tuple
    node_selector: NodeSelector | None


@dataclass(slots=True, unsafe_hash=True)  # read-only by convention (frozen is slow to build)
class ResourceClaim:
    namespace: str
    name: str
    requests: tuple
    constraints: tuple
    config: tuple
    allocation: ExistingAllocation | None
    raw: dict
    ref: tuple | None = None

    @property
    def key(self) -> str:
        return f"{self.namespace}/{self.name}"


def _device_request(raw: dict, *, allow_admin: bool, name: str | None = None) -> DeviceRequest:
    """A request from its fields (`name`, when given, stands for the fields' own, as for an `exactly`
    request, whose name is its parent's)."""
    raw = raw or {}
    mode = raw.get("allocationMode") or "ExactCount"
    count = raw.get("count")
    if mode == "ExactCount" and not count:
        count = 1
    # Most requests name a class and little else: each list is read only when it is there.
    listed = raw.get("tolerations")
    tolerations = tuple(
        Toleration(
            t.get("key") or "",
            t.get("operator") or "Equal",
            str(t.get("value") or ""),
            t.get("effect") or "",
            t,
        )
        for t in listed
    ) if listed else ()
    capacity = raw.get("capacity")
    capacity_requests = None
    if capacity is not None:
        capacity_requests = {k: _quantity(v) for k, v in (capacity.get("requests") or {}).items()}
    selectors = raw.get("selectors")
    derived = raw.get("derivedAttributes")
    return DeviceRequest(
        raw.get("name", "") if name is None else name,
        raw.get("deviceClassName") or "",
        mode,
        int(count or 0),
        tuple(((s or {}).get("cel") or {}).get("expression") for s in selectors) if selectors else (),
        raw.get("adminAccess") if allow_admin else None,
        tolerations,
        capacity_requests,
        tuple(DerivedAttribute(d.get("name", ""), d.get("expression", "")) for d in derived) if derived else (),
        tuple(listed) if listed else (),
    )


def _existing_result(raw: dict) -> DeviceResult:
    consumed = raw.get("consumedCapacity")
    return DeviceResult(
        request=raw.get("request", ""),
        driver=raw.get("driver", ""),
        pool=raw.get("pool", ""),
        device=raw.get("device", ""),
        admin_access=bool(raw.get("adminAccess")),
        share_id=raw.get("shareID") or None,
        consumed_capacity=None if consumed is None else {k: _quantity(v) for k, v in consumed.items()},
        skip_node_operations=tuple(raw.get("skipNodeOperations") or ()),
    )


def claim_spec_parts(spec: dict) -> tuple[tuple, tuple, tuple]:
    devices = (spec or {}).get("devices") or {}
    requests = []
    for r in devices.get("requests") or ():
        r = r or {}
        name = r.get("name", "")
        exactly = r.get("exactly")
        first = r.get("firstAvailable")
        requests.append(ClaimRequest(
            name,
            _device_request(exactly, allow_admin=True, name=name) if exactly is not None else None,
            tuple(_device_request(s, allow_admin=False) for s in first) if first else (),
        ))
    constraints = devices.get("constraints")
    config = devices.get("config")
    constraints = tuple(
        DeviceConstraint(
            tuple(c.get("requests") or ()),
            c.get("matchAttribute") or None,
            c.get("distinctAttribute") or None,
        )
        for c in constraints
    ) if constraints else ()
    config = tuple(
        ClaimConfig(tuple(c.get("requests") or ()), {k: v for k, v in c.items() if k != "requests"})
        for c in config
    ) if config else ()
    return tuple(requests), constraints, config


def build_claim(raw: dict, ref=None) -> ResourceClaim:
    meta = raw.get("metadata") or {}
    requests, constraints, config = claim_spec_parts(raw.get("spec") or {})
    allocation = None
    alloc_raw = (raw.get("status") or {}).get("allocation")
    if alloc_raw:
        results = tuple(_existing_result(r) for r in ((alloc_raw.get("devices") or {}).get("results") or ()))
        allocation = ExistingAllocation(results, node_selector(alloc_raw.get("nodeSelector")))
    return ResourceClaim(
        namespace=meta.get("namespace") or "default",
        name=meta.get("name", ""),
        requests=requests,
        constraints=constraints,
        config=config,
        allocation=allocation,
        raw=raw,
        ref=ref,
    )

