"""Workloads and pod groups against kube-scheduler 1.37.2's own framework (tests/kube/cmd/schedule).

Generated scenarios (tests/upstream/workload_dumps.py) hold Deployments, ReplicaSets, StatefulSets,
Jobs, DaemonSets and bare pods, PodGroups whose claims their pods share, under the pod-group gates
on, GenericWorkload alone, or the defaults. The engine expands the workloads; the oracle is given
the pods of that expansion and the PodGroups, and with DRAWorkloadResourceClaims makes the group's
claims as the resourceclaim controller does. Everything the scheduler differential compares must
agree, and so must each claim's name and reservedFor (the pod, or the PodGroup). DRA_WORKLOAD_EXAMPLES
sets how many (200 in `make test`).

pod-template-hash: the engine's against the Deployment controller's (the podhash oracle), over
DRA_TEMPLATE_HASH_EXAMPLES generated templates (300 in `make test`) and every workload template of
the real manifests; each must be vouched for (not an estimate) and agree. The stored regressions (tests/upstream/regressions/workloads)
run without Go.
"""
import json
import os
from pathlib import Path

import pytest

from allocator.engine.gates import gates_from_dict
from allocator.engine.templatehash import created_template, dump_for_hash, pod_template_hash
from tests.upstream import kube_build
from tests.upstream import template_hashes as th
from tests.upstream import workload_dumps as wd
from tests.upstream.scheduler import compare

EXAMPLES = int(os.environ.get("DRA_WORKLOAD_EXAMPLES", "200"))
HASH_EXAMPLES = int(os.environ.get("DRA_TEMPLATE_HASH_EXAMPLES", "300"))
REGRESSIONS = Path(__file__).resolve().parent / "regressions" / "workloads"
CASES = sorted(p.name for p in REGRESSIONS.iterdir() if (p / "upstream.json").is_file()) if REGRESSIONS.is_dir() else []


@pytest.fixture(scope="module")
def hash_oracle():
    try:
        kube_build.build("podhash")
    except kube_build.KubeBuildError as exc:
        if "not installed" in str(exc):
            pytest.skip("Go is not installed: the pod-template-hash comparison with kube-controller-manager 1.37.2 is "
                        "skipped; its stored values (tests/engine/test_templatehash.py) still run")
        pytest.fail(str(exc))
    with th.HashOracle() as process:
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


def _hash_differences(cases, oracle):
    failures = []
    for where, template, gates in cases:
        theirs = oracle.ask(template, gates=gates)
        mine = pod_template_hash(template, gates=gates_from_dict(gates))
        if "error" in theirs:
            failures.append(f"{where}: the oracle failed: {theirs['error'][:300]}")
        elif not mine.exact:
            failures.append(f"{where}: the engine gives only an estimate ({mine.why})")
        elif mine.value != theirs["hash"]:
            ours = dump_for_hash(created_template(template, gates=gates_from_dict(gates)))
            at = next((i for i, (a, b) in enumerate(zip(ours, theirs["dump"])) if a != b), min(len(ours), len(theirs["dump"])))
            failures.append(f"{where}: {mine.value} by the engine, {theirs['hash']} upstream; the dumps part at "
                            f"...{ours[max(0, at - 80):at + 60]!r} against ...{theirs['dump'][max(0, at - 80):at + 60]!r}")
    return failures


def test_generated_templates_hash_as_kube_controller_manager_does(hash_oracle):
    cases = [(f"seed {seed}", th.template(seed), th.gates(seed)) for seed in range(HASH_EXAMPLES)]
    failures = _hash_differences(cases, hash_oracle)
    assert not failures, f"{len(failures)} of {len(cases)} disagree:\n" + "\n".join(failures[:5])


def test_real_manifests_templates_hash_as_kube_controller_manager_does(hash_oracle):
    if not th.REALWORLD.is_dir():
        pytest.skip(f"the real manifests ({th.REALWORLD}, DRA_REALWORLD) are not here")
    cases = [(where, template, {}) for where, template in th.realworld_templates()]
    assert len(cases) > 20, "the real manifests' workloads are not found"
    failures = _hash_differences(cases, hash_oracle)
    assert not failures, f"{len(failures)} of {len(cases)} disagree:\n" + "\n".join(failures[:5])


def test_a_wrong_default_is_reported(hash_oracle):
    """The hash comparison is not blind: a template whose default the engine got wrong disagrees."""
    template = th.template(1)
    theirs = hash_oracle.ask(template)
    changed = created_template(template)
    changed["spec"]["terminationGracePeriodSeconds"] = 31
    assert pod_template_hash(changed, gates=gates_from_dict({})).value != theirs["hash"]


def test_the_engines_go_type_tree_is_the_one_of_1_37_2(hash_oracle):
    """allocator/engine/podtemplate_types.json is what `podhash --types` prints (re-make it with that)."""
    import subprocess

    from allocator.engine import templatehash

    printed = subprocess.run([str(kube_build.build("podhash")), "--types"], capture_output=True, text=True, check=True)
    assert json.loads(printed.stdout) == json.loads(templatehash._TYPES_FILE.read_text())
