"""Allocating a scenario's pending claims: node by node, as one scheduling cycle for one pod.

This is the entry point the CLI, the views and the API share. A scenario with Pods
is scheduled pod by pod instead (see pods.py).
"""
from __future__ import annotations

import time
from dataclasses import dataclass, replace

from allocator.engine import cel
from allocator.engine.allocate import DEFAULT_MAX_STEPS, Allocator, Fatal, NodeFailure, SearchLimit
from allocator.engine.attempt import AllocatedState, allocated_state
from allocator.engine.cycle import (
    NO_SOLUTION,
    ExactFirst,
    attempt_node,
    explain_attempt,
    fit_error,
    prefilter_problems,
)
from allocator.engine.gates import STABLE, AllocatorFeatures, ComponentGates
from allocator.engine.outcome import NodeVerdict, Outcome, fatal_problem, output_claim, with_kubelet_answer
from allocator.engine.pools import PoolGatherError, SliceIndex, gather_pools
from allocator.engine.problems import GATES_REFUSED, POOL_ORDER, WARNING, Problem
from allocator.engine.results import build_allocation
from allocator.engine.run_common import (  # noqa: F401 (ALLOCATED, ... are the engine's names for them)
    ALLOCATED,
    DEFAULT_TIME_LIMIT,
    INVALID,
    UNSATISFIABLE,
    candidate_nodes,
    named_nodes,
    node_for,
    unknown_node,
)
from allocator.engine.scenario import Scenario, read_scenario
from allocator.engine.vocabulary import OutcomeKind

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:
    from allocator.engine.explanation import Explanation

# The explanation and the status what-if are imported where a run needs them (the command's
# start-up pays only for what its input asks for).

EXIT_CODES = {kind: kind.exit_code for kind in OutcomeKind}
# What a node the scenario names nowhere means (allocate's `unnamed_node`).
BARE_NODE = "bare"  # a node of that name without labels: the CLI's --node
ANY_NODE = "any"  # dropped: the run tries every node the scenario names


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
    unnamed_node: str = BARE_NODE,
    each_claim_alone: bool = False,
    **options,
) -> Outcome:
    """Allocate the scenario's pending claims (or schedule its pods), and add what the page, the API
    and the CLI all show besides: the nodes the scenario names, the node asked for when it names it
    nowhere, and the kubelet's refusal of skipped node operations.

    `unnamed_node` says what a node the scenario names nowhere means: BARE_NODE (the CLI's contract)
    tries a node of that name without labels, with a warning; ANY_NODE runs on any node instead and
    records the node it dropped in `Outcome.node_dropped`.

    `each_claim_alone` (a scenario of claims, without Pods): the scheduler allocates the pending
    claims together, as one pod's claims, so one that cannot be allocated (or whose selector fails)
    fails them all. With it, each pending claim is allocated alone against the same slices (the
    claims allocated in the input still hold their devices), and `Outcome.alone` lists each
    claim's own answer."""
    gates = gates or ComponentGates()
    named = None if scenario.errors else named_nodes(scenario)
    dropped = None
    if unnamed_node == ANY_NODE and node_name and named is not None and node_name not in named:
        dropped, node_name = node_name, None
    if each_claim_alone and not scenario.pods and not scenario.errors:
        outcome = _each_claim_alone(scenario, node_name=node_name, gates=gates, **options)
    else:
        outcome = _allocate(scenario, node_name=node_name, gates=gates, **options)
    if named is not None:
        outcome.candidate_nodes = named
        if node_name and node_name not in named:
            outcome.unknown_node = node_name
    outcome.node_dropped = dropped
    if outcome.pods:
        from allocator.engine.closest import closest_nodes

        outcome.closest = closest_nodes(scenario, outcome.pods)
    outcome.explanation, refusals = with_kubelet_answer(outcome.explanation, gates.kubelet)
    for pod in outcome.pods or ():
        pod.explanation, pod_refusals = with_kubelet_answer(pod.explanation, gates.kubelet)
        refusals += [r for r in pod_refusals if r not in refusals]
    outcome.warnings = list(outcome.warnings) + refusals
    return outcome


def _allocate(
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
    prefilter = prefilter_problems(pending, scenario.classes, features)

    cel_options = cel.Options(list_type_attributes=features.list_type_attributes, stored=True)
    slices = scenario.scheduler_slices(gates.scheduler)  # DeviceTaintRules applied
    index = SliceIndex(slices)
    state: AllocatedState = allocated_state(scenario.claims, features)
    names = [node_name] if node_name else candidate_nodes(scenario, index)
    missing = unknown_node(scenario, index, node_name)
    if missing is not None:
        warnings.append(missing)
    if prefilter:
        # PreFilter makes the pod unschedulable (it waits; nothing is wrong with the input): the
        # scheduler's message, and a warning located at the field it is about.
        first = prefilter[0]
        warnings.append(scenario.locate(replace(first, severity=WARNING)))
        return Outcome(
            UNSATISFIABLE,
            message=first.message if node_name else fit_error(len(names), [], first.message),
            claims=[output_claim(c, None) for c in pending],
            warnings=warnings,
            verdicts=[NodeVerdict(name, False, first.message) for name in names],
        )
    deadline = time.monotonic() + time_limit if time_limit else None
    options = {"max_steps": max_steps, "deadline": deadline, "cel_options": cel_options, "share_ids": share_ids,
               "exact_first": ExactFirst()}

    verdicts: list[NodeVerdict] = []
    # The node closest to fitting explains an unsatisfiable outcome (engine/closest.py: the fewest
    # devices short, then the first tried); with one node there is nothing to rank.
    explained, explained_short = None, None
    ranking = len(names) > 1
    asked, free = 0, None  # worked out at the first node that does not fit (no node, when the first fits)
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
            if features.variant == STABLE:
                warnings += _pool_order_warning(node_for(scenario, name), pending, scenario, index, features, state,
                                                options, claims)
            return Outcome(ALLOCATED, node=name, claims=claims, warnings=warnings, verdicts=verdicts,
                           explanation=_with_variant(explain_attempt(attempt), features) if explain_result else None)
        if ranking and free is None:
            from allocator.engine.closest import claims_asked, free_devices

            asked, free = claims_asked(scenario), free_devices(scenario, [])
        short = max(0, asked - free.get(name, 0)) if ranking else 0
        if explained is None or short < explained_short:
            explained, explained_short = attempt, short
        if attempt.limit and deadline is not None and time.monotonic() > deadline:
            break

    if ranking:
        from allocator.engine.closest import closest_first
    return Outcome(
        UNSATISFIABLE,
        node=None,
        message=no_fit_message(verdicts, node_name),
        claims=[output_claim(c, None) for c in pending],
        warnings=warnings,
        verdicts=verdicts,
        explanation=(_with_variant(explain_attempt(explained), features)
                     if explain_result and explained is not None else None),
        claims_closest=closest_first(verdicts, asked=asked, free=free) if ranking else [],
    )


def _each_claim_alone(scenario: Scenario, **options) -> Outcome:
    """Every pending claim allocated on its own (see allocate's `each_claim_alone`): the outcome is
    allocated when each claim is, invalid when one is, else unsatisfiable; its claims are each
    claim's own result; `alone` lists (claim key, that claim's outcome)."""
    pending = [c for c in scenario.claims if c.allocation is None]
    allocated = [c for c in scenario.claims if c.allocation is not None]
    alone, claims, warnings, problems = [], [], list(scenario.warnings), []
    for claim in pending:
        one = _allocate(replace(scenario, claims=allocated + [claim]), **options)
        alone.append(ClaimAlone(claim.key, one.outcome, one.node, one.message, one.explanation))
        claims.extend(one.claims)
        problems += one.problems
        warnings += [w for w in one.warnings if w not in warnings]
    kinds = {a.outcome for a in alone}
    kind = INVALID if INVALID in kinds else UNSATISFIABLE if UNSATISFIABLE in kinds else ALLOCATED
    failed = next((a for a in alone if a.outcome != ALLOCATED), None)
    done = sum(1 for a in alone if a.outcome == ALLOCATED)
    message = None if failed is None else f"each claim alone: {done} of {len(alone)} can be allocated"
    return Outcome(kind, node=None, message=message, claims=claims, warnings=warnings, problems=problems,
                   explanation=failed.explanation if failed is not None else alone[0].explanation if alone else None,
                   alone=alone)


@dataclass(frozen=True)
class ClaimAlone:
    """One pending claim's answer when it is allocated alone."""

    claim: str
    outcome: OutcomeKind
    node: str | None
    message: str | None
    explanation: object = None

    def as_dict(self) -> dict:
        return {"claim": self.claim, "outcome": str(self.outcome), "node": self.node, "message": self.message}


def together_failure(scenario: Scenario, outcome: Outcome) -> bool:
    """Whether several pending claims failed together (the scheduler allocates a scenario's claims
    as one pod's): the case where judging each claim alone says something new."""
    if scenario.pods or outcome.outcome == ALLOCATED or getattr(outcome, "alone", None):
        return False
    return sum(1 for c in scenario.claims if c.allocation is None) > 1


def _pool_order_warning(node, pending, scenario, index, features, state, options, claims) -> list[Problem]:
    """The stable allocator gathers pools in Go map order, so another run of the real scheduler may
    try them in another order. The search runs again with the pools reversed: when that picks other
    devices, the answer shown is one of several, and a warning says which pools."""
    pools = gather_pools(node, index, features)
    if len(pools) < 2:
        return []
    options = {k: v for k, v in options.items() if k != "exact_first"}
    allocator = Allocator(claims=pending, classes=scenario.classes, pools=list(reversed(pools)), node=node,
                          features=features, allocated=state, all_slices=index.slices, **options)
    try:
        if not allocator.run():
            return []
        other = [build_allocation(allocator, ci) for ci in range(len(pending))]
    except (Fatal, NodeFailure, SearchLimit):
        return []
    shown = [c["status"]["allocation"] for c in claims]
    if _devices(other) == _devices(shown):
        return []
    names = ", ".join(f"{p.driver}/{p.name}" for p in pools)
    return [Problem(
        f"the stable allocator gathers pools in Go map order: with pools {names} another run of the real "
        "kube-scheduler may try them in another order and pick other devices; this is one possible answer",
        severity=WARNING, code=POOL_ORDER)]


def _devices(allocations: list) -> list:
    return [[(r["driver"], r["pool"], r["device"]) for r in a["devices"]["results"]] for a in allocations]


def _with_variant(explanation: Explanation | None, features: AllocatorFeatures) -> Explanation | None:
    """The explanation names the allocator variant that ran, and why that one."""
    if explanation is None:
        return None
    from allocator.engine.explanation import AllocatorVariant

    return replace(explanation, allocator=AllocatorVariant(features.variant, features.variant_reason))


def no_fit_message(verdicts: list[NodeVerdict], node_name: str | None) -> str:
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
    refused = gates.refusal() if gates is not None else None
    if refused is not None:
        # A component that would not start answers nothing: the scenario is read for display only.
        return read_scenario(text), refused_outcome(*refused)
    apiserver = gates.apiserver if gates is not None and options.pop("replay_create", False) else None
    identities, bootstrap = options.pop("status_identities", ()), options.pop("bootstrap_rbac", True)
    scenario = read_scenario(text, apiserver_gates=apiserver)
    outcome = allocate(scenario, node_name=node_name, gates=gates, **options)
    if scenario.rbac.empty and not identities:  # run_status_writers' own first test, before its import
        outcome.status_writers = None
        return scenario, outcome
    from allocator.engine.statusauth.outcome import run_status_writers

    grid = run_status_writers(scenario, outcome, apiserver_gates=(gates or ComponentGates()).apiserver,
                              identities=identities, bootstrap=bootstrap)
    outcome.status_writers = grid.as_dict() if grid is not None else None
    return scenario, outcome


def refused_outcome(component: str, gate: str | None, message: str) -> Outcome:
    """Exit 2: the component's start-up error, located at the gate (or the version) it names."""
    path = ("featureGates", gate) if gate else ("emulatedVersion",)
    problem = Problem(message, kind="FeatureGates", name=component, path=path, code=GATES_REFUSED)
    return Outcome(INVALID, message=message, problems=[problem])
