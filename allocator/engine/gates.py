"""Kubernetes 1.37 feature gates that matter for DRA, and what the allocator derives from them.

Gates can be set per component: the kube-apiserver decides which fields survive
when an object is written, the kube-scheduler decides what the allocator does.
The CLI sets the same gates for both.
"""
from __future__ import annotations

from dataclasses import dataclass, field

ALPHA, BETA, GA = "alpha", "beta", "GA"


@dataclass(frozen=True)
class GateInfo:
    name: str
    stage: str
    default: bool
    locked: bool = False
    summary: str = ""


GATES: dict[str, GateInfo] = {
    g.name: g
    for g in [
        GateInfo("DynamicResourceAllocation", GA, True, True, "the whole DRA feature"),
        GateInfo("DRAPrioritizedList", GA, True, True, "firstAvailable subrequests"),
        GateInfo("DRAAdminAccess", GA, True, True, "adminAccess requests"),
        GateInfo("DRAResourceClaimDeviceStatus", GA, True, True, "claim status.devices"),
        GateInfo("DRAExtendedResource", GA, True, True, "extended resources (example.com/gpu: 1) backed by DRA"),
        GateInfo("DRADeviceTaints", GA, True, False, "device taints and request tolerations"),
        GateInfo("DRADeviceTaintRules", GA, True, False, "DeviceTaintRule objects add taints to devices"),
        GateInfo("DRAPartitionableDevices", BETA, True, False, "shared counters and per-device node selection"),
        GateInfo("DRAConsumableCapacity", BETA, True, False, "multi-allocatable devices and capacity requests"),
        GateInfo("DRAFractionalCapacityRange", BETA, True, False, "milli-unit arithmetic for validRange"),
        GateInfo("DRADeviceBindingConditions", BETA, True, False, "binding conditions on devices"),
        GateInfo("DRASchedulerFilterTimeout", BETA, True, False, "10 s timeout per node in the scheduler"),
        GateInfo(
            "DRAResourceClaimGranularStatusAuthorization", BETA, True, False,
            "apiserver authorization of claim status writes",
        ),
        GateInfo("DRAListTypeAttributes", ALPHA, False, False, "list-valued attributes and includes()"),
        GateInfo("DRADeviceCompatibilityGroups", ALPHA, False, False, "compatibility groups on counter consumption"),
        GateInfo("DRAOptionalNodeOperations", ALPHA, False, False, "skipNodeOperations on slices"),
        GateInfo("DRADerivedAttributes", ALPHA, False, False, "derived attributes in requests"),
    ]
}

# (key used in forms, shares and gallery entries, the component's name)
COMPONENTS = (("apiserver", "kube-apiserver"), ("scheduler", "kube-scheduler"), ("kubelet", "kubelet"))
COMPONENT_KEYS = tuple(key for key, _ in COMPONENTS)


class GateError(ValueError):
    pass


@dataclass(frozen=True)
class FeatureGates:
    """Gate values for one component (explicit settings over the 1.37 defaults)."""

    values: tuple = ()  # sorted (name, bool) pairs that differ from or restate defaults

    def enabled(self, name: str) -> bool:
        for gate, value in self.values:
            if gate == name:
                return value
        info = GATES.get(name)
        return info.default if info else False


def parse_gates(text: str | None) -> tuple[FeatureGates, list[str]]:
    """Parse `A=true,B=false` as the Kubernetes components do; returns the gates and warnings."""
    overrides: dict[str, bool] = {}
    warnings: list[str] = []
    for item in (text or "").split(","):
        item = item.strip()
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep:
            raise GateError(f"missing bool value for {name}")
        lowered = raw.lower()
        if lowered in ("true", "1", "t"):
            value = True
        elif lowered in ("false", "0", "f"):
            value = False
        else:
            raise GateError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing {raw!r}: invalid syntax")
        overrides[name] = value
    return gates_from_dict(overrides, warnings), warnings


def gates_from_dict(overrides: dict, warnings: list[str] | None = None) -> FeatureGates:
    warnings = warnings if warnings is not None else []
    clean: dict[str, bool] = {}
    for name, value in overrides.items():
        info = GATES.get(name)
        if info is None:
            raise GateError(f"unrecognized feature gate: {name}")
        if not isinstance(value, bool):
            raise GateError(f"invalid value of {name}={value}: must be true or false")
        if info.locked and value != info.default:
            warnings.append(
                f"feature gate {name} is {info.stage} and locked to {str(info.default).lower()} in "
                f"Kubernetes 1.37; the playground honours {name}={str(value).lower()} anyway"
            )
        clean[name] = value
    return FeatureGates(tuple(sorted(clean.items())))


@dataclass(frozen=True)
class AllocatorFeatures:
    """The allocator's view of the scheduler's gates."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = True
    device_binding: bool = True
    list_type_attributes: bool = False
    compatibility_groups: bool = False
    optional_node_operations: bool = False
    derived_attributes: bool = False

    @property
    def experimental_variant(self) -> bool:
        """Whether upstream picks its experimental allocator: only it supports the alpha DRA features,
        and only it looks at skipNodeOperations."""
        return (self.list_type_attributes or self.compatibility_groups or self.optional_node_operations
                or self.derived_attributes)

    @staticmethod
    def from_gates(gates: FeatureGates) -> "AllocatorFeatures":
        on = gates.enabled
        return AllocatorFeatures(
            admin_access=on("DRAAdminAccess"),
            prioritized_list=on("DRAPrioritizedList"),
            partitionable_devices=on("DRAPartitionableDevices"),
            device_taints=on("DRADeviceTaints"),
            consumable_capacity=on("DRAConsumableCapacity"),
            fractional_capacity_range=on("DRAFractionalCapacityRange"),
            device_binding=on("DRADeviceBindingConditions") and on("DRAResourceClaimDeviceStatus"),
            list_type_attributes=on("DRAListTypeAttributes"),
            # Compatibility groups are documented to need partitionable devices too.
            compatibility_groups=on("DRADeviceCompatibilityGroups") and on("DRAPartitionableDevices"),
            optional_node_operations=on("DRAOptionalNodeOperations"),
            derived_attributes=on("DRADerivedAttributes"),
        )


@dataclass(frozen=True)
class ComponentGates:
    """Gates per component, so version skew between them can be shown."""

    apiserver: FeatureGates = field(default_factory=FeatureGates)
    scheduler: FeatureGates = field(default_factory=FeatureGates)
    kubelet: FeatureGates = field(default_factory=FeatureGates)

    @staticmethod
    def uniform(gates: FeatureGates) -> "ComponentGates":
        return ComponentGates(gates, gates, gates)
