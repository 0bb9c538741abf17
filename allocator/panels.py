"""The result panels: each builds its own view from the engine's typed outcome, cuts it to its own
bound and says in a note what it left out, and has one template.

A panel is `build(PanelInput) -> PanelView | None` (None: the panel is not shown). `page_context`
only walks `PANELS`; the notes of the panels it shows, and of the page's own lists (problems,
warnings, nodes tried), are the "shown as counts" box, so every note is about rows really cut
from the page. The engine's answer (and the API's JSON) stays complete.
"""
from __future__ import annotations

import json
from collections import Counter
from dataclasses import dataclass, field
from typing import Callable

import yaml

from django.urls import reverse
from django.utils.translation import gettext as _

from allocator import panel_status_writers, wording
from allocator.engine.explanation import CounterSetUse, Explanation, WhyRow
from allocator.engine.gates import COMPONENTS
from allocator.engine.problems import DROPPED_ON_CREATE
from allocator.engine.quantity import Quantity, QuantityError
from allocator.engine.report import YamlDumper
from allocator.engine.run import ALLOCATED, INVALID, Outcome
from allocator.engine.scenario import Scenario
from allocator.engine.statusauth.outcome import allocated_claims
from allocator.run_settings import RunSettings

MAX_PER_POOL = 64  # why rows, tiles and chips per pool (8 GPUs with 7 partitions each fit)
MAX_SETS = 64  # counter sets drawn
MAX_ITEMS = 100  # claims, pods, problems, warnings
MAX_VERDICTS = 1000  # one line per node tried
FOLD_ROWS = 10  # a longer table or list folds to its count (with a filter box, static/playground/results.js)
# A pod's outcome, as engine/pods.py names them.
PENDING_POD, INVALID_POD, BOUND_POD = "pending", "invalid", "bound"


@dataclass(frozen=True)
class PanelInput:
    """What every panel is built from: the run's outcome, its scenario and the run's settings."""

    outcome: Outcome
    scenario: Scenario | None
    run: RunSettings
    # The status-writers grid of a scenario without RBAC objects waits for the reader's button: it
    # judges only the bootstrap roles, and building it is most of an edit's time on the server.
    fold_status_writers: bool = False


@dataclass
class PanelView:
    """A panel's template variables, and the notes that say what it left out."""

    context: dict
    notes: list = field(default_factory=list)


@dataclass(frozen=True)
class Panel:
    """One result panel: its template, and how it builds its view (None hides it)."""

    key: str
    template: str
    build: Callable[[PanelInput], PanelView | None]


# --- bounds -------------------------------------------------------------------------------------------


def _cut(items: list, limit: int, keep) -> tuple[list, list]:
    """(shown, hidden): every item `keep` accepts, and the others in order while fewer than
    `limit` are shown."""
    shown, hidden = [], []
    for item in items:
        (shown if keep(item) or len(shown) < limit else hidden).append(item)
    return shown, hidden


def _counted(items: list, key, *, most: int = 4, noun: str = "×") -> str:
    """`3 × reason a, 2 × reason b, …`: how many hidden items there are of each kind."""
    counts = Counter(str(key(item) or "—") for item in items)
    parts = [f"{n:,} {noun} {what}" if noun else f"{what} {n:,}" for what, n in counts.most_common(most)]
    if len(counts) > most:
        parts.append(_("%(count)s more") % {"count": f"{sum(n for _, n in counts.most_common()[most:]):,}"})
    return ", ".join(parts)


# --- small helpers ------------------------------------------------------------------------------------


def _amount(text: str) -> float:
    try:
        return float(Quantity.parse(text).value)
    except (QuantityError, TypeError):
        return 0.0


def _percent(part: float, whole: float) -> float:
    if whole <= 0:
        return 0.0
    return max(0.0, min(100.0, 100.0 * part / whole))


# --- counter sets and compatibility groups ------------------------------------------------------------


def _members(cs, groups: bool, notes: list) -> list:
    """A set's member devices, at most a pool's worth (the ones this allocation uses always)."""
    shown, hidden = _cut(cs.devices, MAX_PER_POOL, lambda m: getattr(m, "allocated_now", False))
    if hidden:
        values = {"set": f"{cs.pool}/{cs.counter_set}", "count": f"{len(hidden):,}"}
        notes.append(_("compatibility groups of counter set %(set)s: %(count)s more devices drawing on it "
                       "not listed") % values if groups else
                     _("counter set %(set)s: %(count)s more devices drawing on it not listed") % values)
    return shown


def counter_bars(cs: CounterSetUse, notes: list) -> dict:
    bars = []
    for c in cs.counters:
        total = _amount(c.total)
        before, now = _amount(c.allocated_before), _amount(c.allocated_now)
        bars.append({"use": c, "before_width": f"{_percent(before, total):.1f}%",
                     "now_width": f"{_percent(now, total):.1f}%", "overdrawn": _amount(c.free) < 0})
    members = [{"device": m.device,
                "css": "chip-now" if m.allocated_now else "chip-before" if m.allocated_before else "",
                "groups_text": ",".join(m.groups or ())} for m in _members(cs, False, notes)]
    return {"set": cs, "bars": bars, "members": members}


def _counters_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.counter_sets:
        return None
    notes: list = []
    sets = explanation.counter_sets
    if len(sets) > MAX_SETS:
        sets, hidden = _cut(sets, MAX_SETS, lambda cs: any(m.allocated_now for m in cs.devices))
        notes.append(_("%(count)s more counter sets not drawn, none used by this allocation (by pool: %(pools)s)")
                     % {"count": f"{len(hidden):,}", "pools": _counted(hidden, lambda cs: cs.pool, noun="")})
    return PanelView({"counter_sets": [counter_bars(cs, notes) for cs in sets]}, notes)


def _groups_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.compatibility:
        return None
    notes: list = []
    groups = [{"set": cs, "devices": _members(cs, True, notes)}
              for cs in explanation.compatibility]
    return PanelView({"compatibility": groups}, notes)


def capacity_meters(explanation: Explanation) -> list:
    meters = []
    for device in explanation.capacity:
        rows = []
        for name, cap in device.capacity.items():
            total = _amount(cap.value)
            shares = []
            for share in device.shares_now:
                amount = share.consumed_capacity.get(name)
                if amount is None:
                    continue
                requested = share.requested.get(name)
                shares.append({"share": share, "consumed": amount, "requested": requested,
                               "pct": _percent(_amount(amount), total), "rounded": requested not in (None, amount)})
            rows.append({"name": name, "amount": cap, "before_pct": _percent(_amount(cap.allocated_before), total),
                         "shares": shares})
        meters.append({"device": device.device, "rows": rows, "shared": bool(device.shares_now)})
    return meters


def _capacity_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.capacity:
        return None
    return PanelView({"meters": capacity_meters(explanation)})


# --- claims ----------------------------------------------------------------------------------------------


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


def claim_views(outcome: Outcome) -> list:
    views = []
    requested = {c.claim: c for c in outcome.explanation.claims} if outcome.explanation is not None else {}
    for claim in outcome.claims:
        meta = claim["metadata"]
        key = f"{meta['namespace']}/{meta['name']}"
        allocation = (claim.get("status") or {}).get("allocation")
        why = requested.get(key)
        state = "allocated" if allocation else ("failed" if outcome.outcome != INVALID else "pending")
        views.append({
            "key": key,
            "state": state,
            "css": state,
            "results": (allocation or {}).get("devices", {}).get("results", []),
            "requests": why.requests if why is not None else [],
            "nodeSelector": json.dumps((allocation or {}).get("nodeSelector")) if allocation else None,
        })
    return views


def _first_pool(claim: dict) -> str:
    results = claim.get("results") or []
    return results[0].get("pool", "") if results else ""


def _claims_panel(given: PanelInput) -> PanelView | None:
    outcome = given.outcome
    claims = claim_views(outcome) + existing_claim_views(given.scenario)
    if not claims:
        return None
    notes = []
    if len(claims) > MAX_ITEMS:
        claims, hidden = _cut(claims, MAX_ITEMS, lambda c: c["state"] != "already allocated")
        notes.append(_("%(count)s more claims already allocated, not listed (by pool: %(pools)s)")
                     % {"count": f"{len(hidden):,}", "pools": _counted(hidden, _first_pool, noun="")})
    claims_yaml = yaml.dump_all(outcome.claims, Dumper=YamlDumper, sort_keys=False) if outcome.claims else ""
    # Claims allocated before the run (a dump's running workloads) fold to their count.
    before = [c for c in claims if c["state"] == "already allocated"]
    return PanelView({"claims": [c for c in claims if c["state"] != "already allocated"], "claims_before": before,
                      "claims_yaml": claims_yaml}, notes)


# --- the why table ----------------------------------------------------------------------------------------


def why_requests(explanation: Explanation, notes: list, whose: str = "") -> list:
    """The why table per request: at most a pool's worth of rows per pool (every picked one
    kept), rows grouped by pool (the pool shown once), and runs of rows with the same verdict
    and reason folded into one group so big pools stay readable."""
    out = []
    for claim, request in explanation.requests():
        pools: list = []
        hidden: list = []
        for row in request.candidates:
            if not pools or pools[-1]["pool"] != row.pool:
                pools.append({"pool": row.pool, "rows": []})
            rows = pools[-1]["rows"]
            if row.picked or len(rows) < MAX_PER_POOL:
                rows.append(row)
            else:
                hidden.append(row)
        if hidden:
            notes.append(whose + _("%(claim)s, request %(request)s: %(count)s more devices not listed "
                                   "(%(verdicts)s; by pool: %(pools)s)") % {
                "claim": claim.claim, "request": request.request, "count": f"{len(hidden):,}",
                "verdicts": _counted(hidden, lambda r: wording.verdict_word(r.verdict), noun=""),
                "pools": _counted(hidden, lambda r: r.pool, noun="")})
        for pool in pools:
            pool["groups"] = _fold(pool["rows"])
        out.append({"claim": claim.claim, "request": request, "pools": pools})
    return out


FOLD_AT = 4  # this many rows with one verdict and kind of reason are folded
FOLD_BLOCKING_AT = 3  # rows that block (in use, counters, …) fold only with the very same reason



def _fold(rows: list) -> list:
    """The rows of one pool as the table shows them, in search order: a row that matters alone
    ({"row": ...}), or a fold of rows with one verdict and reason ({"folded": True, "rows": [...]}).
    Each says whether it blocks ("1"/"0", for the "chosen and blocking only" filter) and carries
    its verdict's label."""
    groups: list = []
    by_reason: dict = {}
    for row in rows:
        if row.picked:
            groups.append({"rows": [row], "blocking": True})
            continue
        blocking = bool(row.state_dependent)
        # Blocking rows fold only with rows of the very same reason; the others by the kind of reason.
        key = (row.verdict, row.code, row.reason if blocking else _reason_kind(row), blocking)
        group = by_reason.get(key)
        if group is None:
            group = by_reason[key] = {"rows": [], "blocking": blocking, "verdict": row.verdict}
            groups.append(group)
        group["rows"].append(row)
    flat: list = []
    for group in groups:
        members = group["rows"]
        if len(members) >= (FOLD_AT if not group["blocking"] else FOLD_BLOCKING_AT):
            reasons = {r.reason for r in members}
            flat.append({"folded": True, "rows": members, "verdict": group["verdict"],
                         "label": wording.verdict_label(group["verdict"]),
                         "blocking": "1" if group["blocking"] else "0", "one_reason": len(reasons) == 1,
                         "reason": wording.row_reason(members[0]) if len(reasons) == 1
                         else wording.reason_kind(members[0])})
        else:
            for row in members:
                blocking = group["blocking"] or row.picked
                flat.append({"folded": False, "rows": [row], "row": row, "blocking": "1" if blocking else "0",
                             "label": wording.verdict_label(row.verdict), "reason": wording.row_reason(row)})
    # Rows alone go back to search order; a fold keeps the place of its first row.
    order = {id(row): n for n, row in enumerate(rows)}
    flat.sort(key=lambda g: order[id(g["rows"][0])])
    return flat


def _reason_kind(row: WhyRow) -> str:
    """The reason without the device-specific tail, to fold e.g. every `selector #0 is false` row together."""
    return row.reason.split(":", 1)[0] if row.code else row.reason


def _why_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.claims:
        return None
    notes: list = []
    return PanelView({"explanation": explanation, "why_requests": why_requests(explanation, notes)}, notes)


# --- the replay --------------------------------------------------------------------------------------------


def replay_data(explanation: Explanation) -> dict:
    """What the replay needs besides the steps: every device tile and every counter bar at the start,
    each pool and counter set named once (`tiles`: [pool, [[device, state before or null], …]];
    `bars`: [pool, counter set, [[counter, total, allocated before, total as written], …]])."""
    before = {"in-use", "shared"}
    tiles = [[pool.pool, [[d.device, d.state if d.state in before else None] for d in pool.devices]]
             for pool in explanation.device_map]
    bars = [[cs.pool, cs.counter_set, [[c.counter, _amount(c.total), _amount(c.allocated_before), c.total]
                                       for c in cs.counters]]
            for cs in explanation.counter_sets]
    trace = explanation.trace
    # The steps go to the page as the engine keeps them: arrays of indexes into `strings`
    # (see Replay), a fifth of the bytes of the same steps as objects.
    return {"strings": _replay_strings(explanation), "steps": trace.steps, "total": trace.total,
            "tiles": tiles, "bars": bars}


def _replay_strings(explanation: Explanation) -> list:
    """The trace's strings in the page's language (the wording layer's replay_strings)."""
    return wording.replay_strings(explanation)


def _replay_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.trace.steps:
        return None
    return PanelView({"explanation": explanation, "replay": replay_data(explanation)})


# --- pods ----------------------------------------------------------------------------------------------------


SCORE_LABELS = {
    "TaintToleration": "taints", "NodeAffinity": "affinity", "NodeResourcesFit": "least allocated",
    "NodeResourcesBalancedAllocation": "balanced", "ImageLocality": "images", "DynamicResources": "DRA",
}


NODE_ROWS_SHOWN = 12  # past this many nodes, rejected nodes fold by reason and only the best feasible ones show
BEST_SHOWN = 5


def _node_rows(pod, closest: list | None = None) -> tuple[list, list]:
    """The node table of one pod: every node when there are few; on a big cluster the chosen
    node and the best-scored feasible ones, with the rest folded by reason. A pending pod's
    table leads with the node closest to fitting (engine/closest.py), and on a big cluster
    lists the closest few."""
    def row(verdict):
        parts = [{"plugin": name, "label": SCORE_LABELS.get(name, name), **values}
                 for name, values in ((verdict.score or {}).get("plugins") or {}).items()]
        return {"verdict": verdict, "score_parts": parts}

    nodes = pod.nodes
    if closest:
        rank = {c.node: i for i, c in enumerate(closest)}
        nodes = sorted(nodes, key=lambda v: rank.get(v.node, -1))
    if len(nodes) <= NODE_ROWS_SHOWN:
        return [row(v) for v in nodes], []
    feasible = [v for v in nodes if v.fits]
    best = sorted(feasible, key=lambda v: -((v.score or {}).get("total") or 0))[:BEST_SHOWN]
    shown = {v.node for v in best} | ({pod.node} if pod.node else set())
    shown |= {c.node for c in (closest or ())[:BEST_SHOWN]}
    rows = [row(v) for v in nodes if v.node in shown]
    folded: dict = {}
    firsts: dict = {}  # reason -> the first rejected node's verdict, whose reasons the page glosses
    for verdict in pod.nodes:
        if verdict.node in shown:
            continue
        reason = (_("feasible too (the %(count)s best scored are listed)") % {"count": BEST_SHOWN}
                  if verdict.fits else verdict.reason)
        folded.setdefault(reason, []).append(verdict.node)
        if not verdict.fits:
            firsts.setdefault(reason, verdict)
    return rows, [{"reason": reason, "nodes": nodes, "verdict": firsts.get(reason)} for reason, nodes in folded.items()]


def pod_views(pods: list, notes: list, closest: dict | None = None) -> list:
    """Per pod: its result, the scores of its feasible nodes, and its own why (the chosen node's
    search, or for a pending pod the node DRA rejected that explains it), led for a pending pod
    by the node closest to fitting."""
    views = []
    for pod in pods:
        ranking = pod.ranking
        explanation = pod.explanation
        order = (closest or {}).get(pod.key) or []
        rows, folded = _node_rows(pod, order)
        views.append({
            "pod": pod,
            "closest": order[0] if order else None,
            "rows": rows,
            "folded": folded,
            "scored": bool(ranking and any(s.plugins for s in ranking.scores)),
            "tied": ranking.tied if ranking and len(ranking.tied) > 1 else [],
            "explanation": explanation,
            "why_requests": why_requests(explanation, notes, _("why of pod %(pod)s: ") % {"pod": f"{pod.namespace}/{pod.name}"})
            if explanation else [],
        })
    return views


def _pods_panel(given: PanelInput) -> PanelView | None:
    pods = given.outcome.pods
    if not pods:
        return None
    notes: list = []
    if len(pods) > MAX_ITEMS:
        shown, hidden = pods[:MAX_ITEMS], pods[MAX_ITEMS:]
        notes.append(_("%(count)s pods; %(hidden)s not listed") % {
            "count": f"{len(pods):,}", "hidden": _counted(hidden, lambda p: p.outcome)})
        pods = shown
    views = pod_views(pods, notes, getattr(given.outcome, "closest", None))
    # The answer first: pods the scheduler could not place (or refused), then the ones it placed;
    # pods bound before the run (a dump's running pods) fold to their count.
    first = [v for v in views if v["pod"].outcome in (PENDING_POD, INVALID_POD)]
    bound = [v for v in views if v["pod"].outcome == BOUND_POD]
    rest = [v for v in views if v not in first and v not in bound]
    return PanelView({"pod_views": first + rest, "bound_pod_views": bound, "fold_rows": FOLD_ROWS,
                      "pending_pods": [v["pod"] for v in first]}, notes)


# --- the rest ---------------------------------------------------------------------------------------------------


def _skew_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    dropped = [w for w in given.outcome.warnings if w.code == DROPPED_ON_CREATE]
    ignored = explanation.ignored_slices if explanation is not None else []
    unusable = [p for p in explanation.pools if not p.usable] if explanation is not None else []
    if not (dropped or ignored or unusable):
        return None
    notes = []
    if len(dropped) > MAX_ITEMS:
        notes.append(_("%(count)s more dropped fields not listed (the API and `manage.py allocate` list all)")
                     % {"count": f"{len(dropped) - MAX_ITEMS:,}"})
        dropped = dropped[:MAX_ITEMS]
    return PanelView({"dropped_fields": dropped, "ignored_slices": ignored, "unusable_pools": unusable,
                      "explanation": explanation}, notes)


def _nodeops_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.node_operations:
        return None
    return PanelView({
        "node_operations": explanation.node_operations,
        "kubelet_optional_ops": given.run.component_gates().kubelet.enabled("DRAOptionalNodeOperations"),
    })


def _status_writers_panel(given: PanelInput) -> PanelView | None:
    """Who may write each allocated claim's status, judged from the scenario's RBAC (statusauth)."""
    if given.fold_status_writers and given.scenario is not None and given.scenario.rbac.empty:
        claims = allocated_claims(given.scenario, given.outcome)
        return PanelView({"status_writers_folded": len(claims)}) if claims else None
    view = panel_status_writers.build(given.outcome, given.scenario, given.run)
    if view is None:
        return None
    return PanelView({"status_writers": view, "status_writers_url": reverse("status-writers"),
                      **status_writer_claims(view, given.scenario)})


def status_writer_claims(view, scenario: Scenario) -> dict:
    """The claims this run allocated lead; those allocated before it (a dump's) fold to their count."""
    before = {c.key for c in scenario.claims if c.allocation is not None}
    return {"status_writers_now": [c for c in view.claims if c.claim not in before],
            "status_writers_before": [c for c in view.claims if c.claim in before]}


def device_map_groups(pools: list, notes: list) -> list:
    """Device tiles grouped by pool, then by the first counter set each device draws on; at most a
    pool's worth of tiles per pool."""
    out = []
    for pool in pools:
        shown, hidden = _cut(pool.devices, MAX_PER_POOL, lambda d: False)
        if hidden:
            notes.append(_("device map of pool %(pool)s: %(count)s more devices not drawn (%(states)s)") % {
                "pool": pool.pool, "count": f"{len(hidden):,}", "states": _counted(hidden, lambda d: d.state, noun="")})
        groups: dict = {}
        for device in shown:
            groups.setdefault(device.counter_sets[0] if device.counter_sets else None, []).append(device)
        out.append({"pool": pool, "groups": [{"counter_set": k, "devices": v} for k, v in groups.items()]})
    return out


def _devices_panel(given: PanelInput) -> PanelView | None:
    explanation = given.outcome.explanation
    if explanation is None or not explanation.device_map:
        return None
    notes: list = []
    return PanelView({"device_map": device_map_groups(explanation.device_map, notes)}, notes)


PANELS = [
    Panel("pods", "panels/pods.html", _pods_panel),
    Panel("skew", "panels/skew.html", _skew_panel),
    Panel("claims", "panels/claims.html", _claims_panel),
    Panel("counters", "panels/counters.html", _counters_panel),
    Panel("groups", "panels/groups.html", _groups_panel),
    Panel("capacity", "panels/capacity.html", _capacity_panel),
    Panel("why", "panels/why.html", _why_panel),
    Panel("replay", "panels/replay.html", _replay_panel),
    Panel("nodeops", "panels/nodeops.html", _nodeops_panel),
    Panel("status-writers", "panels/status_writers.html", _status_writers_panel),
    Panel("devices", "panels/devices.html", _devices_panel),
]


# --- the page ----------------------------------------------------------------------------------------------------


def _listed(items: list, what: str, notes: list) -> list:
    if len(items) <= MAX_ITEMS:
        return items
    values = {"count": f"{len(items) - MAX_ITEMS:,}"}
    notes.append(_("%(count)s more errors not listed (the API and `manage.py allocate` list all)") % values
                 if what == "errors" else
                 _("%(count)s more warnings not listed (the API and `manage.py allocate` list all)") % values)
    return items[:MAX_ITEMS]


@dataclass(frozen=True)
class ListedProblem:
    """A problem as the page lists it: its words, and the source snippet with its caret (a CEL
    compile error's ` | expression` and ` | ....^` lines) apart, to be set in monospace."""

    problem: object
    message: str
    snippet: str

    def __getattr__(self, name):  # line, kind, name, field, code: the problem's own
        return getattr(self.problem, name)


SNIPPET_MARK = "\n | "


def listed_problem(problem) -> ListedProblem:
    text, mark, rest = problem.message.partition(SNIPPET_MARK)
    if not mark:
        return ListedProblem(problem, problem.message, "")
    lines = (mark + rest).split("\n")[1:]
    return ListedProblem(problem, text, "\n".join(line[3:] if line.startswith(" | ") else line for line in lines))


def page_context(run: RunSettings, scenario, outcome: Outcome | None, *, refused: str | None = None,
                 fold_status_writers: bool = False) -> dict:
    context = {
        "run_settings": run,
        "components": COMPONENTS,
        "gate_groups": run.gate_rows(),
        "node_choices": list(outcome.candidate_nodes) if outcome is not None else [],
        "refused": refused,
        "outcome": outcome,
    }
    if outcome is None:
        context["error_lines_json"] = "[]"
        context["panels"] = []
        context["left_out"] = []
        return context
    notes: list = []
    verdicts = outcome.verdicts
    closest = getattr(outcome, "claims_closest", None)
    if closest:  # a scenario of claims that fits no node: the node closest to fitting leads (engine/closest.py)
        rank = {c.node: i for i, c in enumerate(closest)}
        verdicts = sorted(verdicts, key=lambda v: rank.get(v.node, -1))
        context["claims_closest"] = closest[0]
    if len(verdicts) > MAX_VERDICTS:
        shown, hidden = _cut(verdicts, MAX_VERDICTS, lambda v: v.fits)
        notes.append(_("%(count)s nodes tried; %(hidden)s not listed") % {
            "count": f"{len(outcome.verdicts):,}", "hidden": _counted(hidden, lambda v: v.message)})
        context["verdicts"] = shown
    else:
        context["verdicts"] = verdicts
    warnings = [w for w in outcome.warnings if w.code != DROPPED_ON_CREATE]
    context.update({
        "problems": [listed_problem(p) for p in _listed(outcome.problems, "errors", notes)],
        "warnings": [listed_problem(w) for w in _listed(warnings, "warnings", notes)],
        # An invalid outcome's message is its first problem: the list says it once, with its line.
        "message_listed": any(p.render() == outcome.message for p in outcome.problems),
        # Errors and warnings with a line become marks in the editor.
        "error_lines_json": json.dumps([
            {"line": p.line, "message": p.render(), "severity": p.severity}
            for p in list(outcome.problems) + list(outcome.warnings) if p.line is not None
        ]),
        "allocated": outcome.outcome == ALLOCATED,
        "explanation": outcome.explanation,
    })
    given = PanelInput(outcome, scenario, run, fold_status_writers)
    panels = []
    for panel in PANELS:
        view = panel.build(given)
        if view is not None:
            context.update(view.context)
            notes.extend(view.notes)
            panels.append(panel)
    context["panels"] = panels
    context["left_out"] = notes
    return context

