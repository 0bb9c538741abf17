"""Why each device was or was not chosen: explanation data drawn from a finished search.

After the search, every candidate of every request is probed against the final
state with the same checks the search uses, so a reason is never computed by a
second, diverging rule set.
"""
from __future__ import annotations

from decimal import Decimal

from allocator.engine.allocate import Allocator, Fatal, RequestData
from allocator.engine.capacity import device_capacities, status_name
from allocator.engine.counters import GroupState
from allocator.engine.pools import SliceIndex, ignored_slices
from allocator.engine.quantity import Quantity
from allocator.engine.results import build_allocation

CHOSEN = "chosen"
TENTATIVE = "tentative"
NOT_REACHED = "not-reached"
REJECTED = "rejected"
ELIGIBLE = "eligible"


def _q(amount, like: Quantity | None = None) -> str:
    """Print a Decimal amount as a quantity, in the format of `like` when given."""
    if isinstance(amount, Quantity):
        return str(amount)
    return str(Quantity(Decimal(amount), like.format if like is not None else "DecimalSI"))


def reason_text(why, allocator: Allocator, device) -> str:
    """Human wording for a refusal code recorded by the allocator."""
    if why is None:
        return "not checked"
    code = why[0]
    if code == "in-use":
        holders = allocator.allocated.holders.get(device.id)
        if holders:
            return f"in use: already allocated to claim {', '.join(holders)}"
        pickers = allocator.allocating.get(device.id) or set()
        names = ", ".join(allocator.claims[i].key for i in sorted(pickers))
        return f"in use: picked for claim {names} in this allocation"
    if code == "same-claim":
        return "already picked for this claim (admin access never takes a device twice in one claim)"
    if code == "shared":
        return "has shares of consumable capacity; it can no longer be allocated exclusively"
    if code == "binding-gate":
        return "device has bindingConditions but DRADeviceBindingConditions is disabled"
    if code == "selector":
        _, owner, index, expression = why
        where = "device class" if owner == "class" else "request"
        return f"{where} selector #{index} is false: {expression}"
    if code == "device-node":
        return "the device's own node selection does not include this node"
    if code == "node-ops-gate":
        return "its slice sets skipNodeOperations but DRAOptionalNodeOperations is disabled in the scheduler"
    if code == "node-ops-undeclared":
        return (
            "its slice sets skipNodeOperations but the node does not declare DRAOptionalNodeOperations "
            "in status.declaredFeatures"
        )
    if code == "partitionable-gate":
        return "device consumes counters but DRAPartitionableDevices is disabled"
    if code == "groups":
        _, counter_set, state, groups = why
        mine = "{" + ", ".join(sorted(groups)) + "}" if groups else "no groups"
        return (
            f"compatibility groups in counter set {counter_set}: {state.describe()} ∩ {mine} = ∅"
            if groups and not state.all_empty
            else f"compatibility groups in counter set {counter_set}: {mine} cannot join {state.describe()}"
        )
    if code == "counter":
        _, counter_set, counter, taken, available = why
        like = _counter_unit(device, counter_set, counter)
        need = like.value if like is not None else Decimal(0)
        left = available - (taken - need)  # what this attempt left before the device
        if like is None:
            return f"counter {counter} in set {counter_set} is overdrawn ({_q(available)} available)"
        return (
            f"counter {counter} in set {counter_set} would need {_q(need, like)} "
            f"with {_q(max(left, Decimal(0)), like)} left"
        )
    if code == "taint":
        taint = why[1]
        value = f"={taint.value}" if taint.value else ""
        return f"taint {taint.key}{value}:{taint.effect} is not tolerated"
    if code == "constraint":
        _, kind, attribute, rejection = why
        return _constraint_text(kind, attribute, rejection)
    if code == "capacity-missing":
        return "device has no capacity named " + ", ".join(why[1])
    if code == "policy":
        _, name, amount = why
        return f"capacity {name}: {amount} is not allowed by the device's requestPolicy"
    if code == "capacity":
        _, name, amount, free = why
        like = device.capacity[name].value if name in device.capacity else None
        return f"capacity {name}: needs {amount}, {_q(max(free, Decimal(0)), like)} free"
    if code == "fatal":
        return why[1]
    return str(why)


def _counter_unit(device, counter_set, counter) -> Quantity | None:
    for entry in device.consumes:
        if entry.counter_set == counter_set and counter in entry.counters:
            return entry.counters[counter]
    return None


def _constraint_text(kind, attribute, rejection) -> str:
    if not rejection:
        return f"{kind} {attribute} not satisfied"
    code = rejection[0]
    if code == "missing":
        return f"{kind}: device has no attribute {attribute}"
    if code == "list":
        return f"{kind}: attribute {attribute} is a list (needs DRAListTypeAttributes)"
    if code == "mismatch":
        first, mine = rejection[2], rejection[3]
        shown = first.display() if first is not None else "<none>"
        return f"matchAttribute {attribute}: {mine.display()} differs from {shown} of the devices already chosen"
    if code == "disjoint":
        return f"matchAttribute {attribute}: {rejection[3].display()} has nothing in common with the devices already chosen"
    if code == "duplicate":
        return f"distinctAttribute {attribute}: {rejection[3].display()} is already used by a device chosen for this claim"
    return f"{kind} {attribute} not satisfied"


def _probe(allocator: Allocator, rd: RequestData, device) -> tuple[str, object]:
    """Run the search's checks for one device against the allocator's current state."""
    allocator.why = None
    try:
        if not allocator.worth_trying(rd, device):
            return REJECTED, allocator.why
        undo = allocator.allocate_device(rd, device, must=False)
    except Fatal as exc:
        return REJECTED, ("fatal", exc.message)
    if undo is None:
        return REJECTED, allocator.why
    undo()
    return ELIGIBLE, None


def _candidates(allocator: Allocator):
    for pool in allocator.pools:
        if not pool.usable:
            continue
        for s in pool.device_slices:
            for device in s.devices:
                yield pool, s, device


def explain(allocator: Allocator, success: bool, *, max_candidates: int = 2000) -> dict:
    """Plain data for the reports and the web page."""
    # After a failure, allocator.results holds the picks of the furthest partial attempt.
    picked: dict = {}
    for ci, picks in enumerate(allocator.results):
        for pick in picks:
            picked.setdefault((ci, pick.rd.request_index, pick.rd.sub_index), []).append(pick)
    blocked = allocator.furthest_request if not success else None
    blocked_depth = allocator.furthest_depth if not success else None

    claims = []
    for ci, claim in enumerate(allocator.claims):
        requests = []
        for ri, request in enumerate(claim.requests):
            subs = [0] if request.exactly is not None else range(len(request.first_available))
            for si in subs:
                rd = allocator.request_data.get((ci, ri, si))
                if rd is None:
                    continue
                chosen_sub = allocator.selected_sub.get((ci, ri))
                mine = picked.get((ci, ri, si), [])
                chosen_ids = {id(p.device): p for p in mine}
                entries = []
                for count, (pool, s, device) in enumerate(_candidates(allocator)):
                    if count >= max_candidates:
                        break
                    pick = chosen_ids.get(id(device))
                    depth = allocator.request_offset[ci] + ri
                    if pick is not None:
                        entry = {"verdict": CHOSEN, "reason": "chosen"} if success else {
                            "verdict": TENTATIVE,
                            "reason": "picked in the furthest attempt, then given up when a later request failed"}
                        if pick.consumed:
                            entry["consumedCapacity"] = {k: str(v) for k, v in pick.consumed.items()}
                    else:
                        verdict, why = _probe(allocator, rd, device)
                        if verdict == ELIGIBLE and not success and depth > blocked_depth:
                            verdict, text = NOT_REACHED, "not reached: the search failed at an earlier request"
                        elif verdict == ELIGIBLE and not success and depth == blocked_depth:
                            text = (f"fits here, but the request needs {rd.num_devices} device(s) that fit "
                                    "together with the other requests and constraints")
                        elif verdict == ELIGIBLE:
                            text = _eligible_text(success, rd, request, si, chosen_sub)
                        else:
                            text = reason_text(why, allocator, device)
                        entry = {"verdict": verdict, "reason": text, "code": why[0] if why else None}
                        if why and why[0] in ("counter", "groups"):
                            entry["counterSet"] = why[1]
                    entry.update({"device": device.name, "pool": pool.id_str, "slice": s.name, "driver": device.driver})
                    entries.append(entry)
                requests.append({
                    "blocked": blocked is rd,
                    "request": rd.name,
                    "deviceClassName": rd.request.class_name,
                    "allocationMode": rd.request.mode,
                    "count": rd.num_devices,
                    "subrequestChosen": (chosen_sub == si) if request.exactly is None and success else None,
                    "chosen": [p.device.id_str for p in mine],
                    "candidates": entries,
                })
        claims.append({"claim": claim.key, "requests": requests})

    blocked_at = None
    if blocked is not None:
        blocked_at = {"claim": allocator.claims[blocked.claim_index].key, "request": blocked.name}
    return {
        "node": allocator.node.name,
        "success": success,
        "blockedAt": blocked_at,
        "pools": [_pool_entry(p) for p in allocator.pools],
        "claims": claims,
        "counterSets": _counter_sets(allocator, claims),
        "capacity": _capacity(allocator),
        "nodeOperations": _node_operations(allocator, success),
        "statusAuthorization": _status_authorization(allocator, success),
        "compatibility": _compatibility(allocator, claims),
        "ignoredSlices": [
            {"slice": s.name, "pool": f"{s.driver}/{s.pool}", "reason": reason}
            for s, reason in ignored_slices(allocator.node, SliceIndex(allocator.all_slices), allocator.features)
        ] if allocator.all_slices is not None else [],
        "deviceMap": _device_map(allocator, success, claims),
        "steps": allocator.steps,
    }


def _eligible_text(success, rd, request, si, chosen_sub) -> str:
    if not success:
        return "fits on its own, but no combination of devices satisfies every request and constraint"
    if request.exactly is None and chosen_sub is not None and si != chosen_sub:
        if si > chosen_sub:
            return "not needed: an earlier subrequest was satisfied"
        return "fits, but this subrequest was not used"
    return "fits, but the request already has its devices (first fit takes devices in pool order)"


def _pool_entry(pool) -> dict:
    state = "usable"
    if pool.incomplete:
        state = "incomplete"
    elif pool.invalid:
        state = "invalid"
    return {
        "pool": pool.id_str,
        "generation": pool.generation,
        "state": state,
        "reason": pool.invalid or pool.incomplete_reason,
        "slices": [s.name for s in pool.device_slices],
        "counterSlices": [s.name for s in pool.counter_slices],
        "otherSlices": [s.name for s in pool.other_device_slices],
        "devices": sum(len(s.devices) for s in pool.device_slices),
    }


def _drawing_on(devices, counter_set: str):
    """(device, its consumesCounters entry) for every device that draws on the counter set."""
    for device in devices:
        for entry in device.consumes:
            if entry.counter_set == counter_set:
                yield device, entry


def _all_candidates(claims: list):
    for claim in claims:
        for request in claim["requests"]:
            yield from request["candidates"]


def _counter_sets(allocator: Allocator, claims: list) -> list:
    out = []
    now_by_pool: dict = {}
    for picks in allocator.results:
        for pick in picks:
            for entry in pick.device.consumes:
                now_by_pool.setdefault((pick.device.driver, pick.device.pool), set()).add((entry.counter_set, pick.device.name))
    for pool in allocator.pools:
        if not pool.usable or not pool.counter_sets:
            continue
        available = allocator.available_counters_of(pool)
        consumed = allocator.consumed_counters.get(pool.id, {})
        baseline = allocator.group_baseline_of(pool)
        for name, counter_set in pool.counter_sets.items():
            counters = []
            for counter, total in counter_set.counters.items():
                left = available.get(name, {}).get(counter, total.value)
                now = consumed.get(name, {}).get(counter, Decimal(0))
                counters.append({
                    "counter": counter,
                    "total": str(total),
                    "allocatedBefore": _q(total.value - left, total),
                    "allocatedNow": _q(now, total),
                    "free": _q(left - now, total),
                })
            members = [
                {
                    "device": device.name,
                    "groups": list(entry.groups),
                    "allocatedBefore": allocator.allocated.is_allocated(device.id),
                    "allocatedNow": (name, device.name) in now_by_pool.get(pool.id, set()),
                }
                for device, entry in _drawing_on(pool.all_pool_devices(), name)
            ]
            state = allocator.group_states.get((pool.id, name)) or baseline.get(name, GroupState())
            blocks = sorted({
                cand["device"] for cand in _all_candidates(claims)
                if cand.get("counterSet") == name and cand["pool"] == pool.id_str
            })
            out.append({
                "blocks": blocks,
                "pool": pool.id_str,
                "counterSet": name,
                "counters": counters,
                "devices": members,
                "groups": state.describe() if allocator.features.compatibility_groups else None,
            })
    return out


def _policy_text(policy) -> str | None:
    """A request policy in words, so rounding can be understood from the panel."""
    if policy is None:
        return None
    parts = []
    if policy.default is not None:
        parts.append(f"default {policy.default}")
    if policy.valid_range is not None:
        low, high, step = policy.valid_range
        text = f"from {low}" if low is not None else "range"
        if high is not None:
            text += f" to {high}"
        if step is not None:
            text += f" in steps of {step}"
        parts.append(text)
    elif policy.valid_values is not None:
        parts.append("one of " + ", ".join(str(v) for v in policy.valid_values))
    return "; ".join(parts) or None


def _capacity(allocator: Allocator) -> list:
    out = []
    shares: dict = {}
    for ci, picks in enumerate(allocator.results):
        for pick in picks:
            if pick.consumed is not None:
                shares.setdefault(pick.device.id, []).append({
                    "claim": allocator.claims[ci].key,
                    "request": pick.rd.name,
                    "shareID": pick.share_id,
                    "consumedCapacity": {k: str(v) for k, v in pick.consumed.items()},
                    "requested": {k: str(v) for k, v in (pick.rd.request.capacity_requests or {}).items()},
                })
    for pool in allocator.pools:
        if not pool.usable:
            continue
        for device in pool.devices():
            if not device.allow_multiple or not allocator.features.consumable_capacity:
                continue
            before = allocator.allocated.capacity.get(device.id, {})
            out.append({
                "device": device.id_str,
                "capacity": {
                    status_name(key, device): {
                        "value": str(cap.value), "allocatedBefore": _q(before.get(key, Decimal(0)), cap.value),
                        "policy": _policy_text(cap.policy)}
                    for key, (_, cap) in device_capacities(device).items()
                },
                "sharesNow": shares.get(device.id, []),
            })
    return out


def _compatibility(allocator: Allocator, claims: list) -> list:
    """Per counter set with grouped devices: the baseline, each pick's running intersection, and refusals."""
    if not allocator.features.compatibility_groups:
        return []
    rejected: dict = {}
    for cand in _all_candidates(claims):
        if cand.get("code") == "groups":
            rejected.setdefault((cand["pool"], cand["device"]), cand["reason"])
    out = []
    for pool in allocator.pools:
        if not pool.usable or not pool.counter_sets:
            continue
        grouped = {e.counter_set for d in pool.all_pool_devices() for e in d.consumes if e.groups}
        if not grouped:
            continue
        baseline = allocator.group_baseline_of(pool)
        for name in pool.counter_sets:
            if name not in grouped:
                continue
            state = baseline.get(name, GroupState())
            steps = []
            for picks in allocator.results:
                for pick in picks:
                    for entry in pick.device.consumes:
                        if pick.device.pool == pool.name and pick.device.driver == pool.driver \
                                and entry.counter_set == name:
                            state = state.add(frozenset(entry.groups))
                            steps.append({"device": pick.device.name, "groups": sorted(entry.groups),
                                          "after": state.describe()})
            members = [
                {"device": device.name, "groups": sorted(entry.groups),
                 "rejected": rejected.get((pool.id_str, device.name))}
                for device, entry in _drawing_on(pool.devices(), name)
            ]
            out.append({
                "pool": pool.id_str,
                "counterSet": name,
                "baseline": baseline.get(name, GroupState()).describe(),
                "steps": steps,
                "final": state.describe(),
                "devices": members,
            })
    return out


def _status_authorization(allocator: Allocator, success: bool) -> list:
    """Who may write each claim's status once allocated (granular status authorization).

    Writing status.allocation needs `resourceclaims/binding`; writing a driver's entries in
    status.devices needs `resourceclaims/driver` with the driver as resource name and a
    node-aware verb: `associated-node:*` only works when the allocation is pinned to one
    node (a node-local plugin on that node), otherwise only `arbitrary-node:*` does.
    """
    out = []
    if not success:
        return out
    for ci, picks in enumerate(allocator.results):
        try:
            selector = build_allocation(allocator, ci).get("nodeSelector")
        except Fatal:
            continue
        pinned = None
        terms = (selector or {}).get("nodeSelectorTerms") or []
        if len(terms) == 1 and not terms[0].get("matchExpressions"):
            fields = terms[0].get("matchFields") or []
            if (len(fields) == 1 and fields[0].get("key") == "metadata.name"
                    and fields[0].get("operator") == "In" and len(fields[0].get("values") or []) == 1):
                pinned = fields[0]["values"][0]
        drivers = sorted({p.device.driver for p in picks})
        out.append({
            "claim": allocator.claims[ci].key,
            "pinnedToNode": pinned,
            "drivers": [
                {
                    "driver": driver,
                    "verbs": (["associated-node:update", "associated-node:patch", "arbitrary-node:update",
                               "arbitrary-node:patch"] if pinned else ["arbitrary-node:update", "arbitrary-node:patch"]),
                }
                for driver in drivers
            ],
        })
    return out


KUBELET_CALLS = ("NodePrepareResources", "NodeUnprepareResources")


def _node_operations(allocator: Allocator, success: bool) -> list:
    """Per claim and driver: which kubelet calls run; a call is skipped only if every device skips it."""
    out = []
    declared = "DRAOptionalNodeOperations" in allocator.node.declared_features
    if not success:
        return out
    for ci, picks in enumerate(allocator.results):
        by_driver: dict = {}
        for pick in picks:
            skip = set(allocator.slice_of_device[id(pick.device)].skip_node_operations)
            if "*" in skip:
                skip = set(KUBELET_CALLS)
            by_driver.setdefault(pick.device.driver, []).append(skip)
        for driver, skips in by_driver.items():
            skipped = set.intersection(*skips) if skips else set()
            out.append({
                "claim": allocator.claims[ci].key,
                "driver": driver,
                "calls": [{"call": call, "runs": call not in skipped} for call in KUBELET_CALLS],
                "skips": any(skips),
                "nodeDeclaresFeature": declared,
            })
    return out


def _device_map(allocator: Allocator, success: bool, claims: list) -> list:
    """Every device of the node's pools with one state, grouped by pool (for the device map)."""
    chosen = set()
    if success:
        chosen = {id(p.device) for picks in allocator.results for p in picks}
    blocked = {(c["pool"], c["device"]) for c in _all_candidates(claims) if c.get("code") in ("counter", "groups")}
    pools = []
    for pool in allocator.pools:
        devices = []
        for s in pool.device_slices:
            for device in s.devices:
                if id(device) in chosen:
                    state = "chosen"
                elif allocator.allocated.is_allocated(device.id) and not device.allow_multiple:
                    state = "in-use"
                elif allocator.allocated.is_allocated(device.id):
                    state = "shared"
                elif any(t.effect in ("NoSchedule", "NoExecute") for t in device.taints):
                    state = "tainted"
                elif (pool.id_str, device.name) in blocked:
                    state = "blocked"
                else:
                    state = "free"
                devices.append({
                    "device": device.name,
                    "slice": s.name,
                    "state": state,
                    "counterSets": [c.counter_set for c in device.consumes],
                })
        pools.append({"pool": pool.id_str, "state": _pool_entry(pool)["state"], "devices": devices})
    return pools
