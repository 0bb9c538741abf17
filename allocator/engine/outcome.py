"""What one run answers: the outcome, each node's verdict, the claims as written, and the answers the
page, the API and the CLI all show (the nodes the scenario names, the unknown node, the kubelet's
refusal of skipped node operations)."""
from __future__ import annotations

from dataclasses import dataclass, field, replace

from allocator.engine.allocate import Fatal
from allocator.engine.problems import WARNING, Problem
from allocator.engine.scenario import Scenario
from allocator.engine.vocabulary import OutcomeKind

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing
if TYPE_CHECKING:  # imported where an explanation is built
    from allocator.engine.explanation import Explanation

KUBELET_REFUSES = "kubelet-refuses"  # the kubelet will not prepare the claim (a warning's code)
OPTIONAL_NODE_OPERATIONS = "DRAOptionalNodeOperations"
# The kubelet's own words when a driver's devices all skip a call and its gate is off.
KUBELET_GATE_OFF = f"{OPTIONAL_NODE_OPERATIONS} feature gate is disabled on kubelet"


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
    outcome: OutcomeKind
    node: str | None = None
    message: str | None = None
    claims: list = field(default_factory=list)  # output claim objects
    problems: list = field(default_factory=list)  # errors, for invalid
    warnings: list = field(default_factory=list)
    verdicts: list = field(default_factory=list)
    explanation: Explanation | None = None
    pods: list | None = None  # PodResult per Pod, for a scenario with Pods; None without
    candidate_nodes: list = field(default_factory=list)  # every node the scenario names, in name order
    unknown_node: str | None = None  # the node asked for, when the scenario names it nowhere
    closest: dict = field(default_factory=dict)  # pending pod key -> closest.Closeness per node, closest first
    claims_closest: list = field(default_factory=list)  # no Pods, unsatisfiable on several nodes: the same, for the claims
    alone: list | None = None  # run.ClaimAlone per pending claim, when each claim was allocated alone
    node_dropped: str | None = None  # the node asked for and not used: named nowhere, the run took any node
    status_writers: dict | None = None  # who may write each allocated claim's status (statusauth)

    @property
    def exit_code(self) -> int:
        return OutcomeKind(self.outcome).exit_code


def output_claim(claim, allocation: dict | None) -> dict:
    raw = claim.raw
    out = {
        "apiVersion": raw.get("apiVersion", "resource.k8s.io/v1"),
        "kind": "ResourceClaim",
        "metadata": {"name": claim.name, "namespace": claim.namespace},
        "spec": raw.get("spec") or {},
    }
    if allocation is not None:
        out["status"] = {"allocation": allocation}
    return out


def fatal_problem(scenario: Scenario, exc: Fatal) -> Problem:
    claim, owner = exc.claim, exc.owner
    if owner is not None:  # the field is in another object than the claim (a DeviceClass's selector)
        return scenario.locate(Problem(exc.message, kind=exc.kind, name=owner.name, path=exc.path, ref=owner.ref))
    problem = Problem(
        exc.message,
        kind=exc.kind or ("ResourceClaim" if claim is not None else ""),
        name=claim.key if claim is not None else "",
        path=exc.path,
        ref=claim.ref if claim is not None else None,
    )
    return scenario.locate(problem)


def with_kubelet_answer(explanation: Explanation | None, kubelet_gates) -> tuple[Explanation | None, list]:
    """The explanation with the kubelet's refusal on each claim and driver whose devices all skip a
    call while the kubelet's DRAOptionalNodeOperations is off, and one warning per refusal.

    The kubelet works out, per driver of a claim, the calls every device of the driver skips; only
    when that list is not empty does it need the gate (a call one device still needs runs)."""
    if explanation is None or kubelet_gates.enabled(OPTIONAL_NODE_OPERATIONS):
        return explanation, []
    warnings = []
    operations = []
    for op in explanation.node_operations:
        if any(not call.runs for call in op.calls):
            op = replace(op, kubelet_refusal=KUBELET_GATE_OFF)
            warnings.append(Problem(
                f"the kubelet on node {explanation.node} refuses to prepare the claim "
                f"(driver {op.driver} skips {', '.join(c.call for c in op.calls if not c.runs)}): "
                f"{KUBELET_GATE_OFF}", severity=WARNING, kind="ResourceClaim", name=op.claim,
                code=KUBELET_REFUSES))
        operations.append(op)
    if not warnings:
        return explanation, []
    return replace(explanation, node_operations=operations), warnings
