"""One run of the engine for the page, the API and the share links: scenario text, node and per-component gates."""
from __future__ import annotations

from dataclasses import dataclass, field

from allocator.engine.gates import (
    ALPHA,
    BETA,
    COMPONENTS,
    GA,
    GATES,
    EMULATED_CHOICES,
    ComponentGates,
    FeatureGates,
)
from allocator.engine.run import Outcome, allocate_text
from allocator.engine.scenario import Scenario

MAX_SCENARIO_BYTES = 32 * 1024 * 1024  # the page and the API; a 1,000-node GPU cluster dump is about 30 MB
# Interactive runs stay short; the CLI allows more.
WEB_MAX_STEPS = 300_000
WEB_TIME_LIMIT = 3.0


@dataclass
class GateRow:
    name: str
    stage: str
    summary: str
    locked: bool  # on the scheduler, at its versions
    values: dict  # component -> bool
    default: bool
    disabled_on: dict = field(default_factory=dict)  # component -> locked there at the value it has
    refused_on: str = ""  # the component that would not start because of this gate

    @property
    def skewed(self) -> bool:
        return len(set(self.values.values())) > 1


@dataclass
class RunRequest:
    scenario: str
    node: str = ""
    gates: dict = field(default_factory=dict)  # component -> {gate: bool}, only gates that differ from defaults
    # component -> {"emulated": "1.36", "minCompat": "1.36"}; missing or "" = as started without the flag
    versions: dict = field(default_factory=dict)

    def component_features(self, component: str) -> FeatureGates:
        chosen = self.versions.get(component, {})
        return FeatureGates(tuple(sorted(self.gates.get(component, {}).items())),
                            chosen.get("emulated", ""), chosen.get("minCompat", ""))

    def component_gates(self) -> ComponentGates:
        parts = {c: self.component_features(c) for c, _ in COMPONENTS}
        return ComponentGates(parts["apiserver"], parts["scheduler"], parts["kubelet"])

    def gate_rows(self) -> dict:
        """Gates grouped by maturity (on the scheduler), each with its value per component."""
        features = {c: self.component_features(c) for c, _ in COMPONENTS}
        refused = self.component_gates().refusal()
        groups: dict = {ALPHA: [], BETA: [], GA: []}
        for info in GATES.values():
            values, disabled_on = {}, {}
            for component, _ in COMPONENTS:
                values[component] = features[component].enabled(info.name)
                spec = features[component].spec(info.name)
                # A box stays switchable when it holds a value its lock refuses, so it can be put right.
                disabled_on[component] = spec.locked and values[component] == spec.default
            spec = features["scheduler"].spec(info.name)
            row = GateRow(info.name, spec.stage, info.summary, spec.locked, values, spec.default, disabled_on,
                          refused[0] if refused and refused[1] == info.name else "")
            groups.setdefault(spec.stage, []).append(row)
        return {stage: rows for stage, rows in groups.items() if rows}

    @property
    def skewed(self) -> bool:
        return (any(row.skewed for rows in self.gate_rows().values() for row in rows)
                or len({(f.emulated_version, f.min_compat_version)
                        for f in (self.component_features(c) for c, _ in COMPONENTS)}) > 1)

    @property
    def version_controls(self) -> list[dict]:
        """The page's version control per component: the chosen versions and the choices."""
        out = []
        for component, label in COMPONENTS:
            chosen = self.versions.get(component, {})
            out.append({"key": component, "label": label, "emulated": chosen.get("emulated", ""),
                        "minCompat": chosen.get("minCompat", ""), "choices": EMULATED_CHOICES})
        return out

    @property
    def max_bytes(self) -> int:
        return MAX_SCENARIO_BYTES

def scenario_text(data: bytes) -> str:
    """An uploaded file as text: UTF-8 (or UTF-16 with its byte order mark, as PowerShell
    writes); anything else with U+FFFD for the bytes that are not text, which the loader then
    reports where they are."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        return data.decode("utf-16", "replace")
    return data.decode("utf-8", "replace")


def run_request(run: RunRequest) -> tuple[Scenario, Outcome]:
    """One engine run for the page (objects count as created under the apiserver's gates when they differ):
    the outcome, and the scenario as the page shows it (`Scenario.for_display`)."""
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
    return scenario.for_display(), outcome
