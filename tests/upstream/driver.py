"""Run scenarios through the engine and through Kubernetes' own allocator (the oracle), and compare.

The oracle (`tests/upstream/oracle/`) is a Go program built on
k8s.io/dynamic-resource-allocation v0.37.2. It is built once into a gitignored
directory and driven in batch mode: one process answers many scenarios, one JSON
line each, which keeps thousands of comparisons within seconds.
"""
from __future__ import annotations

import fcntl
import json
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from allocator.engine.gates import ComponentGates, parse_gates
from allocator.engine.report import outcome_data
from allocator.engine.run import allocate_text
from tests.upstream.batch import BatchProcess

ORACLE_DIR = Path(__file__).resolve().parent / "oracle"
BUILD_DIR = Path(os.environ.get("DRA_ORACLE_BUILD_DIR", Path(__file__).resolve().parent / ".build"))
ORACLE_BIN = BUILD_DIR / "oracle"

# Result fields compared as they are. shareID is random upstream: compared by presence only.
RESULT_FIELDS = ("request", "driver", "pool", "device", "adminAccess", "consumedCapacity", "tolerations",
                 "bindingConditions", "bindingFailureConditions", "skipNodeOperations")


class OracleUnavailable(Exception):
    """Go is not installed, or the oracle does not build."""


def go_binary() -> str | None:
    return shutil.which("go")


def _sources() -> list[Path]:
    return sorted(p for p in ORACLE_DIR.iterdir() if p.suffix == ".go" or p.name in ("go.mod", "go.sum"))


def build_oracle() -> Path:
    """Build the oracle unless an up-to-date binary is there (safe under pytest-xdist: one builder at a time)."""
    go = go_binary()
    if go is None:
        raise OracleUnavailable("Go is not installed: the upstream differential tests need `go` on PATH")
    BUILD_DIR.mkdir(parents=True, exist_ok=True)
    with open(BUILD_DIR / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        newest = max(p.stat().st_mtime for p in _sources())
        if ORACLE_BIN.exists() and ORACLE_BIN.stat().st_mtime >= newest:
            return ORACLE_BIN
        env = dict(os.environ, GOFLAGS="-mod=readonly", CGO_ENABLED="0")
        proc = subprocess.run([go, "build", "-trimpath", "-o", str(ORACLE_BIN), "."], cwd=ORACLE_DIR, env=env,
                              capture_output=True, text=True)
        if proc.returncode != 0:
            raise OracleUnavailable(f"the oracle does not build:\n{proc.stderr[-4000:]}")
    return ORACLE_BIN


class Oracle(BatchProcess):
    """One oracle process in batch mode; ask() sends a scenario and reads its answer."""

    name = "the oracle"

    def __init__(self, binary: Path | None = None):
        super().__init__(binary or build_oracle())

    def ask(self, scenario: str, *, node: str | None = None, gates: str = "", emulated: str = "",
            min_compat: str = "") -> dict:
        """The oracle's answer. It is given every gate's value as the scheduler resolves it at its
        versions (that resolution is checked against Kubernetes in test_gates_upstream.py)."""
        return self.request({"scenario": scenario, "node": node or "",
                             "featureGates": resolved_gates(gates, emulated, min_compat)})

    def ask_cel(self, expression: str, *, gates: str = "", stored: bool = True, derived: bool = False) -> dict:
        """Whether Kubernetes' DRA CEL compiler accepts the selector (or derived attribute), and its cost."""
        request = {"cel": expression, "featureGates": gates, "stored": stored, "derived": derived}
        return self.request(request)


# The gates the oracle knows (tests/upstream/oracle/scenario.go).
ORACLE_GATES = ("DynamicResourceAllocation", "DRAPrioritizedList", "DRAAdminAccess", "DRAResourceClaimDeviceStatus",
                "DRADeviceTaints", "DRADeviceTaintRules", "DRAPartitionableDevices", "DRAConsumableCapacity",
                "DRAFractionalCapacityRange", "DRADeviceBindingConditions", "DRASchedulerFilterTimeout",
                "DRAResourceClaimGranularStatusAuthorization", "DRAListTypeAttributes",
                "DRADeviceCompatibilityGroups", "DRAOptionalNodeOperations", "DRADerivedAttributes")


def resolved_gates(gates: str, emulated: str = "", min_compat: str = "") -> str:
    parsed, _ = parse_gates(gates, emulated=emulated, min_compat=min_compat)
    return ",".join(f"{name}={str(parsed.enabled(name)).lower()}" for name in ORACLE_GATES)


def ours(scenario: str, *, node: str | None = None, gates: str = "", emulated: str = "", min_compat: str = "") -> dict:
    """The engine's answer in the shape of `manage.py allocate -o json`, plus whether the input was
    rejected before allocation (validation: the oracle does not model the apiserver)."""
    parsed, warnings = parse_gates(gates, emulated=emulated, min_compat=min_compat)
    scen, outcome = allocate_text(scenario.encode(), node_name=node or None, gates=ComponentGates.uniform(parsed),
                                  explain_result=False)
    data = json.loads(json.dumps(outcome_data(outcome)))
    data["exitCode"] = outcome.exit_code
    data["validationErrors"] = bool(scen.errors)
    data["gaveUp"] = any("search gave up" in (v.get("message") or "") for v in data.get("nodes", []))
    return data


@dataclass
class Comparison:
    verdict: str  # "agree", "disagree", or "skipped"
    differences: list
    reason: str = ""


def compare(mine: dict, theirs: dict) -> Comparison:
    """Field by field: outcome, node, then each claim's results in order and its node selector.
    Where the stable allocator's answer depends on Go map order, ours must be one of its answers."""
    answers = theirs.get("answers")
    if answers:
        verdicts = [_compare_one(mine, dict(answer, answers=None)) for answer in answers]
        return next((v for v in verdicts if v.verdict == "agree"), verdicts[0])
    return _compare_one(mine, theirs)


def _compare_one(mine: dict, theirs: dict) -> Comparison:
    if theirs.get("outcome") == "panic":
        return Comparison("disagree", [f"the upstream allocator panicked: {theirs.get('message')}"])
    if mine.get("gaveUp") or theirs.get("outcome") == "gave-up":
        return Comparison("skipped", [], "a search limit was reached")
    if mine["outcome"] == "invalid" and mine.get("validationErrors"):
        return Comparison("skipped", [], "rejected by validation, which the oracle does not model")
    diffs = []
    if mine["outcome"] != theirs["outcome"]:
        diffs.append(f"outcome: ours {mine['outcome']!r} ({mine.get('message')}), "
                     f"upstream {theirs['outcome']!r} ({theirs.get('message')})")
        return Comparison("disagree", diffs)
    if mine["outcome"] != "allocated":
        return Comparison("agree", [])
    if mine.get("node") != theirs.get("node"):
        diffs.append(f"node: ours {mine.get('node')!r}, upstream {theirs.get('node')!r}")
    upstream_claims = {(c["metadata"]["namespace"], c["metadata"]["name"]): c for c in theirs.get("claims") or []}
    for claim in mine.get("claims") or []:
        key = (claim["metadata"]["namespace"], claim["metadata"]["name"])
        other = upstream_claims.get(key)
        if other is None:
            diffs.append(f"claim {key[0]}/{key[1]}: missing upstream")
            continue
        diffs += compare_allocation(f"{key[0]}/{key[1]}", _allocation(claim), _allocation(other))
    return Comparison("disagree" if diffs else "agree", diffs)


def _allocation(claim: dict) -> dict:
    return ((claim.get("status") or {}).get("allocation")) or {}


def compare_allocation(label: str, mine: dict, theirs: dict) -> list[str]:
    diffs = []
    my_results = (mine.get("devices") or {}).get("results") or []
    up_results = (theirs.get("devices") or {}).get("results") or []
    if [_device(r) for r in my_results] != [_device(r) for r in up_results]:
        diffs.append(f"{label}: devices ours {[_device(r) for r in my_results]}, "
                     f"upstream {[_device(r) for r in up_results]}")
        return diffs
    for i, (a, b) in enumerate(zip(my_results, up_results)):
        for name in RESULT_FIELDS:
            if a.get(name) != b.get(name):
                diffs.append(f"{label}: results[{i}].{name}: ours {a.get(name)!r}, upstream {b.get(name)!r}")
        if ("shareID" in a) != ("shareID" in b):
            diffs.append(f"{label}: results[{i}].shareID present: ours {'shareID' in a}, upstream {'shareID' in b}")
    my_config = (mine.get("devices") or {}).get("config") or []
    up_config = (theirs.get("devices") or {}).get("config") or []
    if my_config != up_config:
        diffs.append(f"{label}: config ours {my_config!r}, upstream {up_config!r}")
    if mine.get("nodeSelector") != theirs.get("nodeSelector"):
        diffs.append(f"{label}: nodeSelector ours {mine.get('nodeSelector')!r}, upstream {theirs.get('nodeSelector')!r}")
    return diffs


def _device(result: dict) -> str:
    return f"{result.get('request')}:{result.get('driver')}/{result.get('pool')}/{result.get('device')}"


def gate_text(gates: dict | None) -> str:
    return ",".join(f"{k}={str(v).lower()}" for k, v in (gates or {}).items())
