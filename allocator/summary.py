"""Bounding what one page render costs: beyond a size, per-node and per-pool lists become counts.

A cluster dump can hold a thousand nodes and a hundred thousand devices; the page shows the
chosen node in full and the rest as counts. This works on the panel data (`page_context`), after
the run, so the engine's answer (and the API's JSON) stays complete.
"""
from __future__ import annotations

import dataclasses
from collections import Counter

MAX_PER_POOL = 64  # device rows, tiles and chips per pool (8 GPUs with 7 partitions each fit)
MAX_NODES = 25  # node rows per pod
MAX_VERDICTS = 1000  # one line per node tried
MAX_ITEMS = 100  # claims, pods, problems, warnings
KEPT = {"chosen", "tentative"}  # a device that took part in the answer is always shown


def summarise(context: dict) -> dict:
    """The page context with long lists cut; `context["summary"]` says what was left out."""
    notes: list[str] = []
    outcome = context.get("outcome")
    if outcome is not None:
        changes = {}
        if len(outcome.verdicts) > MAX_VERDICTS:
            shown, hidden = _cut(outcome.verdicts, MAX_VERDICTS, lambda v: v.fits)
            changes["verdicts"] = shown
            notes.append(f"{len(outcome.verdicts):,} nodes tried; {_counted(hidden, lambda v: v.message)} not listed")
        if outcome.pods:
            pods, pod_notes = _pods(outcome.pods)
            if pod_notes:
                changes["pods"] = pods
                notes.extend(pod_notes)
        if changes:
            context["outcome"] = dataclasses.replace(outcome, **changes)
    for key, what in (("problems", "errors"), ("warnings", "warnings"), ("dropped_fields", "dropped fields")):
        items = context.get(key) or []
        if len(items) > MAX_ITEMS:
            context[key] = items[:MAX_ITEMS]
            notes.append(f"{len(items) - MAX_ITEMS:,} more {what} not listed (the API and `manage.py allocate` list all)")
    claims = context.get("claims") or []
    if len(claims) > MAX_ITEMS:
        shown, hidden = _cut(claims, MAX_ITEMS, lambda c: c["state"] != "already allocated")
        context["claims"] = shown
        notes.append(f"{len(hidden):,} more claims already allocated, not listed "
                     f"(by pool: {_counted(hidden, _first_pool, noun='')})")
    if context.get("why"):
        context["why"] = [_why_claim(claim, notes) for claim in context["why"]]
    if context.get("device_map"):
        context["device_map"] = [_map_pool(pool, notes) for pool in context["device_map"]]
    if context.get("counter_sets"):
        sets = [_counter_set(cs, notes) for cs in context["counter_sets"]]
        if len(sets) > MAX_PER_POOL:
            shown, hidden = _cut(sets, MAX_PER_POOL, lambda cs: any(m.get("allocatedNow") for m in cs.get("devices", [])))
            notes.append(f"{len(hidden):,} more counter sets not drawn, none used by this allocation "
                         f"(by pool: {_counted(hidden, lambda cs: cs.get('pool'), noun='')})")
            sets = shown
        context["counter_sets"] = sets
    if context.get("compatibility"):
        context["compatibility"] = [_counter_set(cs, notes, "compatibility groups of ") for cs in context["compatibility"]]
    context["summary"] = notes
    return context


def _cut(items: list, limit: int, keep) -> tuple[list, list]:
    """(shown, hidden): every item `keep` accepts, and the others in order while fewer than
    `limit` are shown."""
    shown, hidden = [], []
    for item in items:
        (shown if keep(item) or len(shown) < limit else hidden).append(item)
    return shown, hidden


def _counted(items: list, key, *, most: int = 4, noun: str = "×") -> str:
    """`3 × reason a, 2 × reason b, …`: how many hidden items there are of each kind."""
    counts = Counter(key(item) or "—" for item in items)
    parts = [f"{n:,} {noun} {what}" if noun else f"{what} {n:,}" for what, n in counts.most_common(most)]
    if len(counts) > most:
        parts.append(f"{sum(n for _, n in counts.most_common()[most:]):,} more")
    return ", ".join(parts)


def _first_pool(claim: dict) -> str:
    results = claim.get("results") or []
    return results[0].get("pool", "") if results else ""


def _pods(pods: list) -> tuple[list, list[str]]:
    notes: list[str] = []
    shown_pods = pods
    if len(pods) > MAX_ITEMS:
        shown_pods, hidden = _cut(pods, MAX_ITEMS, lambda p: False)
        notes.append(f"{len(pods):,} pods; {_counted(hidden, lambda p: p.outcome)} not listed")
    out = []
    cut_nodes = 0
    for pod in shown_pods:
        if len(pod.nodes) > MAX_NODES:
            shown, hidden = _cut(pod.nodes, MAX_NODES, lambda n: n.fits)
            pod = dataclasses.replace(pod, nodes=shown)
            cut_nodes += 1
        out.append(pod)
    if cut_nodes:
        notes.append(f"for {cut_nodes:,} pod{'s' if cut_nodes > 1 else ''}, only the node that fits and the first "
                     f"{MAX_NODES} others are listed; the scheduler's message counts every node")
    return out, notes


def _why_claim(claim: dict, notes: list) -> dict:
    requests = []
    for request in claim.get("requests", []):
        candidates = request.get("candidates") or []
        if len(candidates) <= MAX_PER_POOL:
            requests.append(request)
            continue
        shown, hidden = [], []
        per_pool: Counter = Counter()
        for cand in candidates:
            pool = cand.get("pool")
            if cand.get("verdict") in KEPT or per_pool[pool] < MAX_PER_POOL:
                per_pool[pool] += 1
                shown.append(cand)
            else:
                hidden.append(cand)
        if hidden:
            notes.append(f"{claim.get('claim')}, request {request.get('request')}: {len(hidden):,} more devices "
                         f"not listed ({_counted(hidden, lambda c: c.get('verdict'), noun='')}; "
                         f"by pool: {_counted(hidden, lambda c: c.get('pool'), noun='')})")
        requests.append({**request, "candidates": shown})
    return {**claim, "requests": requests}


def _map_pool(pool: dict, notes: list) -> dict:
    total = sum(len(group["devices"]) for group in pool.get("groups", []))
    if total <= MAX_PER_POOL:
        return pool
    left, groups, hidden = MAX_PER_POOL, [], []
    for group in pool["groups"]:
        shown, cut = _cut(group["devices"], left, lambda d: False)
        left -= len(shown)
        hidden.extend(cut)
        if shown:
            groups.append({**group, "devices": shown})
    notes.append(f"device map of pool {pool.get('pool')}: {len(hidden):,} more devices not drawn "
                 f"({_counted(hidden, lambda d: d.get('state'), noun='')})")
    return {**pool, "groups": groups}


def _counter_set(cs: dict, notes: list, what: str = "") -> dict:
    devices = cs.get("devices") or []
    if len(devices) <= MAX_PER_POOL:
        return cs
    shown, hidden = _cut(devices, MAX_PER_POOL, lambda m: m.get("allocatedNow"))
    notes.append(f"{what}counter set {cs.get('pool')}/{cs.get('counterSet')}: {len(hidden):,} more devices "
                 "drawing on it not listed")
    return {**cs, "devices": shown}
