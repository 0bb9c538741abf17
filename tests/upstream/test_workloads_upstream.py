"""Workloads and pod groups against kube-scheduler 1.37.2's own framework (tests/kube/cmd/schedule).

Generated scenarios (tests/upstream/workload_dumps.py) hold Deployments, ReplicaSets, StatefulSets,
Jobs, DaemonSets and bare pods, PodGroups whose claims their pods share, under the pod-group gates
on, GenericWorkload alone, or the defaults. The engine expands the workloads; the oracle is given
the pods of that expansion and the PodGroups, and with DRAWorkloadResourceClaims makes the group's
claims as the resourceclaim controller does. Everything the scheduler differential compares must
agree, and so must each claim's name and reservedFor (the pod, or the PodGroup). DRA_WORKLOAD_EXAMPLES
sets how many (200 in `make test`). The stored regressions (tests/upstream/regressions/workloads)
run without Go.
"""
import json
import os
from pathlib import Path

import pytest

from tests.upstream import workload_dumps as wd
from tests.upstream.scheduler import Scheduler, SchedulerUnavailable, build, compare

EXAMPLES = int(os.environ.get("DRA_WORKLOAD_EXAMPLES", "200"))
REGRESSIONS = Path(__file__).resolve().parent / "regressions" / "workloads"
CASES = sorted(p.name for p in REGRESSIONS.iterdir() if (p / "upstream.json").is_file()) if REGRESSIONS.is_dir() else []


@pytest.fixture(scope="module")
def scheduler():
    try:
        binary = build()
    except SchedulerUnavailable as exc:
        if "not installed" in str(exc):
            pytest.skip("Go is not installed: the workload and pod-group comparison with kube-scheduler 1.37.2 "
                        "is skipped; its stored regressions (tests/upstream/regressions/workloads) still run")
        pytest.fail(str(exc))
    with Scheduler(binary) as process:
        yield process


def _case(name):
    folder = REGRESSIONS / name
    return ((folder / "why.txt").read_text().strip(), (folder / "scenario.yaml").read_text(),
            json.loads((folder / "gates.json").read_text()), json.loads((folder / "upstream.json").read_text()))


def _differences(text, gates, theirs):
    mine = wd.ours(text, gates)
    return compare(mine, theirs) + wd.compare_sharing(mine, theirs)


@pytest.mark.parametrize("name", CASES)
def test_regression_matches_the_stored_scheduler_answer(name):
    why, text, gates, upstream = _case(name)
    differences = _differences(text, gates, upstream)
    assert not differences, why + "\n" + "\n".join(differences)


@pytest.mark.parametrize("name", CASES)
def test_stored_scheduler_answer_is_still_upstream(scheduler, name):
    _why, text, gates, stored = _case(name)
    fresh = scheduler.request(wd.oracle_request(text, gates))
    for answer in (fresh, stored):
        for pod in answer.get("pods") or []:
            for claim in pod.get("claims") or []:
                (claim.get("allocation") or {}).pop("allocationTimestamp", None)
    assert fresh == stored


def test_a_different_reservation_is_reported(scheduler):
    """The comparison is not blind: the group's claim reserved for a pod disagrees."""
    _why, text, gates, _ = _case("pod-group-claim-shared")
    theirs = scheduler.request(wd.oracle_request(text, gates))
    mine = wd.ours(text, gates)
    mine["pods"][1]["claims"][0]["reservedFor"] = [{"resource": "pods", "name": mine["pods"][1]["name"]}]
    assert any("reserved for" in d for d in compare(mine, theirs) + wd.compare_sharing(mine, theirs))


def test_generated_workloads_and_pod_groups_agree_with_kube_scheduler(scheduler):
    failures = []
    for seed in range(EXAMPLES):
        text, gates = wd.case(seed)
        theirs = scheduler.request(wd.oracle_request(text, gates))
        differences = _differences(text, gates, theirs)
        if differences:
            failures.append(f"seed {seed} (gates {gates}):\n  " + "\n  ".join(differences[:5]))
    assert not failures, f"{len(failures)} of {EXAMPLES} disagree:\n" + "\n".join(failures[:5])
