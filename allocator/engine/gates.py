"""Kubernetes 1.37 feature gates that matter for DRA, as the components take them, and what the
allocator derives from them.

The gates, their versioned specs and their dependencies come from `gates.json`, which
`tests/kube/cmd/gates` generates from Kubernetes' own gate table. A component runs at an emulated
version and a minimum compatibility version (its `--emulated-version` and
`--min-compatibility-version` flags); a gate's default, stage and lock are those of the spec that
applies at that pair. A gate set the component would refuse at start-up is refused here too,
with the feature-gate library's words.

Gates can be set per component: the kube-apiserver decides which fields survive when an object is
written, the kube-scheduler decides what the allocator does.
"""
from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass, field

ALPHA, BETA, GA, DEPRECATED, PREALPHA = "alpha", "beta", "GA", "deprecated", "prealpha"

# What the playground says a gate does (the data file says what Kubernetes says about it).
SUMMARIES = {
    "DynamicResourceAllocation": "the whole DRA feature",
    "DRAPrioritizedList": "firstAvailable subrequests",
    "DRAAdminAccess": "adminAccess requests",
    "DRAResourceClaimDeviceStatus": "claim status.devices",
    "DRAExtendedResource": "extended resources (example.com/gpu: 1) backed by DRA",
    "DRADeviceTaints": "device taints and request tolerations",
    "DRADeviceTaintRules": "DeviceTaintRule objects add taints to devices",
    "DRAPartitionableDevices": "shared counters and per-device node selection",
    "DRAConsumableCapacity": "multi-allocatable devices and capacity requests",
    "DRAFractionalCapacityRange": "milli-unit arithmetic for validRange",
    "DRADeviceBindingConditions": "binding conditions on devices",
    "DRASchedulerFilterTimeout": "10 s timeout per node in the scheduler",
    "DRAResourceClaimGranularStatusAuthorization": "apiserver authorization of claim status writes",
    "DRAListTypeAttributes": "list-valued attributes and includes()",
    "DRADeviceCompatibilityGroups": "compatibility groups on counter consumption",
    "DRAOptionalNodeOperations": "skipNodeOperations on slices",
    "DRADerivedAttributes": "derived attributes in requests",
    "DRANodeAllocatableResources": "CPU, memory and hugepages that devices add to a pod's requests",
    "DRAPartitionableDevicesType": "partitionable device types in pool status (not modelled)",
    "DRAResourcePoolStatus": "ResourcePoolStatusRequest objects (not modelled)",
    "DRAWorkloadResourceClaims": "claims for workloads (not modelled)",
    "ResourceHealthStatus": "device health in pod status (not modelled)",
    "ResourceHealthStatusMessage": "a message with the device health (not modelled)",
    "GenericWorkload": "Workload objects; needed by DRAWorkloadResourceClaims (not modelled)",
    "NodeDeclaredFeatures": "node-declared features; needed by DRAOptionalNodeOperations (not modelled)",
}

_DATA_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "gates.json")


def __getattr__(name: str):
    """`DATA_FILE`, the table as a Path, made when asked for: pathlib (and the URL and IP modules
    it imports) is no part of `manage.py allocate`'s start-up."""
    if name == "DATA_FILE":
        from pathlib import Path

        return Path(_DATA_PATH)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class GateError(ValueError):
    pass


# ---- versions as --emulated-version takes them -------------------------------------------------

_VERSION = re.compile(r"^\s*v?([0-9]+(?:\.[0-9]+)*)(.*)$", re.S)


@functools.lru_cache(maxsize=256)  # a component's versions are looked up for every gate it reads
def _version(text: str) -> tuple[int, ...]:
    """A generic Kubernetes version (`1.36`, `v1.36.0`): two or more numbers."""
    match = _VERSION.match(text)
    if match is None:
        raise GateError(f"could not parse {_go_quote(text)} as version")
    parts = match.group(1).split(".")
    if len(parts) < 2:
        raise GateError(f"illegal version string {_go_quote(text)}")
    if parts[0].startswith("0") and parts[0] != "0":
        raise GateError(f"illegal zero-prefixed version component {_go_quote(parts[0])} in {_go_quote(text)}")
    return tuple(int(p) for p in parts)


def _go_quote(text: str) -> str:
    return json.dumps(text)


def _show(v: tuple[int, ...]) -> str:
    return ".".join(str(n) for n in v)


def parse_version_flag(text: str) -> str:
    """One `--emulated-version` / `--min-compatibility-version` value for the kube component, as
    major.minor; `kube=1.36` is accepted too."""
    key, value = "kube", text
    if "=" in text:
        key, _, value = text.partition("=")
        key, value = key.strip(), value.strip()
        if key != "kube":
            raise GateError(f"component not registered: {key}")
    parsed = _version(value)
    if len(parsed) > 2 and parsed[2] != 0:
        raise GateError(f"patch version not allowed, got: {key}={_show(parsed)}")
    return _show(parsed[:2])


# ---- the gate table ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Spec:
    version: tuple[int, int]
    default: bool
    stage: str
    locked: bool = False
    min_compatibility: tuple[int, int] | None = None


@dataclass(frozen=True)
class GateInfo:
    name: str
    specs: tuple[Spec, ...]
    depends_on: tuple[str, ...] = ()
    modelled: bool = True
    role: str = "shown"  # shown (a DRA gate), dependency (a DRA gate needs it), related (it needs one of those)
    summary: str = ""

    def spec_at(self, emulated: tuple[int, int], min_compat: tuple[int, int]) -> Spec:
        """The spec a component uses: the latest one not newer than its emulated version whose
        minimum compatibility version (if any) the component's own is at least."""
        for spec in reversed(self.specs):
            if spec.version > emulated:
                continue
            if spec.min_compatibility is not None and min_compat < spec.min_compatibility:
                continue
            return spec
        return _NOT_YET

    # The gate as a component started without version flags sees it.
    @property
    def default_spec(self) -> Spec:
        return self.spec_at(DEFAULT_EMULATED, DEFAULT_MIN_COMPAT)

    @property
    def stage(self) -> str:
        return self.default_spec.stage

    @property
    def default(self) -> bool:
        return self.default_spec.default

    @property
    def locked(self) -> bool:
        return self.default_spec.locked


_NOT_YET = Spec((0, 0), False, PREALPHA)  # a gate before its first version


def _load() -> tuple[dict, dict[str, GateInfo]]:
    with open(_DATA_PATH, encoding="utf-8") as handle:
        data = json.load(handle)
    gates = {}
    for raw in data["gates"]:
        specs = tuple(
            Spec(_version(s["version"])[:2], s["default"], s["stage"], s.get("locked", False),
                 _version(s["minCompatibilityVersion"])[:2] if s.get("minCompatibilityVersion") else None)
            for s in raw["specs"]
        )
        gates[raw["name"]] = GateInfo(raw["name"], specs, tuple(raw["dependsOn"]), raw["modelled"],
                                      raw["role"], SUMMARIES.get(raw["name"], ""))
    return data["versions"], gates


VERSIONS, _ALL = _load()
BINARY = _version(VERSIONS["binary"])[:2]
EMULATION_FLOOR = _version(VERSIONS["emulationVersionFloor"])[:2]
MIN_COMPAT_FLOOR = _version(VERSIONS["minCompatibilityVersionFloor"])[:2]
DEFAULT_EMULATED = _version(VERSIONS["defaultEmulationVersion"])[:2]
DEFAULT_MIN_COMPAT = _version(VERSIONS["defaultMinCompatibilityVersion"])[:2]
# Versions a user can pick (the page's control): the allowed range.
EMULATED_CHOICES = tuple(_show((BINARY[0], m)) for m in range(BINARY[1], EMULATION_FLOOR[1] - 1, -1))

# Every gate the table holds, by name: the shown ones and those only related to them.
KNOWN_GATES: dict[str, GateInfo] = dict(_ALL)

# Shown gates in the order of the page: the playground's DRA gates first, then what they depend on.
# The related gates are known (they can be set, and their dependencies are checked) but not shown.
GATES: dict[str, GateInfo] = dict(sorted(((n, g) for n, g in _ALL.items() if g.role != "related"),
                                         key=lambda kv: (kv[1].role != "shown", kv[0])))

# (key used in forms, shares and gallery entries, the component's name)
COMPONENTS = (("apiserver", "kube-apiserver"), ("scheduler", "kube-scheduler"), ("kubelet", "kubelet"))
COMPONENT_KEYS = tuple(key for key, _ in COMPONENTS)
COMPONENT_LABELS = dict(COMPONENTS)


class _computed_once:
    """functools.cached_property without its lock (Python 3.11 takes an RLock on every first read, a
    fifth of the gates' cost per run; 3.12 dropped it): the value is worked out on first read and
    kept in the instance's dict, which later reads find first. Two threads reading it at once may
    both work it out, to the same value."""

    def __init__(self, function):
        self.function = function
        self.name = function.__name__
        self.__doc__ = function.__doc__

    def __set_name__(self, owner, name):
        self.name = name

    def __get__(self, instance, owner=None):
        if instance is None:
            return self
        value = instance.__dict__[self.name] = self.function(instance)
        return value


def default_min_compat(emulated: str) -> str:
    """What a component uses when only --emulated-version is given: one minor back, not below the floor."""
    major, minor = _version(emulated)[:2]
    return _show(max((major, max(minor - 1, 0)), MIN_COMPAT_FLOOR))


@dataclass(frozen=True)
class FeatureGates:
    """Gate values for one component: explicit settings over the defaults at its versions."""

    values: tuple = ()  # sorted (name, bool) pairs as given (they may restate defaults)
    emulated: str = ""  # --emulated-version; "" = the binary's own
    min_compat: str = ""  # --min-compatibility-version; "" = its default for the emulated version

    @_computed_once  # the fields are frozen; each gate looked up reads both versions
    def emulated_version(self) -> tuple[int, int]:
        return _version(self.emulated)[:2] if self.emulated else DEFAULT_EMULATED

    @_computed_once
    def min_compat_version(self) -> tuple[int, int]:
        if self.min_compat:
            return _version(self.min_compat)[:2]
        if self.emulated:
            return _version(default_min_compat(self.emulated))[:2]
        return DEFAULT_MIN_COMPAT

    def spec(self, name: str) -> Spec | None:
        return _specs_at(self.emulated_version, self.min_compat_version).get(name)

    def default(self, name: str) -> bool:
        spec = self.spec(name)
        return spec.default if spec else False

    def enabled(self, name: str) -> bool:
        value = self._resolved.get(name)
        if value is not None:
            return value
        for gate, value in self.values:  # a name the table does not know (refusals() says so)
            if gate == name:
                return value
        return False

    @_computed_once
    def _resolved(self) -> dict[str, bool]:
        """Every known gate's value at these versions, worked out once: the components read them
        by the dozen (refusals() alone reads each gate and its dependencies)."""
        resolved = dict(_defaults_at(self.emulated_version, self.min_compat_version))
        for name, value in self.values:
            if name in resolved:
                resolved[name] = value
        return resolved

    def refusals(self) -> list[tuple[str | None, str]]:
        """Why the component would not start with these settings: (gate or None, the library's
        message), in the order it reports them. Setting errors (a locked gate, a gate not yet
        there) come first and alone; then missing dependencies; then versions out of range."""
        return list(_refusals_of(self))  # worked out once per gate set: every component of a run asks

    def _find_refusals(self) -> list[tuple[str | None, str]]:
        emulated, min_compat = self.emulated_version, self.min_compat_version
        errors: list[tuple[str | None, str]] = []
        for name, value in self.values:
            info = _ALL.get(name)
            if info is None:
                return [(name, f"unrecognized feature gate: {name}")]
            spec = info.spec_at(emulated, min_compat)
            if spec.locked and spec.default != value:
                errors.append((name, f"cannot set feature gate {name} to {_go_bool(value)}, "
                                     f"feature is locked to {_go_bool(spec.default)}"))
            elif spec.stage == PREALPHA:
                errors.append((name, f"cannot set feature gate {name} to {_go_bool(value)}, feature is PreAlpha "
                                     f"at emulated version {_show(emulated)}, min compatibility version "
                                     f"{_show(min_compat)}"))
        if errors:
            return errors
        for name, info in sorted(_ALL.items()):
            if not self.enabled(name):
                continue
            missing = [dep for dep in info.depends_on if dep in _ALL and not self.enabled(dep)]
            if missing:
                errors.append((name, f"{name} is enabled, but depends on features that are disabled: "
                                     f"[{' '.join(missing)}]"))
        if errors:
            return errors
        binary = _show(BINARY) + ".0"
        if emulated > BINARY or emulated < EMULATION_FLOOR:
            errors.append((None, f"emulation version {_show(emulated)} is not between "
                                 f"[{_show(EMULATION_FLOOR)}, {binary}]"))
        if min_compat > emulated or min_compat < MIN_COMPAT_FLOOR:
            errors.append((None, f"minCompatibilityVersion version {_show(min_compat)} is not between "
                                 f"[{_show(MIN_COMPAT_FLOOR)}, {_show(emulated)}]"))
        return errors

    def start_warnings(self) -> list[str]:
        """What the component logs at start-up for settings it accepts."""
        out = []
        specs = _specs_at(self.emulated_version, self.min_compat_version) if self.values else {}
        for name, value in self.values:
            spec = specs.get(name)
            if spec is not None and spec.stage in (GA, DEPRECATED):
                word = "GA" if spec.stage == GA else "deprecated"
                out.append(f"setting {word} feature gate {name}={_go_bool(value)}; it will be removed in a future release")
        return out

    def with_versions(self, emulated: str = "", min_compat: str = "") -> "FeatureGates":
        return FeatureGates(self.values, emulated, min_compat)


@functools.lru_cache(maxsize=64)
def _specs_at(emulated: tuple[int, int], min_compat: tuple[int, int]) -> dict[str, Spec]:
    """Every known gate's spec at these versions: a view of the gate table, the same for every gate
    set started with these versions (read-only)."""
    return {name: info.spec_at(emulated, min_compat) for name, info in _ALL.items()}


@functools.lru_cache(maxsize=64)
def _defaults_at(emulated: tuple[int, int], min_compat: tuple[int, int]) -> dict[str, bool]:
    """Every known gate's default at these versions (read-only)."""
    return {name: spec.default for name, spec in _specs_at(emulated, min_compat).items()}


@functools.lru_cache(maxsize=256)
def _refusals_of(gates: FeatureGates) -> tuple[tuple[str | None, str], ...]:
    """A gate set's start-up refusals depend on its settings alone (equal sets share them)."""
    return tuple(gates._find_refusals())


def _go_bool(value: bool) -> str:
    return "true" if value else "false"


def refusal_message(component_label: str, errors: list[tuple[str | None, str]]) -> str:
    """The component's start-up error as it prints it (one error alone, several as a list)."""
    texts = [text for _, text in errors]
    body = texts[0] if len(texts) == 1 else "[" + ", ".join(texts) + "]"
    return f"{component_label} would not start: {body}"


# strconv.ParseBool's spellings
_TRUE = frozenset({"1", "t", "T", "true", "TRUE", "True"})
_FALSE = frozenset({"0", "f", "F", "false", "FALSE", "False"})


def parse_gates(text: str | None, *, emulated: str = "", min_compat: str = "") -> tuple[FeatureGates, list[str]]:
    """Parse `A=true,B=false` as the Kubernetes components do; returns the gates and the warnings
    a component logs for them. Whether the component accepts the set is `FeatureGates.refusals`."""
    overrides: dict[str, bool] = {}
    for item in (text or "").split(","):
        if not item:
            continue
        name, sep, raw = item.partition("=")
        name, raw = name.strip(), raw.strip()
        if not sep:
            raise GateError(f"missing bool value for {name}")
        if raw in _TRUE:
            value = True
        elif raw in _FALSE:
            value = False
        else:
            raise GateError(f"invalid value of {name}={raw}, err: strconv.ParseBool: parsing {_go_quote(raw)}: "
                            "invalid syntax")
        overrides[name] = value
    gates = gates_from_dict(overrides, emulated=emulated, min_compat=min_compat)
    return gates, gates.start_warnings()


def gates_from_dict(overrides: dict, *, emulated: str = "", min_compat: str = "") -> FeatureGates:
    clean: dict[str, bool] = {}
    for name, value in overrides.items():
        if name not in _ALL:
            raise GateError(f"unrecognized feature gate: {name}")
        if not isinstance(value, bool):
            raise GateError(f"invalid value of {name}={value}: must be true or false")
        clean[name] = value
    return FeatureGates(tuple(sorted(clean.items())), emulated, min_compat)


STABLE, INCUBATING, EXPERIMENTAL = "stable", "incubating", "experimental"
# (AllocatorFeatures attribute, the gate behind it) for the features the variants differ in.
_VARIANT_FEATURES = (
    ("admin_access", "DRAAdminAccess"), ("prioritized_list", "DRAPrioritizedList"),
    ("partitionable_devices", "DRAPartitionableDevices"), ("device_taints", "DRADeviceTaints"),
    ("device_binding", "DRADeviceBindingConditions"), ("consumable_capacity", "DRAConsumableCapacity"),
    ("fractional_capacity_range", "DRAFractionalCapacityRange"),
    ("list_type_attributes", "DRAListTypeAttributes"), ("compatibility_groups", "DRADeviceCompatibilityGroups"),
    ("optional_node_operations", "DRAOptionalNodeOperations"), ("derived_attributes", "DRADerivedAttributes"),
)
_STABLE_SUPPORTS = ("admin_access", "prioritized_list", "partitionable_devices", "device_taints")
_INCUBATING_SUPPORTS = _STABLE_SUPPORTS + ("device_binding", "consumable_capacity", "fractional_capacity_range")


@dataclass(unsafe_hash=True)  # read-only by convention (frozen is slow to build, and every run builds one)
class AllocatorFeatures:
    """The allocator's view of the scheduler's gates."""

    admin_access: bool = True
    prioritized_list: bool = True
    partitionable_devices: bool = True
    device_taints: bool = True
    consumable_capacity: bool = True
    fractional_capacity_range: bool = False
    device_binding: bool = True
    list_type_attributes: bool = False
    compatibility_groups: bool = False
    optional_node_operations: bool = False
    derived_attributes: bool = False

    @property
    def experimental_variant(self) -> bool:
        """Whether upstream picks its experimental allocator: only it supports the alpha DRA features,
        and only it looks at skipNodeOperations."""
        return self.variant == EXPERIMENTAL

    def _beyond(self, supported: tuple[str, ...]) -> list[str]:
        return [gate for attr, gate in _VARIANT_FEATURES if getattr(self, attr) and attr not in supported]

    @_computed_once  # the fields are read-only; the search asks at every request and device
    def variant(self) -> str:
        """The allocator the scheduler runs: the first of stable, incubating and experimental whose
        supported features cover every enabled one (as structured.NewAllocator chooses)."""
        enabled = {attr for attr, _ in _VARIANT_FEATURES if getattr(self, attr)}
        if enabled.issubset(_STABLE_SUPPORTS):
            return STABLE
        if enabled.issubset(_INCUBATING_SUPPORTS):
            return INCUBATING
        return EXPERIMENTAL

    @property
    def variant_reason(self) -> str:
        """Which enabled features moved the choice past the simpler variants."""
        if self.variant == STABLE:
            return "no enabled feature needs more than the stable allocator"
        needed = self._beyond(_INCUBATING_SUPPORTS if self.variant == EXPERIMENTAL else _STABLE_SUPPORTS)
        return f"{', '.join(needed)} {'is' if len(needed) == 1 else 'are'} enabled, which the " \
               f"{'incubating' if self.variant == EXPERIMENTAL else 'stable'} allocator does not support"

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
            compatibility_groups=on("DRADeviceCompatibilityGroups"),
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

    def refusal(self) -> tuple[str, str | None, str] | None:
        """The first component that would not start: (component key, gate or None, message)."""
        asked = []
        for key in ("scheduler", "apiserver", "kubelet"):  # the scheduler first: it runs the allocator
            gates = getattr(self, key)
            if any(gates is other for other in asked):
                continue  # the same settings (uniform gates): they were accepted already
            asked.append(gates)
            errors = gates.refusals()
            if errors:
                return key, errors[0][0], refusal_message(COMPONENT_LABELS[key], errors)
        return None


def readme_table() -> str:
    """The README's gate table, from the data file: each shown gate as a scheduler started without
    version flags sees it, and the versions where it changes."""
    lines = ["| Gate | Stage in 1.37 | Default | Locked | Needs | History (version: stage, default) | Modelled |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for name, info in GATES.items():
        spec = info.default_spec
        history = "; ".join(
            f"{_show(s.version)}: {s.stage} {'on' if s.default else 'off'}"
            + (" locked" if s.locked else "")
            + (f" (min compat {_show(s.min_compatibility)})" if s.min_compatibility else "")
            for s in info.specs)
        needs = ", ".join(f"`{d}`" for d in info.depends_on) or "—"
        lines.append(f"| `{name}` | {spec.stage} | {'on' if spec.default else 'off'} | "
                     f"{'yes' if spec.locked else 'no'} | {needs} | {history} | "
                     f"{'yes' if info.modelled else 'no'} |")
    return "\n".join(lines) + "\n"
