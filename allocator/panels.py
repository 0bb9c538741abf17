"""View models for the result panels, drawn from the engine's outcome and explanation only."""
from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Callable

import yaml

from allocator.engine.gates import COMPONENTS
from allocator.engine.pools import SliceIndex
from allocator.engine.problems import DROPPED_ON_CREATE
from allocator.engine.quantity import Quantity, QuantityError
from allocator.engine.report import YamlDumper
from allocator.engine.run import ALLOCATED, INVALID, Outcome, candidate_nodes
from allocator.runs import RunRequest


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
                "before_width": f"{_percent(before, total):.1f}%",
                "now_width": f"{_percent(now, total):.1f}%",
                "overdrawn": _amount(c["free"]) < 0,
            })
        members = [{**m, "css": "chip-now" if m.get("allocatedNow") else "chip-before" if m.get("allocatedBefore") else "",
                    "groups_text": ",".join(m.get("groups") or ())} for m in cs.get("devices", ())]
        sets.append({**cs, "bars": bars, "devices": members})
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
            rows.append({
                "name": name, "value": cap["value"], "before": cap["allocatedBefore"], "policy": cap.get("policy"),
                "before_pct": _percent(before, total), "shares": shares,
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


def why_requests(explanation: dict) -> list:
    """The why table per request: rows grouped by pool (the pool shown once), and runs of rows with
    the same verdict and reason folded into one group so big pools stay readable."""
    out = []
    for claim in explanation.get("claims", []):
        for request in claim["requests"]:
            pools: list = []
            for row in request["candidates"]:
                if not pools or pools[-1]["pool"] != row["pool"]:
                    pools.append({"pool": row["pool"], "rows": []})
                pools[-1]["rows"].append(row)
            for pool in pools:
                pool["groups"] = _fold(pool["rows"])
            out.append({**request, "claim": claim["claim"], "pools": pools})
    return out


FOLD_AT = 4  # this many rows with one verdict and kind of reason are folded
FOLD_BLOCKING_AT = 3  # rows that block (in use, counters, …) fold only with the very same reason

VERDICT_LABELS = {
    "chosen": "✔ chosen",
    "tried": "◐ tried",
    "rejected": "✘ rejected",
    "not-needed": "· not needed",
    "not-used": "· not used",
    "not-reached": "· not reached",
}


def _fold(rows: list) -> list:
    """The rows of one pool as the table shows them, in search order: a row that matters alone
    ({"row": ...}), or a fold of rows with one verdict and reason ({"folded": True, "rows": [...]}).
    Each says whether it blocks ("1"/"0", for the "chosen and blocking only" filter) and carries
    its verdict's label."""
    groups: list = []
    by_reason: dict = {}
    for row in rows:
        if row["verdict"] in ("chosen", "tried"):
            groups.append({"rows": [row], "blocking": True})
            continue
        blocking = bool(row.get("stateDependent"))
        # Blocking rows fold only with rows of the very same reason; the others by the kind of reason.
        key = (row["verdict"], row.get("code"), row["reason"] if blocking else _reason_kind(row), blocking)
        group = by_reason.get(key)
        if group is None:
            group = by_reason[key] = {"rows": [], "blocking": blocking, "verdict": row["verdict"]}
            groups.append(group)
        group["rows"].append(row)
    flat: list = []
    for group in groups:
        members = group["rows"]
        if len(members) >= (FOLD_AT if not group["blocking"] else FOLD_BLOCKING_AT):
            reasons = {r["reason"] for r in members}
            flat.append({"folded": True, "rows": members, "verdict": group["verdict"],
                         "label": VERDICT_LABELS.get(group["verdict"], group["verdict"]),
                         "blocking": "1" if group["blocking"] else "0",
                         "reason": reasons.pop() if len(reasons) == 1 else _reason_kind(members[0])})
        else:
            for row in members:
                blocking = group["blocking"] or row["verdict"] in ("chosen", "tried")
                flat.append({"folded": False, "rows": [row], "row": row, "blocking": "1" if blocking else "0",
                             "label": VERDICT_LABELS.get(row["verdict"], row["verdict"])})
    # Rows alone go back to search order; a fold keeps the place of its first row.
    order = {id(row): n for n, row in enumerate(rows)}
    flat.sort(key=lambda g: order[id(g["rows"][0])])
    return flat


def _reason_kind(row: dict) -> str:
    """The reason without the device-specific tail, to fold e.g. every `selector #0 is false` row together."""
    return row["reason"].split(":", 1)[0] if row.get("code") else row["reason"]


def replay_data(explanation: dict) -> dict:
    """What the replay needs besides the steps: every device tile and every counter bar at the start."""
    before = {"in-use", "shared"}
    devices = [
        {"key": f"{pool['pool']}/{d['device']}", "pool": pool["pool"], "device": d["device"],
         "before": d["state"] if d["state"] in before else None}
        for pool in explanation.get("deviceMap", []) for d in pool["devices"]
    ]
    counters = []
    for cs in explanation.get("counterSets", []):
        for c in cs["counters"]:
            counters.append({"pool": cs["pool"], "counterSet": cs["counterSet"], "counter": c["counter"],
                             "total": _amount(c["total"]), "before": _amount(c["allocatedBefore"]),
                             "label": c["total"]})
    trace = explanation.get("trace") or {"strings": [], "steps": [], "total": 0}
    # The steps go to the page as the engine keeps them: arrays of indexes into `strings`
    # (explain.trace_data), a fifth of the bytes of the same steps as objects.
    return {"strings": trace["strings"], "steps": trace["steps"], "total": trace["total"], "devices": devices,
            "counters": counters}


SCORE_LABELS = {
    "TaintToleration": "taints", "NodeAffinity": "affinity", "NodeResourcesFit": "least allocated",
    "NodeResourcesBalancedAllocation": "balanced", "ImageLocality": "images", "DynamicResources": "DRA",
}


NODE_ROWS_SHOWN = 12  # past this many nodes, rejected nodes fold by reason and only the best feasible ones show
BEST_SHOWN = 5


def _node_rows(pod) -> tuple[list, list]:
    """The node table of one pod: every node when there are few; on a big cluster the chosen
    node and the best-scored feasible ones, with the rest folded by reason."""
    def row(verdict):
        parts = [{"plugin": name, "label": SCORE_LABELS.get(name, name), **values}
                 for name, values in ((verdict.score or {}).get("plugins") or {}).items()]
        return {"verdict": verdict, "score_parts": parts}

    if len(pod.nodes) <= NODE_ROWS_SHOWN:
        return [row(v) for v in pod.nodes], []
    feasible = [v for v in pod.nodes if v.fits]
    best = sorted(feasible, key=lambda v: -((v.score or {}).get("total") or 0))[:BEST_SHOWN]
    shown = {v.node for v in best} | ({pod.node} if pod.node else set())
    rows = [row(v) for v in pod.nodes if v.node in shown]
    folded: dict = {}
    for verdict in pod.nodes:
        if verdict.node in shown:
            continue
        reason = f"feasible too (the {BEST_SHOWN} best scored are listed)" if verdict.fits else verdict.reason
        folded.setdefault(reason, []).append(verdict.node)
    return rows, [{"reason": reason, "nodes": nodes} for reason, nodes in folded.items()]


def pod_views(outcome: Outcome) -> list:
    """Per pod: its result, the scores of its feasible nodes, and its own why (the chosen node's
    search, or for a pending pod the node DRA rejected that explains it)."""
    views = []
    for pod in outcome.pods or ():
        ranking = pod.ranking
        explanation = pod.explanation
        rows, folded = _node_rows(pod)
        views.append({
            "pod": pod,
            "rows": rows,
            "folded": folded,
            "scored": bool(ranking and any(s.plugins for s in ranking.scores)),
            "tied": ranking.tied if ranking and len(ranking.tied) > 1 else [],
            "explanation": explanation,
            "why_requests": why_requests(explanation) if explanation else [],
        })
    return views


@dataclass(frozen=True)
class Panel:
    """One result panel: its template, and what it adds to the page context (None hides it)."""

    key: str
    template: str
    build: Callable[[dict], dict | None]


def _when(*keys):
    return lambda ctx: {} if any(ctx.get(k) for k in keys) else None


PANELS = [
    Panel("pods", "panels/pods.html", lambda ctx: {"pod_views": pod_views(ctx["outcome"])}
          if ctx["outcome"].pods else None),
    Panel("skew", "panels/skew.html", _when("dropped_fields", "ignored_slices", "unusable_pools")),
    Panel("claims", "panels/claims.html", _when("claims")),
    Panel("counters", "panels/counters.html", _when("counter_sets")),
    Panel("groups", "panels/groups.html", _when("compatibility")),
    Panel("capacity", "panels/capacity.html", _when("meters")),
    Panel("why", "panels/why.html", lambda ctx: {"why_requests": why_requests(ctx["explanation"])}
          if ctx.get("why") else None),
    Panel("replay", "panels/replay.html", lambda ctx: {"replay": replay_data(ctx["explanation"])}
          if ctx.get("explanation") and (ctx["explanation"].get("trace") or {}).get("steps") else None),
    Panel("nodeops", "panels/nodeops.html", _when("node_operations")),
    Panel("authz", "panels/authz.html", _when("status_authorization")),
    Panel("devices", "panels/devices.html", _when("device_map")),
]


def page_context(settings: RunRequest, scenario, outcome: Outcome | None, *, refused: str | None = None) -> dict:
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
        context["panels"] = []
        return context
    problems = outcome.problems
    dropped = [w for w in outcome.warnings if w.code == DROPPED_ON_CREATE]
    context.update({
        "dropped_fields": dropped,
        "warnings": [w for w in outcome.warnings if w not in dropped],
        "problems": problems,
        # Errors and warnings with a line become marks in the editor.
        "error_lines_json": json.dumps([
            {"line": p.line, "message": p.render(), "severity": p.severity}
            for p in list(problems) + list(outcome.warnings) if p.line is not None
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
    panels = []
    for panel in PANELS:
        extra = panel.build(context)
        if extra is not None:
            context.update(extra)
            panels.append(panel)
    context["panels"] = panels
    return context
