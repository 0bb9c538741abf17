"""Gathering the resource pools a node can see, in the order the allocator tries them.

A pool is complete when it has as many slices of its newest generation as
`resourceSliceCount` says; only complete, valid pools offer devices.
"""
from __future__ import annotations

from dataclasses import dataclass, field

from allocator.engine.sentence import Sentence
from allocator.engine.gates import STABLE, AllocatorFeatures
from allocator.engine.nodematch import SelectorError, selector_matches
from allocator.engine.objects import Device, Node, ResourceSlice


class PoolGatherError(Exception):
    """A slice whose node selector cannot be evaluated (fatal for the attempt)."""


@dataclass
class Pool:
    driver: str
    name: str
    generation: int = 0
    device_slices: list = field(default_factory=list)  # targeting this node, sorted by name
    other_device_slices: list = field(default_factory=list)  # same pool, not targeting this node
    counter_slices: list = field(default_factory=list)
    incomplete: bool = False
    invalid: str | None = None  # reason when invalid
    incomplete_reason: str | None = None  # why an incomplete pool is incomplete
    counter_sets: dict = field(default_factory=dict)  # name -> CounterSet

    @property
    def id(self) -> tuple:
        return (self.driver, self.name)

    @property
    def id_str(self) -> str:
        return f"{self.driver}/{self.name}"

    @property
    def usable(self) -> bool:
        return not self.incomplete and self.invalid is None

    @property
    def has_binding_conditions(self) -> bool:
        # An invalid pool keeps no devices, so it is never moved behind the others.
        return self.invalid is None and any(s.has_binding_conditions for s in self.device_slices)

    def devices(self):
        for s in self.device_slices:
            yield from s.devices

    def all_pool_devices(self):
        """Devices of every device slice of the pool, targeting this node or not."""
        for s in self.device_slices:
            yield from s.devices
        for s in self.other_device_slices:
            yield from s.devices


class SliceIndex:
    """All slices of a scenario, indexed once for per-node gathering."""

    def __init__(self, slices: list[ResourceSlice]):
        self.slices = slices
        self.by_node: dict[str, list[ResourceSlice]] = {}
        self.shared: list[ResourceSlice] = []
        self.by_pool: dict[tuple, list[ResourceSlice]] = {}
        for s in slices:
            if s.node_name:
                self.by_node.setdefault(s.node_name, []).append(s)
            else:
                self.shared.append(s)
            self.by_pool.setdefault((s.driver, s.pool), []).append(s)

    def node_names(self) -> set[str]:
        return set(self.by_node)


def _hidden_by_groups(s: ResourceSlice, features: AllocatorFeatures) -> bool:
    """A slice with compatibility groups is invisible to a scheduler without the feature;
    its pool's slice count then makes the pool incomplete."""
    return not features.compatibility_groups and s.has_compatibility_groups


def ignored_reason(s: ResourceSlice, features: AllocatorFeatures) -> str | None:
    """Why a scheduler with these features does not see the slice at all, or None."""
    if not features.partitionable_devices:
        if s.shared_counters:
            return "it publishes sharedCounters and DRAPartitionableDevices is disabled"
        if s.per_device_node_selection is not None:
            return "it sets perDeviceNodeSelection and DRAPartitionableDevices is disabled"
    if _hidden_by_groups(s, features):
        return "a device declares compatibilityGroups and DRADeviceCompatibilityGroups is disabled"
    return None


def _dropped(s: ResourceSlice, features: AllocatorFeatures) -> bool:
    return ignored_reason(s, features) is not None


def ignored_slices(node: Node, index: SliceIndex, features: AllocatorFeatures) -> list[tuple]:
    """(slice, reason) for the node's candidate slices that the scheduler ignores because of its gates."""
    out = []
    for s in index.by_node.get(node.name, []) + index.shared:
        reason = ignored_reason(s, features)
        if reason is not None:
            out.append((s, reason))
    return out


def device_matches_node(device: Device, node: Node) -> bool:
    if device.node_name:
        return device.node_name == node.name
    if device.all_nodes:
        return True
    if device.node_selector is not None:
        return selector_matches(device.node_selector, node)
    return False


def _relevant(s: ResourceSlice, node: Node) -> bool:
    try:
        if s.node_name or s.all_nodes or s.node_selector is not None:
            if s.node_name:
                return s.node_name == node.name
            if s.all_nodes:
                return True
            return selector_matches(s.node_selector, node)
        if s.per_device_node_selection:
            return any(device_matches_node(d, node) for d in s.devices)
    except SelectorError as exc:
        raise PoolGatherError(
            f"gather pool information: failed to perform node selection for slice {s.name}: "
            f"failed to parse node selector: {exc}"
        ) from None
    return False


def gather_pools(node: Node, index: SliceIndex, features: AllocatorFeatures) -> list[Pool]:
    candidates = index.by_node.get(node.name, []) + index.shared
    # The stable allocator (v0.37.2) takes every slice that publishes shared counters, whatever node
    # it names; the incubating and experimental ones only those meant for this node.
    counters_anywhere = features.variant == STABLE
    if counters_anywhere:
        candidates = candidates + [s for s in index.slices
                                   if s.shared_counters and s.node_name and s.node_name != node.name]
    groups: dict[tuple, list[ResourceSlice]] = {}
    for s in candidates:
        if _dropped(s, features) or not ((counters_anywhere and s.shared_counters) or _relevant(s, node)):
            continue
        key = (s.driver, s.pool)
        group = groups.get(key)
        if group is None or s.generation > group[0].generation:
            groups[key] = [s]
        elif s.generation == group[0].generation:
            group.append(s)

    pools: list[Pool] = []
    for key, group in groups.items():
        generation = group[0].generation
        wanted = group[0].slice_count
        extra: list[ResourceSlice] = []
        if len(group) != wanted:
            in_cluster = [s for s in index.by_pool.get(key, ()) if not _hidden_by_groups(s, features)]
            if any(s.generation > generation for s in in_cluster):
                continue  # obsolete: a newer generation is being published elsewhere
            same = [s for s in in_cluster if s.generation == generation]
            if len(same) != wanted:
                pool = Pool(key[0], key[1], generation, incomplete=True)
                pool.incomplete_reason = Sentence(
                    f"{len(same)} of {wanted} slices (resourceSliceCount) of generation {generation} are visible "
                    "to the scheduler", "incomplete", visible=len(same), wanted=wanted, generation=generation)
                pools.append(pool)
                continue
            members = {id(s) for s in group}
            extra = [s for s in same if id(s) not in members]
        pools.append(_build_pool(key, generation, group, extra, features))

    if len(pools) > 1:
        pools.sort(key=lambda p: (p.has_binding_conditions, p.driver, p.name))
    return pools


def _build_pool(key, generation, group, extra, features: AllocatorFeatures) -> Pool:
    pool = Pool(key[0], key[1], generation)
    for s in sorted(group, key=lambda s: s.name.encode()) if len(group) > 1 else group:
        if features.partitionable_devices and s.shared_counters:
            pool.counter_slices.append(s)
        else:
            pool.device_slices.append(s)
    for s in extra:
        if features.partitionable_devices and s.shared_counters:
            pool.counter_slices.append(s)
        else:
            pool.other_device_slices.append(s)

    names = [d.name for s in pool.device_slices for d in s.devices]
    if len(set(names)) != len(names):  # the first name seen twice makes the pool invalid
        seen: set[str] = set()
        for name in names:
            if name in seen:
                pool.invalid = f"duplicate device name {name}"
                return pool
            seen.add(name)
    if features.partitionable_devices:
        for s in pool.counter_slices:
            for cs in s.shared_counters:
                if cs.name in pool.counter_sets:
                    pool.invalid = f"duplicate counter set name {cs.name}"
                    return pool
                pool.counter_sets[cs.name] = cs
        consuming = [d for s in pool.device_slices + pool.other_device_slices for d in s.devices if d.consumes]
        for d in consuming:  # all_pool_devices(), those that consume counters
            for consumption in d.consumes:
                counter_set = pool.counter_sets.get(consumption.counter_set)
                if counter_set is None:
                    pool.invalid = f"counter set {consumption.counter_set} not found"
                    return pool
                for counter in consumption.counters:
                    if counter not in counter_set.counters:
                        pool.invalid = f"counter {counter} not found in counter set {consumption.counter_set}"
                        return pool
    return pool
