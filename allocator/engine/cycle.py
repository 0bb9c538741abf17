"""One scheduling cycle's DRA part, shared by the claims mode (run.py) and the pods mode (pods.py).

PreFilter: the checks the scheduler makes before it looks at any node. Filter,
per node: gather the node's pools and run the allocator (`attempt_node`). The
scheduler's summary line when no node fits (`fit_error`). And the explanation
of one node's attempt (`explain_attempt`).
"""
from __future__ import annotations

import time
from dataclasses import dataclass

from allocator.engine.allocate import DEFAULT_MAX_STEPS, Allocator, Fatal, NodeFailure, SearchLimit
from allocator.engine.pools import gather_pools
from allocator.engine.problems import Problem

# The explanation (explain.py, explanation.py) and the search's record (trace.py) are imported
# where a run asks for them: `manage.py allocate -o json` needs neither.

NO_SOLUTION = "cannot allocate all claims"
INVALID_POOLS = "invalid resource pools were encountered"

# A search runs first without pruning (upstream's exact steps) for this many steps, and the first
# searches of one run together for this many, so a big cluster never pays them node after node.
EXACT_FIRST_STEPS = 5_000
EXACT_FIRST_TOTAL = 20_000
# The explanation of a pruned search's failure runs it again without pruning within this.
EXACT_RERUN_STEPS = 100_000
EXACT_RERUN_SECONDS = 2.0
EXPLAIN_SECONDS = 2.0  # for the rows' "would fail anyway" selector evaluations


def prefilter_problems(claims: list, classes: dict, features) -> list[Problem]:
    """DynamicResources PreFilter for unallocated claims: subrequests need DRAPrioritizedList
    (the first such request stops it), then every request must name an existing class."""
    pending = [c for c in claims if c.allocation is None]
    if not features.prioritized_list:
        for claim in pending:
            for ri, request in enumerate(claim.requests):
                if request.first_available:
                    return [Problem(
                        f"resource claim {claim.key}, request {request.name}: has subrequests, "
                        "but the DRAPrioritizedList feature is disabled",
                        kind="ResourceClaim", name=claim.key,
                        path=("spec", "devices", "requests", ri, "firstAvailable"), ref=claim.ref)]
    problems = []
    for claim in pending:
        for ri, request in enumerate(claim.requests):
            for sub in (request.exactly,) if request.exactly is not None else request.first_available:
                if sub.class_name and sub.class_name not in classes:
                    break
            else:
                continue  # every class it names exists (nearly always): no paths to write
            if request.exactly is not None:
                entries = [(request.exactly, request.name, ("spec", "devices", "requests", ri, "exactly"))]
            else:
                entries = [(sub, f"{request.name}/{sub.name}", ("spec", "devices", "requests", ri, "firstAvailable", si))
                           for si, sub in enumerate(request.first_available)]
            for sub, label, path in entries:
                if sub.class_name and sub.class_name not in classes:
                    problems.append(Problem(
                        f"request {label}: device class {sub.class_name} does not exist",
                        kind="ResourceClaim", name=claim.key, path=path + ("deviceClassName",), ref=claim.ref))
    return problems


@dataclass
class NodeAttempt:
    """The allocator's answer for one node."""

    node: str
    fits: bool
    message: str | None = None  # why the node does not fit
    allocator: Allocator | None = None
    fatal: Fatal | None = None  # the allocator stopped the whole cycle
    steps: int = 0
    limit: bool = False  # the search gave up (steps or time)


@dataclass
class ExactFirst:
    """The steps the first, unpruned searches of one run may still take, over all its nodes."""

    left: int = EXACT_FIRST_TOTAL


def attempt_node(node, *, claims: list, scenario, index, features, allocated, options: dict,
                 record: bool) -> NodeAttempt:
    """Gather the node's pools and allocate the claims there. `index` holds the slices the scheduler
    sees (DeviceTaintRules applied). `options` are the Allocator's, plus the run's ExactFirst
    under "exact_first" when it has one. PoolGatherError propagates.

    The search first runs as upstream's does, branch for branch; only one longer than
    EXACT_FIRST_STEPS starts again with pruning (same answer, fewer steps), whose failure the
    explanation then searches again exactly (see explain_attempt)."""
    pools = gather_pools(node, index, features)
    options = dict(options)
    exact_first = options.pop("exact_first", None)

    def search(**overrides) -> NodeAttempt:
        allocator = Allocator(claims=claims, classes=scenario.classes, pools=pools, node=node, features=features,
                              allocated=allocated, all_slices=index.slices,
                              recorder=_recorder() if record else None, **{**options, **overrides})
        return _search(node, allocator, pools)

    budget = min(EXACT_FIRST_STEPS, exact_first.left) if exact_first is not None else EXACT_FIRST_STEPS
    if options.get("max_steps", DEFAULT_MAX_STEPS) > budget > 0:
        attempt = search(prune=False, max_steps=budget)
        if exact_first is not None:
            exact_first.left -= min(attempt.steps, budget)
        if not (attempt.limit and attempt.steps > budget):  # not cut by this first budget
            return attempt
    return search()


def _search(node, allocator: Allocator, pools: list) -> NodeAttempt:
    try:
        success = allocator.run()
    except Fatal as exc:
        # Kept as a value: without its traceback, whose frames would hold this attempt in a cycle.
        return NodeAttempt(node.name, False, exc.message, allocator, fatal=exc.with_traceback(None),
                           steps=allocator.steps)
    except NodeFailure as exc:
        return NodeAttempt(node.name, False, exc.message, allocator, steps=allocator.steps)
    except SearchLimit as exc:
        return NodeAttempt(node.name, False, exc.message, allocator, steps=exc.steps, limit=True)
    if success:
        return NodeAttempt(node.name, True, None, allocator, steps=allocator.steps)
    message = INVALID_POOLS if any(p.invalid for p in pools) else NO_SOLUTION
    return NodeAttempt(node.name, False, message, allocator, steps=allocator.steps)


def _recorder():
    from allocator.engine.trace import SearchRecorder

    return SearchRecorder()


def explain_attempt(attempt: NodeAttempt) -> dict | None:
    """The explanation of one node's attempt, from the search's own record.

    After a failure of a pruned search, the search runs again without pruning, so the
    furthest attempt is the one upstream's search reaches; if that exact search is too
    long, the pruned record is used and the explanation says so.
    """
    allocator = attempt.allocator
    if allocator is None or allocator.recorder is None or not allocator.request_data:
        return None
    from allocator.engine.explain import explain
    from allocator.engine.trace import SearchRecorder

    if allocator.recorder.outcome is None:
        return None  # setup stopped the attempt (NodeFailure): nothing was searched
    # Explaining is not part of the search's time, but it is bounded too: rows the search never
    # reached may evaluate selectors (what would fail anyway), and those can be slow.
    allocator.deadline = time.monotonic() + EXPLAIN_SECONDS
    if attempt.fits or not allocator.pruned or allocator.recorder.outcome != "failed":
        return explain(allocator, allocator.recorder)
    exact = Allocator(**allocator.inputs, recorder=SearchRecorder(), prune=False, max_steps=EXACT_RERUN_STEPS,
                      deadline=time.monotonic() + EXACT_RERUN_SECONDS)
    try:
        if not exact.run():
            exact.deadline = time.monotonic() + EXPLAIN_SECONDS
            return explain(exact, exact.recorder)
    except (Fatal, NodeFailure, SearchLimit):
        pass
    return explain(allocator, allocator.recorder, approximate=(
        "the search skipped branches that cannot succeed; upstream's search, which tries them, was too long "
        "to repeat here, so the furthest attempt shown may differ from upstream's"))


def fit_error(total: int, reasons: list, prefilter: str | None = None) -> str:
    """The scheduler's FitError text: the PreFilter message, or the reasons counted over the nodes,
    `count reason` sorted as strings. A node's entry is its reason, or the list of every reason
    its rejecting plugin gave (NodeResourcesFit gives one per short resource), each counted.
    (The preemption part the scheduler appends is left out.)"""
    if prefilter:
        return f"0/{total} nodes are available: {prefilter}."
    counts: dict[str, int] = {}
    for entry in reasons:
        for reason in ([entry] if isinstance(entry, str) else entry):
            counts[reason] = counts.get(reason, 0) + 1
    histogram = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return f"0/{total} nodes are available: {histogram}."
