"""`manage.py allocate` on scenarios with Pods: the pod view, its JSON and the exit codes."""
import json
import subprocess
import sys
from pathlib import Path

from tests.engine import cluster as k

ROOT = Path(__file__).resolve().parent.parent
DUMP = ROOT / "tests" / "dumps" / "gpu-cluster.yaml"
EXAMPLES = ROOT / "allocator" / "examples"


def allocate(*args, stdin: str | None = None):
    proc = subprocess.run(
        [sys.executable, "manage.py", "allocate", *args],
        cwd=ROOT, input=stdin.encode() if stdin is not None else None, capture_output=True, timeout=60,
    )
    out = proc.stdout.decode()
    assert "Traceback" not in out + proc.stderr.decode(), out + proc.stderr.decode()
    return proc.returncode, out


def competing_pods() -> str:
    return k.dump(
        k.node("node-a"), k.node("node-b"), k.device_class(),
        k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
        k.template("single-gpu", k.claim_spec(k.request())),
        k.pod("first", templates=[("gpu", "single-gpu")]),
        k.pod("second", templates=[("gpu", "single-gpu")]),
    )


def test_cluster_dump_json_has_the_pod_view():
    code, out = allocate(str(DUMP), "-o", "json")
    data = json.loads(out)
    assert code == 0
    assert data["outcome"] == "allocated" and data["node"] == "gpu-node-2"
    trainer = next(p for p in data["pods"] if p["name"] == "trainer-1")
    assert set(trainer) >= {"name", "namespace", "node", "outcome", "message", "claims", "nodes"}
    assert trainer["namespace"] == "ml" and trainer["outcome"] == "scheduled" and trainer["node"] == "gpu-node-2"
    assert trainer["nodes"] == [
        {"node": "cp-1", "fits": False, "reason": "node(s) had untolerated taint(s)",
         "details": ["taint node-role.kubernetes.io/control-plane=:NoSchedule is not tolerated"]},
        {"node": "gpu-node-1", "fits": False, "reason": "cannot allocate all claims"},
        {"node": "gpu-node-2", "fits": True, "reason": None, "devices": [
            {"claim": "ml/trainer-1-gpu-q9v4c", "request": "gpu", "driver": "gpu.example.com",
             "pool": "gpu-node-2", "device": "gpu-0"}]},
    ]
    [claim] = trainer["claims"]
    assert claim["name"] == "trainer-1-gpu-q9v4c" and claim["podClaimName"] == "gpu"
    assert claim["allocation"]["devices"]["results"][0]["device"] == "gpu-0"
    assert [c["metadata"]["name"] for c in data["claims"]] == ["trainer-1-gpu-q9v4c"]


def test_second_pod_pending_exits_one_with_the_schedulers_line():
    code, out = allocate("-", "-o", "json", stdin=competing_pods())
    data = json.loads(out)
    assert code == 1 and data["outcome"] == "unsatisfiable"
    assert data["message"] == "pod default/second: 0/2 nodes are available: 2 cannot allocate all claims."
    assert [(p["name"], p["outcome"], p["node"]) for p in data["pods"]] == [
        ("first", "scheduled", "node-b"), ("second", "pending", None)]


def test_human_report_lists_every_node_per_pod():
    code, out = allocate("-", stdin=competing_pods())
    assert code == 1
    assert "Pod default/first: scheduled on node node-b" in out
    assert "node-b: fits (chosen): gpu.example.com/node-b/gpu-0" in out
    assert "Pod default/second: Pending: 0/2 nodes are available: 2 cannot allocate all claims." in out
    assert "in use: already allocated to claim default/first-gpu-" in out


def test_node_option_considers_only_that_node_for_pods():
    code, out = allocate("-", "-o", "json", "--node", "node-a", stdin=competing_pods())
    data = json.loads(out)
    assert code == 1
    assert [n["node"] for n in data["pods"][0]["nodes"]] == ["node-a"]
    assert data["pods"][0]["message"] == "0/1 nodes are available: 1 cannot allocate all claims."


def test_missing_template_exits_one():
    text = k.dump(k.node("node-a"), k.pod("p", templates=[("gpu", "gone")]))
    code, out = allocate("-", "-o", "yaml", stdin=text)
    assert code == 1 and 'pod "default/p": ResourceClaim not created yet' in out


def test_invalid_pod_scenario_exits_two():
    broken = "device.attributes['gpu.example.com'].nope == 1"
    spec = k.claim_spec(k.request(selectors=[{"cel": {"expression": broken}}]))
    text = k.dump(k.node("node-b"), k.device_class(), k.resource_slice("node-b", [k.gpu("gpu-0", 0)]),
                  k.template("broken", spec), k.pod("p", templates=[("gpu", "broken")]))
    code, out = allocate("-", "-o", "json", stdin=text)
    data = json.loads(out)
    assert code == 2 and data["outcome"] == "invalid"
    assert data["problems"][0]["kind"] == "ResourceClaimTemplate" and data["problems"][0]["line"]


def test_scenarios_without_pods_have_no_pods_key():
    code, out = allocate(str(EXAMPLES / "simple-gpu.yaml"), "-o", "json")
    assert code == 0 and "pods" not in json.loads(out)
