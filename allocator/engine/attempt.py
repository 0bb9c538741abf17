"""The bookkeeping of one allocation attempt: what is taken, by whom, and how to give it back.

`AllocatedState` is what claims allocated before this scheduling cycle hold.
`Attempt` adds the picks of the search in progress: exclusive marks, capacity
shares, consumed counters, compatibility-group state and the result lists.
`take(pick)` applies a pick and returns the callable that undoes it exactly;
the `*_check` methods are pure: they only read the state.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

from allocator.engine.counters import GroupState, available_counters, group_baseline
from allocator.engine.refusals import CounterShort, GroupsIncompatible, Holder, quantity_text

ZERO = Decimal(0)


@dataclass
class AllocatedState:
    """Devices, shares and capacity taken by claims that are already allocated."""

    devices: set = field(default_factory=set)  # device ids held exclusively
    shares: dict = field(default_factory=dict)  # device id -> set of share ids
    capacity: dict = field(default_factory=dict)  # device id -> {capacity name: Decimal}
    holders: dict = field(default_factory=dict)  # device id -> [claim key]
    # (id of a node's pool, counter set, counter) -> (pool, Holders consuming it): found once for every
    # search on that node
    counter_holders: dict = field(default_factory=dict)

    def is_allocated(self, device_id: tuple) -> bool:
        return device_id in self.devices or device_id in self.shares or device_id in self.capacity


def allocated_state(claims: list, features) -> AllocatedState:
    state = AllocatedState()
    for claim in claims:
        if claim.allocation is None:
            continue
        for result in claim.allocation.results:
            if result.admin_access:
                continue  # admin access never occupies a device
            device_id = result.device_id
            state.holders.setdefault(device_id, []).append(claim.key)
            if features.consumable_capacity and result.share_id:
                state.shares.setdefault(device_id, set()).add(result.share_id)
                if result.consumed_capacity:
                    totals = state.capacity.setdefault(device_id, {})
                    for name, amount in result.consumed_capacity.items():
                        totals[name] = totals.get(name, ZERO) + amount.value
            else:
                state.devices.add(device_id)
    return state


@dataclass
class Pick:
    """One device picked during the search."""

    rd: object  # allocate.RequestData
    device: object
    share_id: str | None = None
    consumed: dict | None = None  # capacity name as published -> Quantity (multi-allocatable devices)
    totals: dict | None = None  # qualified capacity name -> Quantity, what the share adds to the device
    pool: object = None  # set when the pick consumes counters
    multi: bool = False  # a share of a multi-allocatable device
    pays_counters: bool = False  # consumes counters and compatibility groups (not a second share)


class Attempt:
    def __init__(self, claims: list, allocated: AllocatedState, *, compatibility_groups: bool):
        self.claims = claims
        self.compatibility_groups = compatibility_groups
        self.allocated = allocated
        self.results: list[list[Pick]] = [[] for _ in claims]
        self.allocating: dict = {}  # device id -> set of claim indexes (exclusive picks)
        self.allocating_capacity: dict = {}  # device id -> {qualified capacity: Decimal}
        self.consumed_counters: dict = {}  # pool id -> {set: {counter: Decimal}}
        self.group_states: dict = {}  # (pool id, set) -> GroupState in this attempt
        self._available: dict = {}  # pool id -> counters left after allocated claims (lazy)
        self._baselines: dict = {}  # pool id -> {set: GroupState} (lazy)
        self._overdrawn_before: dict = {}  # pool id -> counter sets overdrawn by claims allocated before

    # -- reading ---------------------------------------------------------------------------

    def in_use(self, device_id: tuple) -> bool:
        return device_id in self.allocated.devices or bool(self.allocating.get(device_id))

    def picked_by_claim(self, device_id: tuple, ci: int) -> bool:
        pickers = self.allocating.get(device_id)
        return bool(pickers) and ci in pickers

    def has_live_share(self, device_id: tuple) -> bool:
        return (
            device_id in self.allocated.capacity
            or device_id in self.allocated.shares
            or device_id in self.allocating_capacity
        )

    def used_capacity(self, device_id: tuple) -> dict:
        before = self.allocated.capacity.get(device_id)
        now = self.allocating_capacity.get(device_id)
        if not now:
            return before or {}
        if not before:
            return now
        total = dict(before)
        for name, amount in now.items():
            total[name] = total.get(name, ZERO) + amount
        return total

    def available_counters_of(self, pool) -> dict:
        available = self._available.get(pool.id)
        if available is None:
            available = available_counters(pool, self.allocated.is_allocated)
            self._available[pool.id] = available
        return available

    def group_baseline_of(self, pool) -> dict:
        baseline = self._baselines.get(pool.id)
        if baseline is None:
            baseline = group_baseline(pool, self.allocated.is_allocated)
            self._baselines[pool.id] = baseline
        return baseline

    def group_state(self, pool, counter_set: str) -> GroupState:
        state = self.group_states.get((pool.id, counter_set))
        if state is None:
            state = self.group_baseline_of(pool).get(counter_set, GroupState())
        return state

    def picks(self):
        """(claim index, pick) for every pick of this attempt, in the order they were made per claim."""
        for ci, picks in enumerate(self.results):
            for pick in picks:
                yield ci, pick

    # -- pure checks ------------------------------------------------------------------------

    def groups_check(self, pool, device, detail: bool) -> GroupsIncompatible | None:
        """Compatibility groups (§10): every counter set the device draws on must admit its groups."""
        states: dict = {}
        for entry in device.consumes:
            state = states.get(entry.counter_set) or self.group_state(pool, entry.counter_set)
            groups = frozenset(entry.groups)
            if not state.admits(groups):
                set_by = self.group_setters(pool, entry.counter_set) if detail else ()
                return GroupsIncompatible(entry.counter_set, state.describe(), tuple(sorted(groups)), set_by)
            states[entry.counter_set] = state.add(groups)
        return None

    def counters_check(self, pool, device, detail: bool) -> CounterShort | None:
        """Shared counters (§9): with the device added, no counter of the pool may be overdrawn."""
        adds: dict = {}
        for entry in device.consumes:
            counters = adds.setdefault(entry.counter_set, {})
            for counter, amount in entry.counters.items():
                counters[counter] = counters.get(counter, ZERO) + amount.value
        consumed = self.consumed_counters.get(pool.id, {})
        overdrawn = self._overdrawn_before.get(pool.id)
        if overdrawn is None:
            overdrawn = self._overdrawn_before[pool.id] = frozenset(
                name for name, counters in self.available_counters_of(pool).items()
                if any(left < ZERO for left in counters.values()))
        for set_name, counters in self.available_counters_of(pool).items():
            extra = adds.get(set_name)
            if extra is None:
                # Every pick so far passed this check, so a set the device does not draw on can
                # only be overdrawn if claims allocated before overdrew it.
                if set_name not in overdrawn:
                    continue
                extra = {}
            used = consumed.get(set_name, {})
            for counter, left in counters.items():
                before = used.get(counter, ZERO)
                if left < before + extra.get(counter, ZERO):
                    like = pool.counter_sets[set_name].counters.get(counter) if set_name in pool.counter_sets else None
                    need = quantity_text(extra[counter], like) if counter in extra else ""
                    holders = self.counter_holders(pool, set_name, counter) if detail else ()
                    return CounterShort(set_name, counter, need, quantity_text(max(left - before, ZERO), like),
                                        holders)
        return None

    # -- who holds what (explanations only) -------------------------------------------------

    def device_holders(self, device_id: tuple) -> tuple:
        """Claims allocated before, then picks of this attempt, that hold the device."""
        out = [Holder(key, None, "/".join(device_id)) for key in self.allocated.holders.get(device_id, ())]
        for ci, pick in self.picks():
            if pick.device.id == device_id:
                out.append(Holder(self.claims[ci].key, pick.rd.name, pick.device.id_str))
        return tuple(out)

    def share_holders(self, device_id: tuple, capacity: str | None = None) -> tuple:
        out = [Holder(key, None, "/".join(device_id)) for key in self.allocated.holders.get(device_id, ())]
        for ci, pick in self.picks():
            if pick.device.id == device_id and pick.multi:
                amount = None
                if capacity is not None and pick.consumed and capacity in pick.consumed:
                    amount = str(pick.consumed[capacity])
                out.append(Holder(self.claims[ci].key, pick.rd.name, pick.device.id_str, amount))
        return tuple(out)

    def counter_holders(self, pool, counter_set: str, counter: str) -> tuple:
        """Who consumes the counter: devices of claims allocated before, then this attempt's picks."""
        out = list(self._counter_held_before(pool, counter_set, counter))
        for ci, pick in self.picks():
            if pick.pays_counters and pick.pool is pool:
                amount = _consumes(pick.device, counter_set, counter)
                if amount is not None:
                    out.append(Holder(self.claims[ci].key, pick.rd.name, pick.device.id_str, str(amount)))
        return tuple(out)

    def _counter_held_before(self, pool, counter_set: str, counter: str) -> tuple:
        """The holders of claims allocated before: fixed for the whole cycle, so found once."""
        key = (id(pool), counter_set, counter)  # pools are made per node: the same id may hold other devices
        cached = self.allocated.counter_holders.get(key)
        if cached is not None and cached[0] is pool:
            return cached[1]
        out = []
        for device in pool.all_pool_devices():
            if not device.consumes or not self.allocated.is_allocated(device.id):
                continue
            amount = _consumes(device, counter_set, counter)
            if amount is not None:
                for claim in self.allocated.holders.get(device.id, ()) or ("(allocated)",):
                    out.append(Holder(claim, None, device.id_str, str(amount)))
        held = tuple(out)
        self.allocated.counter_holders[key] = (pool, held)  # the pool kept alive, so its id is not reused
        return held

    def group_setters(self, pool, counter_set: str) -> tuple:
        out = []
        for device in pool.all_pool_devices():
            if device.consumes and self.allocated.is_allocated(device.id) and any(
                    e.counter_set == counter_set for e in device.consumes):
                for key in self.allocated.holders.get(device.id, ()) or ("(allocated)",):
                    out.append(Holder(key, None, device.id_str))
        for ci, pick in self.picks():
            if pick.pays_counters and pick.pool is pool and any(
                    e.counter_set == counter_set for e in pick.device.consumes):
                out.append(Holder(self.claims[ci].key, pick.rd.name, pick.device.id_str))
        return tuple(out)

    # -- taking and giving back -------------------------------------------------------------

    def take(self, ci: int, pick: Pick):
        """Apply a pick that passed every check; returns the undo callable."""
        device_id = pick.device.id
        pool = pick.pool
        saved_groups = {}
        if pick.pays_counters:
            consumed = self.consumed_counters.setdefault(pool.id, {})
            for entry in pick.device.consumes:
                key = (pool.id, entry.counter_set)
                if key not in saved_groups:
                    saved_groups[key] = self.group_states.get(key)
                if self.compatibility_groups:
                    self.group_states[key] = self.group_state(pool, entry.counter_set).add(frozenset(entry.groups))
                counters = consumed.setdefault(entry.counter_set, {})
                for counter, amount in entry.counters.items():
                    counters[counter] = counters.get(counter, ZERO) + amount.value
        fresh_mark = False
        if not pick.multi:
            marks = self.allocating.setdefault(device_id, set())
            fresh_mark = ci not in marks
            marks.add(ci)
        existed = device_id in self.allocating_capacity
        if pick.multi and pick.totals is not None:
            totals = self.allocating_capacity.setdefault(device_id, {})
            for name, amount in pick.totals.items():
                totals[name] = totals.get(name, ZERO) + amount.value
        self.results[ci].append(pick)

        def undo():
            self.results[ci].pop()
            if pick.multi and pick.totals is not None:
                totals = self.allocating_capacity[device_id]
                for name, amount in pick.totals.items():
                    totals[name] -= amount.value
                if not existed:
                    del self.allocating_capacity[device_id]
            if fresh_mark:
                marks = self.allocating.get(device_id)
                if marks is not None:
                    marks.discard(ci)
                    if not marks:
                        del self.allocating[device_id]
            if pick.pays_counters:
                counters_of = self.consumed_counters[pool.id]
                for entry in pick.device.consumes:
                    counters = counters_of[entry.counter_set]
                    for counter, amount in entry.counters.items():
                        counters[counter] -= amount.value
                for key, old in saved_groups.items():
                    if old is None:
                        self.group_states.pop(key, None)
                    else:
                        self.group_states[key] = old

        return undo


def _consumes(device, counter_set: str, counter: str):
    for entry in device.consumes:
        if entry.counter_set == counter_set and counter in entry.counters:
            return entry.counters[counter]
    return None
