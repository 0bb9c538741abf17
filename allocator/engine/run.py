"""Allocating a scenario's pending claims: node by node, as one scheduling cycle for one pod.

This is the entry point the CLI, the views and the API share. A scenario with Pods
is scheduled pod by pod instead (see pods.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from allocator.engine import cel
from allocator.engine.allocate import (
    DEFAULT_MAX_STEPS,
    AllocatedState,
    Allocator,
    Fatal,
    NodeFailure,
    SearchLimit,
    allocated_state,
)
from allocator.engine.explain import explain
from allocator.engine.gates import AllocatorFeatures, ComponentGates
from allocator.engine.objects import Node
from allocator.engine.pools import PoolGatherError, SliceIndex, gather_pools
from allocator.engine.problems import WARNING, Problem
from allocator.engine.results import build_allocation
from allocator.engine.scenario import Scenario, read_scenario

ALLOCATED, UNSATISFIABLE, INVALID = "allocated", "unsatisfiable", "invalid"
EXIT_CODES = {ALLOCATED: 0, UNSATISFIABLE: 1, INVALID: 2}

NO_SOLUTION = "cannot allocate all claims"
INVALID_POOLS = "invalid resource pools were encountered"

DEFAULT_TIME_LIMIT = 5.0  # seconds in all; the scheduler itself allows 10 s per node


@dataclass
class NodeVerdict:
    node: str
    fits: bool
    message: str | None = None
    steps: int = 0

    def as_dict(self) -> dict:
        return {"node": self.node, "fits": self.fits, "message": self.message, "steps": self.steps}


@dataclass
class Outcome:
    outcome: str
    node: str | None = None
    message: str | None = None
    claims: list = field(default_factory=list)  # output claim objects
    problems: list = field(default_factory=list)  # errors, for invalid
    warnings: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    explanation: dict | None = None
    pods: list | None = None  # PodResult per Pod, for a scenario with Pods; None without

    @property
    def exit_code(self) -> int:
        return EXIT_CODES[self.outcome]


def _output_claim(claim, allocation: dict | None) -> dict:
    raw = claim.raw
    meta = dict(raw.get("metadata") or {})
    meta["namespace"] = claim.namespace
    out = {
        "apiVersion": raw.get("apiVersion", "resource.k8s.io/v1"),
        "kind": "ResourceClaim",
        "metadata": {"name": claim.name, "namespace": claim.namespace},
        "spec": raw.get("spec") or {},
    }
    if allocation is not None:
        out["status"] = {"allocation": allocation}
    return out


def candidate_nodes(scenario: Scenario, index: SliceIndex) -> list[str]:
    """Every node named in the scenario (Node objects and slices' nodeName), in name order."""
    return sorted(set(scenario.nodes) | index.node_names())


def node_for(scenario: Scenario, name: str) -> Node:
    node = scenario.nodes.get(name)
    return node if node is not None else Node(name=name, synthetic=True)


def _invalid(problems: list, warnings: list, pending: list, *, message: str | None = None,
             node: str | None = None, verdicts: list | None = None) -> Outcome:
    """An invalid outcome: the first problem is the message; pending claims are listed unallocated."""
    return Outcome(INVALID, node=node, message=message or problems[0].render(), problems=problems,
                   warnings=warnings, claims=[_output_claim(c, None) for c in pending], verdicts=verdicts or [])


def _fatal_problem(scenario: Scenario, exc: Fatal) -> Problem:
    claim = exc.claim
    problem = Problem(
        exc.message,
        kind=exc.kind or ("ResourceClaim" if claim is not None else ""),
        name=claim.key if claim is not None else "",
        path=exc.path,
        ref=claim.ref if claim is not None else None,
    )
    return scenario.locate(problem)


def _prefilter_prioritized(scenario: Scenario, pending: list, features: AllocatorFeatures) -> list[Problem]:
    """The scheduler's PreFilter refuses subrequests before it looks at device classes."""
    if features.prioritized_list:
        return []
    for claim in pending:
        for ri, request in enumerate(claim.requests):
            if request.first_available:
                return [scenario.locate(Problem(
                    f"resource claim {claim.key}, request {request.name}: has subrequests, "
                    "but the DRAPrioritizedList feature is disabled",
                    kind="ResourceClaim", name=claim.key,
                    path=("spec", "devices", "requests", ri, "firstAvailable"), ref=claim.ref))]
    return []


def _missing_classes(scenario: Scenario, pending: list) -> list[Problem]:
    """The scheduler's PreFilter check: every request's device class must exist."""
    problems = []
    for claim in pending:
        for ri, request in enumerate(claim.requests):
            entries = (
                [(request.exactly, request.name, ("spec", "devices", "requests", ri, "exactly"))]
                if request.exactly is not None
                else [
                    (sub, f"{request.name}/{sub.name}", ("spec", "devices", "requests", ri, "firstAvailable", si))
                    for si, sub in enumerate(request.first_available)
                ]
            )
            for sub, label, path in entries:
                if sub.class_name and sub.class_name not in scenario.classes:
                    problems.append(scenario.locate(Problem(
                        f"request {label}: device class {sub.class_name} does not exist",
                        kind="ResourceClaim", name=claim.key, path=path + ("deviceClassName",), ref=claim.ref)))
    return problems


def allocate(
    scenario: Scenario,
    *,
    node_name: str | None = None,
    gates: ComponentGates | None = None,
    max_steps: int = DEFAULT_MAX_STEPS,
    time_limit: float = DEFAULT_TIME_LIMIT,
    explain_result: bool = True,
    share_ids=None,
) -> Outcome:
    if scenario.pods:
        from allocator.engine.pods import schedule_pods  # pods.py builds on this module

        return schedule_pods(scenario, node_name=node_name, gates=gates, max_steps=max_steps,
                             time_limit=time_limit, explain_result=explain_result, share_ids=share_ids)
    gates = gates or ComponentGates()
    warnings = list(scenario.warnings)
    if scenario.templates:
        warnings.append(Problem(
            f"{len(scenario.templates)} ResourceClaimTemplate(s) are not used: claims are made from "
            "templates only for Pods", severity=WARNING))
    pending = [c for c in scenario.claims if c.allocation is None]
    if scenario.errors:
        return _invalid(scenario.errors, warnings, pending)
    features = AllocatorFeatures.from_gates(gates.scheduler)
    prefilter = _prefilter_prioritized(scenario, pending, features)
    if prefilter:
        return _invalid(prefilter, warnings, pending)
    missing = _missing_classes(scenario, pending)
    if missing:
        return _invalid(missing, warnings, pending)

    cel_options = cel.Options(list_type_attributes=features.list_type_attributes, stored=True)
    slices = scenario.scheduler_slices(gates.scheduler)  # DeviceTaintRules applied
    index = SliceIndex(slices)
    state: AllocatedState = allocated_state(scenario.claims, features)
    names = [node_name] if node_name else candidate_nodes(scenario, index)
    deadline = time.monotonic() + time_limit if time_limit else None

    verdicts: list[NodeVerdict] = []
    last_allocator = None  # the first node tried explains an unsatisfiable outcome
    for name in names:
        node = node_for(scenario, name)
        try:
            pools = gather_pools(node, index, features)
        except PoolGatherError as exc:
            return _invalid([Problem(str(exc))], warnings, pending)
        allocator = Allocator(
            claims=pending, classes=scenario.classes, pools=pools, node=node, features=features,
            allocated=state, max_steps=max_steps, deadline=deadline, cel_options=cel_options,
            share_ids=share_ids, all_slices=slices,
        )
        try:
            success = allocator.run()
            if success:
                verdicts.append(NodeVerdict(name, True, None, allocator.steps))
                claims = [_output_claim(c, build_allocation(allocator, ci)) for ci, c in enumerate(pending)]
        except Fatal as exc:
            return _invalid([_fatal_problem(scenario, exc)], warnings, pending, message=exc.message, node=name,
                            verdicts=verdicts)
        except NodeFailure as exc:
            verdicts.append(NodeVerdict(name, False, exc.message, allocator.steps))
            last_allocator = last_allocator or allocator
            continue
        except SearchLimit as exc:
            verdicts.append(NodeVerdict(name, False, exc.message, exc.steps))
            last_allocator = last_allocator or allocator
            if deadline is not None and time.monotonic() > deadline:
                break
            continue
        if success:
            explanation = _safe_explain(allocator, True) if explain_result else None
            return Outcome(ALLOCATED, node=name, claims=claims, warnings=warnings, verdicts=verdicts,
                           explanation=explanation)
        message = INVALID_POOLS if any(p.invalid for p in pools) else NO_SOLUTION
        verdicts.append(NodeVerdict(name, False, message, allocator.steps))
        last_allocator = last_allocator or allocator

    explanation = None
    if explain_result and last_allocator is not None and last_allocator.request_data:
        explanation = _safe_explain(last_allocator, False)
    return Outcome(
        UNSATISFIABLE,
        node=None,
        message=summary_message(verdicts, node_name),
        claims=[_output_claim(c, None) for c in pending],
        warnings=warnings,
        verdicts=verdicts,
        explanation=explanation,
    )


def _safe_explain(allocator: Allocator, success: bool) -> dict | None:
    allocator.max_steps = allocator.steps + 10_000_000  # probing is not part of the search budget
    allocator.deadline = None
    if not success:
        try:
            allocator.replay_furthest()
        except Fatal:
            pass
    return explain(allocator, success)


def summary_message(verdicts: list[NodeVerdict], node_name: str | None) -> str:
    """The node's message with --node; otherwise the scheduler's `0/N nodes are available` line."""
    if node_name and verdicts:
        return verdicts[0].message or NO_SOLUTION
    if not verdicts:
        return ("0/0 nodes are available: the scenario names no node "
                "(add a Node object, a slice with nodeName, or pass --node)")
    counts: dict[str, int] = {}
    for v in verdicts:
        counts[v.message or NO_SOLUTION] = counts.get(v.message or NO_SOLUTION, 0) + 1
    histogram = ", ".join(sorted(f"{n} {reason}" for reason, n in counts.items()))
    return f"0/{len(verdicts)} nodes are available: {histogram}."


def allocate_text(
    text: str | bytes,
    *,
    node_name: str | None = None,
    gates: ComponentGates | None = None,
    **options,
) -> tuple[Scenario, Outcome]:
    apiserver = gates.apiserver if gates is not None and options.pop("replay_create", False) else None
    scenario = read_scenario(text, apiserver_gates=apiserver)
    return scenario, allocate(scenario, node_name=node_name, gates=gates, **options)
