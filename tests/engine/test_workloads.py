"""Workloads become the pods their controllers would create, and those pods are scheduled."""
from __future__ import annotations

import os
from pathlib import Path

import pytest

from allocator.engine.pods import SCHEDULED, PENDING
from allocator.engine.problems import ERROR
from allocator.engine.run import allocate_text
from allocator.engine.scenario import read_scenario
from allocator.engine.templatehash import fnv32a, safe_encode
from tests.engine import cluster as k

ROOT = Path(__file__).resolve().parents[2]
REALWORLD = Path(os.environ.get("DRA_REALWORLD", "/work/shared/realworld"))


def pod_spec(*, templates=(), node_selector=None, tolerations=None, affinity=None) -> dict:
    spec = {"containers": [{"name": "main", "image": "registry.example.com/app:1.0",
                            "resources": {"claims": [{"name": n} for n, _ in templates]}}]}
    if templates:
        spec["resourceClaims"] = [{"name": n, "resourceClaimTemplateName": t} for n, t in templates]
    if node_selector:
        spec["nodeSelector"] = node_selector
    if tolerations:
        spec["tolerations"] = tolerations
    if affinity:
        spec["affinity"] = affinity
    return spec


def workload(kind: str, name: str, spec: dict, *, namespace="default", api_version=None, template=None, **more):
    api_version = api_version or ("batch/v1" if kind in ("Job", "CronJob") else "apps/v1")
    body = {"selector": {"matchLabels": {"app": name}},
            "template": {"metadata": {"labels": {"app": name}}, "spec": spec}} if template is None else template
    body.update(more)
    return {"apiVersion": api_version, "kind": kind, "metadata": {"name": name, "namespace": namespace},
            "spec": body}


def gpu_cluster(*more, gpus=4, nodes=("node-a",)):
    objects = [k.device_class()]
    for n in nodes:
        objects += [k.node(n), k.resource_slice(n, [k.gpu(f"gpu-{i}", i) for i in range(gpus)])]
    return [*objects, k.template("one-gpu", k.claim_spec(k.request())), *more]


def run(*objects, **options):
    return allocate_text(k.dump(*objects), **options)


def by_name(outcome) -> dict:
    return {p.name: p for p in outcome.pods}


# --- Deployments and ReplicaSets ------------------------------------------------------------------


def test_deployment_with_a_claim_template_makes_replicas_pods_each_with_its_own_claim():
    scenario, outcome = run(*gpu_cluster(workload("Deployment", "web", pod_spec(templates=[("gpu", "one-gpu")]),
                                                  replicas=3)))
    assert [p.outcome for p in outcome.pods] == [SCHEDULED] * 3
    pod = scenario.pods[0]
    rs_hash = pod.raw["metadata"]["labels"]["pod-template-hash"]
    assert all(p.name.startswith(f"web-{rs_hash}-") and len(p.name) == len(f"web-{rs_hash}-") + 5
               for p in scenario.pods)
    owner = pod.raw["metadata"]["ownerReferences"][0]
    assert (owner["kind"], owner["name"], owner["controller"]) == ("ReplicaSet", f"web-{rs_hash}", True)
    assert all(r.workload == f"Deployment default/web (ReplicaSet default/web-{rs_hash})" for r in outcome.pods)
    claims = [c.name for r in outcome.pods for c in r.claims]
    assert len(set(claims)) == 3 and all(c.startswith(f"{r.name}-gpu-") for r, c in zip(outcome.pods, claims))
    devices = {res["device"] for r in outcome.pods for c in r.claims for res in c.allocation["devices"]["results"]}
    assert len(devices) == 3


def test_fourth_replica_is_pending_when_the_node_has_three_gpus():
    _, outcome = run(*gpu_cluster(workload("Deployment", "web", pod_spec(templates=[("gpu", "one-gpu")]),
                                           replicas=4), gpus=3))
    assert [p.outcome for p in outcome.pods] == [SCHEDULED] * 3 + [PENDING]
    assert outcome.outcome == "unsatisfiable"


def test_pod_template_hash_is_the_safe_encoding_of_an_fnv32a_sum():
    assert fnv32a(b"") == 0x811C9DC5 and fnv32a(b"a") == 0xE40C292C  # the FNV-1a test vectors
    assert safe_encode("0123456789") == "456789bcdf"  # each digit's code point, modulo the 27 letters


def test_pods_the_dump_holds_for_a_replica_set_are_not_made_twice():
    rs = workload("ReplicaSet", "web-abc", pod_spec(), replicas=3)
    rs["metadata"]["uid"] = "rs-uid"
    existing = k.pod("web-abc-xxxxx", node_name="node-a")
    existing["metadata"]["ownerReferences"] = [{"apiVersion": "apps/v1", "kind": "ReplicaSet", "name": "web-abc",
                                                "uid": "rs-uid", "controller": True}]
    scenario, outcome = run(*gpu_cluster(existing, rs))
    made = [p for p in scenario.pods if scenario.pod_workloads.get(p.key)]
    assert len(made) == 2 and len(scenario.pods) == 3
    assert any("already holds 1 of its 3 pods: 2 made" in w.message for w in scenario.warnings)


def test_deployment_with_zero_replicas_says_so():
    scenario = read_scenario(k.dump(*gpu_cluster(workload("Deployment", "web", pod_spec(), replicas=0))))
    assert scenario.pods == []
    warning = next(w for w in scenario.warnings if w.kind == "Deployment")
    assert "0 replicas" in warning.message and warning.line is not None


# --- StatefulSets, Jobs, CronJobs ---------------------------------------------------------------------


def test_stateful_set_pods_have_ordinal_names_from_the_start_ordinal():
    sts = workload("StatefulSet", "db", pod_spec(templates=[("gpu", "one-gpu")]), replicas=2, serviceName="db",
                   ordinals={"start": 3}, podManagementPolicy="Parallel")
    scenario, outcome = run(*gpu_cluster(sts))
    assert [p.name for p in scenario.pods] == ["db-3", "db-4"]
    labels = scenario.pods[1].raw["metadata"]["labels"]
    assert labels["statefulset.kubernetes.io/pod-name"] == "db-4" and labels["apps.kubernetes.io/pod-index"] == "4"
    assert scenario.pods[1].raw["spec"]["hostname"] == "db-4" and scenario.pods[1].raw["spec"]["subdomain"] == "db"
    assert [p.outcome for p in outcome.pods] == [SCHEDULED, SCHEDULED]


def test_indexed_job_makes_parallelism_pods_with_their_completion_index():
    job = workload("Job", "train", pod_spec(templates=[("gpu", "one-gpu")]), template=None, parallelism=2,
                   completions=5, completionMode="Indexed")
    job["spec"].pop("selector")
    scenario, outcome = run(*gpu_cluster(job))
    assert len(scenario.pods) == 2
    for index, pod in enumerate(scenario.pods):
        meta = pod.raw["metadata"]
        assert meta["annotations"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert meta["labels"]["batch.kubernetes.io/job-completion-index"] == str(index)
        assert meta["generateName"] == f"train-{index}-" and pod.name.startswith(f"train-{index}-")
        assert meta["labels"]["job-name"] == "train" and pod.raw["spec"]["hostname"] == f"train-{index}"
    assert [p.outcome for p in outcome.pods] == [SCHEDULED, SCHEDULED]


def test_job_makes_no_more_pods_than_completions():
    job = workload("Job", "once", pod_spec(), parallelism=4, completions=1)
    assert len(read_scenario(k.dump(*gpu_cluster(job))).pods) == 1


def test_cron_job_makes_one_jobs_pods_and_says_so():
    cron = {"apiVersion": "batch/v1", "kind": "CronJob", "metadata": {"name": "nightly", "namespace": "default"},
            "spec": {"schedule": "0 3 * * *", "jobTemplate": {"spec": {"parallelism": 2, "template": {
                "spec": {**pod_spec(templates=[("gpu", "one-gpu")]), "restartPolicy": "Never"}}}}}}
    scenario, outcome = run(*gpu_cluster(cron))
    assert len(scenario.pods) == 2
    job = scenario.pods[0].raw["metadata"]["ownerReferences"][0]
    assert job["kind"] == "Job" and job["name"].startswith("nightly-")
    assert any("one Job the CronJob would start" in w.message for w in scenario.warnings)
    assert outcome.pods[0].workload.startswith("CronJob default/nightly (Job default/nightly-")


# --- DaemonSets ------------------------------------------------------------------------------------


def daemon_nodes_cluster(ds):
    return [
        k.node("gpu-1", labels={"gpu": "true"}),
        k.node("gpu-2", labels={"gpu": "true"}, taints=[{"key": "nvidia.com/gpu", "effect": "NoSchedule"}]),
        k.node("gpu-3", labels={"gpu": "true"}, taints=[{"key": "maintenance", "effect": "NoExecute"}]),
        k.node("cpu-1"),
        k.node("cordoned", labels={"gpu": "true"}, unschedulable=True,
               taints=[{"key": "node.kubernetes.io/unschedulable", "effect": "NoSchedule"}]),
        k.device_class(), k.template("one-gpu", k.claim_spec(k.request())),
        *[k.resource_slice(n, [k.gpu("gpu-0", 0)]) for n in ("gpu-1", "gpu-2", "gpu-3", "cordoned")],
        ds,
    ]


def test_daemon_set_runs_on_matching_nodes_whose_taints_it_tolerates_pinned_by_node_affinity():
    ds = workload("DaemonSet", "agent", pod_spec(templates=[("gpu", "one-gpu")], node_selector={"gpu": "true"},
                                                 tolerations=[{"key": "nvidia.com/gpu", "operator": "Exists",
                                                               "effect": "NoSchedule"}]))
    scenario, outcome = run(*daemon_nodes_cluster(ds))
    nodes = [scenario.daemon_pods[p.key] for p in scenario.pods]
    # gpu-3's NoExecute taint is not tolerated, cpu-1 has no gpu label; a cordoned node's taint is
    # one the controller adds a toleration for.
    assert nodes == ["cordoned", "gpu-1", "gpu-2"]
    pod = scenario.pods[1].raw
    assert pod["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"] == {
        "nodeSelectorTerms": [{"matchFields": [{"key": "metadata.name", "operator": "In", "values": ["gpu-1"]}]}]}
    keys = {(t["key"], t["effect"]) for t in pod["spec"]["tolerations"]}
    assert {("node.kubernetes.io/not-ready", "NoExecute"), ("node.kubernetes.io/unschedulable", "NoSchedule"),
            ("nvidia.com/gpu", "NoSchedule")} <= keys
    assert [(r.node, r.outcome) for r in outcome.pods] == [("cordoned", SCHEDULED), ("gpu-1", SCHEDULED),
                                                           ("gpu-2", SCHEDULED)]
    note = next(w.message for w in scenario.warnings if w.kind == "DaemonSet")
    assert "gpu-3: the pods do not tolerate the node's taint maintenance=:NoExecute" in note


def test_daemon_set_required_node_affinity_is_replaced_by_the_node_name_term():
    affinity = k.required_affinity({"matchExpressions": [{"key": "gpu", "operator": "In", "values": ["true"]}]})
    ds = workload("DaemonSet", "agent", pod_spec(templates=[("gpu", "one-gpu")], affinity=affinity))
    scenario = read_scenario(k.dump(*daemon_nodes_cluster(ds)))
    assert [scenario.daemon_pods[p.key] for p in scenario.pods] == ["cordoned", "gpu-1"]
    terms = scenario.pods[1].raw["spec"]["affinity"]["nodeAffinity"]["requiredDuringSchedulingIgnoredDuringExecution"]
    assert terms["nodeSelectorTerms"][0]["matchFields"][0]["values"] == ["gpu-1"]


def test_run_for_one_node_leaves_the_other_nodes_daemon_pods_out():
    ds = workload("DaemonSet", "agent", pod_spec(templates=[("gpu", "one-gpu")], node_selector={"gpu": "true"}))
    _, outcome = run(*daemon_nodes_cluster(ds), node_name="gpu-1")
    assert [(r.node, r.outcome) for r in outcome.pods] == [("gpu-1", SCHEDULED)]
    assert any("made for other nodes than gpu-1 left out" in w.message for w in outcome.warnings)


# --- bad input ---------------------------------------------------------------------------------------


def test_an_invalid_pod_template_is_refused_at_the_workload_with_its_path_and_line():
    spec = pod_spec(templates=[("Bad_Name", "one-gpu")])
    scenario = read_scenario(k.dump(*gpu_cluster(workload("Deployment", "web", spec))))
    error = next(p for p in scenario.problems if p.severity == ERROR)
    assert (error.kind, error.name) == ("Deployment", "default/web")
    assert error.path == ("spec", "template", "spec", "resourceClaims", 0, "name") and error.line is not None


def test_a_workload_without_a_pod_template_says_why_it_makes_no_pods():
    broken = workload("Deployment", "web", pod_spec())
    del broken["spec"]["template"]
    scenario = read_scenario(k.dump(*gpu_cluster(broken)))
    warning = next(w for w in scenario.warnings if w.kind == "Deployment")
    assert "pod template" in warning.message and warning.path == ("spec", "template") and warning.line


# --- the real manifests ---------------------------------------------------------------------------------

WORKLOAD_KINDS = ("Deployment", "ReplicaSet", "StatefulSet", "DaemonSet", "Job", "CronJob")


def _realworld_workload_files():
    if not REALWORLD.is_dir():
        return []
    found = []
    for path in sorted(REALWORLD.rglob("*.yaml")):
        text = path.read_text(errors="replace")
        if any(f"kind: {kind}\n" in text for kind in WORKLOAD_KINDS):
            found.append(path)
    return found


@pytest.mark.skipif(not REALWORLD.is_dir(), reason=f"{REALWORLD} (the real manifests) is not here")
@pytest.mark.parametrize("path", _realworld_workload_files(), ids=lambda p: str(p.relative_to(REALWORLD)))
def test_every_real_manifest_with_a_workload_makes_pods_or_gives_a_located_reason(path):
    scenario = read_scenario(path.read_bytes())
    if scenario.pod_workloads:
        return
    workload_kinds = {w.kind for w in scenario.workloads}
    reasons = [p for p in scenario.problems if p.line is not None and (
        p.kind in workload_kinds or p.severity == ERROR or "DaemonSets'" in p.message)]
    assert reasons, f"{path}: no pods and no located reason: {[p.render() for p in scenario.problems]}"


@pytest.mark.parametrize("kind, path, value", [
    ("Deployment", ("spec", "template", "spec", "affinity"), "x"),
    ("DaemonSet", ("spec", "template", "spec", "containers"), 3),
    ("Job", ("spec", "parallelism"), "two"),
    ("ReplicaSet", ("metadata",), [1]),
])
def test_a_field_of_the_wrong_type_is_a_located_problem_not_a_traceback(kind, path, value):
    obj = workload(kind, "w", pod_spec(templates=[("gpu", "one-gpu")]))
    holder = obj
    for part in path[:-1]:
        holder = holder[part]
    holder[path[-1]] = value
    scenario, outcome = run(*daemon_nodes_cluster(obj))
    assert not scenario.pod_workloads
    assert any(p.line is not None and (p.kind == kind or p.path[:1] == ("metadata",)) for p in scenario.problems)


def test_the_text_report_names_the_workload_that_made_a_pod():
    from allocator.engine.report import human_report
    from tests.engine.test_templatehash import DEPLOYMENT

    text = DEPLOYMENT + "\n---\n" + k.dump(k.node("node-1"))
    _scenario, outcome = allocate_text(text.encode())
    report = human_report(outcome)
    assert "\n  made by Deployment default/web (ReplicaSet default/web-78754dbd8)\n" in report
    bare = human_report(allocate_text(k.dump(k.node("node-1"), k.pod("web")).encode())[1])
    assert "Pod default/web: scheduled on node node-1" in bare and "made by" not in bare
