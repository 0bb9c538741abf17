"""The engine's feature gates against Kubernetes' own gate table and feature-gate library."""
import random

import pytest

from allocator.engine.gates import DATA_FILE, GATES, EMULATED_CHOICES, GateError, parse_gates
from tests.upstream import kube_gates

pytestmark = pytest.mark.filterwarnings("ignore")


def test_committed_gate_table_is_what_kubernetes_registers(gate_oracle):
    assert kube_gates.table() == DATA_FILE.read_text(encoding="utf-8"), (
        "allocator/engine/gates.json is stale: regenerate it with tests/kube/.build/gates > allocator/engine/gates.json")


def _ours(text: str, emulated: str, min_compat: str) -> dict:
    try:
        gates, _ = parse_gates(text, emulated=emulated, min_compat=min_compat)
    except GateError as exc:
        return {"errors": [str(exc)]}
    errors = gates.refusals()
    if errors:
        return {"errors": sorted(message for _, message in errors)}
    return {"errors": [], "enabled": {name: gates.enabled(name) for name in GATES}}


VERSIONS = ["", *EMULATED_CHOICES, "1.33", "1.38", "1.31"]


def _draw(rng: random.Random) -> tuple[str, str, str]:
    names = list(GATES)
    picked = rng.sample(names, rng.randint(0, 5))
    text = ",".join(f"{name}={rng.choice(['true', 'false'])}" for name in picked)
    emulated = rng.choice(VERSIONS)
    min_compat = rng.choice(VERSIONS) if rng.random() < 0.4 else ""
    return text, emulated, min_compat


def test_gate_sets_and_versions_are_refused_and_valued_as_kube_scheduler_does(gate_oracle):
    rng = random.Random(19)
    accepted = refused = 0
    for _ in range(3000):
        text, emulated, min_compat = _draw(rng)
        flags = [f"--feature-gates={text}"] if text else []
        if emulated:
            flags.append(f"--emulated-version={emulated}")
        if min_compat:
            flags.append(f"--min-compatibility-version={min_compat}")
        theirs = gate_oracle.ask(flags)
        # Kubernetes reports several setting errors in map order: compared as sets.
        their_errors = sorted(theirs["errors"])
        mine = _ours(text, emulated, min_compat)
        my_errors = mine["errors"]
        assert my_errors == their_errors, (flags, mine, theirs)
        if not their_errors:
            assert mine["enabled"] == {name: theirs["enabled"][name] for name in GATES}, flags
            accepted += 1
        else:
            refused += 1
    assert accepted > 500 and refused > 500

