"""The engine's pod scheduling against kube-scheduler 1.37.2's own framework (tests/kube/cmd/schedule).

Generated dumps go through both, pod by pod; any difference in outcome, node or tie set, node
verdicts and reasons, the `0/N nodes are available: …` line, per-plugin scores or allocations
fails. DRA_SCHEDULER_EXAMPLES sets how many dumps (2,000 in `make test`; `make test-scheduler
N=20000` for the deeper run). The stored regressions run without Go.
"""
import json
import os
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

from tests.upstream.pod_dumps import dumps, dumps_with_unmodelled
from tests.upstream.scheduler import REGRESSIONS, compare, compare_pod, ours

EXAMPLES = int(os.environ.get("DRA_SCHEDULER_EXAMPLES", "2000"))
CASES = sorted(p.name for p in REGRESSIONS.iterdir() if (p / "upstream.json").is_file()) if REGRESSIONS.is_dir() else []
GPU_CLUSTER = Path(__file__).resolve().parent.parent / "dumps" / "gpu-cluster.yaml"


def _case(name):
    folder = REGRESSIONS / name
    gates = json.loads((folder / "gates.json").read_text()) if (folder / "gates.json").is_file() else None
    return (folder / "why.txt").read_text().strip(), (folder / "dump.yaml").read_text(), \
        json.loads((folder / "upstream.json").read_text()), gates


@pytest.mark.parametrize("name", CASES)
def test_regression_matches_the_stored_scheduler_answer(name):
    why, dump, upstream, gates = _case(name)
    differences = compare(ours(dump, gates), upstream)
    assert not differences, why + "\n" + "\n".join(differences)


@pytest.mark.parametrize("name", CASES)
def test_stored_scheduler_answer_is_still_upstream(scheduler, name):
    _why, dump, stored, gates = _case(name)
    fresh = scheduler.request({"dump": dump, "gates": gates}) if gates else scheduler.ask(dump)
    for answer in (fresh, stored):
        for pod in answer.get("pods") or []:
            for claim in pod.get("claims") or []:
                (claim.get("allocation") or {}).pop("allocationTimestamp", None)
                for result in ((claim.get("allocation") or {}).get("devices") or {}).get("results") or ():
                    result.pop("shareID", None)  # a random UUID per allocation of a consumable device
    assert fresh == stored


def test_the_sample_dump_agrees(scheduler):
    dump = GPU_CLUSTER.read_text()
    assert compare(ours(dump), scheduler.ask(dump)) == []


def test_a_difference_is_reported(scheduler):
    """The comparison is not blind: an engine answer with another node disagrees."""
    dump = (REGRESSIONS / "taint-reason-names-no-taint" / "dump.yaml").read_text()
    mine = ours(dump)
    mine["pods"][0]["message"] = "0/2 nodes are available: 2 node(s) had untolerated taint {dedicated: infra}."
    assert any("message" in d for d in compare(mine, scheduler.ask(dump)))


@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(dump=dumps())
def test_generated_dumps_agree_with_kube_scheduler(scheduler, dump):
    mine = ours(dump)
    assert mine["outcome"] != "invalid" or mine.get("pods"), f"the generator made an invalid dump: {mine['message']}"
    differences = compare(mine, scheduler.ask(dump))
    assert not differences, "\n".join(differences)


UNMODELLED_EXAMPLES = max(EXAMPLES // 10, 20)


@pytest.mark.filterwarnings("ignore:The recursion limit will not be reset")
@settings(max_examples=UNMODELLED_EXAMPLES, derandomize=True, database=None, deadline=None,
          suppress_health_check=list(HealthCheck))
@given(dump=dumps_with_unmodelled())
def test_the_playground_says_not_modelled_for_exactly_the_pods_it_does_not_model(scheduler, dump):
    """Pods with host ports or volumes carry a "not modelled" note, and no other pod does; every pod
    before the first of them agrees with the scheduler."""
    mine = {(p["namespace"], p["name"]): p for p in ours(dump)["pods"]}
    raw = {(p["metadata"]["namespace"], p["metadata"]["name"]): p for p in json.loads(dump)["items"] if p["kind"] == "Pod"}
    comparable = True
    for up in scheduler.ask(dump)["pods"]:
        key = (up["namespace"], up["name"])
        pod, spec = mine[key], raw[key]["spec"]
        noted = any(note.startswith("not modelled:") for note in pod["notes"])
        uses = "volumes" in spec or "ports" in spec["containers"][0]
        assert noted == uses, f"pod {key}: noted {noted}, uses an unmodelled feature {uses}"
        if uses:
            comparable = False  # the scheduler may place it elsewhere, and so the pods after it
        elif comparable:
            differences = compare_pod(pod, up)
            assert not differences, "\n".join(differences)



ANTI_AFFINITY = """
apiVersion: v1
kind: Node
metadata: {name: node-a, labels: {kubernetes.io/hostname: node-a}}
status: {allocatable: {cpu: "4", memory: 8Gi, pods: "110"}}
---
apiVersion: v1
kind: Node
metadata: {name: node-b, labels: {kubernetes.io/hostname: node-b}}
status: {allocatable: {cpu: "2", memory: 4Gi, pods: "110"}}
---
apiVersion: v1
kind: Pod
metadata: {name: web-0, namespace: default, labels: {app: web}}
spec:
  nodeName: node-a
  containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]
status: {phase: Running}
---
apiVersion: v1
kind: Pod
metadata: {name: web-1, namespace: default, labels: {app: web}}
spec:
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
  containers: [{name: c, image: app, resources: {requests: {cpu: 100m}}}]
"""


def test_pod_anti_affinity_keeps_the_pod_off_the_node_of_its_kin(scheduler):
    """The roomier node-a holds a pod the new one must not share a host with: both send it to node-b."""
    mine = ours(ANTI_AFFINITY)["pods"][1]
    theirs = scheduler.ask(ANTI_AFFINITY)["pods"][1]
    assert (mine["node"], theirs["node"]) == ("node-b", "node-b")
    assert not any(note.startswith("not modelled") for note in mine["notes"])
    refused = next(n for n in mine["nodes"] if n["node"] == "node-a")
    assert refused["reason"] == "node(s) didn't match pod anti-affinity rules"


HOST_PORTS = ANTI_AFFINITY.replace("""  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
      - labelSelector: {matchLabels: {app: web}}
        topologyKey: kubernetes.io/hostname
""", "").replace("resources: {requests: {cpu: 100m}}}]", "resources: {requests: {cpu: 100m}}, "
                 "ports: [{containerPort: 80, hostPort: 8080}]}]")


def test_an_unmodelled_feature_changes_the_schedulers_answer_and_the_pod_says_so(scheduler):
    mine = ours(HOST_PORTS)["pods"][1]
    theirs = scheduler.ask(HOST_PORTS)["pods"][1]
    assert (mine["node"], theirs["node"]) == ("node-a", "node-b")
    assert any(note.startswith("not modelled: this pod's host ports") for note in mine["notes"])
