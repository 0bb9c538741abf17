"""Allocating a scenario's pending claims: node by node, as one scheduling cycle for one pod.

This is the entry point the CLI, the views and the API share. A scenario with Pods
is scheduled pod by pod instead (see pods.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from allocator.engine import cel
from allocator.engine.allocate import DEFAULT_MAX_STEPS, Fatal
from allocator.engine.attempt import AllocatedState, allocated_state
from allocator.engine.cycle import (
    NO_SOLUTION,
    ExactFirst,
    attempt_node,
    explain_attempt,
    fit_error,
    prefilter_problems,
)
from allocator.engine.gates import AllocatorFeatures, ComponentGates
from allocator.engine.objects import Node
from allocator.engine.outcome_parts import fatal_problem, output_claim
from allocator.engine.pools import PoolGatherError, SliceIndex
from allocator.engine.problems import UNKNOWN_NODE, WARNING, Problem
from allocator.engine.results import build_allocation
from allocator.engine.scenario import Scenario, read_scenario

ALLOCATED, UNSATISFIABLE, INVALID = "allocated", "unsatisfiable", "invalid"
EXIT_CODES = {ALLOCATED: 0, UNSATISFIABLE: 1, INVALID: 2}

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


def candidate_nodes(scenario: Scenario, index: SliceIndex) -> list[str]:
    """Every node named in the scenario (Node objects and slices' nodeName), in name order."""
    return sorted(set(scenario.nodes) | index.node_names())


def unknown_node(scenario: Scenario, index: SliceIndex, node_name: str | None) -> Problem | None:
    """A warning when the node asked for is named nowhere in the scenario: it is tried as a node
    without labels, so only slices for all nodes or selected by labels could serve it."""
    known = candidate_nodes(scenario, index)
    if not node_name or node_name in known:
        return None
    where = f"the nodes it names are {', '.join(known)}" if known else "it names no node"
    return Problem(
        f"node {node_name} is not in the scenario ({where}): it is tried as a node without labels, "
        "so only devices in slices for all nodes can be allocated", severity=WARNING, code=UNKNOWN_NODE)


def node_for(scenario: Scenario, name: str) -> Node:
    node = scenario.nodes.get(name)
    return node if node is not None else Node(name=name, synthetic=True)


def _invalid(problems: list, warnings: list, pending: list, *, message: str | None = None,
             node: str | None = None, verdicts: list | None = None) -> Outcome:
    """An invalid outcome: the first problem is the message; pending claims are listed unallocated."""
    return Outcome(INVALID, node=node, message=message or problems[0].render(), problems=problems,
                   warnings=warnings, claims=[output_claim(c, None) for c in pending], verdicts=verdicts or [])


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
    prefilter = [scenario.locate(p) for p in prefilter_problems(pending, scenario.classes, features)]
    if prefilter:
        return _invalid(prefilter, warnings, pending)

    cel_options = cel.Options(list_type_attributes=features.list_type_attributes, stored=True)
    slices = scenario.scheduler_slices(gates.scheduler)  # DeviceTaintRules applied
    index = SliceIndex(slices)
    state: AllocatedState = allocated_state(scenario.claims, features)
    names = [node_name] if node_name else candidate_nodes(scenario, index)
    missing = unknown_node(scenario, index, node_name)
    if missing is not None:
        warnings.append(missing)
    deadline = time.monotonic() + time_limit if time_limit else None
    options = {"max_steps": max_steps, "deadline": deadline, "cel_options": cel_options, "share_ids": share_ids,
               "exact_first": ExactFirst()}

    verdicts: list[NodeVerdict] = []
    explained = None  # the first node tried explains an unsatisfiable outcome
    for name in names:
        try:
            attempt = attempt_node(node_for(scenario, name), claims=pending, scenario=scenario, index=index,
                                   features=features, allocated=state, options=options, record=explain_result)
        except PoolGatherError as exc:
            return _invalid([Problem(str(exc))], warnings, pending)
        if attempt.fatal is not None:
            return _invalid([fatal_problem(scenario, attempt.fatal)], warnings, pending,
                            message=attempt.message, node=name, verdicts=verdicts)
        verdicts.append(NodeVerdict(name, attempt.fits, attempt.message, attempt.steps))
        if attempt.fits:
            allocator = attempt.allocator
            try:
                claims = [output_claim(c, build_allocation(allocator, ci)) for ci, c in enumerate(pending)]
            except Fatal as exc:  # the result cannot be written (upstream fails the cycle)
                return _invalid([fatal_problem(scenario, exc)], warnings, pending, message=exc.message, node=name,
                                verdicts=verdicts[:-1])
            return Outcome(ALLOCATED, node=name, claims=claims, warnings=warnings, verdicts=verdicts,
                           explanation=explain_attempt(attempt) if explain_result else None)
        explained = explained or attempt
        if attempt.limit and deadline is not None and time.monotonic() > deadline:
            break

    return Outcome(
        UNSATISFIABLE,
        node=None,
        message=summary_message(verdicts, node_name),
        claims=[output_claim(c, None) for c in pending],
        warnings=warnings,
        verdicts=verdicts,
        explanation=explain_attempt(explained) if explain_result and explained is not None else None,
    )


def summary_message(verdicts: list[NodeVerdict], node_name: str | None) -> str:
    """The node's message with --node; otherwise the scheduler's `0/N nodes are available` line."""
    if node_name and verdicts:
        return verdicts[0].message or NO_SOLUTION
    if not verdicts:
        return ("0/0 nodes are available: the scenario names no node "
                "(add a Node object, a slice with nodeName, or pass --node)")
    return fit_error(len(verdicts), [v.message or NO_SOLUTION for v in verdicts])


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
