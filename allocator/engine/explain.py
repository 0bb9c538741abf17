"""Why each device was or was not chosen, read from the search's own record (trace.py).

Every row is what the search saw when it considered the device in the reported
attempt: the first check that failed, on the state of that moment, with who held
what it needed; or that the search never considered it (not needed, not used,
not reached). Nothing is re-evaluated against a later state.
"""
from __future__ import annotations

from decimal import Decimal

from allocator.engine.allocate import Allocator, Fatal, SearchLimit
from allocator.engine.capacity import device_capacities, status_name
from allocator.engine.counters import GroupState
from allocator.engine.explanation import (
    BlockedAt,
    CapacityAmount,
    CapacityShare,
    ClaimWhy,
    CompatibilityGroups,
    CounterMember,
    CounterSetUse,
    CounterUse,
    DeviceCapacity,
    Explanation,
    GroupMember,
    GroupStep,
    IgnoredSlice,
    KubeletCall,
    MapDevice,
    MapPool,
    NodeOperations,
    PoolState,
    Replay,
    RequestWhy,
    Sentence,
    WhyRow,
)
from allocator.engine.pools import SliceIndex, ignored_slices
from allocator.engine.refusals import TaintNotTolerated
from allocator.engine.refusals import quantity_text as _q
from allocator.engine.trace import DONE, ENTER, PICK, REJECT, UNDO, SearchRecorder
from allocator.engine.vocabulary import IN_USE_CODES, RowCode, Verdict

CHOSEN, TRIED, REJECTED = Verdict.CHOSEN, Verdict.TRIED, Verdict.REJECTED
NOT_NEEDED, NOT_USED, NOT_REACHED = Verdict.NOT_NEEDED, Verdict.NOT_USED, Verdict.NOT_REACHED


def _row(device, pool, verdict: Verdict, code: RowCode | None, reason: str, refusal=None, *,
         consumed_capacity: dict | None = None, would: RowCode | None = None) -> WhyRow:
    facts = counter_set = held_by = state_dependent = None
    if refusal is not None:
        facts = refusal.facts() or None
        if facts is not None:
            counter_set = facts.get("counterSet")
        held_by = [h.as_dict() for h in refusal.holders()] or None
        state_dependent = bool(refusal.state_dependent)
    return WhyRow(device=device.name, pool=pool.id_str, slice=device.slice_name, driver=device.driver,
                  verdict=verdict, code=code, reason=reason, facts=facts, counter_set=counter_set,
                  held_by=held_by, state_dependent=state_dependent, consumed_capacity=consumed_capacity,
                  would=would)


def _independent_refusal(allocator: Allocator, rd, device):
    """A refusal that is true at any moment (selectors, taints, gates), or None; never fatal here."""
    try:
        refusal = allocator.selector_refusal(rd, device)
    except (Fatal, SearchLimit):  # an error or the explanation's time limit: say nothing more
        return None
    if refusal is None and allocator.features.device_taints:
        taint = allocator.untolerated_taint(rd, device)
        if taint is not None:
            refusal = TaintNotTolerated(taint)
    return refusal


def _request_rows(allocator: Allocator, recorder: SearchRecorder, rd, visit: list | None, state: str,
                  limit: int) -> list:
    """The rows of one request or subrequest. `state`: visited, not-used or not-reached."""
    considered = {row.position: row for row in visit or ()}
    held = sum(1 for row in visit or () if row.pick is not None and not row.undone)
    satisfied = held >= rd.num_devices
    success = recorder.success
    all_listed = {id(d) for d in rd.all_devices} if rd.all_mode and rd.all_devices is not None else None
    rows = []
    for position, device in enumerate(allocator.candidates[:limit]):
        pool = allocator.pool_of_device[id(device)]
        row = considered.get(position)
        if state == NOT_USED:
            rows.append(_row(device, pool, NOT_USED, None, "not used: an earlier subrequest was satisfied"))
        elif state == NOT_REACHED:
            rows.append(_row(device, pool, NOT_REACHED, None,
                             "not reached: the search did not get to this request in the reported attempt"))
        elif row is not None and row.pick is not None and not row.undone:
            consumed = {k: str(v) for k, v in row.pick.consumed.items()} if row.pick.consumed else None
            rows.append(_row(device, pool, CHOSEN if success else TRIED, None if success else RowCode.GIVEN_UP,
                             "chosen" if success else
                             "picked in the furthest attempt, which then failed at a later request or device",
                             consumed_capacity=consumed))
        elif row is not None and row.pick is not None:
            rows.append(_row(device, pool, TRIED, RowCode.BACKTRACKED,
                             "picked, then given up: the rest of the search could not be completed with it"))
        elif row is not None:
            rows.append(_row(device, pool, REJECTED, row.refusal.code, row.refusal.text(), row.refusal))
        elif all_listed is not None and id(device) not in all_listed:
            refusal = _independent_refusal(allocator, rd, device)
            if refusal is not None:
                rows.append(_row(device, pool, REJECTED, refusal.code, refusal.text(), refusal))
            else:
                rows.append(_row(device, pool, REJECTED, RowCode.CAPACITY, "its capacity cannot hold the request"))
        elif satisfied:
            refusal = _independent_refusal(allocator, rd, device)
            reason = f"not needed: the request already had its {rd.num_devices} device(s)"
            if refusal is not None:
                rows.append(_row(device, pool, NOT_NEEDED, None, f"{reason}; it would fail anyway: {refusal.text()}",
                                 would=refusal.code))
            else:
                rows.append(_row(device, pool, NOT_NEEDED, None, reason))
        else:
            rows.append(_row(device, pool, NOT_REACHED, None,
                             "not reached: the search stopped before it got to this device"))
    return rows


def explain(allocator: Allocator, recorder: SearchRecorder, *, max_candidates: int = 2000,
            approximate: str | None = None) -> Explanation:
    """The explanation the reports, the API and the web page show, from the search's record."""
    success = recorder.success
    if not success:
        # The attempt's state is unwound after a failure: take the reported picks again, so
        # the counter, capacity and group panels show the furthest attempt.
        for ci, pick in recorder.reported_picks():
            allocator.attempt.take(ci, pick)
    visits = recorder.reported()
    blocked = None if success else recorder.furthest_rd

    claims = []
    for ci, claim in enumerate(allocator.claims):
        requests = []
        for ri, request in enumerate(claim.requests):
            subs = [0] if request.exactly is not None else range(len(request.first_available))
            used_sub = allocator.selected_sub.get((ci, ri)) if success else None
            for si in subs:
                rd = allocator.request_data.get((ci, ri, si))
                if rd is None:
                    continue
                key = (ci, ri, si)
                if not recorder.reached(ci, ri) or key not in visits:
                    state = NOT_REACHED
                elif used_sub is not None and si > used_sub:
                    state = NOT_USED
                else:
                    state = "visited"
                rows = _request_rows(allocator, recorder, rd, visits.get(key), state, max_candidates)
                requests.append(RequestWhy(
                    blocked=blocked is rd,
                    request=rd.name,
                    device_class_name=rd.request.class_name,
                    allocation_mode=rd.request.mode,
                    count=rd.num_devices,
                    subrequest_chosen=(used_sub == si) if request.exactly is None and success else None,
                    chosen=[row.pool + "/" + row.device for row in rows if row.verdict == CHOSEN],
                    candidates=rows,
                ))
        claims.append(ClaimWhy(claim=claim.key, requests=requests))

    blocked_at = None
    if blocked is not None:
        blocked_at = BlockedAt(claim=allocator.claims[blocked.claim_index].key, request=blocked.name)
    return Explanation(
        node=allocator.node.name,
        success=success,
        outcome=recorder.outcome,
        blocked_at=blocked_at,
        headline=None if success else _headline(allocator, recorder, claims),
        approximate=approximate,
        pools=[_pool_entry(p) for p in allocator.pools],
        claims=claims,
        counter_sets=_counter_sets(allocator, claims),
        capacity=_capacity(allocator),
        node_operations=_node_operations(allocator, success),
        compatibility=_compatibility(allocator, claims),
        ignored_slices=[
            IgnoredSlice(slice=s.name, pool=f"{s.driver}/{s.pool}", reason=reason)
            for s, reason in ignored_slices(allocator.node, SliceIndex(allocator.all_slices), allocator.features)
        ] if allocator.all_slices is not None else [],
        device_map=_device_map(allocator, success),
        steps=allocator.steps,
        trace=trace_data(allocator, recorder),
    )


# --- the headline of a pending claim ----------------------------------------------------------------


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" + ("" if n == 1 else "s")


def _headline(allocator: Allocator, recorder: SearchRecorder, claims: list) -> Sentence | None:
    """One plain sentence for the request the search could not satisfy, computed from its rows."""
    rd = recorder.furthest_rd
    if rd is None:
        return None
    sentence = _blocked_sentence(allocator, recorder, claims, rd)
    if rd.parent_name is not None and recorder.outcome != "gave-up":
        request = allocator.claims[rd.claim_index].requests[rd.request_index]
        others = [sub.name for si, sub in enumerate(request.first_available) if si != rd.sub_index]
        if others:
            sentence = Sentence(f"{sentence}; its other alternatives ({', '.join(others)}) did not fit either",
                                sentence.form, **sentence.parts, alternatives=others)
    return sentence


def _blocked_sentence(allocator: Allocator, recorder: SearchRecorder, claims: list, rd) -> Sentence:
    claim = allocator.claims[rd.claim_index]
    rows = next((r.candidates for c in claims if c.claim == claim.key
                 for r in c.requests if r.request == rd.name), [])
    node = allocator.node.name
    need = rd.num_devices
    who = {"request": rd.name, "claim": claim.key, "need": need, "node": node}
    if recorder.outcome == "gave-up":
        # The search stopped in the middle of a request: counting its rows would mislead.
        return Sentence(f"the search gave up after {allocator.steps} steps before it found an answer; its furthest "
                        f"attempt had {recorder.furthest[1]} of the {_plural(need, 'device')} that request {rd.name} "
                        f"of claim {claim.key} needs",
                        "gave-up", **who, steps=allocator.steps, had=recorder.furthest[1])
    asks = f"request {rd.name} of claim {claim.key} needs {_plural(need, 'device')}"
    if not rows:
        unusable = [p.id_str for p in allocator.pools if not p.usable]
        extra = f" ({', '.join(unusable)} not usable)" if unusable else ""
        return Sentence(f"{asks}; node {node} has no devices in usable pools{extra}", "no-devices", **who,
                        unusable=unusable)
    failing = [r for r in rows if r.verdict == REJECTED and not r.state_dependent]
    failing_ids = {id(r) for r in failing}
    passing = [r for r in rows if id(r) not in failing_ids and r.verdict != NOT_REACHED]
    if not passing:
        codes = {(r.code, r.reason) for r in failing}
        if len(codes) == 1:
            ((code, reason),) = codes
            return Sentence(f"every device on {node} fails for {asks.split(' needs')[0]}: {reason}",
                            "all-fail-alike", **who, row=failing[0])
        counts: dict = {}
        for r in failing:
            counts[r.code] = counts.get(r.code, 0) + 1
        ranked = sorted(counts.items(), key=lambda kv: -kv[1])
        detail = ", ".join(f"{n} {code}" for code, n in ranked)
        return Sentence(f"{asks}; no device on {node} passes its checks ({detail})", "all-fail", **who,
                        counts=ranked)
    held = [r for r in passing if r.verdict == REJECTED]
    if len(passing) < need:
        if not held:
            taken = "it is not taken" if len(passing) == 1 else (
                "neither is taken" if len(passing) == 2 else "none is taken")
            return Sentence(f"{asks}; on {node} {_plural(len(passing), 'device')} {_pass(passing)} its selectors "
                            f"and {taken}; no {need} exist", "too-few", **who, passing=len(passing))
        return Sentence(f"{asks}; on {node} only {_plural(len(passing), 'device')} {_pass(passing)} its "
                        f"selectors, and {held[0].device} is not free: {held[0].reason}", "too-few-free", **who,
                        passing=len(passing), row=held[0])
    if held:
        constrained = [r for r in held if r.code == RowCode.CONSTRAINT]
        taken = [r for r in held if r.code in IN_USE_CODES]
        other = [r for r in held if r.code not in IN_USE_CODES and r.code != RowCode.CONSTRAINT]
        parts = []
        had = [r.device for r in rows if r.verdict == TRIED] if constrained else []
        if constrained:
            # A constraint over the picks made so far is the reason the free devices did not do.
            with_picks = f"with {', '.join(had)} picked, " if had else ""
            verb = "is" if len(constrained) == 1 else "are"
            parts.append(f"{with_picks}{_names(constrained)} {verb} ruled out by a constraint: "
                         f"{constrained[0].reason}")
        if other:
            parts.append(f"{other[0].device} would fit alone but {other[0].reason}")
        if taken:
            verb = "is" if len(taken) == 1 else "are"
            parts.append(f"{_names(taken)} {verb} taken ({taken[0].reason})")
        return Sentence(f"{asks}; " + "; ".join(parts), "held", **who, picked=had, constrained=constrained[:4],
                        other=other[:1], taken=taken[:4])
    return Sentence(f"{asks}; {_plural(len(passing), 'device')} {_pass(passing)} its selectors, but no {need} "
                    "of them fit together with the other requests and constraints", "no-combination", **who,
                    passing=len(passing))


def _names(rows: list) -> str:
    """The first three devices of the rows, and an ellipsis for more."""
    return ", ".join(r.device for r in rows[:3]) + (" …" if len(rows) > 3 else "")


def _pass(rows: list) -> str:
    return "passes" if len(rows) == 1 else "pass"


# --- the replay ---------------------------------------------------------------------------------------


def trace_data(allocator: Allocator, recorder: SearchRecorder) -> Replay:
    """The recorded steps for the replay (bounded; `total` counts every step), compact (see Replay):
    a search repeats a few names and reasons hundreds of times."""
    strings: list = []
    index: dict = {}

    def ref(text):
        at = index.get(text)
        if at is None:
            at = index[text] = len(strings)
            strings.append(text)
        return at

    kinds = {kind: ref(kind) for kind in (ENTER, REJECT, PICK, UNDO, DONE)}
    claims = [ref(claim.key) for claim in allocator.claims]
    requests: dict = {}  # id(request data) -> (claim, request) indexes
    devices: dict = {}  # id(device) -> (pool, device) indexes
    reasons: dict = {}  # id(refusal) -> (refusal, index of its text, index of its code)
    said: dict = {}  # index of a refusal's text -> its code and facts (Replay.refusals)
    steps = []
    for step in recorder.steps:
        claim = request = pool = device = text = counters = code = None
        rd = step.rd
        if rd is not None:
            known = requests.get(id(rd))
            if known is None:
                known = requests[id(rd)] = (claims[rd.claim_index], ref(rd.name))
            claim, request = known
        if step.device is not None:
            known = devices.get(id(step.device))
            if known is None:
                d = step.device
                known = devices[id(d)] = (ref(f"{d.driver}/{d.pool}"), ref(d.name))
            pool, device = known
        if step.kind == REJECT:
            known = reasons.get(id(step.detail))
            if known is None:
                refusal = step.detail
                known = reasons[id(refusal)] = (refusal, ref(refusal.text()), ref(str(refusal.code)))
                said.setdefault(known[1], {"code": refusal.code, "facts": refusal.facts() or None,
                                           "heldBy": [h.as_dict() for h in refusal.holders()] or None})
            text, code = known[1], known[2]
        elif step.kind in (PICK, UNDO):
            pick = step.detail
            if pick.pays_counters:
                counters = [[ref(e.counter_set), ref(c), float(q.value)]
                            for e in pick.device.consumes for c, q in e.counters.items()]
        elif step.kind == DONE:
            text = ref(step.detail)
        steps.append([kinds[step.kind], claim, request, pool, device, text, counters, code])
    return Replay(strings=strings, steps=steps, total=recorder.total, shown=len(steps), refusals=said)


def with_steps(explanation: Explanation | None) -> dict | None:
    """The explanation as the API and the CLI print it (each replay step an object)."""
    return explanation.as_dict() if explanation is not None else None


def _pool_state(pool) -> str:
    if pool.incomplete:
        return "incomplete"
    if pool.invalid:
        return "invalid"
    return "usable"


def _pool_entry(pool) -> PoolState:
    return PoolState(
        pool=pool.id_str,
        generation=pool.generation,
        state=_pool_state(pool),
        reason=pool.invalid or pool.incomplete_reason,
        slices=[s.name for s in pool.device_slices],
        counter_slices=[s.name for s in pool.counter_slices],
        other_slices=[s.name for s in pool.other_device_slices],
        devices=sum(len(s.devices) for s in pool.device_slices),
    )


def _drawing_on(devices, counter_set: str):
    """(device, its consumesCounters entry) for every device that draws on the counter set."""
    for device in devices:
        for entry in device.consumes:
            if entry.counter_set == counter_set:
                yield device, entry


def _all_candidates(claims: list):
    for claim in claims:
        for request in claim.requests:
            yield from request.candidates


def _counter_sets(allocator: Allocator, claims: list) -> list:
    out = []
    now_by_pool: dict = {}
    for picks in allocator.results:
        for pick in picks:
            for entry in pick.device.consumes:
                now_by_pool.setdefault((pick.device.driver, pick.device.pool), set()).add((entry.counter_set, pick.device.name))
    blocking: dict = {}  # (pool, counter set) -> devices refused for it
    for cand in _all_candidates(claims):
        if cand.counter_set:
            blocking.setdefault((cand.pool, cand.counter_set), set()).add(cand.device)
    for pool in allocator.pools:
        if not pool.usable or not pool.counter_sets:
            continue
        available = allocator.attempt.available_counters_of(pool)
        consumed = allocator.attempt.consumed_counters.get(pool.id, {})
        for name, counter_set in pool.counter_sets.items():
            counters = []
            for counter, total in counter_set.counters.items():
                left = available.get(name, {}).get(counter, total.value)
                now = consumed.get(name, {}).get(counter, Decimal(0))
                counters.append(CounterUse(
                    counter=counter,
                    total=str(total),
                    allocated_before=_q(total.value - left, total),
                    allocated_now=_q(now, total),
                    free=_q(left - now, total),
                ))
            members = [
                CounterMember(
                    device=device.name,
                    groups=list(entry.groups),
                    allocated_before=allocator.allocated.is_allocated(device.id),
                    allocated_now=(name, device.name) in now_by_pool.get(pool.id, set()),
                )
                for device, entry in _drawing_on(pool.all_pool_devices(), name)
            ]
            state = allocator.attempt.group_state(pool, name)
            out.append(CounterSetUse(
                blocks=sorted(blocking.get((pool.id_str, name), ())),
                pool=pool.id_str,
                counter_set=name,
                counters=counters,
                devices=members,
                groups=state.describe() if allocator.features.compatibility_groups else None,
            ))
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
                shares.setdefault(pick.device.id, []).append(CapacityShare(
                    claim=allocator.claims[ci].key,
                    request=pick.rd.name,
                    share_id=pick.share_id,
                    consumed_capacity={k: str(v) for k, v in pick.consumed.items()},
                    requested={k: str(v) for k, v in (pick.rd.request.capacity_requests or {}).items()},
                ))
    for pool in allocator.pools:
        if not pool.usable:
            continue
        for device in pool.devices():
            if not device.allow_multiple or not allocator.features.consumable_capacity:
                continue
            before = allocator.allocated.capacity.get(device.id, {})
            out.append(DeviceCapacity(
                device=device.id_str,
                capacity={
                    status_name(key, device): CapacityAmount(
                        value=str(cap.value), allocated_before=_q(before.get(key, Decimal(0)), cap.value),
                        policy=_policy_text(cap.policy))
                    for key, (_, cap) in device_capacities(device).items()
                },
                shares_now=shares.get(device.id, []),
            ))
    return out


def _compatibility(allocator: Allocator, claims: list) -> list:
    """Per counter set with grouped devices: the baseline, each pick's running intersection, and refusals."""
    if not allocator.features.compatibility_groups:
        return []
    rejected: dict = {}
    for cand in _all_candidates(claims):
        if cand.code == RowCode.GROUPS:
            # the row's English for the JSON, the row itself for a wording layer
            rejected.setdefault((cand.pool, cand.device), Sentence(cand.reason, "row", row=cand))
    out = []
    for pool in allocator.pools:
        if not pool.usable or not pool.counter_sets:
            continue
        grouped = {e.counter_set for d in pool.all_pool_devices() for e in d.consumes if e.groups}
        if not grouped:
            continue
        baseline = allocator.attempt.group_baseline_of(pool)
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
                            steps.append(GroupStep(device=pick.device.name, groups=sorted(entry.groups),
                                                   after=state.describe()))
            members = [
                GroupMember(device=device.name, groups=sorted(entry.groups),
                            rejected=rejected.get((pool.id_str, device.name)))
                for device, entry in _drawing_on(pool.devices(), name)
            ]
            out.append(CompatibilityGroups(
                pool=pool.id_str,
                counter_set=name,
                baseline=baseline.get(name, GroupState()).describe(),
                steps=steps,
                final=state.describe(),
                devices=members,
            ))
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
            out.append(NodeOperations(
                claim=allocator.claims[ci].key,
                driver=driver,
                calls=[KubeletCall(call=call, runs=call not in skipped) for call in KUBELET_CALLS],
                skips=any(skips),
                node_declares_feature=declared,
            ))
    return out


def _device_map(allocator: Allocator, success: bool) -> list:
    """Every device of the node's pools with one state at the end of the reported attempt.

    A device that could not be taken any more because its counter set is used up or
    its compatibility groups no longer fit is `blocked` (with the set), whether or not
    a request ever considered it.
    """
    attempt = allocator.attempt
    held = {id(p.device) for picks in attempt.results for p in picks}
    pools = []
    for pool in allocator.pools:
        devices = []
        for s in pool.device_slices:
            for device in s.devices:
                blocked_by = None
                if id(device) in held:
                    state = "chosen" if success else "tried"
                elif attempt.allocated.is_allocated(device.id) and not device.allow_multiple:
                    state = "in-use"
                elif attempt.allocated.is_allocated(device.id):
                    state = "shared"
                else:
                    blocked_by = _blocking_set(allocator, pool, device)
                    if blocked_by is not None:
                        state = "blocked"
                    elif any(t.effect in ("NoSchedule", "NoExecute") for t in device.taints):
                        state = "tainted"
                    else:
                        state = "free"
                devices.append(MapDevice(
                    device=device.name,
                    slice=s.name,
                    state=state,
                    blocked_by=blocked_by,
                    counter_sets=[c.counter_set for c in device.consumes],
                ))
        pools.append(MapPool(pool=pool.id_str, state=_pool_state(pool), devices=devices))
    return pools


def _blocking_set(allocator: Allocator, pool, device) -> str | None:
    """The counter set that would refuse the device now (counters or compatibility groups), if any."""
    if not device.consumes or not pool.usable or not allocator.features.partitionable_devices:
        return None
    attempt = allocator.attempt
    if allocator.features.compatibility_groups:
        refusal = attempt.groups_check(pool, device, False)
        if refusal is not None:
            return refusal.counter_set
    refusal = attempt.counters_check(pool, device, False)
    if refusal is not None and any(e.counter_set == refusal.counter_set for e in device.consumes):
        return refusal.counter_set
    return None
