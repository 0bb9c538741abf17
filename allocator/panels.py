"""View models for the result panels, drawn from the engine's outcome and explanation only."""
from __future__ import annotations

import json

import yaml

from allocator.engine.gates import COMPONENTS
from allocator.engine.pools import SliceIndex
from allocator.engine.quantity import Quantity, QuantityError
from allocator.engine.report import YamlDumper
from allocator.engine.run import ALLOCATED, INVALID, Outcome, candidate_nodes
from allocator.playground import Settings


def _amount(text: str) -> float:
    try:
        return float(Quantity.parse(text).value)
    except (QuantityError, TypeError):
        return 0.0


def _percent(part: float, whole: float) -> float:
    if whole <= 0:
        return 0.0
    return max(0.0, min(100.0, 100.0 * part / whole))


def counter_bars(explanation: dict) -> list:
    sets = []
    for cs in explanation.get("counterSets", []):
        bars = []
        for c in cs["counters"]:
            total = _amount(c["total"])
            before, now = _amount(c["allocatedBefore"]), _amount(c["allocatedNow"])
            bars.append({
                **c,
                "before_pct": _percent(before, total),
                "now_pct": _percent(now, total),
                "free_pct": _percent(max(total - before - now, 0), total),
                "overdrawn": _amount(c["free"]) < 0,
            })
        sets.append({**cs, "bars": bars})
    return sets


def capacity_meters(explanation: dict) -> list:
    meters = []
    for device in explanation.get("capacity", []):
        rows = []
        for name, cap in device["capacity"].items():
            total = _amount(cap["value"])
            before = _amount(cap["allocatedBefore"])
            shares = []
            for share in device["sharesNow"]:
                amount = share["consumedCapacity"].get(name)
                if amount is None:
                    continue
                shares.append({
                    "claim": share["claim"], "request": share["request"], "shareID": share["shareID"],
                    "consumed": amount, "requested": share["requested"].get(name),
                    "pct": _percent(_amount(amount), total),
                    "rounded": share["requested"].get(name) not in (None, amount),
                })
            used_now = sum(_amount(s["consumed"]) for s in shares)
            rows.append({
                "name": name, "value": cap["value"], "before": cap["allocatedBefore"], "policy": cap.get("policy"),
                "before_pct": _percent(before, total), "shares": shares,
                "free_pct": _percent(max(total - before - used_now, 0), total),
            })
        meters.append({"device": device["device"], "rows": rows, "shared": bool(device["sharesNow"])})
    return meters


def existing_claim_views(scenario) -> list:
    """Claims that were already allocated before this scheduling cycle."""
    views = []
    for claim in scenario.claims if scenario is not None else ():
        if claim.allocation is None:
            continue
        views.append({
            "key": claim.key,
            "state": "already allocated",
            "css": "already",
            "results": [
                {"request": r.request, "driver": r.driver, "pool": r.pool, "device": r.device,
                 "adminAccess": r.admin_access,
                 "consumedCapacity": {k: str(v) for k, v in (r.consumed_capacity or {}).items()}}
                for r in claim.allocation.results
            ],
            "requests": [],
        })
    return views


def device_map_groups(pools: list) -> list:
    """Device tiles grouped by pool, then by the first counter set each device draws on."""
    out = []
    for pool in pools:
        groups: dict = {}
        for device in pool["devices"]:
            key = device["counterSets"][0] if device["counterSets"] else None
            groups.setdefault(key, []).append(device)
        out.append({**pool, "groups": [{"counterSet": k, "devices": v} for k, v in groups.items()]})
    return out


def claim_views(outcome: Outcome) -> list:
    views = []
    explanation = outcome.explanation or {}
    requested = {c["claim"]: c for c in explanation.get("claims", [])}
    for claim in outcome.claims:
        meta = claim["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        allocation = (claim.get("status") or {}).get("allocation")
        requests = []
        for request in requested.get(key, {}).get("requests", []):
            requests.append({
                "name": request["request"],
                "class": request["deviceClassName"],
                "count": request["count"],
                "mode": request["allocationMode"],
                "chosen": request["chosen"],
                "subrequest": request["subrequestChosen"],
            })
        state = "allocated" if allocation else ("failed" if outcome.outcome != INVALID else "pending")
        views.append({
            "key": key,
            "state": state,
            "css": state,
            "results": (allocation or {}).get("devices", {}).get("results", []),
            "requests": requests,
            "nodeSelector": json.dumps((allocation or {}).get("nodeSelector")) if allocation else None,
        })
    return views


def page_context(settings: Settings, scenario, outcome: Outcome | None, *, refused: str | None = None) -> dict:
    nodes: list[str] = []
    if scenario is not None and not scenario.errors:
        nodes = candidate_nodes(scenario, SliceIndex(scenario.slices))
    context = {
        "settings": settings,
        "components": COMPONENTS,
        "gate_groups": settings.gate_rows(),
        "node_choices": nodes,
        "refused": refused,
        "outcome": outcome,
    }
    if outcome is None:
        context["error_lines_json"] = "[]"
        return context
    problems = outcome.problems
    dropped = [w for w in outcome.warnings if w.message.startswith("dropped on create")]
    context.update({
        "dropped_fields": dropped,
        "warnings": [w for w in outcome.warnings if w not in dropped],
        "problems": problems,
        "error_lines_json": json.dumps([
            {"line": p.line, "message": p.render()} for p in problems if p.line is not None
        ]),
        "claims": claim_views(outcome) + existing_claim_views(scenario),
        "claims_yaml": yaml.dump_all(outcome.claims, Dumper=YamlDumper, sort_keys=False) if outcome.claims else "",
        "allocated": outcome.outcome == ALLOCATED,
    })
    explanation = outcome.explanation
    if explanation:
        context.update({
            "explanation": explanation,
            "counter_sets": counter_bars(explanation),
            "meters": capacity_meters(explanation),
            "why": explanation["claims"],
            "node_operations": explanation.get("nodeOperations", []),
            "compatibility": explanation.get("compatibility", []),
            "ignored_slices": explanation.get("ignoredSlices", []),
            "unusable_pools": [p for p in explanation.get("pools", []) if p["state"] != "usable"],
            "device_map": device_map_groups(explanation.get("deviceMap", [])),
            "status_authorization": explanation.get("statusAuthorization", []),
            "kubelet_optional_ops": settings.component_gates().kubelet.enabled("DRAOptionalNodeOperations"),
        })
    return context
