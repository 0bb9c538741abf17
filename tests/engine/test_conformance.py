"""Every shared conformance case, through the same code path as `manage.py allocate -o json`."""
import json

import pytest
import yaml

from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.report import outcome_data
from allocator.engine.run import allocate_text
from tests.conftest import CONFORMANCE_DIR

CASES = sorted(p.name for p in CONFORMANCE_DIR.iterdir() if (p / "case.yaml").is_file()) if CONFORMANCE_DIR else []


def subset_mismatch(want, got, path=""):
    """Where `got` differs from the fields `want` lists (lists element-wise, in order)."""
    if isinstance(want, dict):
        if not isinstance(got, dict):
            return f"{path}: expected mapping, got {got!r}"
        for key, value in want.items():
            if key not in got:
                return f"{path}.{key}: missing"
            problem = subset_mismatch(value, got[key], f"{path}.{key}")
            if problem:
                return problem
        return None
    if isinstance(want, list):
        if not isinstance(got, list) or len(got) != len(want):
            return f"{path}: expected {want!r}, got {got!r}"
        for i, (w, g) in enumerate(zip(want, got)):
            problem = subset_mismatch(w, g, f"{path}[{i}]")
            if problem:
                return problem
        return None
    return None if str(want) == str(got) else f"{path}: expected {want!r}, got {got!r}"


def run_case(case_dir):
    case = yaml.safe_load((case_dir / "case.yaml").read_text())
    gates = gates_from_dict(case.get("featureGates") or {}, emulated=str(case.get("emulatedVersion") or ""))
    _, outcome = allocate_text(
        (case_dir / "scenario.yaml").read_bytes(), node_name=case.get("node"), gates=ComponentGates.uniform(gates)
    )
    return case, json.loads(json.dumps(outcome_data(outcome)))


def test_conformance_cases_are_present():
    if CONFORMANCE_DIR is None:
        pytest.skip("conformance cases not found (set DRA_CONFORMANCE_CASES)")
    assert len(CASES) >= 100


# Shared cases whose expectation the pinned upstream allocator (k8s.io/dynamic-resource-allocation v0.37.2,
# tests/upstream) contradicts. Upstream wins; the upstream answer is pinned in tests/upstream/regressions/.
UPSTREAM_DISAGREES = {
    "with-constraint-matching-version-attribute-ignores-build-metadata":
        "matchAttribute compares versions as exact text (build metadata counts)",
    "consumable-capacity-exclusive-request-skips-device-with-remaining-shares":
        "a device without allowMultipleAllocations is in use only when allocated whole, not when it has shares",
    "skip-node-operations-scheduler-gate-off":
        "only the experimental allocator variant refuses skipNodeOperations slices when the gate is off",
    # kube-scheduler 1.37 refuses to start at --emulated-version 1.35 when a gate that 1.35 does not have
    # yet is set, even to false ("feature is PreAlpha"): DRAListTypeAttributes, DRADeviceCompatibilityGroups,
    # DRAOptionalNodeOperations. tests/upstream/test_gates_upstream.py checks this against Kubernetes.
    "admin-access-disabled":
        "the case's gate set at emulated version 1.35 names gates that are PreAlpha there: the scheduler would not start",
}

# Shared cases that the contract (scenario-and-cli.md) now answers differently: a request whose device
# class does not exist is unschedulable in the scheduler's PreFilter (exit 1), not invalid.
CONTRACT_CHANGED = {"unknown-class", "no-classes"}


@pytest.mark.parametrize("name", CASES)
def test_conformance_case(name):
    if name in UPSTREAM_DISAGREES:
        pytest.skip(f"upstream v0.37.2 disagrees with the shared case: {UPSTREAM_DISAGREES[name]}")
    case, data = run_case(CONFORMANCE_DIR / name)
    expect = case["expect"]
    if name in CONTRACT_CHANGED:
        expect = dict(expect, outcome="unsatisfiable")
    assert data["outcome"] == expect["outcome"], data["message"]
    if expect.get("errorContains"):
        assert expect["errorContains"].lower() in (data["message"] or "").lower()
    if expect["outcome"] != "allocated":
        assert data["message"]
        return
    claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in data["claims"]}
    for want in expect.get("claims", []):
        claim = claims[(want.get("namespace", "default"), want["name"])]
        allocation = claim["status"]["allocation"]
        assert subset_mismatch(want.get("results", []), allocation["devices"]["results"], "results") is None
        if "nodeSelector" in want:
            assert subset_mismatch(want["nodeSelector"], allocation.get("nodeSelector"), "nodeSelector") is None
