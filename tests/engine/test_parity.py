"""Scenarios where an earlier version of this engine differed from the newest upstream allocator.

Each file in tests/engine/parity/ is a small scenario; the table gives the gates
and what upstream does with it.
"""
from pathlib import Path

import pytest

from allocator.engine.gates import ComponentGates, gates_from_dict
from allocator.engine.run import allocate_text

PARITY = Path(__file__).parent / "parity"

CASES = [
    # (file, gates, outcome, devices of claim-0 in order or message fragment)
    # k8s.io/dynamic-resource-allocation v0.37.2 (the pinned oracle, tests/upstream): without list types
    # the first covered device sets the value whatever its kind; a list later is refused.
    ("match-first-list-gate-off", {"DRAListTypeAttributes": False}, "allocated", ["device-1"]),
    ("distinct-scalar-then-list-gate-off", {"DRAListTypeAttributes": False}, "unsatisfiable", "cannot allocate"),
    # Milli-unit arithmetic only with DRAFractionalCapacityRange, off by default in 1.37.2 (min compat 1.36).
    ("capacity-submilli-request", {"DRAFractionalCapacityRange": True}, "invalid",
     "request 1000100u is not a representable milli value"),
    ("capacity-huge-range-milli-overflow", {}, "allocated", ["device-1"]),
    ("capacity-error-after-soft-fail", {"DRAFractionalCapacityRange": False}, "invalid",
     "request 10E exceeds MaxInt64"),
    ("capacity-device-both-spellings", {}, "allocated", ["device-1"]),
    ("per-device-selector-two-terms", {}, "invalid", "unsupported ResourceSlice.NodeSelector with 2 terms"),
    # v0.37.2 compares capacity names as written: a share recorded as driver-a/bw does not count against bw.
    ("capacity-existing-share-qualified-spelling", {}, "allocated", ["device-1"]),
    ("subrequest-capacity-check-order", {"DRAConsumableCapacity": False}, "invalid",
     "subrequest sub-1: has capacity requests"),
    ("list-on-version-build-metadata", {"DRAListTypeAttributes": True}, "unsatisfiable", "cannot allocate"),
    ("list-on-version-build-metadata-distinct", {"DRAListTypeAttributes": True}, "allocated",
     ["device-1", "device-2"]),
    ("binding-conditions-empty-list", {"DRADeviceBindingConditions": False}, "allocated", ["device-1"]),
    ("invalid-pool-with-binding-conditions-order", {}, "invalid",
     "resource pool driver-a/a is currently invalid"),
    # The scheduler's PreFilter sees it before the allocator: the pod is unschedulable (a 1.36 scheduler,
    # where the gate can still be off).
    ("prioritized-disabled-missing-subclass", {"DRAPrioritizedList": False}, "unsatisfiable",
     "has subrequests, but the DRAPrioritizedList feature is disabled"),
    ("hopeless-pruning-hides-cel-error", {}, "invalid", "on device driver-a/pool-1/device-3: CEL runtime error"),
    ("tail-cut-hides-cel-error", {}, "invalid", "on device driver-a/pool-1/device-3: CEL runtime error"),
    ("hopeless-derived-eval-on-unselected", {"DRADerivedAttributes": True}, "allocated",
     ["device-1", "device-2", "device-3"]),
]


EMULATED = {"prioritized-disabled-missing-subclass": "1.36"}


@pytest.mark.parametrize("name,gates,outcome,expect", CASES, ids=[c[0] for c in CASES])
def test_matches_upstream(name, gates, outcome, expect):
    _, result = allocate_text((PARITY / f"{name}.yaml").read_bytes(), node_name="node-1",
                              gates=ComponentGates.uniform(gates_from_dict(gates, emulated=EMULATED.get(name, ""))))
    assert result.outcome == outcome, result.message
    if isinstance(expect, list):
        results = result.claims[0]["status"]["allocation"]["devices"]["results"]
        assert [r["device"] for r in results] == expect
    else:
        assert expect in result.message


def test_a_device_with_both_capacity_spellings_reports_both():
    # v0.37.2: two capacities; the unrequested one is consumed whole.
    _, result = allocate_text((PARITY / "capacity-device-both-spellings.yaml").read_bytes(), node_name="node-1")
    consumed = result.claims[0]["status"]["allocation"]["devices"]["results"][0]["consumedCapacity"]
    assert consumed == {"bw": "1", "driver-a/bw": "20"}
