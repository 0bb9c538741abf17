"""The search: which devices the structured allocator picks for a set of claims on one node.

A depth-first, first-fit enumeration over requests in claim order; within a
request, devices are taken as combinations in candidate order (pool, slice,
position), so the first complete assignment found is the answer.
"""
from __future__ import annotations

import sys
import time
import uuid
from dataclasses import dataclass, field
from decimal import Decimal

from allocator.engine import cel
from allocator.engine.capacity import (
    CapacityError,
    consumption,
    resolve_requests,
    shortfall,
    status_name,
)
from allocator.engine.constraints import DistinctAttribute, MatchAttribute
from allocator.engine.counters import (
    GroupState,
    available_counters,
    first_overdrawn,
    group_baseline,
)
from allocator.engine.gates import AllocatorFeatures
from allocator.engine.nodematch import SelectorError
from allocator.engine.objects import (
    LIST_KINDS,
    Device,
    DeviceRequest,
    Node,
    ResourceClaim,
    attribute_from_value,
)
from allocator.engine.pools import Pool, device_matches_node
from allocator.engine.selectors import DeviceInputError, device_input, runtime_message

MAX_RESULTS = 32  # devices per claim
DEFAULT_MAX_STEPS = 200_000  # about 3 s of search; callers may allow more
OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"


class Fatal(Exception):
    """The allocator aborts the whole attempt (upstream: a scheduling error)."""

    def __init__(self, message: str, *, claim: ResourceClaim | None = None, path: tuple = (), kind: str = ""):
        super().__init__(message)
        self.message = message
        self.claim = claim
        self.path = path
        self.kind = kind


class NodeFailure(Exception):
    """The node is rejected with a message (other nodes may still work)."""

    def __init__(self, message: str):
        super().__init__(message)
        self.message = message


class SearchLimit(Exception):
    """The step budget or the wall-clock limit ran out before the search finished."""

    def __init__(self, message: str, steps: int):
        super().__init__(message)
        self.message = message
        self.steps = steps


class _MaxSize(Exception):
    """Internal: a branch cannot fit under the 32-results limit."""


# --- the cluster's existing allocations -----------------------------------------------


@dataclass
class AllocatedState:
    """Devices, shares and capacity taken by claims that are already allocated."""

    devices: set = field(default_factory=set)  # device ids held exclusively
    shares: dict = field(default_factory=dict)  # device id -> set of share ids
    capacity: dict = field(default_factory=dict)  # device id -> {capacity name: Decimal}
    holders: dict = field(default_factory=dict)  # device id -> [claim key]

    def is_allocated(self, device_id: tuple) -> bool:
        return device_id in self.devices or device_id in self.shares or device_id in self.capacity


def allocated_state(claims: list[ResourceClaim], features: AllocatorFeatures) -> AllocatedState:
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
                        totals[name] = totals.get(name, Decimal(0)) + amount.value
            else:
                state.devices.add(device_id)
    return state


# --- per-request data ----------------------------------------------------------------------


@dataclass
class RequestData:
    claim_index: int
    request_index: int
    sub_index: int
    request: DeviceRequest
    parent_name: str | None  # set for a firstAvailable subrequest
    device_class: object
    num_devices: int = 0
    all_devices: list | None = None
    path: tuple = ()  # field path of the request inside the claim

    @property
    def name(self) -> str:
        """The request as results report it: `req` or `req/sub`."""
        if self.parent_name is None:
            return self.request.name
        return f"{self.parent_name}/{self.request.name}"

    @property
    def admin(self) -> bool:
        return bool(self.request.admin_access)

    @property
    def all_mode(self) -> bool:
        return self.request.mode == "All"


@dataclass
class Pick:
    """One device picked during the search."""

    rd: RequestData
    device: Device
    share_id: str | None = None
    consumed: dict | None = None  # capacity name -> Quantity (multi-allocatable devices)


# --- the allocator -------------------------------------------------------------------------


class Allocator:
    def __init__(
        self,
        *,
        claims: list[ResourceClaim],
        classes: dict,
        pools: list[Pool],
        node: Node,
        features: AllocatorFeatures,
        allocated: AllocatedState,
        max_steps: int = DEFAULT_MAX_STEPS,
        deadline: float | None = None,
        cel_options: cel.Options | None = None,
        share_ids=None,
        all_slices: list | None = None,
    ):
        self.all_slices = all_slices  # every slice of the scenario, for explanations
        self.claims = claims
        self.classes = classes
        self.pools = pools
        self.node = node
        self.features = features
        self.allocated = allocated
        self.max_steps = max_steps
        self.deadline = deadline
        self.cel_options = cel_options or cel.Options(list_type_attributes=features.list_type_attributes)
        self.share_ids = share_ids or (lambda: str(uuid.uuid4()))
        self.steps = 0
        self.request_data: dict = {}
        self.constraints: list[list] = [[] for _ in claims]
        self.results: list[list[Pick]] = [[] for _ in claims]
        self.allocating: dict = {}  # device id -> set of claim indexes (exclusive picks)
        self.allocating_capacity: dict = {}  # device id -> {capacity: Decimal}
        self.consumed_counters: dict = {}  # pool id -> {set: {counter: Decimal}}
        self.available: dict = {}  # pool id -> available counters (lazy)
        self.group_states: dict = {}  # (pool id, set) -> GroupState in this attempt
        self.group_baselines: dict = {}  # pool id -> {set: GroupState} (lazy)
        self.selectable_cache: dict = {}
        self.derived_cache: dict = {}
        self.program_cache: dict = {}
        self.selected_sub: dict = {}
        self.allocations: dict = {}  # claim index -> status.allocation, once the search succeeded
        self.why = None  # reason for the last refusal (explanations)
        # The furthest the search got: the request it could not satisfy and the picks before it.
        self.request_offset = []
        offset = 0
        for claim in claims:
            self.request_offset.append(offset)
            offset += len(claim.requests)
        self.furthest_depth = -1
        self.furthest_request: RequestData | None = None
        self.furthest_picks: list = []
        self.pool_of_device: dict = {}
        self.slice_of_device: dict = {}
        # Candidate order: pools in order, their device slices by name, devices as listed.
        self.candidates: list[Device] = []
        for pool in pools:
            for s in pool.device_slices:
                for d in s.devices:
                    self.slice_of_device[id(d)] = s
                    self.pool_of_device[id(d)] = pool
                    if pool.usable:
                        self.candidates.append(d)

    # -- setup -------------------------------------------------------------------------

    def setup(self) -> None:
        """Validate requests and fix device counts (§6.2), raising Fatal on the first problem."""
        for ci, claim in enumerate(self.claims):
            accounted = 0
            for ri, req in enumerate(claim.requests):
                prefix = f"claim {claim.key}, request {req.name}"
                if req.first_available and not self.features.prioritized_list:
                    raise Fatal(f"{prefix}: has subrequests, but the DRAPrioritizedList feature is disabled",
                                claim=claim, path=("spec", "devices", "requests", ri, "firstAvailable"))
                if req.exactly is not None:
                    if req.exactly.capacity_requests is not None and not self.features.consumable_capacity:
                        raise Fatal(f"{prefix}: has capacity requests, but the DRAConsumableCapacity feature is disabled",
                                    claim=claim, path=("spec", "devices", "requests", ri, "exactly", "capacity"))
                    rd = self._request_data(ci, ri, 0, req.exactly, None, ("spec", "devices", "requests", ri, "exactly"))
                    needed = rd.num_devices
                else:
                    for si, sub in enumerate(req.first_available):
                        if sub.capacity_requests is not None and not self.features.consumable_capacity:
                            raise Fatal(
                                f"claim {claim.key}, subrequest {sub.name}: has capacity requests, "
                                "but the DRAConsumableCapacity feature is disabled",
                                claim=claim, path=("spec", "devices", "requests", ri, "firstAvailable", si, "capacity"))
                    needed = None
                    for si, sub in enumerate(req.first_available):
                        path = ("spec", "devices", "requests", ri, "firstAvailable", si)
                        rd = self._request_data(ci, ri, si, sub, req.name, path)
                        needed = rd.num_devices if needed is None else min(needed, rd.num_devices)
                    needed = needed or 0
                if accounted + needed > MAX_RESULTS:
                    raise Fatal(
                        f"{prefix}: adding {needed} devices exceeds the claim limit of {MAX_RESULTS}, "
                        f"with {accounted} already accounted for",
                        claim=claim, path=("spec", "devices", "requests", ri))
                accounted += needed
            for index, constraint in enumerate(claim.constraints):
                if constraint.match_attribute:
                    self.constraints[ci].append(MatchAttribute(
                        constraint.requests, constraint.match_attribute, self.features.list_type_attributes,
                        self.derived_attribute))
                elif constraint.distinct_attribute:
                    self.constraints[ci].append(DistinctAttribute(
                        constraint.requests, constraint.distinct_attribute, self.features.list_type_attributes,
                        self.derived_attribute))
                else:
                    raise Fatal(f"claim {claim.key}, constraint #{index}: empty constraint (unsupported constraint type?)",
                                claim=claim, path=("spec", "devices", "constraints", index))

    def _request_data(self, ci, ri, si, request: DeviceRequest, parent_name, path) -> RequestData:
        claim = self.claims[ci]
        label = f"claim {claim.key}, request {request.name}"
        if request.derived and not self.features.derived_attributes:
            raise Fatal(f"{label}: cannot handle request with derived attributes, the feature is disabled",
                        claim=claim, path=path + ("derivedAttributes",))
        for index, expression in enumerate(request.selectors):
            if not expression:
                raise Fatal(f"{label}, selector #{index}: CEL expression empty (unsupported selector type?)",
                            claim=claim, path=path + ("selectors", index))
        if request.admin_access is not None and not self.features.admin_access:
            raise Fatal(f"{label}: admin access is requested, but the feature is disabled",
                        claim=claim, path=path + ("adminAccess",))
        if not request.class_name:
            raise Fatal(f"{label}: missing device class name (unsupported request type?)",
                        claim=claim, path=path + ("deviceClassName",))
        device_class = self.classes.get(request.class_name)
        if device_class is None:
            raise Fatal(
                f"{label}: could not retrieve device class {request.class_name}: "
                f'deviceclass.resource.k8s.io "{request.class_name}" not found',
                claim=claim, path=path + ("deviceClassName",))
        rd = RequestData(ci, ri, si, request, parent_name, device_class, path=path)
        if request.mode == "ExactCount":
            rd.num_devices = request.count
        elif request.mode == "All":
            rd.all_devices = self._all_devices(rd)
            rd.num_devices = len(rd.all_devices)
        else:
            raise Fatal(f"{label}: unsupported count mode {request.mode}", claim=claim, path=path + ("allocationMode",))
        self.request_data[(ci, ri, si)] = rd
        return rd

    def _all_devices(self, rd: RequestData) -> list:
        claim = self.claims[rd.claim_index]
        devices = []
        for pool in self.pools:
            if pool.incomplete or pool.invalid:
                # Not a per-node failure upstream (v0.37.2): the whole scheduling attempt fails.
                state = "being updated" if pool.incomplete else "invalid"
                raise Fatal(
                    f"claim {claim.key}, request {rd.request.name}: asks for all devices, "
                    f"but resource pool {pool.id_str} is currently {state}",
                    claim=claim, path=rd.path,
                )
            for s in pool.device_slices:
                for device in s.devices:
                    if not self.selectable(rd, device):
                        continue
                    if self.features.consumable_capacity and self.capacity_refusal(rd, device, static=True):
                        continue
                    devices.append(device)
        return devices

    # -- checks ---------------------------------------------------------------------------

    def selectable(self, rd: RequestData, device: Device) -> bool:
        key = (id(device), rd.claim_index, rd.request_index, rd.sub_index)
        cached = self.selectable_cache.get(key)
        if cached is not None:
            if not cached[0]:
                self.why = cached[1]
            return cached[0]
        ok, why = self._selectable(rd, device)
        self.selectable_cache[key] = (ok, why)
        if not ok:
            self.why = why
        return ok

    def _selectable(self, rd: RequestData, device: Device):
        if device.binding_conditions and not self.features.device_binding:
            return False, ("binding-gate",)
        for owner, index, expression, program in self._programs(rd):
            if not self._evaluate(owner, index, program, rd, device):
                return False, ("selector", owner, index, expression)
        s = self.slice_of_device.get(id(device))
        if s is not None and s.per_device_node_selection:
            try:
                matches = device_matches_node(device, self.node)
            except SelectorError as exc:
                raise Fatal(f"device {device.id_str}: node selector: {exc}") from None
            if not matches:
                return False, ("device-node",)
        return True, None

    def _programs(self, rd: RequestData) -> list:
        """Compiled class selectors, then request selectors, for one request (compiled once)."""
        programs = self.program_cache.get(id(rd))
        if programs is not None:
            return programs
        claim = self.claims[rd.claim_index]
        programs = []
        for owner, expressions in (("class", rd.device_class.selectors), ("claim", rd.request.selectors)):
            who = f"class {rd.device_class.name}" if owner == "class" else f"claim {claim.key}"
            for index, expression in enumerate(expressions):
                try:
                    program = cel.compile_selector(expression, self.cel_options)
                except cel.CelCompileError as exc:
                    raise Fatal(f"{who}: selector #{index}: CEL compile error: {exc.message}", claim=claim) from None
                programs.append((owner, index, expression, program))
        self.program_cache[id(rd)] = programs
        return programs

    def _evaluate(self, owner, index, program, rd: RequestData, device: Device) -> bool:
        try:
            return program.evaluate(device_input(device), deadline=self.deadline)
        except (DeviceInputError, cel.CelRuntimeError) as exc:
            claim = self.claims[rd.claim_index]
            who = f"class {rd.device_class.name}" if owner == "class" else f"claim {claim.key}"
            raise Fatal(
                f"{who}: selector #{index} on device {device.id_str}: CEL runtime error: {runtime_message(exc)}",
                claim=claim) from None

    def derived_attribute(self, rd: RequestData, device: Device, name: str):
        """A request's derived attribute of this name evaluated on the device (shadows the device's own)."""
        if not self.features.derived_attributes:
            return None
        for derived in rd.request.derived:
            if derived.name != name:
                continue
            key = (id(device), derived.expression)
            cached = self.derived_cache.get(key)
            if cached is None:
                cached = self._evaluate_derived(derived, device, rd)
                self.derived_cache[key] = cached
            return cached
        return None

    def _evaluate_derived(self, derived, device: Device, rd: RequestData):
        claim = self.claims[rd.claim_index]
        try:
            program = cel.compile_expression(derived.expression, self.cel_options)
        except cel.CelCompileError as exc:
            raise Fatal(f"compile derived attribute {derived.name} failed: {exc.message}", claim=claim) from None
        try:
            value = program.evaluate_value(device_input(device), deadline=self.deadline)
        except (cel.CelRuntimeError, DeviceInputError) as exc:
            raise Fatal(f"evaluate derived attribute {derived.name} on device {device.id_str} failed: "
                        f"{runtime_message(exc)}", claim=claim) from None
        return attribute_from_value(value)

    def in_use(self, device_id: tuple) -> bool:
        return device_id in self.allocated.devices or bool(self.allocating.get(device_id))

    def _has_live_share(self, device_id: tuple) -> bool:
        return (
            device_id in self.allocated.capacity
            or device_id in self.allocated.shares
            or device_id in self.allocating_capacity
        )

    def _used_capacity(self, device_id: tuple) -> dict:
        before = self.allocated.capacity.get(device_id)
        now = self.allocating_capacity.get(device_id)
        if not now:
            return before or {}
        if not before:
            return now
        total = dict(before)
        for name, amount in now.items():
            total[name] = total.get(name, Decimal(0)) + amount
        return total

    def capacity_refusal(self, rd: RequestData, device: Device, static: bool = False):
        """None if the request fits the device's capacity now (or, static, when empty)."""
        claim = self.claims[rd.claim_index]
        try:
            requested = resolve_requests(rd.request.capacity_requests, device)
            if requested is None:
                return ("capacity-missing", tuple(rd.request.capacity_requests or ()))
            used = None if static else self._used_capacity(device.id)
            return shortfall(device, requested, used, self.features.fractional_capacity_range)
        except CapacityError as exc:
            raise Fatal(f"claim {claim.key}, request {rd.request.name}: checking capacity for device "
                        f"{device.id_str}: {exc}", claim=claim, path=rd.path + ("capacity",)) from None

    def available_counters_of(self, pool: Pool) -> dict:
        available = self.available.get(pool.id)
        if available is None:
            available = available_counters(pool, self.allocated.is_allocated)
            self.available[pool.id] = available
        return available

    def group_baseline_of(self, pool: Pool) -> dict:
        baseline = self.group_baselines.get(pool.id)
        if baseline is None:
            baseline = group_baseline(pool, self.allocated.is_allocated)
            self.group_baselines[pool.id] = baseline
        return baseline

    def _untolerated_taint(self, rd: RequestData, device: Device):
        for taint in device.taints:
            if taint.effect not in ("NoSchedule", "NoExecute"):
                continue
            if not any(t.tolerates(taint) for t in rd.request.tolerations):
                return taint
        return None

    # -- picking a device -----------------------------------------------------------------

    def allocate_device(self, rd: RequestData, device: Device, must: bool):
        """Try to add the device to the attempt; returns an undo callable, or None if refused."""
        ci = rd.claim_index
        device_id = device.id
        admin = rd.admin
        multi = self.features.consumable_capacity and device.allow_multiple
        pickers = self.allocating.get(device_id)
        if not multi and admin and pickers and ci in pickers:
            self.why = ("same-claim",)
            return None
        if not admin and self.in_use(device_id):
            self.why = ("in-use",)
            return None
        s = self.slice_of_device[id(device)]
        # Only the experimental allocator variant looks at skipNodeOperations; the
        # incubating one (every alpha DRA gate off) allocates such devices as any other.
        if s.skip_node_operations and self.features.experimental_variant:
            if not self.features.optional_node_operations:
                self.why = ("node-ops-gate",)
                return None
            if OPTIONAL_NODE_OPERATIONS not in self.node.declared_features:
                self.why = ("node-ops-undeclared",)
                return None
        if device.consumes and not self.features.partitionable_devices:
            self.why = ("partitionable-gate",)
            return None

        undo_steps = []

        def undo():
            for step in reversed(undo_steps):
                step()

        skip_counters = multi and self._has_live_share(device_id)
        pool = None
        if device.consumes and not skip_counters:
            pool = self.pool_of_device[id(device)]
            if self.features.compatibility_groups:
                saved = {}
                for consumption_entry in device.consumes:
                    key = (pool.id, consumption_entry.counter_set)
                    state = self.group_states.get(key)
                    if state is None:
                        state = self.group_baseline_of(pool).get(consumption_entry.counter_set, GroupState())
                    groups = frozenset(consumption_entry.groups)
                    if not state.admits(groups):
                        self.why = ("groups", consumption_entry.counter_set, state, groups)
                        for k, old in saved.items():
                            self._restore_group(k, old)
                        return None
                    if key not in saved:
                        saved[key] = self.group_states.get(key)
                    self.group_states[key] = state.add(groups)
                undo_steps.append(lambda saved=saved: [self._restore_group(k, v) for k, v in saved.items()])
            available = self.available_counters_of(pool)
            consumed = self.consumed_counters.setdefault(pool.id, {})
            for consumption_entry in device.consumes:
                counters = consumed.setdefault(consumption_entry.counter_set, {})
                for counter, amount in consumption_entry.counters.items():
                    counters[counter] = counters.get(counter, Decimal(0)) + amount.value

            def release(consumed=consumed, device=device):
                for consumption_entry in device.consumes:
                    counters = consumed[consumption_entry.counter_set]
                    for counter, amount in consumption_entry.counters.items():
                        counters[counter] -= amount.value

            undo_steps.append(release)
            overdrawn = first_overdrawn(available, consumed)
            if overdrawn is not None:
                self.why = ("counter",) + overdrawn
                undo()
                return None

        if self.features.device_taints:
            taint = self._untolerated_taint(rd, device)
            if taint is not None:
                self.why = ("taint", taint)
                undo()
                return None

        for constraint in self.constraints[ci]:
            if not constraint.add(rd, device):
                if must:
                    undo()
                    raise Fatal(
                        f"claim {self.claims[ci].key}, request {rd.request.name}: cannot add device "
                        f"{device.id_str} because a claim constraint would not be satisfied",
                        claim=self.claims[ci])
                self.why = ("constraint", constraint.kind, constraint.attribute, constraint.rejection)
                undo()
                return None
            undo_steps.append(lambda constraint=constraint: constraint.remove(rd, device))

        if not multi:
            marks = self.allocating.setdefault(device_id, set())
            fresh = ci not in marks
            marks.add(ci)
            if fresh:
                undo_steps.append(lambda: self._unmark(device_id, ci))

        pick = Pick(rd, device)
        if self.features.consumable_capacity:
            refusal = self.capacity_refusal(rd, device)
            if refusal is not None:
                self.why = refusal
                undo()
                return None
            if multi:
                requested = resolve_requests(rd.request.capacity_requests, device) or {}
                consumed = consumption(device, requested, self.features.fractional_capacity_range)
                pick.consumed = {status_name(key, device): amount for key, amount in consumed.items()}
                pick.share_id = self.share_ids()
                existed = device_id in self.allocating_capacity
                totals = self.allocating_capacity.setdefault(device_id, {})
                for name, amount in consumed.items():
                    totals[name] = totals.get(name, Decimal(0)) + amount.value

                def unshare(totals=totals, consumed=consumed, existed=existed):
                    for name, amount in consumed.items():
                        totals[name] -= amount.value
                    if not existed:
                        del self.allocating_capacity[device_id]

                undo_steps.append(unshare)

        self.results[ci].append(pick)
        undo_steps.append(lambda: self.results[ci].pop())
        return undo

    def _restore_group(self, key, old):
        if old is None:
            self.group_states.pop(key, None)
        else:
            self.group_states[key] = old

    def _unmark(self, device_id, ci):
        marks = self.allocating.get(device_id)
        if marks is not None:
            marks.discard(ci)
            if not marks:
                del self.allocating[device_id]

    # -- the recursive search ---------------------------------------------------------------

    def _tick(self):
        self.steps += 1
        if self.steps > self.max_steps:
            raise SearchLimit(f"search gave up after {self.max_steps} steps", self.steps)
        if self.deadline is not None and self.steps % 256 == 0 and time.monotonic() > self.deadline:
            raise SearchLimit(f"search gave up after {self.steps} steps: time limit reached", self.steps)

    def _one(self, ci: int, ri: int, si: int, k: int, in_sub: bool, start: int) -> bool:
        self._tick()
        if ci == len(self.claims):
            return True
        claim = self.claims[ci]
        if ri == len(claim.requests):
            try:
                return self._one(ci + 1, 0, 0, 0, False, 0)
            except _MaxSize:
                return False
        request = claim.requests[ri]
        if not in_sub and request.exactly is None:
            all_exceeded = True
            for sub_index in range(len(request.first_available)):
                try:
                    ok = self._one(ci, ri, sub_index, 0, True, 0)
                except _MaxSize:
                    continue
                all_exceeded = False
                if ok:
                    self.selected_sub[(ci, ri)] = sub_index
                    return True
            if all_exceeded and request.first_available:
                raise _MaxSize()
            return False
        rd = self.request_data[(ci, ri, si)]
        if k == 0:
            depth = self.request_offset[ci] + ri
            if depth > self.furthest_depth:
                self._remember_furthest(depth, rd)
        if rd.all_mode and not rd.all_devices:
            return False
        if k >= rd.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if rd.num_devices - k > MAX_RESULTS - len(self.results[ci]):
            raise _MaxSize()
        if rd.all_mode:
            undo = self.allocate_device(rd, rd.all_devices[k], must=True)
            if undo is None:
                return False
            try:
                done = self._one(ci, ri, si, k + 1, in_sub, 0)
            except BaseException:
                undo()
                raise
            if not done:
                undo()
            return done
        candidates = self.candidates
        needed = rd.num_devices - k
        last = len(candidates) - needed  # later starts cannot yield enough devices
        if needed > 1 and self.constraints[ci] and self._hopeless(rd, ci, start, needed):
            self._sweep(rd, ci, start, len(candidates))
            return False
        for position in range(start, last + 1):
            device = candidates[position]
            if not self.worth_trying(rd, device):
                continue
            undo = self.allocate_device(rd, device, must=False)
            if undo is None:
                continue
            try:
                done = self._one(ci, ri, si, k + 1, in_sub, position + 1)
            except BaseException:
                undo()
                raise
            if done:
                return True
            undo()
        self._sweep(rd, ci, max(start, last + 1), len(candidates))
        return False

    def worth_trying(self, rd: RequestData, device: Device) -> bool:
        """The loop's checks before a device is picked: in use, selectors, capacity (§6.4).

        A refusal leaves its reason in `self.why`.
        """
        if rd.admin:
            pickers = self.allocating.get(device.id)
            if pickers and rd.claim_index in pickers:
                self.why = ("same-claim",)
                return False
        elif self.in_use(device.id):
            self.why = ("in-use",)
            return False
        if not self.selectable(rd, device):
            return False
        if self.features.consumable_capacity:
            refusal = self.capacity_refusal(rd, device)
            if refusal is not None:
                self.why = refusal
                return False
        return True

    def _sweep(self, rd: RequestData, ci: int, low: int, high: int) -> None:
        """Visit devices the pruning skipped, with the same checks upstream would run on them.

        Pruning only cuts branches that cannot succeed; the devices in them are still
        checked once here, so a CEL or capacity error that upstream would hit on them
        aborts the allocation in the same way. Nothing is kept.
        """
        for position in range(low, high):
            self._tick()
            device = self.candidates[position]
            if not self.worth_trying(rd, device):
                continue
            undo = self.allocate_device(rd, device, must=False)
            if undo is not None:
                undo()

    def _remember_furthest(self, depth: int, rd: RequestData) -> None:
        self.furthest_depth = depth
        self.furthest_request = rd
        self.furthest_picks = [(pick.rd, pick.device) for picks in self.results for pick in picks]

    def replay_furthest(self) -> None:
        """After a failed search: redo the picks of the furthest partial attempt, to explain from there."""
        for rd, device in self.furthest_picks:
            self.allocate_device(rd, device, must=False)

    def _hopeless(self, rd: RequestData, ci: int, start: int, needed: int) -> bool:
        """Exact pruning: a constraint leaves fewer usable values than devices still needed.

        Only scalar values of a single kind are reasoned about; anything else
        (lists, mixed kinds) is left to the plain search so results stay exact.
        """
        derived = {d.name for d in rd.request.derived} if self.features.derived_attributes else set()
        for constraint in self.constraints[ci]:
            if constraint.list_types or not constraint.covers(rd.request.name, rd.parent_name):
                continue
            if constraint.attribute in derived:
                continue  # reading it would evaluate CEL on devices upstream never reaches
            if isinstance(constraint, DistinctAttribute):
                taken = [v for v in constraint.stack if v is not None]
                kinds = {v.kind for v in taken}
                values = set()
                for device in self.candidates[start:]:
                    value = constraint.value_of(rd, device)
                    if value is None or value.kind is None:
                        continue
                    kinds.add(value.kind)
                    values.add(value.value)
                if len(kinds) > 1 or any(k in LIST_KINDS for k in kinds):
                    continue
                free = values - {v.value for v in taken}
                if len(free) < needed:
                    return True
            elif isinstance(constraint, MatchAttribute):
                fixed = constraint.state()
                if fixed is None or fixed[1] is None or fixed[1].kind is None or fixed[1].is_list:
                    continue
                first = fixed[1]
                matching = 0
                for device in self.candidates[start:]:
                    value = constraint.value_of(rd, device)
                    if value is not None and value.kind == first.kind and value.value == first.value:
                        matching += 1
                        if matching >= needed:
                            break
                if matching < needed:
                    return True
        return False

    def run(self) -> bool:
        """Set up and search; True when every claim got its devices."""
        self.setup()
        depth = 64 + sum(len(c.requests) * (MAX_RESULTS + 2) for c in self.claims)
        if sys.getrecursionlimit() < depth + 1000:
            sys.setrecursionlimit(depth + 1000)
        try:
            return self._one(0, 0, 0, 0, False, 0)
        except _MaxSize:
            return False
