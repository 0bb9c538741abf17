"""One run of the engine for the page, the API and the share links: scenario text, node and per-component gates."""
from __future__ import annotations

from dataclasses import dataclass, field

from allocator.engine.gates import (
    ALPHA,
    BETA,
    COMPONENTS,
    GA,
    GATES,
    ComponentGates,
    FeatureGates,
)
from allocator.engine.problems import WARNING, Problem
from allocator.engine.run import Outcome, allocate_text
from allocator.engine.scenario import Scenario

MAX_SCENARIO_BYTES = 2 * 1024 * 1024
# Interactive runs stay short; the CLI allows more.
WEB_MAX_STEPS = 300_000
WEB_TIME_LIMIT = 3.0


@dataclass
class GateRow:
    name: str
    stage: str
    summary: str
    locked: bool
    values: dict  # component -> bool
    default: bool

    @property
    def skewed(self) -> bool:
        return len(set(self.values.values())) > 1


@dataclass
class RunRequest:
    scenario: str
    node: str = ""
    gates: dict = field(default_factory=dict)  # component -> {gate: bool}, only gates that differ from defaults

    def component_gates(self) -> ComponentGates:
        parts = {c: FeatureGates(tuple(sorted(self.gates.get(c, {}).items()))) for c, _ in COMPONENTS}
        return ComponentGates(parts["apiserver"], parts["scheduler"], parts["kubelet"])

    def gate_rows(self) -> dict:
        """Gates grouped by maturity, each with its value per component."""
        groups: dict = {ALPHA: [], BETA: [], GA: []}
        for info in GATES.values():
            values = {}
            for component, _ in COMPONENTS:
                values[component] = self.gates.get(component, {}).get(info.name, info.default)
            groups[info.stage].append(GateRow(info.name, info.stage, info.summary, info.locked, values, info.default))
        return groups

    @property
    def skewed(self) -> bool:
        return any(row.skewed for rows in self.gate_rows().values() for row in rows)


def run_request(run: RunRequest) -> tuple[Scenario, Outcome]:
    """One engine run for the page (objects count as created under the apiserver's gates when they differ)."""
    gates = run.component_gates()
    replay = gates.apiserver != gates.scheduler
    scenario, outcome = allocate_text(
        run.scenario,
        node_name=run.node or None,
        gates=gates,
        max_steps=WEB_MAX_STEPS,
        time_limit=WEB_TIME_LIMIT,
        replay_create=replay,
    )
    outcome.warnings = locked_gate_warnings(run) + outcome.warnings
    return scenario, outcome


def locked_gate_warnings(run: RunRequest) -> list[Problem]:
    warnings = []
    for component, label in COMPONENTS:
        for name, value in run.gates.get(component, {}).items():
            info = GATES.get(name)
            if info is not None and info.locked and value != info.default:
                warnings.append(Problem(
                    f"{name} is {info.stage} and locked to {str(info.default).lower()} in Kubernetes 1.37; "
                    f"the playground honours it for the {label} anyway", severity=WARNING))
    return warnings
