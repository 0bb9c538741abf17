"""Shared counters of partitionable devices, and device compatibility groups.

Counters: each pool starts from its counter sets, minus what already-allocated
devices consume; a device may be picked only while, for every counter of the
pool, what this attempt consumes stays within what is available.

Compatibility groups: per counter set, all devices drawing on it together must
either all declare no groups, or all declare groups with a common one.
"""
from __future__ import annotations

from dataclasses import dataclass
from decimal import Decimal

ZERO = Decimal(0)


def available_counters(pool, is_allocated) -> dict:
    """{counter set: {counter: Decimal}} left after already-allocated devices (may be negative)."""
    available = {
        name: {counter: q.value for counter, q in cs.counters.items()} for name, cs in pool.counter_sets.items()
    }
    for device in pool.all_pool_devices():
        if not device.consumes or not is_allocated(device.id):
            continue
        for consumption in device.consumes:
            counters = available.get(consumption.counter_set)
            if counters is None:
                continue
            for counter, amount in consumption.counters.items():
                if counter in counters:
                    counters[counter] -= amount.value
    return available


@dataclass(frozen=True, slots=True)
class GroupState:
    """Running compatibility state of one counter set."""

    has_members: bool = False
    all_empty: bool = True
    groups: frozenset = frozenset()

    def admits(self, groups: frozenset) -> bool:
        if not self.has_members:
            return True
        if not groups:
            return self.all_empty
        if self.all_empty:
            return False
        return bool(self.groups & groups)

    def add(self, groups: frozenset) -> "GroupState":
        if not self.has_members:
            return GroupState(True, not groups, groups)
        if self.all_empty or not groups:
            return self
        return GroupState(True, False, self.groups & groups)

    def describe(self) -> str:
        if not self.has_members:
            return "no devices yet"
        if self.all_empty:
            return "devices without groups"
        return "{" + ", ".join(sorted(self.groups)) + "}"


def group_baseline(pool, is_allocated) -> dict:
    """{counter set: GroupState} folded over the pool's already-allocated devices."""
    states: dict = {}
    for device in pool.all_pool_devices():
        if not device.consumes or not is_allocated(device.id):
            continue
        for consumption in device.consumes:
            state = states.get(consumption.counter_set, GroupState())
            states[consumption.counter_set] = state.add(frozenset(consumption.groups))
    return states
