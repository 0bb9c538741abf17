"""Schedule dumps through the engine and through kube-scheduler 1.37.2's own framework, and compare.

The scheduler oracle (`tests/kube/cmd/schedule/`) is a Go program built on k8s.io/kubernetes
v1.37.2 (one module with the other Kubernetes oracles, `tests/kube/`). It is built once into the
gitignored `tests/kube/.build/` and driven in batch mode: one process, one JSON line per dump.

Compared per pod: the outcome, the node (for a scheduled pod: the set of nodes tied for the best
total, since the scheduler picks among them at random; both sides then bind the first by name),
every node's verdict and the filter's reasons, the `0/N nodes are available: …` line, each
feasible node's score per plugin (raw, normalised, weight) and total, and each claim's allocation.
"""
from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

from allocator.engine.report import outcome_data
from allocator.engine.run import allocate_text
from tests.upstream import kube_build
from tests.upstream.driver import compare_allocation
from tests.upstream.batch import BatchProcess

KUBE_DIR = Path(__file__).resolve().parent.parent / "kube"
SOURCE_DIR = KUBE_DIR / "cmd" / "schedule"
BUILD_DIR = Path(os.environ.get("DRA_KUBE_BUILD_DIR", KUBE_DIR / ".build"))
BINARY = BUILD_DIR / "schedule"
REGRESSIONS = Path(__file__).resolve().parent / "regressions" / "pods"

# The part of a pending pod's event the playground leaves out (DefaultPreemption's PostFilter).
PREEMPTION = " preemption:"


class SchedulerUnavailable(Exception):
    """Go is not installed, or the oracle does not build."""


def build() -> Path:
    """Build the oracle unless an up-to-date binary is there (one builder at a time)."""
    go = shutil.which("go")
    if go is None:
        raise SchedulerUnavailable("Go is not installed: the scheduler differential needs `go` on PATH")
    try:
        return kube_build.build("schedule")  # every oracle of tests/kube at once
    except kube_build.KubeBuildError as exc:
        raise SchedulerUnavailable(str(exc)) from None


class Scheduler(BatchProcess):
    """One oracle process in batch mode; ask() sends a dump and reads its answer."""

    name = "the scheduler oracle"

    def __init__(self, binary: Path | None = None):
        super().__init__(binary or build())

    def ask(self, dump: str) -> dict:
        return self.request({"dump": dump})


def ours(dump: str, gates: dict | None = None) -> dict:
    """The engine's answer for a dump (under these feature gates), as `manage.py allocate -o json` gives it."""
    from allocator.engine.gates import ComponentGates, gates_from_dict

    gates = ComponentGates.uniform(gates_from_dict(gates)) if gates else None
    _scenario, outcome = allocate_text(dump.encode(), gates=gates, explain_result=False)
    data = json.loads(json.dumps(outcome_data(outcome)))
    data["exitCode"] = outcome.exit_code
    return data


def compare(mine: dict, theirs: dict) -> list[str]:
    """Every difference between the engine's pods and the oracle's, as sentences (empty: they agree)."""
    if "error" in theirs:
        return [f"the oracle failed: {theirs['error'][:2000]}"]
    if mine.get("outcome") == "invalid" and not mine.get("pods"):
        return [f"the engine refused the dump: {mine.get('message')}"]
    my_pods = {(p["namespace"], p["name"]): p for p in mine.get("pods") or []}
    diffs = []
    for up in theirs.get("pods") or []:
        key = (up["namespace"], up["name"])
        pod = my_pods.get(key)
        label = f"pod {key[0]}/{key[1]}"
        if pod is None:
            diffs.append(f"{label}: missing from the engine's answer")
            continue
        diffs += [f"{label}: {d}" for d in compare_pod(pod, up)]
    return diffs


def compare_pod(mine: dict, theirs: dict) -> list[str]:
    if theirs["outcome"] == "error":
        if mine["outcome"] == "invalid" and mine.get("message") == theirs.get("message"):
            return []  # the engine stops the pod with the scheduler's own error
        return [f"the oracle's scheduling cycle failed: {theirs.get('message')}"]
    if mine["outcome"] != theirs["outcome"]:
        return [f"outcome: ours {mine['outcome']!r} ({mine.get('message')}), "
                f"upstream {theirs['outcome']!r} ({theirs.get('message')})"]
    diffs = []
    if mine.get("node") != (theirs.get("node") or None):
        diffs.append(f"node: ours {mine.get('node')!r}, upstream {theirs.get('node')!r}")
    if theirs["outcome"] == "scheduled":
        tied = sorted(((mine.get("scoring") or {}).get("tied")) or [])
        if tied != sorted(theirs.get("tied") or []):
            diffs.append(f"nodes tied for the best score: ours {tied}, upstream {theirs.get('tied')}")
    if theirs["outcome"] == "pending":
        message = (theirs.get("message") or "").split(PREEMPTION)[0]
        if (mine.get("message") or "") != message:
            diffs.append(f"message: ours {mine.get('message')!r}, upstream {message!r}")
    if theirs["outcome"] in ("scheduled", "pending"):
        diffs += _compare_nodes(mine.get("nodes") or [], theirs.get("nodes") or [])
        diffs += _compare_scores(mine.get("nodes") or [], theirs.get("scores") or [])
    diffs += _compare_claims(mine.get("claims") or [], theirs.get("claims") or [])
    ours_statuses, upstream = _statuses(mine.get("nodeAllocatable")), _statuses(theirs.get("nodeAllocatable"))
    if ours_statuses != upstream:
        diffs.append(f"node-allocatable statuses: ours {ours_statuses}, upstream {upstream}")
    return diffs


def _statuses(entries) -> list:
    """status.nodeAllocatableResourceClaimStatuses without the empty lists Go's JSON leaves out."""
    return [{k: v for k, v in entry.items() if v not in ([], None)} for entry in entries or ()]


def _reasons(verdict: dict) -> list[str]:
    if verdict.get("fits"):
        return []
    return sorted(verdict.get("reasons") or ([verdict["reason"]] if verdict.get("reason") else []))


def _compare_nodes(mine: list, theirs: list) -> list[str]:
    my_nodes = {v["node"]: v for v in mine}
    diffs = []
    for verdict in theirs:
        name = verdict["node"]
        own = my_nodes.get(name)
        if own is None:
            diffs.append(f"node {name}: no verdict from the engine")
            continue
        if bool(own.get("fits")) != bool(verdict.get("fits")):
            diffs.append(f"node {name}: fits ours {own.get('fits')}, upstream {verdict.get('fits')} "
                         f"({verdict.get('plugin')}: {verdict.get('reasons')})")
        elif _reasons(own) != sorted(verdict.get("reasons") or []):
            diffs.append(f"node {name}: reasons ours {_reasons(own)}, upstream {sorted(verdict.get('reasons') or [])} "
                         f"({verdict.get('plugin')})")
    return diffs


def _scored(plugins: dict) -> dict:
    """A plugin that gives a node nothing (raw and score 0) is the same as one that did not score it."""
    return {name: (p["raw"], p["score"], p["weight"]) for name, p in plugins.items() if p["raw"] or p["score"]}


def _compare_scores(mine: list, theirs: list) -> list[str]:
    my_scores = {v["node"]: v.get("score") for v in mine if v.get("fits")}
    diffs = []
    for score in theirs:
        own = my_scores.get(score["node"])
        if own is None:
            diffs.append(f"node {score['node']}: scored upstream ({score['total']}), not by the engine")
            continue
        if own["total"] != score["total"] or _scored(own["plugins"]) != _scored(score["plugins"]):
            diffs.append(f"node {score['node']}: score ours {own['total']} {_scored(own['plugins'])}, "
                         f"upstream {score['total']} {_scored(score['plugins'])}")
    return diffs


def _claim_key(claim: dict):
    if claim.get("extended") or claim.get("extendedResources") is not None:
        return "(extended resources)"
    return claim.get("podClaimName")


def _compare_claims(mine: list, theirs: list) -> list[str]:
    my_claims = {_claim_key(c): c for c in mine}
    diffs = []
    for claim in theirs:
        key = _claim_key(claim)
        own = my_claims.pop(key, None)
        if own is None:
            diffs.append(f"claim {key}: made upstream ({claim.get('name')}), not by the engine")
            continue
        diffs += compare_allocation(f"claim {key}", own.get("allocation") or {}, claim.get("allocation") or {})
    diffs += [f"claim {key}: made by the engine, not upstream" for key in my_claims]
    return diffs


def record(name: str, dump: str, why: str, gates: dict | None = None) -> Path:
    """Keep a dump and the oracle's answer (under these gates) as a regression that runs without Go."""
    with Scheduler() as oracle:
        answer = oracle.request({"dump": dump, "gates": gates}) if gates else oracle.ask(dump)
    folder = REGRESSIONS / name
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "dump.yaml").write_text(dump)
    if gates:
        (folder / "gates.json").write_text(json.dumps(gates, indent=2, sort_keys=True) + "\n")
    (folder / "why.txt").write_text(why.strip() + "\n")
    (folder / "upstream.json").write_text(json.dumps(answer, indent=2, sort_keys=True) + "\n")
    return folder


if __name__ == "__main__":  # python -m tests.upstream.scheduler record NAME FILE WHY
    import sys

    if len(sys.argv) == 5 and sys.argv[1] == "record":
        print(record(sys.argv[2], Path(sys.argv[3]).read_text(), sys.argv[4]))
    elif len(sys.argv) == 3 and sys.argv[1] == "compare":
        text = Path(sys.argv[2]).read_text()
        with Scheduler() as oracle:
            print("\n".join(compare(ours(text), oracle.ask(text))) or "agree")
    else:
        sys.exit("usage: python -m tests.upstream.scheduler record NAME FILE WHY | compare FILE")
