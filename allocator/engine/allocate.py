"""The search: which devices the structured allocator picks for a set of claims on one node.

A depth-first, first-fit enumeration over requests in claim order; within a
request, devices are taken as combinations in candidate order (pool, slice,
position), so the first complete assignment found is the answer.
"""
from __future__ import annotations

import os
import sys
import time
from dataclasses import dataclass, field

from allocator.engine import cel
from allocator.engine.attempt import AllocatedState, Attempt, Pick
from allocator.engine.capacity import CapacityError, consumption, resolve_requests, shortfall, status_name
from allocator.engine.constraints import DistinctAttribute, MatchAttribute
from allocator.engine.gates import STABLE, AllocatorFeatures
from allocator.engine.nodematch import SelectorError
from allocator.engine.objects import Device, DeviceRequest, Node, ResourceClaim, attribute_from_value
from allocator.engine.pools import Pool, device_matches_node
from allocator.engine import refusals as r
from allocator.engine.selectors import DeviceInputError, device_input, runtime_message

MAX_RESULTS = 32  # devices per claim
DEFAULT_MAX_STEPS = 200_000  # about 3 s of search; callers may allow more
OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"


class Fatal(Exception):
    """The allocator aborts the whole attempt (upstream: a scheduling error)."""

    def __init__(self, message: str, *, claim: ResourceClaim | None = None, path: tuple = (), kind: str = "",
                 owner=None):
        super().__init__(message)
        self.message = message
        self.claim = claim
        self.path = path
        self.kind = kind
        self.owner = owner  # the object the path is in, when not the claim (a DeviceClass's selector)


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


_UNCHECKED = object()  # a check not made yet (None means "passes")


def _once(cache: dict, rd, device, check):
    """`check(rd, device)` made once per device and (claim, request, subrequest)."""
    key = (id(device), rd.claim_index, rd.request_index, rd.sub_index)
    refusal = cache.get(key, _UNCHECKED)
    if refusal is _UNCHECKED:
        refusal = cache[key] = check(rd, device)
    return refusal
_IN_USE = r.InUse()  # in use, its holders not named (read-only, as every refusal)
SELECTOR_RESULTS_KEPT = 32  # selector results one device keeps between runs


class _MaxSize(Exception):
    """Internal: a branch cannot fit under the 32-results limit."""


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
    admin: bool = field(init=False, repr=False, compare=False)  # adminAccess asked for (the search asks at every device)
    all_mode: bool = field(init=False, repr=False, compare=False)  # allocationMode All

    def __post_init__(self):
        self.admin = bool(self.request.admin_access)
        self.all_mode = self.request.mode == "All"

    @property
    def name(self) -> str:
        """The request as results report it: `req` or `req/sub`."""
        if self.parent_name is None:
            return self.request.name
        return f"{self.parent_name}/{self.request.name}"


# --- the allocator -------------------------------------------------------------------------


def _random_share_id() -> str:
    """A random UUID as uuid.uuid4() writes it (version 4, RFC 4122 variant), without importing
    `uuid` (a millisecond and a half of the first run with a shareable device)."""
    octets = bytearray(os.urandom(16))
    octets[6] = (octets[6] & 0x0F) | 0x40
    octets[8] = (octets[8] & 0x3F) | 0x80
    text = octets.hex()
    return f"{text[:8]}-{text[8:12]}-{text[12:16]}-{text[16:20]}-{text[20:]}"


class Allocator:
    """One node, one scheduling cycle: the search over the pending claims.

    With a `recorder` (see trace.py) the search reports every step it takes;
    with `prune=False` it visits exactly the branches upstream visits (the
    explanation of a failure uses that, since pruning skips dead branches
    whose partial picks can be the furthest attempt).
    """

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
        recorder=None,
        prune: bool = True,
    ):
        self.inputs = dict(claims=claims, classes=classes, pools=pools, node=node, features=features,
                           allocated=allocated, cel_options=cel_options, share_ids=share_ids, all_slices=all_slices)
        self.all_slices = all_slices  # every slice of the scenario, for explanations
        self.claims = claims
        self.classes = classes
        self.pools = pools
        self.node = node
        self.features = features
        self.stable = features.variant == STABLE
        self.allocated = allocated
        self.max_steps = max_steps
        self.deadline = deadline
        self.cel_options = cel_options or cel.Options(list_type_attributes=features.list_type_attributes)
        self.share_ids = share_ids or _random_share_id
        self.recorder = recorder
        self.detail = recorder is not None  # refusals name their holders only when someone reads them
        self.prune = prune
        self.pruned = False  # a branch was cut: the furthest attempt may differ from upstream's
        self.steps = 0
        self.request_data: dict = {}
        self.constraints: list[list] = [[] for _ in claims]
        self.attempt = Attempt(claims, allocated, compatibility_groups=features.compatibility_groups)
        self.results = self.attempt.results
        self.selector_cache: dict = {}
        self.capacity_cache: dict = {}  # the capacity check of devices no share can be taken of
        self.derived_cache: dict = {}
        self.program_cache: dict = {}
        self.selected_sub: dict = {}
        self.allocations: dict = {}  # claim index -> status.allocation, once the search succeeded
        self.request_offset = []
        offset = 0
        for claim in claims:
            self.request_offset.append(offset)
            offset += len(claim.requests)
        self.pool_of_device: dict = {}
        self.slice_of_device: dict = {}
        self.position: dict = {}  # id(device) -> index in candidates
        # Candidate order: pools in order, their device slices by name, devices as listed.
        self.candidates: list[Device] = []
        pool_of, slice_of, position, candidates = self.pool_of_device, self.slice_of_device, self.position, self.candidates
        for pool in pools:
            usable = pool.usable
            for s in pool.device_slices:
                keys = [id(d) for d in s.devices]
                slice_of.update(dict.fromkeys(keys, s))
                pool_of.update(dict.fromkeys(keys, pool))
                if usable:
                    position.update(zip(keys, range(len(candidates), len(candidates) + len(keys))))
                    candidates.extend(s.devices)

    # -- setup -------------------------------------------------------------------------

    def setup(self) -> None:
        """Validate requests and fix device counts (§6.2), raising Fatal on the first problem."""
        for ci, claim in enumerate(self.claims):
            accounted = 0
            for ri, req in enumerate(claim.requests):
                if req.first_available and not self.features.prioritized_list:
                    raise Fatal(f"claim {claim.key}, request {req.name}: has subrequests, but the DRAPrioritizedList feature is disabled",
                                claim=claim, path=("spec", "devices", "requests", ri, "firstAvailable"))
                if req.exactly is not None:
                    # The stable allocator does not know capacity requests: it ignores them.
                    if (req.exactly.capacity_requests is not None and not self.features.consumable_capacity
                            and self.features.variant != STABLE):
                        raise Fatal(f"claim {claim.key}, request {req.name}: has capacity requests, but the "
                                    "DRAConsumableCapacity feature is disabled",
                                    claim=claim, path=("spec", "devices", "requests", ri, "exactly", "capacity"))
                    rd = self._request_data(ci, ri, 0, req.exactly, None, ("spec", "devices", "requests", ri, "exactly"))
                    needed = rd.num_devices
                else:
                    for si, sub in enumerate(req.first_available):
                        if (sub.capacity_requests is not None and not self.features.consumable_capacity
                                and self.features.variant != STABLE):
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
                        f"claim {claim.key}, request {req.name}: adding {needed} devices exceeds the claim limit of "
                        f"{MAX_RESULTS}, "
                        f"with {accounted} already accounted for",
                        claim=claim, path=("spec", "devices", "requests", ri))
                accounted += needed
            # derived_attribute answers None while the feature is off: the constraints need not ask it
            # (and the allocator is then no part of a reference cycle through its constraints).
            derived = self.derived_attribute if self.features.derived_attributes else None
            for index, constraint in enumerate(claim.constraints):
                if constraint.match_attribute:
                    self.constraints[ci].append(MatchAttribute(
                        constraint.requests, constraint.match_attribute, self.features.list_type_attributes,
                        derived, claim.key))
                elif constraint.distinct_attribute and self.features.variant != STABLE:
                    # The stable allocator knows only matchAttribute: anything else is an empty constraint.
                    self.constraints[ci].append(DistinctAttribute(
                        constraint.requests, constraint.distinct_attribute, self.features.list_type_attributes,
                        derived, claim.key))
                else:
                    raise Fatal(f"claim {claim.key}, constraint #{index}: empty constraint (unsupported constraint type?)",
                                claim=claim, path=("spec", "devices", "constraints", index))

    def _request_data(self, ci, ri, si, request: DeviceRequest, parent_name, path) -> RequestData:
        claim = self.claims[ci]

        def label():  # only a refusal needs it
            return f"claim {claim.key}, request {request.name}"

        if request.derived and not self.features.derived_attributes:
            raise Fatal(f"{label()}: cannot handle request with derived attributes, the feature is disabled",
                        claim=claim, path=path + ("derivedAttributes",))
        for index, expression in enumerate(request.selectors):
            if not expression:
                raise Fatal(f"{label()}, selector #{index}: CEL expression empty (unsupported selector type?)",
                            claim=claim, path=path + ("selectors", index))
        if request.admin_access is not None and not self.features.admin_access:
            raise Fatal(f"{label()}: admin access is requested, but the feature is disabled",
                        claim=claim, path=path + ("adminAccess",))
        if not request.class_name:
            raise Fatal(f"{label()}: missing device class name (unsupported request type?)",
                        claim=claim, path=path + ("deviceClassName",))
        device_class = self.classes.get(request.class_name)
        if device_class is None:
            raise Fatal(
                f"{label()}: could not retrieve device class {request.class_name}: "
                f'deviceclass.resource.k8s.io "{request.class_name}" not found',
                claim=claim, path=path + ("deviceClassName",))
        rd = RequestData(ci, ri, si, request, parent_name, device_class, path=path)
        if request.mode == "ExactCount":
            rd.num_devices = request.count
        elif request.mode == "All":
            rd.all_devices = self._all_devices(rd)
            rd.num_devices = len(rd.all_devices)
        else:
            raise Fatal(f"{label()}: unsupported count mode {request.mode}", claim=claim,
                        path=path + ("allocationMode",))
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
                    if self.selector_refusal(rd, device) is not None:
                        continue
                    if self.features.consumable_capacity and self.capacity_refusal(rd, device, static=True):
                        continue
                    devices.append(device)
        return devices

    # -- checks: each returns a Refusal, or None when the device passes -----------------------

    def selector_refusal(self, rd: RequestData, device: Device):
        """`selectable` (§6.4 step 2), computed once per device and (claim, request, subrequest)."""
        return _once(self.selector_cache, rd, device, self._selector_refusal)

    def _selector_refusal(self, rd: RequestData, device: Device):
        if device.binding_conditions and not self.features.device_binding:
            return r.BindingGateOff()
        for owner, index, expression, program in self._programs(rd):
            if not self._evaluate(owner, index, program, rd, device):
                name = rd.device_class.name if owner == "class" else self.claims[rd.claim_index].key
                return r.SelectorFalse(owner, name, index, expression)
        s = self.slice_of_device.get(id(device))
        if s is not None and s.per_device_node_selection:
            try:
                matches = device_matches_node(device, self.node)
            except SelectorError as exc:
                raise Fatal(f"device {device.id_str}: node selector: {exc}") from None
            if not matches:
                return r.DeviceNodeMismatch()
        return None

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
                    raise Fatal(f"{who}: selector #{index}: CEL compile error: {exc.message}",
                                **self._selector_place(owner, index, rd)) from None
                programs.append((owner, index, expression, program))
        self.program_cache[id(rd)] = programs
        return programs

    def _evaluate(self, owner, index, program, rd: RequestData, device: Device) -> bool:
        results = device.selector_results
        if results is None or len(results) >= SELECTOR_RESULTS_KEPT:
            # Bounded: each edit of a selector is a new program, and a device of a cached document
            # lives as long as the document does.
            results = device.selector_results = {}
        # The stable allocator shows CEL a shareable device as not shareable: its own result.
        hidden = device.allow_multiple and self.stable
        key = (program, STABLE) if hidden else program
        result = results.get(key)
        if result is None:
            try:
                result = program.evaluate(device_input(device, stable=hidden), deadline=self.deadline)
            except cel.CelInterruptedError:  # depends on the clock: never kept
                raise self._out_of_time() from None
            except (DeviceInputError, cel.CelRuntimeError) as exc:
                result = exc
            results[key] = result
        if result is True or result is False:
            return result
        claim = self.claims[rd.claim_index]
        who = f"class {rd.device_class.name}" if owner == "class" else f"claim {claim.key}"
        raise Fatal(
            f"{who}: selector #{index} on device {device.id_str}: CEL runtime error: {runtime_message(result)}",
            **self._selector_place(owner, index, rd)) from None

    def _selector_place(self, owner: str, index: int, rd: RequestData) -> dict:
        """Where a selector's expression is written: in the DeviceClass, or in the claim's request."""
        claim = self.claims[rd.claim_index]
        if owner == "class":
            return {"claim": claim, "kind": "DeviceClass", "owner": rd.device_class,
                    "path": ("spec", "selectors", index, "cel", "expression")}
        return {"claim": claim, "path": rd.path + ("selectors", index, "cel", "expression")}

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
        except cel.CelInterruptedError:
            raise self._out_of_time() from None
        except (cel.CelRuntimeError, DeviceInputError) as exc:
            raise Fatal(f"evaluate derived attribute {derived.name} on device {device.id_str} failed: "
                        f"{runtime_message(exc)}", claim=claim) from None
        return attribute_from_value(value)

    def capacity_refusal(self, rd: RequestData, device: Device, static: bool = False):
        """None if the request fits the device's capacity now (or, static, when empty)."""
        claim = self.claims[rd.claim_index]
        try:
            requested = resolve_requests(rd.request.capacity_requests, device)
            if requested is None:
                return r.CapacityMissing(tuple(rd.request.capacity_requests or ()))
            if not device.capacity:
                return None  # nothing to consume: it fits whatever is in use
            used = None if static else self.attempt.used_capacity(device.id)
            refusal = shortfall(device, requested, used, self.features.fractional_capacity_range)
        except CapacityError as exc:
            raise Fatal(f"claim {claim.key}, request {rd.request.name}: checking capacity for device "
                        f"{device.id_str}: {exc}", claim=claim, path=rd.path + ("capacity",)) from None
        if self.detail and isinstance(refusal, r.CapacityShort):
            refusal = r.CapacityShort(refusal.capacity, refusal.need, refusal.free,
                                      self.attempt.share_holders(device.id, refusal.capacity))
        return refusal

    def _in_use_refusal(self, device: Device):
        return r.InUse(self.attempt.device_holders(device.id)) if self.detail else _IN_USE

    def loop_refusal(self, rd: RequestData, device: Device):
        """The search loop's checks before a device is picked: in use, selectors, capacity (§6.4)."""
        if rd.admin:
            if self.attempt.picked_by_claim(device.id, rd.claim_index):
                return r.SameClaim()
        elif self.attempt.in_use(device.id):
            return self._in_use_refusal(device)
        refusal = self.selector_refusal(rd, device)
        if refusal is None and self.features.consumable_capacity:
            if device.allow_multiple or device.id in self.allocated.capacity:
                refusal = self.capacity_refusal(rd, device)
            else:  # nothing can take a share of it: the answer is the same every time
                refusal = _once(self.capacity_cache, rd, device, self.capacity_refusal)
        return refusal

    def untolerated_taint(self, rd: RequestData, device: Device):
        for taint in device.taints:
            if taint.effect not in ("NoSchedule", "NoExecute"):
                continue
            if not any(t.tolerates(taint) for t in rd.request.tolerations):
                return taint
        return None

    # -- picking a device -----------------------------------------------------------------

    def allocate_device(self, rd: RequestData, device: Device, must: bool):
        """Try to add the device to the attempt (§6.4, allocate_device).

        Returns (undo, None) when the device was taken, or (None, refusal).
        """
        ci = rd.claim_index
        device_id = device.id
        admin = rd.admin
        attempt = self.attempt
        multi = self.features.consumable_capacity and device.allow_multiple
        if not multi and admin and attempt.picked_by_claim(device_id, ci):
            return None, r.SameClaim()
        if not admin and attempt.in_use(device_id):
            return None, self._in_use_refusal(device)
        s = self.slice_of_device[id(device)]
        # Only the experimental allocator variant looks at skipNodeOperations; the
        # incubating one (every alpha DRA gate off) allocates such devices as any other.
        if s.skip_node_operations and self.features.experimental_variant:
            if not self.features.optional_node_operations:
                return None, r.NodeOperationsGateOff()
            if OPTIONAL_NODE_OPERATIONS not in self.node.declared_features:
                return None, r.NodeOperationsUndeclared()
        if device.consumes and not self.features.partitionable_devices:
            return None, r.PartitionableGateOff()

        pick = Pick(rd, device, multi=multi)
        if device.consumes and not (multi and attempt.has_live_share(device_id)):
            pool = pick.pool = self.pool_of_device[id(device)]
            pick.pays_counters = True
            if self.features.compatibility_groups:
                refusal = attempt.groups_check(pool, device, self.detail)
                if refusal is not None:
                    return None, refusal
            refusal = attempt.counters_check(pool, device, self.detail)
            if refusal is not None:
                return None, refusal

        if self.features.device_taints:
            taint = self.untolerated_taint(rd, device)
            if taint is not None:
                return None, r.TaintNotTolerated(taint)

        added = []
        for constraint in self.constraints[ci]:
            refusal = constraint.add(rd, device)
            if refusal is not None:
                for other in reversed(added):
                    other.remove(rd, device)
                if must:
                    raise Fatal(
                        f"claim {self.claims[ci].key}, request {rd.request.name}: cannot add device "
                        f"{device.id_str} because a claim constraint would not be satisfied",
                        claim=self.claims[ci])
                return None, refusal
            added.append(constraint)

        if self.features.consumable_capacity:
            refusal = self.capacity_refusal(rd, device)
            if refusal is not None:
                for other in reversed(added):
                    other.remove(rd, device)
                return None, refusal
            if multi:
                requested = resolve_requests(rd.request.capacity_requests, device) or {}
                consumed = consumption(device, requested, self.features.fractional_capacity_range)
                pick.totals = consumed
                pick.consumed = {status_name(key, device): amount for key, amount in consumed.items()}
                pick.share_id = self.share_ids()

        undo_take = attempt.take(ci, pick)

        def undo():
            undo_take()
            for constraint in reversed(added):
                constraint.remove(rd, device)

        return undo, pick

    # -- the recursive search ---------------------------------------------------------------

    def _tick(self):
        self.steps += 1
        if self.steps > self.max_steps:
            raise SearchLimit(f"search gave up after {self.max_steps} steps", self.steps)
        if self.deadline is not None and self.steps % 256 == 0 and time.monotonic() > self.deadline:
            raise self._out_of_time()

    def _out_of_time(self) -> SearchLimit:
        """The wall-clock limit, met in the search or inside a CEL evaluation."""
        return SearchLimit(f"search gave up after {self.steps} steps: time limit reached", self.steps)

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
        recorder = self.recorder
        if recorder is not None:
            if k == 0:
                recorder.enter(rd)
            recorder.reach(rd, self.request_offset[ci] + ri, k)
        if rd.all_mode and not rd.all_devices:
            return False
        if k >= rd.num_devices:
            return self._one(ci, ri + 1, 0, 0, False, 0)
        if rd.num_devices - k > MAX_RESULTS - len(self.results[ci]):
            raise _MaxSize()
        if rd.all_mode:
            device = rd.all_devices[k]
            return self._try(rd, device, self.position[id(device)], True, ci, ri, si, k, in_sub)
        candidates = self.candidates
        needed = rd.num_devices - k
        last = len(candidates) - 1
        if self.prune:
            last = len(candidates) - needed  # later starts cannot yield enough devices
            if needed > 1 and self.constraints[ci]:
                why = self._hopeless(rd, ci, start, needed)
                if why is not None:
                    self._sweep(rd, start, len(candidates), r.NoRoomLeft(needed, why))
                    return False
        for position in range(start, last + 1):
            device = candidates[position]
            refusal = self.loop_refusal(rd, device)
            if refusal is not None:
                if recorder is not None:
                    recorder.reject(rd, position, device, refusal)
                continue
            if self._try(rd, device, position, False, ci, ri, si, k, in_sub):
                return True
        if self.prune:
            self._sweep(rd, max(start, last + 1), len(candidates), r.NoRoomLeft(needed))
        return False

    def _try(self, rd: RequestData, device: Device, position: int, must: bool, ci, ri, si, k, in_sub) -> bool:
        """Pick the device and search on; undo the pick if the rest cannot be completed."""
        undo, outcome = self.allocate_device(rd, device, must=must)
        recorder = self.recorder
        if undo is None:
            if recorder is not None:
                recorder.reject(rd, position, device, outcome)
            return False
        if recorder is not None:
            recorder.pick(rd, position, outcome)
        try:
            done = self._one(ci, ri, si, k + 1, in_sub, 0 if must else position + 1)
        except BaseException:
            undo()
            raise
        if not done:
            if recorder is not None:
                recorder.undo(rd, position, outcome)
            undo()
        return done

    def _sweep(self, rd: RequestData, low: int, high: int, no_room) -> None:
        """Visit devices the pruning skipped, with the same checks upstream would run on them.

        Pruning only cuts branches that cannot succeed; the devices in them are still
        checked once here, so a CEL or capacity error that upstream would hit on them
        aborts the allocation in the same way. Nothing is kept.
        """
        if low < high:
            self.pruned = True
        recorder = self.recorder
        for position in range(low, high):
            self._tick()
            device = self.candidates[position]
            refusal = self.loop_refusal(rd, device)
            if refusal is None:
                undo, refusal = self.allocate_device(rd, device, must=False)
                if undo is not None:
                    undo()
                    refusal = no_room
            if recorder is not None:
                recorder.reject(rd, position, device, refusal)

    def _hopeless(self, rd: RequestData, ci: int, start: int, needed: int) -> str | None:
        """Exact pruning: the constraint that leaves fewer usable values than devices still needed."""
        derived = {d.name for d in rd.request.derived} if self.features.derived_attributes else set()
        devices = self.candidates[start:]
        for constraint in self.constraints[ci]:
            if not constraint.covers(rd.request.name, rd.parent_name):
                continue
            if constraint.hopeless(rd, devices, needed, derived):
                return f"{constraint.kind} {constraint.attribute}"
        return None

    def run(self) -> bool:
        """Set up and search; True when every claim got its devices."""
        self.setup()
        depth = 64 + sum(len(c.requests) * (MAX_RESULTS + 2) for c in self.claims)
        if sys.getrecursionlimit() < depth + 1000:
            sys.setrecursionlimit(depth + 1000)
        recorder = self.recorder
        try:
            found = self._one(0, 0, 0, 0, False, 0)
        except _MaxSize:
            found = False
        except SearchLimit:
            if recorder is not None:
                recorder.finish(self, "gave-up")
            raise
        if recorder is not None:
            recorder.finish(self, "success" if found else "failed")
        return found
